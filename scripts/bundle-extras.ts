// What a function's zip carries beside its bundled JavaScript when the bundle includes the module that needs it: the
// HEIF decoder thread (lib/ingest/heif.ts starts `heif-worker.cjs` from its own folder, which in a zip is the
// handler's) and the decoder it loads, libheif-js, shipped as its own unmodified files under node_modules/ (never
// inlined or minified by esbuild: its LGPL-3.0 is met by shipping it so, replaceable by the user), with a notice.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Metafile } from 'esbuild';

interface Extra {
  /** The module (relative to the project) whose presence in the bundle brings the files. */
  module: string;
  /** Project files copied beside the handler's output, as they are. */
  beside: string[];
  /** Installed packages' files, shipped byte for byte under node_modules/. */
  packages: Record<string, string[]>;
  notice: string;
}

export const BUNDLE_EXTRAS: Extra[] = [
  {
    module: 'lib/ingest/heif.ts',
    beside: ['lib/ingest/heif-worker.cjs'],
    packages: {
      'libheif-js': ['package.json', 'LICENSE', 'libheif-wasm/LICENSE', 'libheif-wasm/libheif.js', 'libheif-wasm/libheif.wasm'],
    },
    notice:
      'node_modules/libheif-js/: libheif-js (libheif and libde265 compiled to WebAssembly), licensed under the GNU ' +
      'Lesser General Public License v3.0 (LICENSE files beside it). Shipped unmodified as its own files, loaded at run ' +
      'time by functions/ingest/heif-worker.cjs; replace them with another build of the same interface to relink. Its ' +
      'source: the libheif-js package on the npm registry and the libheif and libde265 projects.',
  },
];

/** The zip entries the extras of this bundle add (output: the handler's path inside the zip). */
export function extraEntries(projectDir: string, metafile: Metafile, output: string): { name: string; data: Buffer }[] {
  const entries: { name: string; data: Buffer }[] = [];
  const notices: string[] = [];
  for (const extra of BUNDLE_EXTRAS.filter((e) => e.module in metafile.inputs)) {
    for (const file of extra.beside) {
      entries.push({
        name: path.posix.join(path.posix.dirname(output), path.basename(file)),
        data: readFileSync(path.join(projectDir, file)),
      });
    }
    for (const [pkg, files] of Object.entries(extra.packages)) {
      for (const file of files)
        entries.push({ name: `node_modules/${pkg}/${file}`, data: readFileSync(path.join(projectDir, 'node_modules', pkg, file)) });
    }
    notices.push(extra.notice);
  }
  if (notices.length > 0) entries.push({ name: 'THIRD-PARTY-NOTICES.txt', data: Buffer.from(`${notices.join('\n\n')}\n`) });
  return entries;
}
