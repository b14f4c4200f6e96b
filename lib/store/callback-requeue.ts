// The reads and the write with which the reconciliation sweep finds completion callbacks whose message was lost
// (lib/reconcile/callbacks.ts): apart from BatchStore, so that the sweep's bundle (and so its role) carries only these.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { toBatch } from './attributes';
import type { Batch } from '../domain';
import { batchKey, splitPartition, type BatchItem } from './schema';
import { callbackRequeueRequest, dueCallbacksQuery } from './writes';

/** The batches owing their completion callback that turned done before `doneBefore` (epoch ms), oldest first. */
export async function* batchesOwingCallbacks(
  ddb: DynamoDBDocumentClient,
  table: string,
  doneBefore: number,
  pageSize = 100,
): AsyncGenerator<{ clientId: string; batchId: string }> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(new QueryCommand(dueCallbacksQuery(table, doneBefore, pageSize, start)));
    for (const item of page.Items ?? []) yield splitPartition(String(item.batch_id));
    start = page.LastEvaluatedKey;
  } while (start);
}

/** A batch's summary, read consistently; undefined when it is gone. */
export async function readSummary(ddb: DynamoDBDocumentClient, table: string, clientId: string, batchId: string): Promise<Batch | undefined> {
  const out = await ddb.send(new GetCommand({ TableName: table, Key: batchKey(clientId, batchId), ConsistentRead: true }));
  return out.Item ? toBatch(out.Item as BatchItem) : undefined;
}

/** Stamps that the callback is queued again; false when it no longer owes it or another sweep stamped it first. */
export async function stampCallbackRequeued(ddb: DynamoDBDocumentClient, table: string, batch: Batch, now: number): Promise<boolean> {
  try {
    await ddb.send(new UpdateCommand(callbackRequeueRequest(table, batch.clientId, batch.batchId, now, batch.callbackRequeuedAt)));
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}
