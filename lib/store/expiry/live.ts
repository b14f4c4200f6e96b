// The count check's read (local stack, docs/design.md "A full disk"): every batch summary not yet expired, a page at a
// time, as (client, batch) pairs, from the keys-only batches-expiring index every summary is in.
import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchNames } from '../table/attributes';
import { batchKeysOf } from '../table/query';
import { EXPIRY_DUE, INDEX } from '../table/schema';

type StartKey = Record<string, unknown>;

export function liveBatchesQuery(table: string, nowS: number, limit: number, startKey?: StartKey): QueryCommandInput {
  return {
    TableName: table,
    IndexName: INDEX.batchesExpiring,
    KeyConditionExpression: '#expiryDue = :due AND #expiresAt > :nowS',
    ExpressionAttributeNames: batchNames('expiryDue', 'expiresAt'),
    ExpressionAttributeValues: { ':due': EXPIRY_DUE, ':nowS': nowS },
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

/** Every live batch's key, page by page. */
export function readLiveBatches(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string },
  nowS: number,
  pageSize = 500,
): AsyncGenerator<{ clientId: string; batchId: string }> {
  return batchKeysOf(ctx.ddb, (start) => liveBatchesQuery(ctx.tableName, nowS, pageSize, start));
}
