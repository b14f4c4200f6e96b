// The erasure job (DELETE /v1/batches/{batchId} queues it, lib/erase/message.ts; functions/erase runs it). It erases
// only a batch still marked as being deleted, so a stale message never touches a batch created again under the same
// name after the erasure finished.
import type { S3Client } from '@aws-sdk/client-s3';
import { type BatchErasureReport, type ErasureStore, eraseBatch } from './erase-batch';
import { decodeEraseMessage } from './message';

/** The store's part the erasure asks (lib/store/batch/erasure.ts BatchErasure), the bucket, and its S3 client. */
export interface EraseJobDeps {
  store: ErasureStore;
  s3: S3Client;
  bucketName: string;
}

/** Runs (or resumes) the erasure; undefined when there is no batch marked for it. */
export async function runEraseJob(deps: EraseJobDeps, body: string): Promise<BatchErasureReport | undefined> {
  const { clientId, batchId } = decodeEraseMessage(body);
  if (!(await deps.store.isMarked(clientId, batchId))) return undefined;
  return eraseBatch(deps, { clientId, batchId, bucket: deps.bucketName });
}
