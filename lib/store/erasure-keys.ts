// What the erasure (lib/erase/items.ts) reads of a batch's table items: their keys, a page at a time, and which of them
// is the summary it deletes last. Apart from BatchStore so that the erase function's bundle carries only this Query.
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { BATCH_ATTRIBUTES } from './attributes';
import { BATCH_SK, UPLOAD_ITEM_PREFIX, batchPartition } from './schema';

export type ItemKey = Record<string, unknown>;

/** The partitions a batch's items live in: its own (records and summary), then its uploads' items (docs/design.md §2). */
export const batchPartitions = (clientId: string, batchId: string): string[] => [
  batchPartition(clientId, batchId),
  UPLOAD_ITEM_PREFIX + batchPartition(clientId, batchId),
];

/**
 * A page of the keys of every item in the batch's own partition, the summary included (or in `partition`, another
 * of batchPartitions); consistent.
 */
export function batchItemKeysQuery(
  table: string,
  clientId: string,
  batchId: string,
  limit: number,
  startKey?: ItemKey,
  partition: string = batchPartition(clientId, batchId),
): QueryCommandInput {
  return {
    TableName: table,
    KeyConditionExpression: '#pk = :pk',
    ProjectionExpression: '#pk, #sk',
    ExpressionAttributeNames: { '#pk': BATCH_ATTRIBUTES.partition, '#sk': BATCH_ATTRIBUTES.sortKey },
    ExpressionAttributeValues: { ':pk': partition },
    ConsistentRead: true,
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

export const isSummaryKey = (key: ItemKey): boolean => key[BATCH_ATTRIBUTES.sortKey] === BATCH_SK;
