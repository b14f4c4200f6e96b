// The store's writes and the reads they depend on, in domain terms (lib/domain.ts): batches, claims, results,
// rejections, duplicates, and the counters each of them moves. Callers never name an attribute or a counter.
//
// Counters stay exact because only the run whose record write succeeded moves them. Where the backend has
// transactions (DynamoDB; `transactions: true`), the record and its counter move are one TransactWriteItems. Without
// them (dynalite) they are two writes, and a crash between the two is repaired by recount(), which the redelivery of
// the crashed upload (repairAfterRedelivery) and the reconciliation sweep call.
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type PutCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { batchVisibilityRequest, reusableResultRequest, reusedDetectionsRequest } from './access-patterns';
import { decodeDetections } from './detections';
import { knownItemRequest } from './known-items';
import { batchGetAll } from './reader';
import { backoffDelay } from '../backoff';
import { BatchClosedError } from '../errors';
import { BatchErasedError, ReviewConflictError } from './errors';
import type { TakeBack } from './take-back';
import { transactWrite } from './transact';
import { keepPaidResult, paidResult, type PaidResult } from './paid-result';
import { toBatch, toImage } from './attributes';
import {
  countsCannotBeRight,
  isCatAt,
  isVisibleBatch,
  machineIsCatOf,
  shouldAutoClose,
  shouldMarkDone,
  type Batch,
  type Counts,
  type Image,
  type Review,
} from '../domain';
import { batchKey, clientKey, imageKey, nowSeconds, splitPartition, type BatchItem, type ImageItem, type UploadItem } from './schema';
import { CLAIM_COUNTS, DUPLICATE_COUNTS, REJECTION_COUNTS, claimRequest, duplicateRequest, finishCounts, finishRequest, keepsDuplicateName, rejectionRequest, releaseRequest, takeoverRequest } from './image-record';
import { addExpectedRequest, autoCloseRequest, closeRequest, markDeletingRequest, markDoneRequest, newBatch, putBatchRequest, type NewBatch } from './batch-summary';
import { catFlagRequest, machineVerdictRequest, reclassifyPageQuery, reviewCounts, reviewRequest, thresholdRequest } from './reviews';
import { countRecords, countRequest, movedBy, recountQuery, setCountsRequest, settledGuard, takesUploads, transaction, unchangedGuard, type SummaryCondition } from './batch-counters';
import { duplicateMarkRequest, endAttemptRequest, noteFingerprintRequest, startAttemptRequest } from './upload-attempts';
import { markExpired } from './expired-batches';
import type { Claim, Finish, UploadRef } from '../domain';

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
  /** The ingest's: deletes what it wrote into a batch being erased (lib/store/take-back.ts). */
  takeBack?: TakeBack;
}

/** How a record write may skip reading the summary back: the summary as the writer read it (its `expected`). */
export interface RecordOptions {
  seen?: Pick<Batch, 'expected'>;
}

/** The attempts counted on an upload's item, the one starting included, and the fingerprint one of them noted. */
export interface AttemptCount {
  attempts: number;
  fprint?: string;
  /** The UTC day whose images quota the upload was beyond, when its first attempt found it so (docs/design.md §11). */
  quotaExceeded?: string;
  /** The UTC day whose images quota the upload was counted against, once counted. */
  quotaCounted?: string;
}

export type ClaimOutcome =
  | { held: true; takeover: boolean; uploadedAt: number }
  /** Someone holds or held this image already: the record that says so. */
  | { held: false; existing: Image };

export type ReclassifyOutcome =
  | { outcome: 'missing' }
  /** Still open or processing: its flags would be set by the ingest too. */
  | { outcome: 'not-done' }
  /** `after`: the last fingerprint handled when the time budget ran out before the batch's end. */
  | { outcome: 'reclassified'; batch: Batch; after?: string };

export type ReviewOutcome =
  /** No such image in the batch (or the batch is gone, or being erased). */
  | { outcome: 'missing' }
  /** The image is a `fail` record: there is no verdict to review. */
  | { outcome: 'failed'; image: Image }
  /** The image is still being classified: no machine verdict yet. */
  | { outcome: 'not-classified'; image: Image }
  | { outcome: 'reviewed'; image: Image };

/** A person's verdict as given: isCat and an optional note. */
export interface Verdict {
  isCat: boolean;
  note?: string;
}

/** Rounds of read-then-write a review makes while other writes (reviews, a re-threshold) change the image under it. */
const REVIEW_ROUNDS = 12;
/** Waits between those rounds: many reviews of one image at once spread out instead of colliding again. */
const REVIEW_BACKOFF = { baseDelayMs: 10, maxDelayMs: 400 };

export interface ReclassifyOptions {
  /** Continue after this fingerprint (an earlier request's `after`). */
  after?: string;
  /** Epoch ms: no new page is started after it. */
  deadline: number;
  pageSize?: number;
}

/** Records read per re-threshold page, and cat flags written at once. */
const RECLASSIFY_PAGE = 500;
const RECLASSIFY_PARALLEL = 16;

export type CloseOutcome = { closed: true; batch: Batch } | { closed: false; reason: 'missing' | 'closed' | 'below-total'; batch?: Batch };

const conditionFailed = (err: unknown): boolean => err instanceof ConditionalCheckFailedException;

/** The transaction failed because its write at `index` found its condition false. */
const conditionFailedAt = (err: unknown, index: number): boolean =>
  err instanceof TransactionCanceledException && err.CancellationReasons?.[index]?.Code === 'ConditionalCheckFailed';

/** The item the transaction's write at `index` found, when that write asked for it (ReturnValuesOnConditionCheckFailure). */
const foundAt = (err: unknown, index: number): Record<string, unknown> | undefined => {
  const item = err instanceof TransactionCanceledException ? err.CancellationReasons?.[index]?.Item : undefined;
  return item ? (fromAttributeValues({ M: item }) as Record<string, unknown>) : undefined;
};

/** A low-level AttributeValue as a plain value (a cancelled transaction's reasons are not unmarshalled for us). */
function fromAttributeValues(v: Record<string, unknown>): unknown {
  if ('N' in v) return Number(v.N);
  if ('S' in v) return v.S;
  if ('BOOL' in v) return v.BOOL;
  if ('NULL' in v) return null;
  if ('M' in v) return Object.fromEntries(Object.entries(v.M as Record<string, Record<string, unknown>>).map(([k, x]) => [k, fromAttributeValues(x)]));
  if ('L' in v) return (v.L as Record<string, unknown>[]).map(fromAttributeValues);
  if ('SS' in v) return new Set(v.SS as string[]);
  if ('NS' in v) return new Set((v.NS as string[]).map(Number));
  return undefined;
}

/** Rounds of a counter move guarded by the exact summary it found, before it moves unguarded and reads the summary back. */
const GUARDED_ROUNDS = 5;

/** Recount rounds before giving up on a batch that keeps changing under it (the next redelivery or sweep retries). */
const RECOUNT_ROUNDS = 5;

export class BatchStore {
  private readonly ddb: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: () => number;
  private readonly knownClients = new Map<string, { known: boolean; until: number }>();

  constructor(private readonly opts: BatchStoreOptions) {
    this.ddb = opts.ddb;
    this.table = opts.tableName;
    this.now = opts.now ?? Date.now;
  }

  get transactions(): boolean {
    return this.opts.transactions;
  }

  // ---- clients ---------------------------------------------------------------------------------------------

  /** Whether the client is registered (client:create). Answers are kept briefly per container. */
  async isRegisteredClient(clientId: string): Promise<boolean> {
    const now = this.now();
    const cached = this.knownClients.get(clientId);
    if (cached && cached.until > now) return cached.known;
    const out = await this.ddb.send(new GetCommand({ TableName: this.table, Key: clientKey(clientId), ProjectionExpression: 'batch_id' }));
    const known = out.Item !== undefined;
    if (this.knownClients.size >= 10_000) this.knownClients.clear();
    // An unknown client may be registered any moment: remember that for a shorter while.
    this.knownClients.set(clientId, { known, until: now + (known ? (this.opts.clientCacheMs ?? 60_000) : 5_000) });
    return known;
  }

  // ---- batches ---------------------------------------------------------------------------------------------

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
  async openBatch(b: Omit<NewBatch, 'debug' | 'expected'>, counter: BatchCounter | undefined): Promise<{ batch: Batch; opened: boolean } | undefined>;
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
    return (await this.opts.takeBack?.openedBatch(clientId, batchId)) ?? false;
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

  /**
   * Sets the batch's counters to what its records add up to (a paged, projected Query of its own partition), only if
   * they did not move meanwhile; repeated until they hold still. Then closes or marks it done if that is now due.
   */
  async recount(clientId: string, batchId: string): Promise<Batch | undefined> {
    for (let round = 0; round < RECOUNT_ROUNDS; round++) {
      const before = await this.getBatch(clientId, batchId);
      if (!before) return undefined;
      const counts = await this.countRecords(clientId, batchId);
      if (sameCounts(before.counts, counts)) return this.settle(before);
      try {
        const out = await this.ddb.send(new UpdateCommand(setCountsRequest(this.table, clientId, batchId, before.counts, counts)));
        return this.settle(toBatch(out.Attributes as BatchItem));
      } catch (err) {
        if (!conditionFailed(err)) throw err;
      }
    }
    return this.getBatch(clientId, batchId);
  }

  /**
   * After a redelivered upload found its work recorded by an earlier delivery. With transactions that delivery's
   * counters moved with its record, so only closing or marking the batch done may be left; without them a crash
   * between the two writes may have left a counter short, and the batch is recounted.
   */
  async repairAfterRedelivery(clientId: string, batchId: string): Promise<Batch | undefined> {
    if (!this.opts.transactions) return this.recount(clientId, batchId);
    const batch = await this.getBatch(clientId, batchId);
    return batch && this.settle(batch);
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

  /** Closes a batch whose declared files all arrived, and stamps it done when it is: each at most once. */
  private async settle(batch: Batch): Promise<Batch> {
    let settled = batch;
    if (shouldAutoClose(settled)) settled = (await this.conditionalUpdate(autoCloseRequest(this.table, batch.clientId, batch.batchId, this.now()))) ?? settled;
    if (shouldMarkDone(settled)) {
      const done = await this.conditionalUpdate(markDoneRequest(this.table, batch.clientId, batch.batchId, this.now(), batch.callbackUrl !== undefined));
      if (done) {
        settled = done;
        await this.opts.onDone?.(done);
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
  private async conditionalUpdate(request: UpdateCommandInput): Promise<Batch | undefined> {
    try {
      const out = await this.ddb.send(new UpdateCommand(request));
      return toBatch(out.Attributes as BatchItem);
    } catch (err) {
      if (conditionFailed(err)) return undefined;
      throw err;
    }
  }

  /**
   * Re-thresholds a done batch from its stored cat confidences, no Rekognition call: remembers the threshold, then
   * pages through its records flipping the cat flags (and sparse cat keys) that change, moving `cats` by what flipped,
   * until the batch's end or the deadline (then `after` says where to go on).
   */
  async reclassify(clientId: string, batchId: string, catMinConfidence: number, opts: ReclassifyOptions): Promise<ReclassifyOutcome> {
    try {
      await this.ddb.send(new UpdateCommand(thresholdRequest(this.table, clientId, batchId, catMinConfidence, this.now())));
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      return { outcome: this.isLive(await this.getBatch(clientId, batchId)) ? 'not-done' : 'missing' };
    }
    let after = opts.after;
    do {
      const out = await this.ddb.send(new QueryCommand(reclassifyPageQuery(this.table, clientId, batchId, opts.pageSize ?? RECLASSIFY_PAGE, after)));
      const changes = ((out.Items ?? []) as ImageItem[])
        .map((item) => ({ ...toImage(item), clientId, batchId }))
        .filter((i) => i.status === 'success' && i.catConfidence !== undefined && isCatAt(i.catConfidence, catMinConfidence) !== machineIsCatOf(i));
      const moved: Partial<Counts> = { cats: 0, corrected: 0 };
      for (let i = 0; i < changes.length; i += RECLASSIFY_PARALLEL) {
        const deltas = await Promise.all(changes.slice(i, i + RECLASSIFY_PARALLEL).map((image) => this.rethreshold(image, catMinConfidence)));
        for (const d of deltas) {
          moved.cats! += d.cats ?? 0;
          moved.corrected! += d.corrected ?? 0;
        }
      }
      // Its condition fails only for a batch being erased or expired meanwhile: it is gone, nothing is left to count
      // for, and no later page is read.
      if ((moved.cats !== 0 || moved.corrected !== 0) && !(await this.conditionalUpdate(countRequest(this.table, clientId, batchId, moved, this.now())))) {
        return { outcome: 'missing' };
      }
      after = out.LastEvaluatedKey ? String(out.LastEvaluatedKey.img_fprint) : undefined;
    } while (after !== undefined && this.now() < opts.deadline);
    const batch = await this.getBatch(clientId, batchId);
    if (!batch || !this.isLive(batch)) return { outcome: 'missing' };
    return { outcome: 'reclassified', batch, ...(after !== undefined ? { after } : {}) };
  }

  /**
   * One image at a new threshold: an unreviewed image's cat flag flips (±1 cats); a reviewed one keeps the person's
   * verdict and only its machine verdict moves (±1 corrected). When another write changed the image since it was read
   * (another re-threshold, a review given or withdrawn) it is read again and judged as it is now.
   */
  private async rethreshold(read: Image, threshold: number): Promise<Partial<Counts>> {
    let image: Image | undefined = read;
    for (let round = 0; image && round < REVIEW_ROUNDS; round++) {
      const machine = isCatAt(image.catConfidence ?? 0, threshold);
      if (image.status !== 'success' || machine === machineIsCatOf(image)) return {};
      const review = image.review;
      try {
        if (review) {
          await this.ddb.send(new UpdateCommand(machineVerdictRequest(this.table, image, review, machine)));
          return { corrected: (review.isCat !== machine ? 1 : 0) - (review.isCat !== review.machineIsCat ? 1 : 0) };
        }
        await this.ddb.send(new UpdateCommand(catFlagRequest(this.table, image, machine)));
        return { cats: machine ? 1 : -1 };
      } catch (err) {
        if (!conditionFailed(err)) throw err;
      }
      image = await this.getImage(image.clientId, image.batchId, image.fprint);
    }
    return {};
  }

  // ---- a person's verdict (docs/design.md §10) -----------------------------------------------------------------

  /**
   * Gives a person's verdict on a classified image (or withdraws it: `verdict` undefined), moving the batch's cats,
   * reviewed and corrected counters with it, in one transaction or as two writes (as every record write). Read, then
   * written only if the image is still as read; when a re-threshold or another review changed it meanwhile, again.
   * A batch being erased or gone answers missing, and nothing is counted into it.
   */
  async review(clientId: string, batchId: string, fprint: string, verdict: Verdict | undefined): Promise<ReviewOutcome> {
    if (!this.isLive(await this.getBatch(clientId, batchId))) return { outcome: 'missing' };
    for (let round = 0; round < REVIEW_ROUNDS; round++) {
      const image = await this.getImage(clientId, batchId, fprint);
      if (!image || image.expiresAt <= nowSeconds(this.now())) return { outcome: 'missing' };
      if (image.status === 'fail') return { outcome: 'failed', image };
      if (image.status !== 'success') return { outcome: 'not-classified', image };
      const review: Review | undefined = verdict && {
        isCat: verdict.isCat,
        ...(verdict.note ? { note: verdict.note } : {}),
        reviewedAt: Math.max(this.now(), (image.review?.reviewedAt ?? 0) + 1),
        machineIsCat: machineIsCatOf(image) === true,
      };
      if (!review && !image.review) return { outcome: 'reviewed', image };
      const request = reviewRequest(this.table, image, review);
      const delta = Object.fromEntries(Object.entries(reviewCounts(image, review)).filter(([, n]) => n !== 0)) as Partial<Counts>;
      try {
        const written = Object.keys(delta).length > 0 ? await this.recordWithCounts(request, { clientId, batchId }, delta) : await this.writeIfLive(request, clientId, batchId);
        if (!written) {
          await sleep(backoffDelay(round, REVIEW_BACKOFF));
          continue;
        }
      } catch (err) {
        if (err instanceof BatchErasedError) return { outcome: 'missing' };
        throw err;
      }
      const after = await this.getImage(clientId, batchId, fprint);
      return after ? { outcome: 'reviewed', image: after } : { outcome: 'missing' };
    }
    throw new ReviewConflictError(`other writes kept changing image ${fprint} while it was reviewed; try again`);
  }

  /** A record write that moves no counter (a review's note alone): only while the batch is live. */
  private async writeIfLive(request: UpdateCommandInput, clientId: string, batchId: string): Promise<boolean> {
    if (!this.isLive(await this.getBatch(clientId, batchId))) throw new BatchErasedError(`batch ${batchId} is being erased`);
    try {
      await this.ddb.send(new UpdateCommand(request));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  // ---- images ----------------------------------------------------------------------------------------------

  async getImage(clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
    const out = await this.ddb.send(new GetCommand({ TableName: this.table, Key: imageKey(clientId, batchId, fprint), ConsistentRead: true }));
    return out.Item ? toImage(out.Item as ImageItem) : undefined;
  }

  /**
   * Claims (batch, fingerprint) for classification, counting a new image as pending; takes over a claim whose lease
   * has expired (already counted). Otherwise answers the record that holds the image. Throws BatchClosedError, leaving
   * nothing written, when the batch takes no more uploads (closed, every declared file arrived) by the time it counts.
   */
  async claim(c: Claim, opts: RecordOptions & { note?: UploadRef } = {}): Promise<ClaimOutcome> {
    // The fingerprint this upload found goes on its own item with the claim, so that an attempt giving up later finds
    // the record without decoding (docs/design.md §6): in the claim's transaction, or written just before it.
    const note = opts.note && noteFingerprintRequest(this.table, opts.note, c.fprint);
    if (note && !this.opts.transactions) await this.ddb.send(new UpdateCommand(note));
    const records = note && this.opts.transactions ? [claimRequest(this.table, c), note] : [claimRequest(this.table, c)];
    let counted: boolean;
    try {
      counted = await this.recordWithCounts(records, c, CLAIM_COUNTS, { ...opts, takingUploads: true });
    } catch (err) {
      // Without transactions the claim may stand uncounted (its count refused, e.g. by a full disk): handed back, so
      // the retry takes it over at once; the count it lacks shows once it finishes, and is recounted then.
      if (!this.opts.transactions && !(err instanceof BatchClosedError) && !(err instanceof BatchErasedError)) await this.release(c).catch(() => undefined);
      throw err;
    }
    if (counted) return { held: true, takeover: false, uploadedAt: c.now };
    const existing = await this.getImage(c.clientId, c.batchId, c.fprint);
    if (!existing) return this.claim(c, opts); // removed between the two calls: try again
    if (existing.status === 'processing' && existing.claimId && (existing.leaseUntil ?? 0) < c.now) {
      try {
        if (note && this.opts.transactions) await this.ddb.send(new UpdateCommand(note));
        await this.ddb.send(new UpdateCommand(takeoverRequest(this.table, c, existing.claimId)));
        return { held: true, takeover: true, uploadedAt: existing.uploadedAt ?? c.now };
      } catch (err) {
        if (!conditionFailed(err)) throw err;
        return this.claim(c, opts); // another run took it over first
      }
    }
    return { held: false, existing };
  }

  /**
   * The client's earlier classification of these pixels in another batch, within retention, or undefined: one
   * eventually consistent index Query (a record written a moment ago may be missed: then DetectLabels is called).
   * The earliest classification (every copy is of it), with the latest person's verdict any of the records carries
   * (docs/design.md §10: a client never reviews the same pixels twice).
   */
  async findReusable(clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
    const out = await this.ddb.send(new QueryCommand(reusableResultRequest(this.table, clientId, fprint, Math.floor(this.now() / 1000))));
    const records = ((out.Items ?? []) as ImageItem[]).filter((i) => splitPartition(i.batch_id).batchId !== batchId && i.labels !== undefined);
    // Never from a batch being erased (or expired): the one strongly consistent read of the batches found.
    const visible = await this.visibleBatches(records.map((i) => i.batch_id));
    const found = records.filter((i) => visible.has(i.batch_id)).map(toImage);
    // Copies carry their original's classification time: of equal times, the original (a copy made before copies
    // carried the other labels' boxes has none).
    const earliest = found.sort((a, b) => (a.classifiedAt ?? 0) - (b.classifiedAt ?? 0) || Number(a.reused === true) - Number(b.reused === true))[0];
    const review = found.flatMap((i) => (i.review ? [i.review] : [])).sort((a, b) => b.reviewedAt - a.reviewedAt)[0];
    if (!earliest) return undefined;
    const { review: _own, reused: _reused, ...classification } = earliest;
    const boxes = await this.ddb.send(new GetCommand(reusedDetectionsRequest(this.table, clientId, earliest.batchId, earliest.fprint)));
    const detections = decodeDetections(boxes.Item?.rek_dets);
    return { ...classification, ...(detections ? { detections } : {}), ...(review ? { review } : {}) };
  }

  /** Which of these batch partitions (at most BATCH_GET_MAX_KEYS distinct) are visible: neither being erased nor expired. */
  private async visibleBatches(partitions: readonly string[]): Promise<Set<string>> {
    const distinct = [...new Set(partitions)];
    if (distinct.length === 0) return new Set();
    const nowS = Math.floor(this.now() / 1000);
    const items = await batchGetAll<BatchItem>({ ddb: this.ddb, tableName: this.table }, batchVisibilityRequest(this.table, distinct).RequestItems);
    return new Set(items.filter((item) => isVisibleBatch(toBatch(item), nowS)).map((item) => item.batch_id));
  }

  /** Records the claimed image's result and moves pending to success or fail; false when the claim was lost. */
  async finish(c: Claim, f: Finish, opts: RecordOptions = {}): Promise<boolean> {
    const record = finishRequest(this.table, c, f);
    // A classified record names its batch in the client's known item of these pixels (POST /v1/fingerprints:known).
    const records = f.result.status === 'success' ? [record, knownItemRequest(this.table, c)] : record;
    return this.recordWithCounts(records, c, finishCounts(f.result), opts);
  }

  /** Keeps the DetectLabels answer on the claim after its record's write failed, for the run taking it over. */
  async keepPaidResult(c: Claim, result: PaidResult): Promise<boolean> {
    return keepPaidResult(this.ddb, this.table, c, result);
  }

  /** The answer kept on a claim this run took over, if a run before kept one. */
  async paidResult(c: Claim): Promise<PaidResult | undefined> {
    return paidResult(this.ddb, this.table, c);
  }

  async release(c: Claim): Promise<void> {
    try {
      await this.ddb.send(new UpdateCommand(releaseRequest(this.table, c)));
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
  }

  /** Records a refused upload (a `fail` record) and counts it; false when it was recorded before (a redelivery). */
  async reject(image: Image, opts: RecordOptions = {}): Promise<boolean> {
    return this.recordWithCounts(rejectionRequest(this.table, image), image, REJECTION_COUNTS, opts);
  }

  /**
   * Counts another upload of a recorded image; false when this upload was counted before (a redelivery). Its name on
   * the original guards that while names are kept; past them, the upload's own item is marked in the same write.
   */
  async addDuplicate(original: Image, fileName: string, upload: UploadRef, opts: RecordOptions & { note?: boolean } = {}): Promise<boolean> {
    const count = duplicateRequest(this.table, original, fileName);
    // The mark sets the upload's fingerprint too; without it, a transaction notes the fingerprint beside the count (a
    // claim's transaction that found the image claimed wrote nothing).
    const uploadItem = keepsDuplicateName(original)
      ? opts.note && this.opts.transactions
        ? [noteFingerprintRequest(this.table, upload, original.fprint)]
        : []
      : [duplicateMarkRequest(this.table, upload, original.fprint)];
    return this.recordWithCounts([...uploadItem, count], original, DUPLICATE_COUNTS, opts);
  }

  // ---- an upload's attempts (docs/design.md §6) -----------------------------------------------------------

  /** Counts an attempt as it starts; answers the attempts so far (this one included) and the fingerprint one found. */
  async startAttempt(upload: UploadRef): Promise<AttemptCount> {
    const out = await this.ddb.send(new UpdateCommand(startAttemptRequest(this.table, upload)));
    const item = (out.Attributes ?? {}) as Partial<UploadItem>;
    return {
      attempts: typeof item.attempts === 'number' ? item.attempts : 1,
      ...(typeof item.seen_fprint === 'string' ? { fprint: item.seen_fprint } : {}),
      ...(typeof item.quota_over === 'string' ? { quotaExceeded: item.quota_over } : {}),
      ...(typeof item.quota_day === 'string' ? { quotaCounted: item.quota_day } : {}),
    };
  }

  /** Takes back an attempt that ended without failing (handed back until another run's lease is over). */
  async endAttempt(upload: UploadRef): Promise<void> {
    try {
      await this.ddb.send(new UpdateCommand(endAttemptRequest(this.table, upload)));
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
  }

  /** Remembers the fingerprint an attempt found, for an attempt that gives up without decoding. */
  async noteFingerprint(upload: UploadRef, fprint: string): Promise<void> {
    await this.ddb.send(new UpdateCommand(noteFingerprintRequest(this.table, upload, fprint)));
  }

  /**
   * Conditional record writes and the counter move they imply: one transaction, or the writes in order then the move.
   * False when a record's condition failed (nothing counted). Throws BatchErasedError, leaving nothing written, when
   * the batch is being erased or gone: without transactions the records written first are deleted again (a crash
   * between the two leaves them in a partition the erasure is still going through, or whose summary is gone).
   */
  private async recordWithCounts(
    record: UpdateCommandInput | PutCommandInput | (UpdateCommandInput | PutCommandInput)[],
    batch: { clientId: string; batchId: string },
    delta: Partial<Counts>,
    opts: RecordOptions & { takingUploads?: boolean } = {},
  ): Promise<boolean> {
    const records = Array.isArray(record) ? record : [record];
    if (this.opts.transactions) return this.transactWithCounts(records, batch, delta, opts);
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
        const key = 'Item' in write ? { batch_id: write.Item?.batch_id, img_fprint: write.Item?.img_fprint } : (write as UpdateCommandInput).Key;
        await this.opts.takeBack?.record(key as Record<string, unknown>);
      }
      throw await this.countRefused(batch, opts.takingUploads === true);
    }
    const after = toBatch(out.Attributes as BatchItem);
    // A count lost earlier (its record written, the move refused) leaves counters no whole writes leave, at the latest
    // when the uncounted image's result is counted: recounted from the records then, and settled (recount settles).
    if (countsCannotBeRight(after.counts)) await this.recount(batch.clientId, batch.batchId);
    else await this.settle(after);
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
        const before = found ? toBatch(found as unknown as BatchItem) : await this.getBatch(batch.clientId, batch.batchId);
        if (!before || !this.isLive(before)) throw new BatchErasedError(`batch ${batch.batchId} is being erased`);
        if (takingUploads && !takesUploads(before)) throw new BatchClosedError(`batch ${batch.batchId} was closed before this upload was counted`, { batchId: batch.batchId });
        // Unguarded, only a summary gone, being erased or closed refuses a move, and none of those ends.
        if (!guard) throw takingUploads ? new BatchClosedError(`batch ${batch.batchId} was closed before this upload was counted`, { batchId: batch.batchId }) : new BatchErasedError(`batch ${batch.batchId} is being erased`);
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
      const after = leaves ?? (await this.getBatch(batch.clientId, batch.batchId));
      if (after) await this.settle(after);
      return true;
    }
  }

  /** Why a counter move was refused: the batch is being erased or gone, or (a claim's) it takes no more uploads. */
  private async countRefused(batch: { clientId: string; batchId: string }, takingUploads: boolean): Promise<Error> {
    const now = takingUploads ? await this.getBatch(batch.clientId, batch.batchId) : undefined;
    if (!now || !this.isLive(now)) return new BatchErasedError(`batch ${batch.batchId} is being erased`);
    return new BatchClosedError(`batch ${batch.batchId} was closed before this upload was counted`, { batchId: batch.batchId });
  }
}

/** Counts a batch about to be opened against its client's batches of the day (lib/store/quota-writes.ts). */
export interface BatchCounter {
  /** false when the day's limit is reached (nothing counted). */
  count(): Promise<boolean>;
}

const sameCounts = (a: Counts, b: Counts): boolean => (Object.keys(b) as (keyof Counts)[]).every((k) => a[k] === b[k]);
