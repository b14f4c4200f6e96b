// The batch's counters: the move every record write makes (guarded so a transaction's writer knows the summary it
// leaves), and the recount from the records that repairs a move lost without transactions.
import {
  type DynamoDBDocumentClient,
  PutCommand,
  type PutCommandInput,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../domain/batch';
import { type Counts, countsCannotBeRight, ZERO_COUNTS } from '../../domain/counts';
import { BatchClosedError } from '../../errors';
import type { TableAccess } from '../table/access';
import { type BatchAttribute, type ImageAttribute, imageNames, toBatch } from '../table/attributes';
import { conditionFailed, conditionFailedAt, foundAt } from '../table/condition';
import { BatchErasedError } from '../table/errors';
import { BATCH_SK, type BatchItem, batchKey, batchPartition, type ImageItem } from '../table/schema';
import { transaction, transactWrite } from '../table/transact';
import { batchWrite, type Condition } from '../table/update-expression';
import { type BatchSummaries, liveBatch } from './summary';
import type { TakeBack } from './take-back';

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
  const w = batchWrite();
  for (const [name, n] of moved) w.add(name, `:${name}`, n);
  w.when(liveBatch(w, nowMs));
  if (opts.takingUploads === true)
    w.when(w.or(w.notExists('closed'), w.is('closed', '=', ':false', false), w.compare('total', '<', 'expected')));
  if (opts.guard) w.when(opts.guard);
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    ...w.update(),
    ReturnValues: 'ALL_NEW',
    // In a transaction (which answers no values), a refused move answers the summary as it found it.
    ...(opts.guard ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
  };
}

/** A condition on the summary that countRequest joins to its own (any batchWrite()'s parts fit any other's). */
export type SummaryCondition = Condition<BatchAttribute>;

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
  const w = batchWrite();
  const closedAlready = w.is('closed', '=', ':guardTrue', true);
  // Not due to close by itself: closed already, nothing declared, or fewer arrived than declared once this counts.
  let closes: SummaryCondition;
  if (!arrives) closes = w.or(closedAlready, w.notExists('expected'), w.compare('total', '<', 'expected'));
  else if (seenExpected === undefined) closes = w.or(closedAlready, w.notExists('expected'));
  else {
    const unchanged = w.is('expected', '=', ':seenExpected', seenExpected);
    closes = w.or(closedAlready, w.and(unchanged, w.is('total', '<', ':lastBeforeExpected', seenExpected - 1)));
  }
  if (pending > 0) return closes;
  // Not due to be done: open, still something pending once this moves, or done already.
  const done = w.or(
    w.notExists('closed'),
    w.is('closed', '<>', ':guardTrue', true),
    w.is('pending', '>', ':guardPending', pending < 0 ? 1 : 0),
    w.exists('doneAt'),
  );
  return w.and(closes, done);
}

/**
 * Holds only on a summary whose counters and lifecycle fields are exactly `b`'s: the writer then knows the summary its
 * move leaves (b moved by the delta) without reading it back.
 */
export function unchangedGuard(b: Batch): SummaryCondition {
  const w = batchWrite();
  const parts = (Object.keys(ZERO_COUNTS) as (keyof Counts)[]).map((name) => w.is(name, '=', `:was_${name}`, b.counts[name]));
  const closed = w.is('closed', '=', ':wasClosed', b.closed);
  parts.push(b.closed ? closed : w.or(w.notExists('closed'), closed));
  parts.push(b.expected === undefined ? w.notExists('expected') : w.is('expected', '=', ':wasExpected', b.expected));
  parts.push(b.doneAt === undefined ? w.notExists('doneAt') : w.exists('doneAt'));
  return w.and(...parts);
}

/** The summary `b` moved by `delta`: what a move guarded by unchangedGuard(b) leaves. */
export const movedBy = (b: Batch, delta: Partial<Counts>): Batch => ({
  ...b,
  counts: Object.fromEntries(
    (Object.keys(b.counts) as (keyof Counts)[]).map((k) => [k, b.counts[k] + (delta[k] ?? 0)]),
  ) as unknown as Counts,
});

/** Whether a new image may still count itself in the batch: the claim's condition of countRequest, read side. */
export const takesUploads = (b: Pick<Batch, 'closed' | 'expected' | 'counts'>): boolean =>
  !b.closed || (b.expected !== undefined && b.counts.total < b.expected);

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
  const w = batchWrite();
  for (const n of Object.keys(counts) as (keyof Counts)[]) {
    const held = w.is(n, '=', `:was_${n}`, was[n]);
    // A counter an older summary lacks reads as 0.
    w.set(n, `:${n}`, counts[n]).when(was[n] === 0 ? w.or(held, w.notExists(n)) : held);
  }
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** How a record write may skip reading the summary back: the summary as the writer read it (its `expected`). */
export interface RecordOptions {
  seen?: Pick<Batch, 'expected'>;
}

/** Rounds of a counter move guarded by the exact summary it found, before it moves unguarded and reads the summary back. */
const GUARDED_ROUNDS = 5;

/** Recount rounds before giving up on a batch that keeps changing under it (the next redelivery or sweep retries). */
const RECOUNT_ROUNDS = 5;

const sameCounts = (a: Counts, b: Counts): boolean => (Object.keys(b) as (keyof Counts)[]).every((k) => a[k] === b[k]);

/** The record writes of every entity and the counter moves they imply, and the recount that repairs a lost move. */
export class BatchCounters implements TableAccess {
  readonly ddb: DynamoDBDocumentClient;
  readonly table: string;
  readonly now: () => number;
  readonly transactions: boolean;

  /** Built on the summaries it moves: it reads them (getBatch) and settles what a move leaves due (settle). */
  constructor(
    readonly batches: BatchSummaries,
    private readonly takeBack?: TakeBack,
  ) {
    this.ddb = batches.ddb;
    this.table = batches.table;
    this.now = batches.now;
    this.transactions = batches.transactions;
  }

  /**
   * Sets the batch's counters to what its records add up to (a paged, projected Query of its own partition), only if
   * they did not move meanwhile; repeated until they hold still. Then closes or marks it done if that is now due.
   */
  async recount(clientId: string, batchId: string): Promise<Batch | undefined> {
    for (let round = 0; round < RECOUNT_ROUNDS; round++) {
      const before = await this.batches.getBatch(clientId, batchId);
      if (!before) return undefined;
      const counts = await this.countRecords(clientId, batchId);
      if (sameCounts(before.counts, counts)) return this.batches.settle(before);
      try {
        const out = await this.ddb.send(new UpdateCommand(setCountsRequest(this.table, clientId, batchId, before.counts, counts)));
        return this.batches.settle(toBatch(out.Attributes as BatchItem));
      } catch (err) {
        if (!conditionFailed(err)) throw err;
      }
    }
    return this.batches.getBatch(clientId, batchId);
  }

  /**
   * After a redelivered upload found its work recorded by an earlier delivery. With transactions that delivery's
   * counters moved with its record, so only closing or marking the batch done may be left; without them a crash
   * between the two writes may have left a counter short, and the batch is recounted.
   */
  async repairAfterRedelivery(clientId: string, batchId: string): Promise<Batch | undefined> {
    if (!this.transactions) return this.recount(clientId, batchId);
    const batch = await this.batches.getBatch(clientId, batchId);
    return batch && this.batches.settle(batch);
  }

  private async countRecords(clientId: string, batchId: string): Promise<Counts> {
    const items: ImageItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.ddb.send(new QueryCommand({ ...recountQuery(this.table, clientId, batchId), ExclusiveStartKey: start }));
      items.push(...((out.Items ?? []) as ImageItem[]));
      start = out.LastEvaluatedKey;
    } while (start);
    return countRecords(items);
  }

  /**
   * Conditional record writes and the counter move they imply: one transaction, or the writes in order then the move.
   * False when a record's condition failed (nothing counted). Throws BatchErasedError, leaving nothing written, when
   * the batch is being erased or gone: without transactions the records written first are deleted again (a crash
   * between the two leaves them in a partition the erasure is still going through, or whose summary is gone).
   */
  async recordWithCounts(
    record: UpdateCommandInput | PutCommandInput | (UpdateCommandInput | PutCommandInput)[],
    batch: { clientId: string; batchId: string },
    delta: Partial<Counts>,
    opts: RecordOptions & { takingUploads?: boolean } = {},
  ): Promise<boolean> {
    const records = Array.isArray(record) ? record : [record];
    if (this.transactions) return this.transactWithCounts(records, batch, delta, opts);
    const count = countRequest(this.table, batch.clientId, batch.batchId, delta, this.now(), opts);
    for (const write of records) {
      try {
        if ('Item' in write) await this.ddb.send(new PutCommand(write as PutCommandInput));
        else await this.ddb.send(new UpdateCommand(write as UpdateCommandInput));
      } catch (err) {
        if (conditionFailed(err)) return false;
        throw err;
      }
    }
    let out;
    try {
      out = await this.ddb.send(new UpdateCommand(count));
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      for (const write of records) {
        const key =
          'Item' in write ? { batch_id: write.Item?.batch_id, img_fprint: write.Item?.img_fprint } : (write as UpdateCommandInput).Key;
        await this.takeBack?.record(key as Record<string, unknown>);
      }
      throw await this.countRefused(batch, opts.takingUploads === true);
    }
    const after = toBatch(out.Attributes as BatchItem);
    // A count lost earlier (its record written, the move refused) leaves counters no whole writes leave, at the latest
    // when the uncounted image's result is counted: recounted from the records then, and settled (recount settles).
    if (countsCannotBeRight(after.counts)) await this.recount(batch.clientId, batch.batchId);
    else await this.batches.settle(after);
    return true;
  }

  /**
   * The records and the counter move as one transaction. A transaction answers no values, so the move is guarded
   * (docs/design.md §9): given the summary the writer read (`seen`), it holds only where it leaves nothing to settle,
   * and the writer needs no read. When the guard finds settling may be due, the cancelled move answers the summary
   * it found; the move is sent again guarded by exactly that summary, so the summary it leaves is known and is
   * settled without a read. Only a batch that keeps moving under it for GUARDED_ROUNDS rounds is moved unguarded
   * and read back. Without `seen` it is moved unguarded and read back.
   */
  private async transactWithCounts(
    records: (UpdateCommandInput | PutCommandInput)[],
    batch: { clientId: string; batchId: string },
    delta: Partial<Counts>,
    opts: RecordOptions & { takingUploads?: boolean },
  ): Promise<boolean> {
    const takingUploads = opts.takingUploads === true;
    let guard: SummaryCondition | undefined = opts.seen ? settledGuard(delta, opts.seen.expected) : undefined;
    let leaves: Batch | undefined;
    for (let round = 0; ; round++) {
      const count = countRequest(this.table, batch.clientId, batch.batchId, delta, this.now(), { takingUploads, guard });
      try {
        await transactWrite(this.ddb, transaction(...records, count));
      } catch (err) {
        if (records.some((_, i) => conditionFailedAt(err, i))) return false;
        if (!conditionFailedAt(err, records.length)) throw err;
        const found = foundAt(err, records.length);
        const before = found ? toBatch(found as unknown as BatchItem) : await this.batches.getBatch(batch.clientId, batch.batchId);
        if (!before || !this.batches.isLive(before)) throw new BatchErasedError(`batch ${batch.batchId} is being erased`);
        if (takingUploads && !takesUploads(before))
          throw new BatchClosedError(`batch ${batch.batchId} was closed before this upload was counted`, { batchId: batch.batchId });
        // Unguarded, only a summary gone, being erased or closed refuses a move, and none of those ends.
        if (!guard)
          throw takingUploads
            ? new BatchClosedError(`batch ${batch.batchId} was closed before this upload was counted`, { batchId: batch.batchId })
            : new BatchErasedError(`batch ${batch.batchId} is being erased`);
        // Refused by the guard: settling may be due, or the summary moved since `before` was found.
        if (round + 1 >= GUARDED_ROUNDS) {
          guard = undefined;
          leaves = undefined;
        } else {
          guard = unchangedGuard(before);
          leaves = movedBy(before, delta);
        }
        continue;
      }
      if (guard && !leaves) return true; // guarded by settledGuard: nothing to settle
      const after = leaves ?? (await this.batches.getBatch(batch.clientId, batch.batchId));
      if (after) await this.batches.settle(after);
      return true;
    }
  }

  /** Why a counter move was refused: the batch is being erased or gone, or (a claim's) it takes no more uploads. */
  private async countRefused(batch: { clientId: string; batchId: string }, takingUploads: boolean): Promise<Error> {
    const now = takingUploads ? await this.batches.getBatch(batch.clientId, batch.batchId) : undefined;
    if (!now || !this.batches.isLive(now)) return new BatchErasedError(`batch ${batch.batchId} is being erased`);
    return new BatchClosedError(`batch ${batch.batchId} was closed before this upload was counted`, { batchId: batch.batchId });
  }
}
