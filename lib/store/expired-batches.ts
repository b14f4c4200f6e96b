// The expiry sweep's read (access pattern 12): batches past their expiry, a page at a time, as (client, batch) pairs.
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { splitPartition } from './schema';
import { expiredBatchesQuery } from './writes';

type StartKey = Record<string, unknown>;

export interface ExpiredBatchesPage {
  /** Each with its expiry (the summary's ttl, epoch seconds). */
  batches: { clientId: string; batchId: string; expiresAt: number }[];
  /** Where the next page starts; absent on the last. */
  next?: StartKey;
}

export async function readExpiredBatches(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string },
  nowS: number,
  pageSize: number,
  startKey?: StartKey,
): Promise<ExpiredBatchesPage> {
  const page = await ctx.ddb.send(new QueryCommand(expiredBatchesQuery(ctx.tableName, nowS, pageSize, startKey)));
  const batches = (page.Items ?? []).map((key) => ({ ...splitPartition(String(key.batch_id)), expiresAt: Number(key.ttl) }));
  return { batches, ...(page.LastEvaluatedKey ? { next: page.LastEvaluatedKey } : {}) };
}
