// Builds the web app (web/) with esbuild, in memory: one minified script and one stylesheet named by their content
// hash, the page that names them, and the icon, each gzip-compressed. Run from source, the local API builds them on
// first use (lib/web/bundle.ts); scripts/bundle.ts embeds them in the Lambda bundle at packaging time, so neither
// esbuild nor this module reaches Lambda. `npm run build:web` (scripts/build-web.ts) writes them to .build/web/.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { IceCatError } from '../errors';
import { INDEX_HTML, type WebAsset, type WebBundle } from './site';

const ROOT = path.resolve(__dirname, '..', '..');

class WebBuildError extends IceCatError {
  override name = 'WebBuildError';
  readonly code: string = 'web_build_failed';
}

function asset(name: string, contentType: string, data: Uint8Array | string): WebAsset {
  const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data);
  const gzip = gzipSync(bytes, { level: 9 });
  return {
    name,
    contentType,
    gzipBase64: gzip.toString('base64'),
    bytes: bytes.length,
    etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"`,
  };
}

export async function buildWebBundle(projectDir = ROOT): Promise<WebBundle> {
  const webDir = path.join(projectDir, 'web');
  const result = await build({
    absWorkingDir: projectDir,
    entryPoints: { app: path.join(webDir, 'main.tsx'), style: path.join(webDir, 'app.css') },
    outdir: path.join(projectDir, '.build', 'web'),
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  if (result.errors.length > 0) throw new WebBuildError(result.errors.map((e) => e.text).join('\n'));
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!js || !css) throw new WebBuildError('esbuild produced no script or no stylesheet');
  const jsName = path.basename(js.path);
  const cssName = path.basename(css.path);
  const html = readFileSync(path.join(webDir, 'index.html'), 'utf8')
    .replaceAll('{{script}}', `/app/${jsName}`)
    .replaceAll('{{style}}', `/app/${cssName}`);
  return {
    assets: [
      asset(INDEX_HTML, 'text/html; charset=utf-8', html),
      asset(jsName, 'text/javascript; charset=utf-8', js.contents),
      asset(cssName, 'text/css; charset=utf-8', css.contents),
      asset('icon.svg', 'image/svg+xml', readFileSync(path.join(webDir, 'icon.svg'))),
    ],
  };
}

/** Bytes of the page's JavaScript, raw and gzip-compressed (the ≤ 100 KB budget is on the latter). */
export function scriptSize(bundle: WebBundle): { bytes: number; gzipBytes: number } {
  const scripts = bundle.assets.filter((a) => a.contentType.startsWith('text/javascript'));
  return {
    bytes: scripts.reduce((n, a) => n + a.bytes, 0),
    gzipBytes: scripts.reduce((n, a) => n + Buffer.from(a.gzipBase64, 'base64').length, 0),
  };
}
