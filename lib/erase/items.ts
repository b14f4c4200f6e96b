// A batch's table items, erased page by page: a keys-only Query of its partition, BatchWriteItem deletes of at most
// 25 keys a call with UnprocessedItems retried. Written against the raw partition key value ({clientId}#{batchId}),
// so it serves whatever encoding the store uses. The summary is left for last (deleteSummary): while it exists,
// marked as being deleted, reads answer 404 and a rerun knows the batch is still to erase.
import { BatchWriteCommand, DeleteCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay } from '../backoff';
import { EraseIncompleteError } from './errors';

/** BatchWriteItem takes at most 25 requests. */
export const BATCH_WRITE_MAX = 25;

export interface PartitionRef {
  table: string;
  /** The partition key's value: the batch scoped by its client. */
  partitionKey: string;
  /** Attribute names of the table's key. */
  keyNames?: { partition: string; sort: string };
  /** The summary's sort key: skipped by eraseItems, deleted by deleteSummary. */
  summarySortKey: string;
}

export interface ItemEraseOptions {
  /** Keys queried per page (the deletes go 25 at a time). */
  pageSize?: number;
  /** Attempts for UnprocessedItems before giving up (the erasure can be run again). */
  attempts?: number;
  /** Backoff base for UnprocessedItems retries (ms), doubled per attempt. */
  retryBaseMs?: number;
  onDeleted?: (count: number) => void | Promise<void>;
}

const DEFAULT_KEY_NAMES = { partition: 'batch_id', sort: 'img_fprint' };

type Key = Record<string, unknown>;

/** The pure request builders (unit-tested). */
export function buildPartitionKeysQuery(ref: PartitionRef, limit: number, startKey?: Key) {
  const names = ref.keyNames ?? DEFAULT_KEY_NAMES;
  return {
    TableName: ref.table,
    KeyConditionExpression: '#pk = :pk',
    ProjectionExpression: '#pk, #sk',
    ExpressionAttributeNames: { '#pk': names.partition, '#sk': names.sort },
    ExpressionAttributeValues: { ':pk': ref.partitionKey },
    ConsistentRead: true,
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

export function buildDeleteRequests(table: string, keys: Key[]) {
  return { RequestItems: { [table]: keys.map((Key) => ({ DeleteRequest: { Key } })) } };
}

/** Ceiling of one wait between UnprocessedItems retries. */
const MAX_RETRY_DELAY_MS = 5_000;

/** Deletes `keys` (≤ 25), retrying UnprocessedItems with jittered exponential backoff. */
export async function deleteItemKeys(
  ddb: DynamoDBDocumentClient,
  table: string,
  keys: Key[],
  opts: Pick<ItemEraseOptions, 'attempts' | 'retryBaseMs'> = {},
): Promise<void> {
  const attempts = opts.attempts ?? 8;
  const backoff = { baseDelayMs: opts.retryBaseMs ?? 50, maxDelayMs: MAX_RETRY_DELAY_MS };
  let remaining = keys;
  for (let attempt = 1; remaining.length > 0; attempt++) {
    const out = await ddb.send(new BatchWriteCommand(buildDeleteRequests(table, remaining)));
    remaining = (out.UnprocessedItems?.[table] ?? []).flatMap((r) => (r.DeleteRequest?.Key ? [r.DeleteRequest.Key] : []));
    if (remaining.length === 0) return;
    if (attempt >= attempts) {
      throw new EraseIncompleteError(`${remaining.length} items stayed unprocessed after ${attempts} attempts`, { keys: remaining });
    }
    await sleep(backoffDelay(attempt - 1, backoff));
  }
}

/** Deletes every item of the partition except its summary; answers how many it deleted. */
export async function eraseItems(ddb: DynamoDBDocumentClient, ref: PartitionRef, opts: ItemEraseOptions = {}): Promise<number> {
  const names = ref.keyNames ?? DEFAULT_KEY_NAMES;
  const pageSize = Math.max(opts.pageSize ?? 500, 1);
  let deleted = 0;
  let startKey: Key | undefined;
  do {
    const page = await ddb.send(new QueryCommand(buildPartitionKeysQuery(ref, pageSize, startKey)));
    const keys = (page.Items ?? []).filter((k) => k[names.sort] !== ref.summarySortKey);
    for (let i = 0; i < keys.length; i += BATCH_WRITE_MAX) {
      const chunk = keys.slice(i, i + BATCH_WRITE_MAX);
      await deleteItemKeys(ddb, ref.table, chunk, opts);
      deleted += chunk.length;
      await opts.onDeleted?.(chunk.length);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return deleted;
}

/** Deletes the summary: the erasure's last step. Deleting one already gone is not an error. */
export async function deleteSummary(ddb: DynamoDBDocumentClient, ref: PartitionRef): Promise<void> {
  const names = ref.keyNames ?? DEFAULT_KEY_NAMES;
  await ddb.send(
    new DeleteCommand({ TableName: ref.table, Key: { [names.partition]: ref.partitionKey, [names.sort]: ref.summarySortKey } }),
  );
}
