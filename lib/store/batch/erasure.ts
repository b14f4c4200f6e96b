// A batch's table items, erased page by page (lib/erase/erase-batch.ts): a keys-only Query of its partition,
// BatchWriteItem deletes of at most 25 keys a call with UnprocessedItems retried; before each page of records, the
// known-fingerprint items their pixels wrote that still name the batch (conditional deletes). The summary is left for last
// (deleteSummary): while it exists, marked as being deleted, reads answer 404 and a rerun knows the batch is still to
// erase. Apart from BatchStore so that the erase function's bundle carries only these calls.

import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchWriteCommand,
  DeleteCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { backoffDelay } from '../../backoff';
import { EraseIncompleteError } from '../../errors';
import type { TableRef } from '../table/access';
import { BATCH_ATTRIBUTES } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { BATCH_SK, batchKey, batchPartition, knownItemKey, UPLOAD_ITEM_PREFIX } from '../table/schema';
import { WriteExpression } from '../table/update-expression';
import { isMarkedForErasure } from './erasure-mark';

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

/** BatchWriteItem takes at most 25 requests. */
export const BATCH_WRITE_MAX = 25;

/** The batch whose items are erased, and the table they are in. */
export interface BatchItemsRef {
  table: string;
  clientId: string;
  batchId: string;
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

export function buildDeleteRequests(table: string, keys: ItemKey[]) {
  return { RequestItems: { [table]: keys.map((Key) => ({ DeleteRequest: { Key } })) } };
}

/** Ceiling of one wait between UnprocessedItems retries. */
const MAX_RETRY_DELAY_MS = 5_000;

/** Deletes `keys` (≤ 25), retrying UnprocessedItems with jittered exponential backoff. */
export async function deleteItemKeys(
  ddb: DynamoDBDocumentClient,
  table: string,
  keys: ItemKey[],
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

/** Deletes every item of the batch except its summary (its uploads' items too); answers how many it deleted. */
export async function eraseItems(ddb: DynamoDBDocumentClient, ref: BatchItemsRef, opts: ItemEraseOptions = {}): Promise<number> {
  let deleted = 0;
  for (const partition of batchPartitions(ref.clientId, ref.batchId)) deleted += await erasePartition(ddb, ref, partition, opts);
  return deleted;
}

async function erasePartition(ddb: DynamoDBDocumentClient, ref: BatchItemsRef, partition: string, opts: ItemEraseOptions): Promise<number> {
  const pageSize = Math.max(opts.pageSize ?? 500, 1);
  let deleted = 0;
  let startKey: ItemKey | undefined;
  do {
    const page = await ddb.send(new QueryCommand(batchItemKeysQuery(ref.table, ref.clientId, ref.batchId, pageSize, startKey, partition)));
    const keys = (page.Items ?? []).filter((k) => !isSummaryKey(k));
    for (let i = 0; i < keys.length; i += BATCH_WRITE_MAX) {
      const chunk = keys.slice(i, i + BATCH_WRITE_MAX);
      // Derived from the records, so erased before them: a rerun after a crash finds the records and erases these again.
      if (partition === batchPartition(ref.clientId, ref.batchId)) await eraseKnownItems(ddb, ref, chunk);
      await deleteItemKeys(ddb, ref.table, chunk, opts);
      deleted += chunk.length;
      await opts.onDeleted?.(chunk.length);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return deleted;
}

/**
 * Deletes the known-fingerprint items (schema.ts KnownItem) of these records' pixels that name the batch: each only
 * while it names it (a later batch of the client may have written it since, and keeps it).
 */
async function eraseKnownItems(ddb: DynamoDBDocumentClient, ref: BatchItemsRef, records: ItemKey[]): Promise<void> {
  await Promise.all(
    records.map(async (key) => {
      try {
        await ddb.send(new DeleteCommand(knownItemDeleteRequest(ref.table, ref.clientId, ref.batchId, String(key.img_fprint))));
      } catch (err) {
        if (!conditionFailed(err)) throw err;
      }
    }),
  );
}

/** Deletes the client's known item of `fprint` only while it names `batchId`. */
export function knownItemDeleteRequest(table: string, clientId: string, batchId: string, fprint: string): DeleteCommandInput {
  const w = new WriteExpression({ knownIn: 'known_in' });
  return { TableName: table, Key: knownItemKey(clientId, fprint), ...w.when(w.is('knownIn', '=', ':batch', batchId)).condition() };
}

/** Deletes the summary: the erasure's last step. Deleting one already gone is not an error. */
export async function deleteSummary(ddb: DynamoDBDocumentClient, ref: BatchItemsRef): Promise<void> {
  await ddb.send(new DeleteCommand({ TableName: ref.table, Key: batchKey(ref.clientId, ref.batchId) }));
}

/**
 * The erasure's reads and deletes on one table, as the erase job asks them (lib/erase/erase-batch.ts ErasureStore): the
 * mark that says the batch is still being erased, its items but the summary, then the summary.
 */
export class BatchErasure {
  constructor(private readonly table: TableRef) {}

  isMarked(clientId: string, batchId: string): Promise<boolean> {
    return isMarkedForErasure(this.table.ddb, this.table.tableName, clientId, batchId);
  }

  eraseItems(clientId: string, batchId: string, opts?: ItemEraseOptions): Promise<number> {
    return eraseItems(this.table.ddb, { table: this.table.tableName, clientId, batchId }, opts);
  }

  deleteSummary(clientId: string, batchId: string): Promise<void> {
    return deleteSummary(this.table.ddb, { table: this.table.tableName, clientId, batchId });
  }
}
