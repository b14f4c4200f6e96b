// The erasure job (DELETE /v1/batches/{batchId} queues it, lib/erase/message.ts; functions/erase runs it). It erases
// only a batch still marked as being deleted, so a stale message never touches a batch created again under the same
// name after the erasure finished.
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isMarkedForErasure } from '../store/erasure-mark';
import { eraseBatch, type BatchErasureReport } from './erase-batch';
import { decodeEraseMessage } from './message';

interface EraseJobDeps {
  s3: S3Client;
  ddb: DynamoDBDocumentClient;
  bucketName: string;
  tableName: string;
}

/** Runs (or resumes) the erasure; undefined when there is no batch marked for it. */
export async function runEraseJob(deps: EraseJobDeps, body: string): Promise<BatchErasureReport | undefined> {
  const { clientId, batchId } = decodeEraseMessage(body);
  if (!(await isMarkedForErasure(deps.ddb, deps.tableName, clientId, batchId))) return undefined;
  return eraseBatch({ s3: deps.s3, ddb: deps.ddb }, { clientId, batchId, bucket: deps.bucketName, table: deps.tableName });
}
