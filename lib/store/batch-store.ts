// The store's writes and the reads they depend on, in domain terms (lib/domain.ts): batches, claims, results,
// rejections, duplicates, and the counters each of them moves. Callers never name an attribute or a counter.
//
// Counters stay exact because only the run whose record write succeeded moves them. Where the backend has
// transactions (DynamoDB; `transactions: true`), the record and its counter move are one TransactWriteItems. Without
// them (dynalite) they are two writes, and a crash between the two is repaired by recount(), which the redelivery of
// the crashed upload (repairAfterRedelivery) and the reconciliation sweep call.
//
// A facade composed of the entities' parts, each in its folder with its request builders beside what sends them, each
// built on the table (table/access.ts) and on the parts below it, never on this facade: the batch summary
// (batch/summary.ts) and its counters (batch/counters.ts, built on the summaries); the image record (image/record.ts)
// and its claim (image/claim.ts), which write through the counters, with the reuse lookup (image/reuse.ts); an
// upload's attempts (upload/attempts.ts); reviews and the re-threshold (review/verdicts.ts); the registered clients
// (client/registrations.ts); the model answering now (model/answering.ts). Each method hands its call down one way.
// Consumers declare the narrow part they need where they use it (lib/ingest/deps.ts IngestStore).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../domain/batch';
import type { ModelVersion } from '../domain/detection';
import type { Image } from '../domain/image';
import type { Audit } from '../domain/review';
import type { Claim, Finish, UploadRef } from '../domain/upload';
import { markAudited, setStrataSizes } from './audit/draw';
import { auditCandidates, type StrataSizes } from './audit/queue';
import { BatchCounters, type RecordOptions } from './batch/counters';
import { type BatchCounter, type BatchStoreOptions, BatchSummaries, type CloseOutcome, type NewBatch } from './batch/summary';
import { RegisteredClients } from './client/registrations';
import { type ClaimOutcome, claimImage, releaseClaim } from './image/claim';
import { keepPaidResult, type PaidResult, paidResult } from './image/paid-result';
import { addDuplicate, finishImage, getImageRecord, rejectUpload } from './image/record';
import { findReusable } from './image/reuse';
import { AnsweringModel } from './model/answering';
import {
  type ReclassifyOptions,
  type ReclassifyOutcome,
  type ReviewOutcome,
  reclassifyBatch,
  reviewImage,
  type Verdict,
} from './review/verdicts';
import type { TableAccess } from './table/access';
import { type AttemptCount, endAttempt, noteFingerprint, startAttempt } from './upload/attempts';

export class BatchStore implements TableAccess {
  readonly ddb: DynamoDBDocumentClient;
  readonly table: string;
  readonly now: () => number;
  readonly transactions: boolean;
  /** The batch summaries: made, opened, closed, settled, marked for erasure. */
  readonly batches: BatchSummaries;
  /** The record writes with the counter moves they imply, and the recount. */
  readonly counters: BatchCounters;
  private readonly clients: RegisteredClients;
  private readonly model: AnsweringModel;

  constructor(opts: BatchStoreOptions) {
    const access: TableAccess = { ddb: opts.ddb, table: opts.tableName, now: opts.now ?? Date.now, transactions: opts.transactions };
    ({ ddb: this.ddb, table: this.table, now: this.now, transactions: this.transactions } = access);
    this.batches = new BatchSummaries(access, { onDone: opts.onDone, takeBack: opts.takeBack });
    this.counters = new BatchCounters(this.batches, opts.takeBack);
    this.clients = new RegisteredClients(access, opts.clientCacheMs);
    this.model = new AnsweringModel(access);
  }

  // ---- the batch summary (batch/summary.ts) and its counters (batch/counters.ts) -------------------------------

  getBatch(clientId: string, batchId: string): Promise<Batch | undefined> {
    return this.batches.getBatch(clientId, batchId);
  }

  /** Creates the batch; false when the client already has one of that name. */
  createBatch(batch: Batch): Promise<boolean> {
    return this.batches.createBatch(batch);
  }

  /** The batch, opened by this upload when it is the batch's first (BatchSummaries.openBatch). */
  openBatch(b: Omit<NewBatch, 'debug' | 'expected'>): Promise<{ batch: Batch; opened: boolean }>;
  openBatch(
    b: Omit<NewBatch, 'debug' | 'expected'>,
    counter: BatchCounter | undefined,
  ): Promise<{ batch: Batch; opened: boolean } | undefined>;
  openBatch(b: Omit<NewBatch, 'debug' | 'expected'>, counter?: BatchCounter): Promise<{ batch: Batch; opened: boolean } | undefined> {
    return this.batches.openBatch(b, counter);
  }

  /** Takes back a summary openBatch just made, unless an upload counted into it since; true when it went. */
  dropOpenedBatch(clientId: string, batchId: string): Promise<boolean> {
    return this.batches.dropOpenedBatch(clientId, batchId);
  }

  /** Closes an open batch (POST …:close), optionally with the number of files it gets in all. */
  close(clientId: string, batchId: string, expected?: number): Promise<CloseOutcome> {
    return this.batches.close(clientId, batchId, expected);
  }

  /** Declares more files for an open batch; undefined when it is closed or missing. */
  addExpected(clientId: string, batchId: string, files: number): Promise<Batch | undefined> {
    return this.batches.addExpected(clientId, batchId, files);
  }

  /** Marks the batch as being erased; undefined when it does not exist or has expired. */
  markDeleting(clientId: string, batchId: string): Promise<Batch | undefined> {
    return this.batches.markDeleting(clientId, batchId);
  }

  /** Marks an expired batch as being erased unless its erasure was queued at or after `staleBefore` (epoch ms). */
  markExpired(clientId: string, batchId: string, staleBefore: number): Promise<boolean> {
    return this.batches.markExpired(clientId, batchId, staleBefore);
  }

  /** The batch exists, is not being erased and has not expired (isVisibleBatch, at this store's clock). */
  isLive(batch: Batch | undefined): boolean {
    return this.batches.isLive(batch);
  }

  /** Closes a batch whose declared files all arrived, and stamps it done when it is: each at most once. */
  settle(batch: Batch): Promise<Batch> {
    return this.batches.settle(batch);
  }

  /** Sets the batch's counters to what its records add up to, then settles it (BatchCounters.recount). */
  recount(clientId: string, batchId: string): Promise<Batch | undefined> {
    return this.counters.recount(clientId, batchId);
  }

  /** After a redelivered upload found its work recorded by an earlier delivery (BatchCounters.repairAfterRedelivery). */
  repairAfterRedelivery(clientId: string, batchId: string): Promise<Batch | undefined> {
    return this.counters.repairAfterRedelivery(clientId, batchId);
  }

  // ---- clients (client/registrations.ts) ------------------------------------------------------------------------

  /** Whether the client is registered (client:create). Answers are kept briefly per container. */
  isRegisteredClient(clientId: string): Promise<boolean> {
    return this.clients.isRegistered(clientId);
  }

  // ---- images (image/record.ts, image/claim.ts, image/reuse.ts, image/paid-result.ts) ---------------------------

  getImage(clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
    return getImageRecord(this.counters, clientId, batchId, fprint);
  }

  /** Claims (batch, fingerprint) for classification, or answers the record that holds the image (claimImage). */
  claim(c: Claim, opts: RecordOptions & { note?: UploadRef } = {}): Promise<ClaimOutcome> {
    return claimImage(this.counters, c, opts);
  }

  /** The client's earlier classification of these pixels in another batch, within retention, or undefined. */
  findReusable(clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
    return findReusable(this.counters, clientId, batchId, fprint, (current) => this.model.learn(current));
  }

  /** The model that would answer now, as last learnt from an answer; undefined before any (model/answering.ts). */
  currentModel(): Promise<ModelVersion | undefined> {
    return this.model.current();
  }

  /** Told the model of each new answer: recorded as the one answering now when it changed (model/answering.ts). */
  noteAnswerModel(model: ModelVersion): Promise<void> {
    return this.model.note(model);
  }

  /** Records the claimed image's result and moves pending to success or fail; false when the claim was lost. */
  finish(c: Claim, f: Finish, opts: RecordOptions = {}): Promise<boolean> {
    return finishImage(this.counters, c, f, opts);
  }

  /** Keeps the DetectLabels answer on the claim after its record's write failed, for the run taking it over. */
  keepPaidResult(c: Claim, result: PaidResult): Promise<boolean> {
    return keepPaidResult(this.ddb, this.table, c, result);
  }

  /** The answer kept on a claim this run took over, if a run before kept one. */
  paidResult(c: Claim): Promise<PaidResult | undefined> {
    return paidResult(this.ddb, this.table, c);
  }

  release(c: Claim): Promise<void> {
    return releaseClaim(this.counters, c);
  }

  /** Records a refused upload (a `fail` record) and counts it; false when it was recorded before (a redelivery). */
  reject(image: Image, opts: RecordOptions = {}): Promise<boolean> {
    return rejectUpload(this.counters, image, opts);
  }

  /** Counts another upload of a recorded image; false when this upload was counted before (a redelivery). */
  addDuplicate(original: Image, fileName: string, upload: UploadRef, opts: RecordOptions & { note?: boolean } = {}): Promise<boolean> {
    return addDuplicate(this.counters, original, fileName, upload, opts);
  }

  // ---- an upload's attempts (upload/attempts.ts, docs/design.md §6) ---------------------------------------------

  /** Counts an attempt as it starts; answers the attempts so far (this one included) and the fingerprint one found. */
  startAttempt(upload: UploadRef): Promise<AttemptCount> {
    return startAttempt(this.counters, upload);
  }

  /** Takes back an attempt that ended without failing (handed back until another run's lease is over). */
  endAttempt(upload: UploadRef): Promise<void> {
    return endAttempt(this.counters, upload);
  }

  /** Remembers the fingerprint an attempt found, for an attempt that gives up without decoding. */
  noteFingerprint(upload: UploadRef, fprint: string): Promise<void> {
    return noteFingerprint(this.counters, upload, fprint);
  }

  // ---- re-threshold and a person's verdict (review/verdicts.ts, docs/design.md §10) ------------------------------

  /** Re-thresholds a done batch from its stored cat confidences, no Rekognition call (reclassifyBatch). */
  reclassify(clientId: string, batchId: string, catMinConfidence: number, opts: ReclassifyOptions): Promise<ReclassifyOutcome> {
    return reclassifyBatch(this.counters, clientId, batchId, catMinConfidence, opts);
  }

  /** Gives a person's verdict on a classified image, or withdraws it (`verdict` undefined) (reviewImage). */
  review(clientId: string, batchId: string, fprint: string, verdict: Verdict | undefined): Promise<ReviewOutcome> {
    return reviewImage(this.counters, clientId, batchId, fprint, verdict);
  }

  // ---- the audit sample's draw (audit/queue.ts reads, audit/draw.ts writes; docs/accuracy.md) ---------------------

  /** The batch's classified images as a draw sees them (a projected read). */
  auditCandidates(clientId: string, batchId: string): Promise<Image[]> {
    return auditCandidates(this.tableRef, clientId, batchId);
  }

  /** Remembers the strata's sizes on the summary; false when the batch is gone. */
  setStrataSizes(clientId: string, batchId: string, sizes: StrataSizes, nowMs: number): Promise<boolean> {
    return setStrataSizes(this.tableRef, clientId, batchId, sizes, nowMs);
  }

  /** Marks the drawn images audited; answers those written (an image gone meanwhile is not). */
  markAudited(drawn: readonly { image: Image; audit: Audit }[]): Promise<Image[]> {
    return markAudited(this.tableRef, drawn);
  }

  private get tableRef() {
    return { ddb: this.ddb, tableName: this.table, now: this.now };
  }
}
