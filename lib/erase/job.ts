// The erasure job (DELETE /v1/batches/{batchId} queues it; functions/erase runs it): one batch, named by its client.
// It erases only a batch still marked as being deleted, so a stale message never touches a batch created again
// under the same name after the erasure finished.
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { BatchStore } from '../store/batch-store';
import { BATCH_SK, batchPartition } from '../store/schema';
import { eraseBatch, type BatchErasureReport } from './erase-batch';

const eraseMessageSchema = z.strictObject({ type: z.literal('erase'), clientId: z.string().min(1), batchId: z.string().min(1) });

export type EraseMessage = z.infer<typeof eraseMessageSchema>;

export const encodeEraseMessage = (clientId: string, batchId: string): string =>
  JSON.stringify({ type: 'erase', clientId, batchId } satisfies EraseMessage);

export const decodeEraseMessage = (text: string): EraseMessage => eraseMessageSchema.parse(JSON.parse(text));

export interface EraseJobDeps {
  s3: S3Client;
  ddb: DynamoDBDocumentClient;
  store: BatchStore;
  bucketName: string;
  tableName: string;
}

/** Runs (or resumes) the erasure; undefined when there is no batch marked for it. */
export async function runEraseJob(deps: EraseJobDeps, body: string): Promise<BatchErasureReport | undefined> {
  const { clientId, batchId } = decodeEraseMessage(body);
  const batch = await deps.store.getBatch(clientId, batchId);
  if (!batch?.deleting) return undefined;
  return eraseBatch(
    { s3: deps.s3, ddb: deps.ddb },
    {
      clientId,
      batchId,
      bucket: deps.bucketName,
      partition: { table: deps.tableName, partitionKey: batchPartition(clientId, batchId), summarySortKey: BATCH_SK },
    },
  );
}
