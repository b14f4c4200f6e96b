// Objects written into a bucket of a local stack's S3 before the stack starts, through s3rver's own store (the
// files, ETag and metadata a PUT writes), for a source of thousands of keys: over HTTP, on a shared machine, each PUT
// took as long as listing and enqueueing it (3,000 PUTs in 90 s at a load average of 20). What is measured or tried
// afterwards (the listing, the reads) goes through the stand-in as any request does.
import path from 'node:path';

interface SeedStore {
  putBucket(name: string): Promise<unknown>;
  putObject(object: unknown): Promise<unknown>;
}

/* eslint-disable @typescript-eslint/no-require-imports -- s3rver ships no type declarations */
const FilesystemStore = require('s3rver/lib/stores/filesystem') as new (dir: string) => SeedStore;
const S3Object = require('s3rver/lib/models/object') as new (
  bucket: string,
  key: string,
  content: Buffer,
  metadata: Record<string, string>,
) => unknown;
/* eslint-enable @typescript-eslint/no-require-imports */

/** Writes `objects` into `bucket` (made if missing) of the S3 data under `dataDir`, 16 at a time. */
export async function seedBucket(
  dataDir: string,
  bucket: string,
  objects: readonly { key: string; body: Buffer; contentType?: string }[],
): Promise<void> {
  const store = new FilesystemStore(path.join(dataDir, 's3'));
  await store.putBucket(bucket);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < objects.length; i = next++) {
      const { key, body, contentType = 'binary/octet-stream' } = objects[i]!;
      const metadata = { 'content-type': contentType, 'content-length': String(body.length), 'last-modified': new Date().toUTCString() };
      await store.putObject(new S3Object(bucket, key, body, metadata));
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}
