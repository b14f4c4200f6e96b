// The batch summary: a batch made, closed, settled (auto-closed, stamped done), declared more files, marked for
// erasure, as pure request builders (unit-tested without a network). Expressions name attributes by their domain
// names through lib/store/attributes.ts (`#fileName`).
import type { DeleteCommandInput, PutCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchNames, toBatchItem, type BatchAttribute } from './attributes';
import { ZERO_COUNTS, type Batch } from '../domain';
import { CALLBACK_DUE, batchKey, nowSeconds, ttlFor } from './schema';

export interface NewBatch {
  clientId: string;
  batchId: string;
  now: number;
  debug: boolean;
  retentionDays: number;
  expected?: number;
  callbackUrl?: string;
  /** The cat threshold its images are classified at (the configured one), until a :reclassify moves it. */
  catMinConfidence?: number;
}

/** A batch as it starts: open, nothing counted. The one place a summary is made. */
export function newBatch(b: NewBatch): Batch {
  return {
    clientId: b.clientId,
    batchId: b.batchId,
    createdAt: b.now,
    debug: b.debug,
    retentionDays: b.retentionDays,
    expiresAt: ttlFor(b.now, b.retentionDays),
    ...(b.expected !== undefined ? { expected: b.expected } : {}),
    closed: false,
    counts: { ...ZERO_COUNTS },
    ...(b.callbackUrl !== undefined ? { callbackUrl: b.callbackUrl } : {}),
    ...(b.catMinConfidence !== undefined ? { catMinConfidence: b.catMinConfidence } : {}),
  };
}

/**
 * The write side of the one visibility rule (reads: isVisibleBatch in lib/domain.ts): a summary that exists, is not being
 * erased and has not expired. Every write into a batch made for a client's request or an upload holds only on it, so
 * an expired batch takes nothing more, whatever route or upload asks (docs/design.md §6, "A batch expires whole").
 */
export function liveBatch(nowMs: number): { condition: string; names: BatchAttribute[]; values: Record<string, unknown> } {
  return {
    condition: 'attribute_exists(#partition) AND attribute_not_exists(#deleting) AND #expiresAt > :nowS',
    names: ['partition', 'deleting', 'expiresAt'],
    values: { ':nowS': nowSeconds(nowMs) },
  };
}

/** Creates a batch's summary unless the client already has a batch of that name. */
export function putBatchRequest(table: string, batch: Batch): PutCommandInput {
  return {
    TableName: table,
    Item: toBatchItem(batch),
    ConditionExpression: 'attribute_not_exists(#partition)',
    ExpressionAttributeNames: batchNames('partition'),
  };
}

/** Closes an open batch, optionally fixing how many files it gets in all (never below what arrived). */
export function closeRequest(table: string, clientId: string, batchId: string, now: number, expected?: number): UpdateCommandInput {
  const withExpected = expected !== undefined;
  const live = liveBatch(now);
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `SET #closed = :true, #closedAt = :now${withExpected ? ', #expected = :expected' : ''}`,
    ConditionExpression:
      `${live.condition} AND (attribute_not_exists(#closed) OR #closed = :false)` + (withExpected ? ' AND #total <= :expected' : ''),
    ExpressionAttributeNames: batchNames(...live.names, 'closed', 'closedAt', ...(withExpected ? (['expected', 'total'] as const) : [])),
    ExpressionAttributeValues: { ...live.values, ':true': true, ':false': false, ':now': now, ...(withExpected ? { ':expected': expected } : {}) },
    ReturnValues: 'ALL_NEW',
  };
}

/** Closes a batch by itself once as many uploads arrived as were declared. */
export function autoCloseRequest(table: string, clientId: string, batchId: string, now: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #closed = :true, #closedAt = :now',
    ConditionExpression: '(attribute_not_exists(#closed) OR #closed = :false) AND #expected <= #total',
    ExpressionAttributeNames: batchNames('closed', 'closedAt', 'expected', 'total'),
    ExpressionAttributeValues: { ':true': true, ':false': false, ':now': now },
    ReturnValues: 'ALL_NEW',
  };
}

/**
 * Stamps doneAt, once, and only while the batch is done (closed, nothing pending, every declared file arrived). A batch
 * with a callback is marked as owing it in the same write, so a callback whose first send is lost is still found.
 */
export function markDoneRequest(table: string, clientId: string, batchId: string, now: number, withCallback = false): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: withCallback ? 'SET #doneAt = :now, #callbackDue = :due' : 'SET #doneAt = :now',
    ConditionExpression:
      '#closed = :true AND #pending = :zero AND attribute_not_exists(#doneAt) AND attribute_not_exists(#deleting) AND ' +
      '(attribute_not_exists(#expected) OR #expected <= #total)',
    ExpressionAttributeNames: batchNames('closed', 'pending', 'doneAt', 'deleting', 'expected', 'total', ...(withCallback ? (['callbackDue'] as const) : [])),
    ExpressionAttributeValues: { ':true': true, ':zero': 0, ':now': now, ...(withCallback ? { ':due': CALLBACK_DUE } : {}) },
    ReturnValues: 'ALL_NEW',
  };
}

/** More files declared for an open batch: `expected` grows by their number (from 0 when none were declared). */
export function addExpectedRequest(table: string, clientId: string, batchId: string, files: number, nowMs: number): UpdateCommandInput {
  const live = liveBatch(nowMs);
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #expected = if_not_exists(#expected, :zero) + :files',
    ConditionExpression: `${live.condition} AND (attribute_not_exists(#closed) OR #closed = :false)`,
    ExpressionAttributeNames: batchNames(...live.names, 'expected', 'closed'),
    ExpressionAttributeValues: { ...live.values, ':zero': 0, ':files': files, ':false': false },
    ReturnValues: 'ALL_NEW',
  };
}

/**
 * Deletes a summary the ingest has just opened for an upload whose object turned out to be gone (erased with its
 * batch meanwhile), unless an upload counted into it since.
 */
export function dropOpenedBatchRequest(table: string, clientId: string, batchId: string): DeleteCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    ConditionExpression: '#total = :zero',
    ExpressionAttributeNames: batchNames('total'),
    ExpressionAttributeValues: { ':zero': 0 },
  };
}

/**
 * Marks an existing batch as being erased (DELETE); marking it again is harmless. Not once it has expired: it is gone
 * for its client then, and the expiry sweep erases it (markExpiredRequest).
 */
export function markDeletingRequest(table: string, clientId: string, batchId: string, nowMs: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #deleting = :true',
    ConditionExpression: 'attribute_exists(#partition) AND #expiresAt > :nowS',
    ExpressionAttributeNames: batchNames('partition', 'deleting', 'expiresAt'),
    ExpressionAttributeValues: { ':true': true, ':nowS': nowSeconds(nowMs) },
    ReturnValues: 'ALL_NEW',
  };
}
