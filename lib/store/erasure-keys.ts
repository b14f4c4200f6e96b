// What the erasure (lib/erase/items.ts) reads of a batch's table items: their keys, a page at a time, and which of them
// is the summary it deletes last. Apart from BatchStore so that the erase function's bundle carries only this Query.
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { BATCH_ATTRIBUTES } from './attributes';
import { BATCH_SK, batchPartition } from './schema';

export type ItemKey = Record<string, unknown>;

/** A page of the keys of every item in the batch's own partition, the summary included; consistent. */
export function batchItemKeysQuery(table: string, clientId: string, batchId: string, limit: number, startKey?: ItemKey): QueryCommandInput {
  return {
    TableName: table,
    KeyConditionExpression: '#pk = :pk',
    ProjectionExpression: '#pk, #sk',
    ExpressionAttributeNames: { '#pk': BATCH_ATTRIBUTES.partition, '#sk': BATCH_ATTRIBUTES.sortKey },
    ExpressionAttributeValues: { ':pk': batchPartition(clientId, batchId) },
    ConsistentRead: true,
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

export const isSummaryKey = (key: ItemKey): boolean => key[BATCH_ATTRIBUTES.sortKey] === BATCH_SK;
