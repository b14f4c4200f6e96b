// The files a zip carries beside its bundle (scripts/bundle-extras.ts): the HEIF decoder's package files, byte for byte,
// and its thread beside the handler, only in a bundle that includes the module starting it, with the licence notice.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Metafile } from 'esbuild';
import { extraEntries } from '../../scripts/bundle-extras';

const ROOT = path.join(__dirname, '..', '..');
const metafile = (...inputs: string[]): Metafile => ({
  inputs: Object.fromEntries(inputs.map((i) => [i, { bytes: 1, imports: [] }])),
  outputs: {},
});

describe('the extras a zip carries', () => {
  it('ships libheif-js unmodified, the decoder thread beside the handler and the notice, when the bundle decodes HEIF', () => {
    const entries = extraEntries(ROOT, metafile('lib/ingest/heif.ts', 'functions/ingest/handler.ts'), 'functions/ingest/handler.js');
    const byName = new Map(entries.map((e) => [e.name, e.data]));
    expect([...byName.keys()].sort()).toEqual([
      'THIRD-PARTY-NOTICES.txt',
      'functions/ingest/heif-worker.cjs',
      'node_modules/libheif-js/LICENSE',
      'node_modules/libheif-js/libheif-wasm/LICENSE',
      'node_modules/libheif-js/libheif-wasm/libheif.js',
      'node_modules/libheif-js/libheif-wasm/libheif.wasm',
      'node_modules/libheif-js/package.json',
    ]);
    const wasm = readFileSync(path.join(ROOT, 'node_modules', 'libheif-js', 'libheif-wasm', 'libheif.wasm'));
    expect(byName.get('node_modules/libheif-js/libheif-wasm/libheif.wasm')!.equals(wasm)).toBe(true);
    expect(byName.get('THIRD-PARTY-NOTICES.txt')!.toString()).toMatch(/GNU Lesser General Public License v3\.0.*unmodified/s);
  });

  it('adds nothing to a bundle that does not decode HEIF', () => {
    expect(extraEntries(ROOT, metafile('functions/api/handler.ts'), 'functions/api/handler.js')).toEqual([]);
  });
});
