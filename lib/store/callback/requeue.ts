// The reads and the write with which the reconciliation sweep finds completion callbacks whose message was lost
// (lib/reconcile/callbacks.ts): apart from BatchStore, so that the sweep's bundle (and so its role) carries only these.
import {
  type DynamoDBDocumentClient,
  GetCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../domain/batch';
import type { TableRef } from '../table/access';
import { batchNames, toBatch } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { batchKeysOf } from '../table/query';
import { type BatchItem, batchKey, CALLBACK_DUE, INDEX } from '../table/schema';
import { batchWrite } from '../table/update-expression';

/** The batches owing their completion callback that turned done before `doneBefore` (epoch ms), oldest first. */
export function batchesOwingCallbacks(
  ddb: DynamoDBDocumentClient,
  table: string,
  doneBefore: number,
  pageSize = 100,
): AsyncGenerator<{ clientId: string; batchId: string }> {
  return batchKeysOf(ddb, (start) => dueCallbacksQuery(table, doneBefore, pageSize, start));
}

/** A batch's summary, read consistently; undefined when it is gone. */
export async function readSummary(
  ddb: DynamoDBDocumentClient,
  table: string,
  clientId: string,
  batchId: string,
): Promise<Batch | undefined> {
  const out = await ddb.send(new GetCommand({ TableName: table, Key: batchKey(clientId, batchId), ConsistentRead: true }));
  return out.Item ? toBatch(out.Item as BatchItem) : undefined;
}

/** Stamps that the callback is queued again; false when it no longer owes it or another sweep stamped it first. */
export async function stampCallbackRequeued(ddb: DynamoDBDocumentClient, table: string, batch: Batch, now: number): Promise<boolean> {
  try {
    await ddb.send(new UpdateCommand(callbackRequeueRequest(table, batch.clientId, batch.batchId, now, batch.callbackRequeuedAt)));
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
}

/** A page of batches that owe their callback, done before `doneBefore` (epoch ms), oldest first. */
export function dueCallbacksQuery(table: string, doneBefore: number, limit: number, startKey?: Record<string, unknown>): QueryCommandInput {
  return {
    TableName: table,
    IndexName: INDEX.callbacksDue,
    KeyConditionExpression: '#callbackDue = :due AND #doneAt < :before',
    ExpressionAttributeNames: batchNames('callbackDue', 'doneAt'),
    ExpressionAttributeValues: { ':due': CALLBACK_DUE, ':before': doneBefore },
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

/**
 * Stamps that the sweep queues the callback again, only if it still owes it and nobody stamped it since `previous`
 * (so two sweeps never both queue it); the batch must exist and not be being erased.
 */
export function callbackRequeueRequest(
  table: string,
  clientId: string,
  batchId: string,
  now: number,
  previous: number | undefined,
): UpdateCommandInput {
  const w = batchWrite().set('callbackRequeuedAt', ':now', now);
  const asRead = previous === undefined ? w.notExists('callbackRequeuedAt') : w.is('callbackRequeuedAt', '=', ':previous', previous);
  w.when(w.exists('callbackDue'), w.notExists('deleting'), asRead);
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update() };
}

/** The callbacks owed, as the sweep reads and stamps them (lib/reconcile/callbacks.ts OwedCallbacks). */
export class CallbackRequeues {
  constructor(private readonly table: TableRef) {}

  owing(doneBefore: number): AsyncGenerator<{ clientId: string; batchId: string }> {
    return batchesOwingCallbacks(this.table.ddb, this.table.tableName, doneBefore);
  }

  summary(clientId: string, batchId: string): Promise<Batch | undefined> {
    return readSummary(this.table.ddb, this.table.tableName, clientId, batchId);
  }

  stampRequeued(batch: Batch, now: number): Promise<boolean> {
    return stampCallbackRequeued(this.table.ddb, this.table.tableName, batch, now);
  }
}
