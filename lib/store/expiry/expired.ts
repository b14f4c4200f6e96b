// Expiry (docs/design.md §6, "A batch expires whole"): the sweep's read (access pattern 12), batches past their expiry
// a page at a time as (client, batch) pairs, and the mark that an expired batch's erasure is queued. Apart from
// BatchStore so that the expire function's bundle (and so its role) carries only these calls.
import {
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../table/access';
import { batchNames } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { batchKey, EXPIRY_DUE, INDEX, nowSeconds, splitPartition } from '../table/schema';
import { batchWrite } from '../table/update-expression';

/** Where a page of the index ends (its LastEvaluatedKey). */
export type ExpiryStartKey = Record<string, unknown>;

export interface ExpiredBatchesPage {
  /** Each with its expiry (the summary's ttl, epoch seconds). */
  batches: { clientId: string; batchId: string; expiresAt: number }[];
  /** Where the next page starts; absent on the last. */
  next?: ExpiryStartKey;
}

export async function readExpiredBatches(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string },
  nowS: number,
  pageSize: number,
  startKey?: ExpiryStartKey,
): Promise<ExpiredBatchesPage> {
  const page = await ctx.ddb.send(new QueryCommand(expiredBatchesQuery(ctx.tableName, nowS, pageSize, startKey)));
  const batches = (page.Items ?? []).map((key) => ({ ...splitPartition(String(key.batch_id)), expiresAt: Number(key.ttl) }));
  return { batches, ...(page.LastEvaluatedKey ? { next: page.LastEvaluatedKey } : {}) };
}

/**
 * Marks an expired batch as being erased, stamped `now` (epoch ms), unless its erasure was queued at or after
 * `staleBefore` already (markExpiredRequest); true when marked, and the caller then queues the erasure.
 */
export async function markExpired(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string },
  clientId: string,
  batchId: string,
  now: number,
  staleBefore: number,
): Promise<boolean> {
  try {
    await ctx.ddb.send(new UpdateCommand(markExpiredRequest(ctx.tableName, clientId, batchId, now, staleBefore)));
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
}

/** A page of the batches whose expiry (epoch s) is at or before `nowS`, soonest expired first; keys only. */
export function expiredBatchesQuery(table: string, nowS: number, limit: number, startKey?: Record<string, unknown>): QueryCommandInput {
  return {
    TableName: table,
    IndexName: INDEX.batchesExpiring,
    KeyConditionExpression: '#expiryDue = :due AND #expiresAt <= :nowS',
    ExpressionAttributeNames: batchNames('expiryDue', 'expiresAt'),
    ExpressionAttributeValues: { ':due': EXPIRY_DUE, ':nowS': nowS },
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

/**
 * Marks an expired batch as being erased and stamps when its erasure is queued: once, or again when the erasure queued
 * before `staleBefore` (epoch ms) has still not deleted the summary (its message lost). Fails (condition) otherwise,
 * so two sweeps never both queue it.
 */
export function markExpiredRequest(table: string, clientId: string, batchId: string, now: number, staleBefore: number): UpdateCommandInput {
  const w = batchWrite().set('deleting', ':true', true).set('eraseQueuedAt', ':now', now);
  w.when(
    w.exists('partition'),
    w.is('expiresAt', '<=', ':nowS', nowSeconds(now)),
    w.or(w.notExists('eraseQueuedAt'), w.is('eraseQueuedAt', '<', ':stale', staleBefore)),
  );
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update() };
}

/** The expiry sweep's reads and marks on one table (lib/erase/expiry.ts ExpiryStore). */
export class ExpiredBatches {
  constructor(private readonly table: TableRef) {}

  expiredPage(nowS: number, pageSize: number, startKey?: ExpiryStartKey): Promise<ExpiredBatchesPage> {
    return readExpiredBatches(this.table, nowS, pageSize, startKey);
  }

  markExpired(clientId: string, batchId: string, now: number, staleBefore: number): Promise<boolean> {
    return markExpired(this.table, clientId, batchId, now, staleBefore);
  }
}
