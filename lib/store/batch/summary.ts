// The batch summary: a batch made, closed, settled (auto-closed, stamped done), declared more files, marked for
// erasure, as pure request builders (unit-tested without a network). Expressions name attributes by their domain
// names through lib/store/table/attributes.ts (`#fileName`).
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { type Batch, isVisibleBatch, shouldAutoClose, shouldMarkDone } from '../../domain/batch';
import { ZERO_COUNTS } from '../../domain/counts';
import { markExpired } from '../expiry/expired';
import type { TableAccess } from '../table/access';
import { type BatchAttribute, toBatch, toBatchItem } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { type BatchItem, batchKey, CALLBACK_DUE, nowSeconds, ttlFor } from '../table/schema';
import { batchWrite, type Condition, type WriteExpression } from '../table/update-expression';
import type { TakeBack } from './take-back';

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
export function liveBatch(w: WriteExpression<BatchAttribute>, nowMs: number): Condition<BatchAttribute> {
  return w.and(w.exists('partition'), w.notExists('deleting'), w.is('expiresAt', '>', ':nowS', nowSeconds(nowMs)));
}

/** The batch still takes uploads and declarations: never closed, or opened again. */
const open = (w: WriteExpression<BatchAttribute>): Condition<BatchAttribute> =>
  w.or(w.notExists('closed'), w.is('closed', '=', ':false', false));

/** Creates a batch's summary unless the client already has a batch of that name. */
export function putBatchRequest(table: string, batch: Batch): PutCommandInput {
  const w = batchWrite();
  return { TableName: table, Item: toBatchItem(batch), ...w.when(w.notExists('partition')).condition() };
}

/** Closes an open batch, optionally fixing how many files it gets in all (never below what arrived). */
export function closeRequest(table: string, clientId: string, batchId: string, now: number, expected?: number): UpdateCommandInput {
  const w = batchWrite().set('closed', ':true', true).set('closedAt', ':now', now);
  w.when(liveBatch(w, now), open(w));
  if (expected !== undefined) w.set('expected', ':expected', expected).when(w.compare('total', '<=', w.val(':expected', expected)));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** Closes a batch by itself once as many uploads arrived as were declared. */
export function autoCloseRequest(table: string, clientId: string, batchId: string, now: number): UpdateCommandInput {
  const w = batchWrite().set('closed', ':true', true).set('closedAt', ':now', now);
  w.when(open(w), w.compare('expected', '<=', 'total'));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/**
 * Stamps doneAt, once, and only while the batch is done (closed, nothing pending, every declared file arrived). A batch
 * with a callback is marked as owing it in the same write, so a callback whose first send is lost is still found.
 */
export function markDoneRequest(table: string, clientId: string, batchId: string, now: number, withCallback = false): UpdateCommandInput {
  const w = batchWrite().set('doneAt', ':now', now);
  if (withCallback) w.set('callbackDue', ':due', CALLBACK_DUE);
  w.when(
    w.is('closed', '=', ':true', true),
    w.is('pending', '=', ':zero', 0),
    w.notExists('doneAt'),
    w.notExists('deleting'),
    w.or(w.notExists('expected'), w.compare('expected', '<=', 'total')),
  );
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** More files declared for an open batch: `expected` grows by their number (from 0 when none were declared). */
export function addExpectedRequest(table: string, clientId: string, batchId: string, files: number, nowMs: number): UpdateCommandInput {
  const w = batchWrite();
  w.set('expected', w.plus(w.ifNotExists('expected', w.val(':zero', 0)), w.val(':files', files))).when(liveBatch(w, nowMs), open(w));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/**
 * Marks an existing batch as being erased (DELETE); marking it again is harmless. Not once it has expired: it is gone
 * for its client then, and the expiry sweep erases it (markExpiredRequest).
 */
export function markDeletingRequest(table: string, clientId: string, batchId: string, nowMs: number): UpdateCommandInput {
  const w = batchWrite().set('deleting', ':true', true);
  w.when(w.exists('partition'), w.is('expiresAt', '>', ':nowS', nowSeconds(nowMs)));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

export interface BatchStoreOptions {
  ddb: DynamoDBDocumentClient;
  tableName: string;
  /** Record and counter writes in one transaction (DynamoDB, DynamoDB Local); false for dynalite. */
  transactions: boolean;
  /** How long a client lookup is trusted (ms). */
  clientCacheMs?: number;
  now?: () => number;
  /**
   * Called once per batch, after the write that stamped it done succeeded (completion callbacks and events). A
   * failure is the caller's to log: the batch stays done.
   */
  onDone?: (batch: Batch) => Promise<void>;
  /** The ingest's: deletes what it wrote into a batch being erased (lib/store/batch/take-back.ts). */
  takeBack?: TakeBack;
}

export type CloseOutcome = { closed: true; batch: Batch } | { closed: false; reason: 'missing' | 'closed' | 'below-total'; batch?: Batch };

/** Counts a batch about to be opened against its client's batches of the day (lib/store/client/quota.ts). */
export interface BatchCounter {
  /** false when the day's limit is reached (nothing counted). */
  count(): Promise<boolean>;
}

/**
 * The batch summary's reads and writes: made, opened by its first upload, closed, declared more files, settled (closed
 * or stamped done when due), marked for erasure. The counters (counters.ts) are a part beside it, built on it.
 */
export class BatchSummaries implements TableAccess {
  readonly ddb: DynamoDBDocumentClient;
  readonly table: string;
  readonly now: () => number;
  readonly transactions: boolean;

  constructor(
    access: TableAccess,
    private readonly hooks: Pick<BatchStoreOptions, 'onDone' | 'takeBack'> = {},
  ) {
    this.ddb = access.ddb;
    this.table = access.table;
    this.now = access.now;
    this.transactions = access.transactions;
  }

  async getBatch(clientId: string, batchId: string): Promise<Batch | undefined> {
    const out = await this.ddb.send(new GetCommand({ TableName: this.table, Key: batchKey(clientId, batchId), ConsistentRead: true }));
    return out.Item ? toBatch(out.Item as BatchItem) : undefined;
  }

  /** Creates the batch; false when the client already has one of that name. */
  async createBatch(batch: Batch): Promise<boolean> {
    try {
      await this.ddb.send(new PutCommand(putBatchRequest(this.table, batch)));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  /**
   * The batch, opened by this upload when it is the batch's first (no POST /v1/batches before it): then `opened`.
   * The upload that opens a batch counts it against the client's batches of the day (`counter`); refused, it takes the
   * summary back and answers undefined. Counting after the summary is made leaves no other upload of the new batch
   * refused while the first is still opening it; one that placed itself in the summary meanwhile finds it gone when
   * it counts (treated as erased), unless it was counted first, and then the batch stays.
   */
  async openBatch(b: Omit<NewBatch, 'debug' | 'expected'>): Promise<{ batch: Batch; opened: boolean }>;
  async openBatch(
    b: Omit<NewBatch, 'debug' | 'expected'>,
    counter: BatchCounter | undefined,
  ): Promise<{ batch: Batch; opened: boolean } | undefined>;
  async openBatch(b: Omit<NewBatch, 'debug' | 'expected'>, counter?: BatchCounter): Promise<{ batch: Batch; opened: boolean } | undefined> {
    const existing = await this.getBatch(b.clientId, b.batchId);
    if (existing) return { batch: existing, opened: false };
    const batch = newBatch({ ...b, debug: false });
    if (await this.createBatch(batch)) {
      if (counter && !(await counter.count()) && (await this.dropOpenedBatch(b.clientId, b.batchId))) return undefined;
      return { batch, opened: true };
    }
    const opened = await this.getBatch(b.clientId, b.batchId); // opened concurrently by another upload
    if (!opened) return this.openBatch(b, counter); // ...and erased since
    return { batch: opened, opened: false };
  }

  /** Takes back a summary openBatch just made, unless an upload counted into it since; true when it went. */
  async dropOpenedBatch(clientId: string, batchId: string): Promise<boolean> {
    return (await this.hooks.takeBack?.openedBatch(clientId, batchId)) ?? false;
  }

  /** Closes an open batch (POST …:close), optionally with the number of files it gets in all. */
  async close(clientId: string, batchId: string, expected?: number): Promise<CloseOutcome> {
    try {
      const out = await this.ddb.send(new UpdateCommand(closeRequest(this.table, clientId, batchId, this.now(), expected)));
      return { closed: true, batch: await this.settle(toBatch(out.Attributes as BatchItem)) };
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      const batch = await this.getBatch(clientId, batchId);
      if (!batch || !this.isLive(batch)) return { closed: false, reason: 'missing' };
      if (batch.closed) return { closed: false, reason: 'closed', batch };
      return { closed: false, reason: 'below-total', batch };
    }
  }

  /** Declares more files for an open batch; undefined when it is closed or missing. */
  async addExpected(clientId: string, batchId: string, files: number): Promise<Batch | undefined> {
    try {
      const out = await this.ddb.send(new UpdateCommand(addExpectedRequest(this.table, clientId, batchId, files, this.now())));
      return toBatch(out.Attributes as BatchItem);
    } catch (err) {
      if (conditionFailed(err)) return undefined;
      throw err;
    }
  }

  /** Closes a batch whose declared files all arrived, and stamps it done when it is: each at most once. */
  async settle(batch: Batch): Promise<Batch> {
    let settled = batch;
    if (shouldAutoClose(settled))
      settled = (await this.conditionalUpdate(autoCloseRequest(this.table, batch.clientId, batch.batchId, this.now()))) ?? settled;
    if (shouldMarkDone(settled)) {
      const done = await this.conditionalUpdate(
        markDoneRequest(this.table, batch.clientId, batch.batchId, this.now(), batch.callbackUrl !== undefined),
      );
      if (done) {
        settled = done;
        await this.hooks.onDone?.(done);
      }
    }
    return settled;
  }

  /** Marks the batch as being erased; undefined when it does not exist or has expired. */
  async markDeleting(clientId: string, batchId: string): Promise<Batch | undefined> {
    return this.conditionalUpdate(markDeletingRequest(this.table, clientId, batchId, this.now()));
  }

  /**
   * Marks an expired batch as being erased, stamped `now`, unless its erasure was queued at or after `staleBefore`
   * (epoch ms) already; true when marked, and the caller then queues the erasure (lib/erase/expiry.ts).
   */
  async markExpired(clientId: string, batchId: string, staleBefore: number): Promise<boolean> {
    return markExpired({ ddb: this.ddb, tableName: this.table }, clientId, batchId, this.now(), staleBefore);
  }

  /** The batch exists, is not being erased and has not expired (isVisibleBatch, at this store's clock). */
  isLive(batch: Batch | undefined): boolean {
    return isVisibleBatch(batch, nowSeconds(this.now()));
  }

  /** The summary after a conditional update, or undefined when its condition did not hold (someone else did it). */
  async conditionalUpdate(request: UpdateCommandInput): Promise<Batch | undefined> {
    try {
      const out = await this.ddb.send(new UpdateCommand(request));
      return toBatch(out.Attributes as BatchItem);
    } catch (err) {
      if (conditionFailed(err)) return undefined;
      throw err;
    }
  }
}
