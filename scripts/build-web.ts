// `npm run build:web`: builds the web app (lib/web/build.ts) and writes its files to .build/web/ with their sizes.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildWebBundle } from '../lib/web/build';

const ROOT = path.resolve(__dirname, '..');

async function main(): Promise<void> {
  const bundle = await buildWebBundle();
  const outDir = path.join(ROOT, '.build', 'web');
  mkdirSync(outDir, { recursive: true });
  for (const a of bundle.assets) {
    const gzip = Buffer.from(a.gzipBase64, 'base64');
    writeFileSync(path.join(outDir, a.name), gunzipSync(gzip));
    console.log(`${a.name.padEnd(28)} ${String(a.bytes).padStart(7)} B   gzip ${String(gzip.length).padStart(6)} B`);
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
