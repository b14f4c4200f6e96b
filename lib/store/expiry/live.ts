// The count check's read (local stack, docs/design.md "A full disk"): every batch summary not yet expired, a page at a
// time, as (client, batch) pairs, from the keys-only batches-expiring index every summary is in.
import { type DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchNames } from '../table/attributes';
import { EXPIRY_DUE, INDEX, splitPartition } from '../table/schema';

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
export async function* readLiveBatches(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string },
  nowS: number,
  pageSize = 500,
): AsyncGenerator<{ clientId: string; batchId: string }> {
  let start: StartKey | undefined;
  do {
    const page = await ctx.ddb.send(new QueryCommand(liveBatchesQuery(ctx.tableName, nowS, pageSize, start)));
    for (const key of page.Items ?? []) yield splitPartition(String(key.batch_id));
    start = page.LastEvaluatedKey;
  } while (start);
}
