// A batch's S3 objects, erased page by page: ListObjectsV2 under each of its prefixes, DeleteObjects of each page
// (at most 1000 keys a call, S3's limit). Safe to run again after an interruption: it deletes what is still listed.

import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { type BackoffPolicy, backoffDelay } from '../backoff';
import { EraseIncompleteError } from '../errors';

/** Every top-level prefix under which a batch leaves objects: {prefix}/{clientId}/{batchId}/… */
export const BATCH_OBJECT_PREFIXES = ['uploads', 'processed', 'duplicates', 'failed', 'thumbnails', 'exports'] as const;

/** DeleteObjects takes at most 1000 keys. */
const DELETE_OBJECTS_MAX = 1000;

/** The batch's folder under each prefix; the trailing '/' keeps batch "a" from matching batch "ab". */
export const batchObjectPrefixes = (clientId: string, batchId: string): string[] =>
  BATCH_OBJECT_PREFIXES.map((prefix) => `${prefix}/${clientId}/${batchId}/`);

export interface ObjectEraseOptions {
  /** Keys listed (and so deleted) per call, 1..1000. */
  pageSize?: number;
}

/** Attempts for keys DeleteObjects reports as not deleted (throttling, internal errors). */
const DELETE_ATTEMPTS = 4;

/** Waits between retries of the keys DeleteObjects reports as failed. */
const DELETE_BACKOFF: BackoffPolicy = { baseDelayMs: 200, maxDelayMs: 5_000 };

/** Deletes `keys` (≤ 1000), retrying the ones S3 reports as failed; throws when some outlast the attempts. */
async function deleteKeys(s3: S3Client, bucket: string, keys: string[]): Promise<void> {
  let remaining = keys;
  for (let attempt = 1; remaining.length > 0; attempt++) {
    const out = await s3.send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: remaining.map((Key) => ({ Key })), Quiet: true } }),
    );
    // A key already gone counts as deleted (S3 answers it as such), so only real failures come back here.
    const failed = (out.Errors ?? []).filter((e) => e.Key !== undefined && e.Code !== 'NoSuchKey');
    remaining = failed.map((e) => e.Key as string);
    if (remaining.length === 0) return;
    if (attempt >= DELETE_ATTEMPTS) {
      throw new EraseIncompleteError(`${remaining.length} objects could not be deleted (${failed[0]?.Code ?? 'unknown'})`, {
        keys: remaining,
      });
    }
    await sleep(backoffDelay(attempt - 1, DELETE_BACKOFF));
  }
}

/** Deletes every object under `prefix`; answers how many it deleted. */
async function eraseObjectsUnder(s3: S3Client, bucket: string, prefix: string, opts: ObjectEraseOptions = {}): Promise<number> {
  const pageSize = Math.min(Math.max(opts.pageSize ?? DELETE_OBJECTS_MAX, 1), DELETE_OBJECTS_MAX);
  let deleted = 0;
  // Each page is listed from the start: the previous page's keys are gone, so no continuation token is needed,
  // and a concurrent write landing behind a token is not skipped.
  for (;;) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: pageSize }));
    const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : []));
    if (keys.length === 0) return deleted;
    await deleteKeys(s3, bucket, keys);
    deleted += keys.length;
    if (!page.IsTruncated) return deleted;
  }
}

/** Deletes every object of the batch under every prefix; answers how many it deleted. */
export async function eraseBatchObjects(
  s3: S3Client,
  bucket: string,
  clientId: string,
  batchId: string,
  opts: ObjectEraseOptions = {},
): Promise<number> {
  let deleted = 0;
  for (const prefix of batchObjectPrefixes(clientId, batchId)) deleted += await eraseObjectsUnder(s3, bucket, prefix, opts);
  return deleted;
}
