// The batch's counters: the move every record write makes (guarded so a transaction's writer knows the summary it
// leaves), and the recount from the records that repairs a move lost without transactions.
import type { PutCommandInput, QueryCommandInput, TransactWriteCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchNames, imageNames, type BatchAttribute, type ImageAttribute } from './attributes';
import { ZERO_COUNTS, type Batch, type Counts } from '../domain';
import { BATCH_SK, batchKey, batchPartition, type ImageItem } from './schema';
import { liveBatch } from './batch-summary';

/**
 * Moves counters by `delta` in one update, answering the summary after it; only on a live summary (liveBatch), so that
 * no write of an upload in flight recreates an erased batch's summary or counts into one being erased or expired.
 * With `takingUploads` (a new image's claim), only while the batch takes uploads: open, or closed with fewer arrived
 * than it was told of. A close that made the batch done between the upload's read of it and its claim so refuses the
 * claim in the very write that would count it (docs/design.md §6).
 */
export function countRequest(
  table: string,
  clientId: string,
  batchId: string,
  delta: Partial<Counts>,
  nowMs: number,
  opts: { takingUploads?: boolean; guard?: SummaryCondition } = {},
): UpdateCommandInput {
  const moved = (Object.entries(delta) as [keyof Counts, number][]).filter(([, n]) => n !== 0);
  const live = liveBatch(nowMs);
  const taking = opts.takingUploads === true;
  const guard = opts.guard;
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `ADD ${moved.map(([name]) => `#${name} :${name}`).join(', ')}`,
    ConditionExpression:
      live.condition +
      (taking ? ' AND (attribute_not_exists(#closed) OR #closed = :false OR #total < #expected)' : '') +
      (guard ? ` AND (${guard.condition})` : ''),
    ExpressionAttributeNames: batchNames(
      ...live.names,
      ...moved.map(([name]) => name),
      ...(taking ? (['closed', 'total', 'expected'] as const) : []),
      ...(guard?.names ?? []),
    ),
    ExpressionAttributeValues: {
      ...live.values,
      ...Object.fromEntries(moved.map(([name, n]) => [`:${name}`, n])),
      ...(taking ? { ':false': false } : {}),
      ...guard?.values,
    },
    ReturnValues: 'ALL_NEW',
    // In a transaction (which answers no values), a refused move answers the summary as it found it.
    ...(guard ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
  };
}

/** A condition on the summary, in the placeholders countRequest joins to its own. */
export interface SummaryCondition {
  condition: string;
  names: BatchAttribute[];
  values: Record<string, unknown>;
}

/**
 * Holds only on a summary that moving it by `delta` cannot make due to close by itself (shouldAutoClose) or to be
 * stamped done (shouldMarkDone), so the writer of a move it guarded has nothing to settle and need not read the
 * summary back (a transaction answers no values: docs/design.md §9). `seenExpected` is `expected` as the writer read
 * it: a condition cannot add, so "total + 1 < expected" is written "expected is still what was read and total <
 * expected - 1". Stricter than needed where that is simpler: a false alarm only costs the writer a second round.
 */
export function settledGuard(delta: Partial<Counts>, seenExpected: number | undefined): SummaryCondition {
  const arrives = (delta.total ?? 0) > 0;
  const pending = delta.pending ?? 0;
  const names: BatchAttribute[] = ['closed', 'expected'];
  const values: Record<string, unknown> = { ':guardTrue': true };
  // Not due to close by itself: closed already, nothing declared, or fewer arrived than declared once this counts.
  let closes: string;
  if (!arrives) {
    closes = '#closed = :guardTrue OR attribute_not_exists(#expected) OR #total < #expected';
    names.push('total');
  } else if (seenExpected === undefined) {
    closes = '#closed = :guardTrue OR attribute_not_exists(#expected)';
  } else {
    closes = '#closed = :guardTrue OR (#expected = :seenExpected AND #total < :lastBeforeExpected)';
    names.push('total');
    Object.assign(values, { ':seenExpected': seenExpected, ':lastBeforeExpected': seenExpected - 1 });
  }
  if (pending > 0) return { condition: closes, names, values };
  // Not due to be done: open, still something pending once this moves, or done already.
  names.push('pending', 'doneAt');
  values[':guardPending'] = pending < 0 ? 1 : 0;
  const done = 'attribute_not_exists(#closed) OR #closed <> :guardTrue OR #pending > :guardPending OR attribute_exists(#doneAt)';
  return { condition: `(${closes}) AND (${done})`, names, values };
}

/**
 * Holds only on a summary whose counters and lifecycle fields are exactly `b`'s: the writer then knows the summary its
 * move leaves (b moved by the delta) without reading it back.
 */
export function unchangedGuard(b: Batch): SummaryCondition {
  const parts: string[] = [];
  const names: BatchAttribute[] = ['closed', 'expected', 'doneAt'];
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(ZERO_COUNTS) as (keyof Counts)[]) {
    parts.push(`#${name} = :was_${name}`);
    names.push(name);
    values[`:was_${name}`] = b.counts[name];
  }
  parts.push(b.closed ? '#closed = :wasClosed' : '(attribute_not_exists(#closed) OR #closed = :wasClosed)');
  values[':wasClosed'] = b.closed;
  if (b.expected === undefined) parts.push('attribute_not_exists(#expected)');
  else {
    parts.push('#expected = :wasExpected');
    values[':wasExpected'] = b.expected;
  }
  parts.push(b.doneAt === undefined ? 'attribute_not_exists(#doneAt)' : 'attribute_exists(#doneAt)');
  return { condition: parts.join(' AND '), names, values };
}

/** The summary `b` moved by `delta`: what a move guarded by unchangedGuard(b) leaves. */
export const movedBy = (b: Batch, delta: Partial<Counts>): Batch => ({
  ...b,
  counts: Object.fromEntries((Object.keys(b.counts) as (keyof Counts)[]).map((k) => [k, b.counts[k] + (delta[k] ?? 0)])) as unknown as Counts,
});

/** Whether a new image may still count itself in the batch: the claim's condition of countRequest, read side. */
export const takesUploads = (b: Pick<Batch, 'closed' | 'expected' | 'counts'>): boolean =>
  !b.closed || (b.expected !== undefined && b.counts.total < b.expected);

/** Writes that must land together, as one TransactWriteItems. */
export function transaction(...writes: (UpdateCommandInput | PutCommandInput)[]): TransactWriteCommandInput {
  return {
    TransactItems: writes.map((w) => {
      const { ReturnValues: _ignored, ...rest } = w as UpdateCommandInput;
      return 'Item' in w ? { Put: rest as never } : { Update: rest as never };
    }),
  };
}

/**
 * A consistent read of a batch's own partition, images only: from the first record, or after `afterFprint` (paging
 * by hand). Projected to the named attributes.
 */
export function batchRecordsQuery(
  table: string,
  clientId: string,
  batchId: string,
  projection: readonly ImageAttribute[],
  afterFprint?: string,
): QueryCommandInput {
  const [start, value] = afterFprint === undefined ? [':summary', BATCH_SK] : [':after', afterFprint];
  return {
    TableName: table,
    KeyConditionExpression: `#partition = :partition AND #fprint > ${start}`,
    ProjectionExpression: projection.map((a) => `#${a}`).join(', '),
    ExpressionAttributeNames: imageNames('partition', 'fprint', ...projection),
    ExpressionAttributeValues: { ':partition': batchPartition(clientId, batchId), [start]: value },
    ConsistentRead: true,
  };
}

/** What a recount reads of each record. */
const RECOUNT_ATTRIBUTES = ['status', 'isCat', 'duplicates', 'reused', 'review'] as const satisfies readonly ImageAttribute[];

/** What a recount reads: every record of the batch. */
export const recountQuery = (table: string, clientId: string, batchId: string): QueryCommandInput =>
  batchRecordsQuery(table, clientId, batchId, RECOUNT_ATTRIBUTES);

/** The counters the records add up to. */
export function countRecords(items: readonly Pick<ImageItem, 'op_status' | 'rek_iscat' | 'dup_count' | 'reused' | 'review'>[]): Counts {
  const counts = { ...ZERO_COUNTS };
  for (const item of items) {
    const duplicates = item.dup_count ?? 0;
    counts.total += 1 + duplicates;
    counts.duplicate += duplicates;
    if (item.op_status === 'processing') counts.pending++;
    else if (item.op_status === 'success') counts.success++;
    else counts.fail++;
    if (item.op_status === 'success' && item.rek_iscat === true) counts.cats++;
    if (item.op_status === 'success' && item.reused === true) counts.reused++;
    if (item.op_status === 'success' && item.review !== undefined) {
      counts.reviewed++;
      if (item.review.cat !== item.review.mc) counts.corrected++;
    }
  }
  return counts;
}

/** Sets the counters to a recount, only if they still hold what was read before counting. */
export function setCountsRequest(table: string, clientId: string, batchId: string, was: Counts, counts: Counts): UpdateCommandInput {
  const names = Object.keys(counts) as (keyof Counts)[];
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')}`,
    // A counter an older summary lacks reads as 0.
    ConditionExpression: names.map((n) => `(#${n} = :was_${n}${was[n] === 0 ? ` OR attribute_not_exists(#${n})` : ''})`).join(' AND '),
    ExpressionAttributeNames: batchNames(...names),
    ExpressionAttributeValues: {
      ...Object.fromEntries(names.map((n) => [`:${n}`, counts[n]])),
      ...Object.fromEntries(names.map((n) => [`:was_${n}`, was[n]])),
    },
    ReturnValues: 'ALL_NEW',
  };
}
