// The erasure job (DELETE /v1/batches/{batchId} queues it, lib/erase/message.ts; functions/erase runs it). It erases
// only a batch still marked as being deleted, so a stale message never touches a batch created again under the same
// name after the erasure finished.
import type { S3Client } from '@aws-sdk/client-s3';
import { isMarkedForErasure } from '../store/batch/erasure-mark';
import type { TableRef } from '../store/table/access';
import { type BatchErasureReport, eraseBatch } from './erase-batch';
import { decodeEraseMessage } from './message';

/** The table as the wiring hands it to the store (lib/store/table/access.ts), the bucket, and its S3 client. */
export interface EraseJobDeps extends TableRef {
  s3: S3Client;
  bucketName: string;
}

/** Runs (or resumes) the erasure; undefined when there is no batch marked for it. */
export async function runEraseJob(deps: EraseJobDeps, body: string): Promise<BatchErasureReport | undefined> {
  const { clientId, batchId } = decodeEraseMessage(body);
  if (!(await isMarkedForErasure(deps.ddb, deps.tableName, clientId, batchId))) return undefined;
  return eraseBatch({ s3: deps.s3, ddb: deps.ddb }, { clientId, batchId, bucket: deps.bucketName, table: deps.tableName });
}
