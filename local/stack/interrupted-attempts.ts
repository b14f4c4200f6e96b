// A stop or kill of the whole local stack is not the uploads' fault: every run in flight dies with it. At the next
// start, before the journal's messages are delivered again, the attempt each interrupted message may have counted on
// its upload's item is taken back (docs/design.md §6, "An upload's attempts are bounded"), so that a stack killed
// again and again never gives up on an upload that was merely in flight each time. Only after a clean stop, though: a
// crash may be the upload's own doing (a file that exhausts memory takes the whole process with it), and forgiving
// it would crash-loop the stack on that upload forever. A stop that finishes writes a mark in the data dir; the next
// start takes it away, and forgives only when it found it. On AWS no such outside kill of every run exists; a run
// that times out or runs out of memory keeps its attempt counted.

import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { S3Event } from 'aws-lambda';
import { documentClientOf } from '../../lib/aws/clients';
import type { UploadRef } from '../../lib/domain/upload';
import { decodeS3Key, tryParseUploadKey } from '../../lib/ingest/s3-key';
import { BatchStore } from '../../lib/store/batch-store';
import { localDynamoClient } from '../dynamodb/dynamodb';

/** The uploads (key and ETag) S3 event message bodies notify, placed in their batch. */
export function uploadsOfBodies(bodies: readonly string[]): Omit<UploadRef, 'expiresAt'>[] {
  return bodies.flatMap((body) => {
    let records: S3Event['Records'];
    try {
      records = (JSON.parse(body) as Partial<S3Event>).Records ?? [];
    } catch {
      return [];
    }
    return records.flatMap((r) => {
      if (r?.s3?.object?.key === undefined) return [];
      let key: string;
      try {
        key = decodeS3Key(r.s3.object.key);
      } catch {
        return [];
      }
      const placed = tryParseUploadKey(key);
      return placed
        ? [{ clientId: placed.clientId, batchId: placed.batchId, key, ...(r.s3.object.eTag ? { etag: r.s3.object.eTag } : {}) }]
        : [];
    });
  });
}

/** Takes back one attempt of each upload the interrupted messages are about; answers how many uploads it looked at. */
export async function forgiveInterruptedAttempts(bodies: readonly string[], endpoint: string, tableName: string): Promise<number> {
  const uploads = uploadsOfBodies(bodies);
  if (uploads.length === 0) return 0;
  const client = localDynamoClient(endpoint);
  try {
    const store = new BatchStore({ ddb: documentClientOf(client), tableName, transactions: false });
    for (const upload of uploads) await store.endAttempt({ ...upload, expiresAt: 0 });
    return uploads.length;
  } finally {
    client.destroy();
  }
}

/** The mark an orderly stop leaves in the data dir. */
export const CLEAN_STOP_FILE = 'clean-stop';

/** Leaves the mark of a clean stop: the runs the stop cut short were the stop's doing, not their uploads'. */
export async function markCleanStop(dataDir: string): Promise<void> {
  await writeFile(path.join(dataDir, CLEAN_STOP_FILE), `stopped cleanly at ${new Date().toISOString()}\n`);
}

/** Whether the previous run stopped cleanly; takes the mark away, so that a crash of this run leaves none. */
export async function takeCleanStopMark(dataDir: string): Promise<boolean> {
  const file = path.join(dataDir, CLEAN_STOP_FILE);
  if (!existsSync(file)) return false;
  await rm(file, { force: true });
  return true;
}

/**
 * At a start: after a clean stop, takes back the attempts of the interrupted uploads; after a crash, leaves them
 * counted (answers how many uploads it forgave).
 */
export async function forgiveAfterCleanStop(
  dataDir: string,
  bodies: readonly string[],
  endpoint: string,
  tableName: string,
): Promise<number> {
  if (!(await takeCleanStopMark(dataDir))) return 0;
  return forgiveInterruptedAttempts(bodies, endpoint, tableName);
}
