// A stop or kill of the whole local stack is not the uploads' fault: every run in flight dies with it. At the next
// start, before the journal's messages are delivered again, the attempt each interrupted message may have counted on
// its upload's item is taken back (docs/design.md §6, "An upload's attempts are bounded"), so that a stack killed
// again and again never gives up on an upload that was merely in flight each time. On AWS no such outside kill of
// every run exists; a run that times out or runs out of memory keeps its attempt counted.
import type { S3Event } from 'aws-lambda';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { decodeS3Key, tryParseUploadKey } from '../lib/ingest/s3-key';
import { BatchStore } from '../lib/store/batch-store';
import type { UploadRef } from '../lib/store/writes';
import { localDynamoClient } from './dynamodb';

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
      return placed ? [{ clientId: placed.clientId, batchId: placed.batchId, key, ...(r.s3.object.eTag ? { etag: r.s3.object.eTag } : {}) }] : [];
    });
  });
}

/** Takes back one attempt of each upload the interrupted messages are about; answers how many uploads it looked at. */
export async function forgiveInterruptedAttempts(bodies: readonly string[], endpoint: string, tableName: string): Promise<number> {
  const uploads = uploadsOfBodies(bodies);
  if (uploads.length === 0) return 0;
  const client = localDynamoClient(endpoint);
  try {
    const store = new BatchStore({ ddb: DynamoDBDocumentClient.from(client), tableName, transactions: false });
    for (const upload of uploads) await store.endAttempt({ ...upload, expiresAt: 0 });
    return uploads.length;
  } finally {
    client.destroy();
  }
}
