// Zip writing for artifacts and reading for tests and benches (yazl/yauzl: streaming, no native code).
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import yauzl from 'yauzl';
import { ZipFile } from 'yazl';

// A fixed timestamp keeps the zip byte-identical for identical inputs, so CloudFormation sees no change.
const ZIP_MTIME = new Date('2000-01-01T00:00:00Z');

/** Writes entries in name order, each a plain readable file (0644), all with the same timestamp. */
export async function writeZip(zipPath: string, entries: { name: string; data: Buffer }[]): Promise<void> {
  const zip = new ZipFile();
  for (const { name, data } of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
    zip.addBuffer(data, name, { mtime: ZIP_MTIME, mode: 0o100644 });
  }
  zip.end();
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(zipPath);
    out.on('close', resolve);
    out.on('error', reject);
    zip.outputStream.on('error', reject).pipe(out);
  });
}

/** Extracts every entry of a zip under `into`, refusing entries that would land outside it. */
export async function extractZip(zipPath: string, into: string): Promise<void> {
  const root = path.resolve(into);
  const zip = await promisify<string, yauzl.Options, yauzl.ZipFile>(yauzl.open)(zipPath, { lazyEntries: true });
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', resolve);
    zip.on('entry', (entry: yauzl.Entry) => {
      const target = path.resolve(root, entry.fileName);
      if (!target.startsWith(root + path.sep)) return reject(new Error(`zip entry escapes ${root}: ${entry.fileName}`));
      if (entry.fileName.endsWith('/')) {
        mkdirSync(target, { recursive: true });
        return zip.readEntry();
      }
      mkdirSync(path.dirname(target), { recursive: true });
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        stream
          .pipe(createWriteStream(target))
          .on('finish', () => zip.readEntry())
          .on('error', reject);
      });
    });
    zip.readEntry();
  });
}
