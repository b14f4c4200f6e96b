// A batch summary read: by key (GetItem), a page's by their keys, and whether batches are visible (BatchGetItem), each
// request built beside what sends it. Reads only: a function that only reads batches bundles no write of them.
import { type BatchGetCommandInput, GetCommand, type GetCommandInput } from '@aws-sdk/lib-dynamodb';
import { type Batch, isVisibleBatch } from '../../domain/batch';
import { toBatch } from '../table/attributes';
import { type StoreContext, storeNowS, translate } from '../table/query';
import { BATCH_SK, type BatchItem, batchKey } from '../table/schema';

/** The batch summary, GetItem. */
export function batchSummaryRequest(tableName: string, clientId: string, batchId: string): GetCommandInput {
  return { TableName: tableName, Key: batchKey(clientId, batchId) };
}

/** BatchGetItem of whole batch summaries, by their keys (a page of client-batches). */
export function batchSummariesRequest(tableName: string, keys: readonly { batch_id: string; img_fprint: string }[]): BatchGetCommandInput {
  return { RequestItems: { [tableName]: { Keys: keys.map((k) => ({ batch_id: k.batch_id, img_fprint: k.img_fprint })) } } };
}

/**
 * BatchGetItem of batch summaries by partition (at most 100), projected to what decides whether a batch is visible
 * (isVisibleBatch: its expiry and the erasure mark), strongly consistent.
 */
export function batchVisibilityRequest(tableName: string, partitions: readonly string[]): BatchGetCommandInput {
  return {
    RequestItems: {
      [tableName]: {
        Keys: partitions.map((p) => ({ batch_id: p, img_fprint: BATCH_SK })),
        ProjectionExpression: '#partition, #sortKey, #ttl, #deleting',
        ExpressionAttributeNames: { '#partition': 'batch_id', '#sortKey': 'img_fprint', '#ttl': 'ttl', '#deleting': 'deleting' },
        ConsistentRead: true,
      },
    },
  };
}

/** The batch's summary, or undefined when missing, expired or being erased. */
export async function getBatch(ctx: StoreContext, clientId: string, batchId: string): Promise<Batch | undefined> {
  const out = await ctx.ddb.send(new GetCommand(batchSummaryRequest(ctx.tableName, clientId, batchId))).catch(translate);
  const batch = out.Item ? toBatch(out.Item as BatchItem) : undefined;
  return isVisibleBatch(batch, storeNowS(ctx)) ? batch : undefined;
}
