// The store's writes and the reads they depend on, in domain terms (lib/domain.ts): batches, claims, results,
// rejections, duplicates, and the counters each of them moves. Callers never name an attribute or a counter.
//
// Counters stay exact because only the run whose record write succeeded moves them. Where the backend has
// transactions (DynamoDB; `transactions: true`), the record and its counter move are one TransactWriteItems. Without
// them (dynalite) they are two writes, and a crash between the two is repaired by recount(), which the redelivery of
// the crashed upload (repairAfterRedelivery) and the reconciliation sweep call.
//
// One facade over the entities written, each in its file with its request builders beside what sends them: the batch
// summary (batch-summary.ts) and its counters (batch-counters.ts), which this class extends; the image record and its
// claim (image-record.ts), with the reuse lookup (reuse-lookup.ts); an upload's attempts (upload-attempts.ts); reviews
// and the re-threshold (reviews.ts).
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Claim, Finish, UploadRef } from '../domain/upload';
import type { Image } from '../domain/image';
import type { ModelVersion } from '../domain/detection';
import { sameModel, UNKNOWN_MODEL } from '../model-version';
import { readCurrentModel } from './current-model';
import { recordCurrentModel } from './current-model-write';
import { BatchCounters, type RecordOptions } from './batch-counters';
import { addDuplicate, claimImage, finishImage, getImage, rejectUpload, releaseClaim, type ClaimOutcome } from './image-record';
import { findReusable } from './reuse-lookup';
import { keepPaidResult, paidResult, type PaidResult } from './paid-result';
import { reclassifyBatch, reviewImage, type ReclassifyOptions, type ReclassifyOutcome, type ReviewOutcome, type Verdict } from './reviews';
import { clientKey } from './schema';
import { endAttempt, noteFingerprint, startAttempt, type AttemptCount } from './upload-attempts';

export class BatchStore extends BatchCounters {
  private readonly knownClients = new Map<string, { known: boolean; until: number }>();
  /** The model this process last knew as the one answering now (read or recorded; current-model.ts). */
  private knownModel: ModelVersion | undefined;

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

  // ---- images (image-record.ts) ----------------------------------------------------------------------------

  async getImage(clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
    return getImage(this, clientId, batchId, fprint);
  }

  /** Claims (batch, fingerprint) for classification, or answers the record that holds the image (claimImage). */
  async claim(c: Claim, opts: RecordOptions & { note?: UploadRef } = {}): Promise<ClaimOutcome> {
    return claimImage(this, c, opts);
  }

  /** The client's earlier classification of these pixels in another batch, within retention, or undefined. */
  async findReusable(clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
    return findReusable(this, clientId, batchId, fprint, (current) => {
      this.knownModel = current;
    });
  }

  // ---- the model answering now (current-model.ts, docs/decisions/0031-model-versions.md) ----------------------

  /** The model that would answer now, as last learnt from an answer; undefined before any. */
  async currentModel(): Promise<ModelVersion | undefined> {
    this.knownModel = await readCurrentModel({ ddb: this.ddb, tableName: this.table });
    return this.knownModel;
  }

  /**
   * Told the model of each new answer: records it as the one answering now when it is not the one this process last
   * knew (at its first answer, or when the model changed), so every process's next reuse sees the change.
   */
  async noteAnswerModel(model: ModelVersion): Promise<void> {
    if (model.name === UNKNOWN_MODEL.name || sameModel(model, this.knownModel)) return;
    await recordCurrentModel({ ddb: this.ddb, tableName: this.table }, model, this.now());
    this.knownModel = model;
  }

  /** Records the claimed image's result and moves pending to success or fail; false when the claim was lost. */
  async finish(c: Claim, f: Finish, opts: RecordOptions = {}): Promise<boolean> {
    return finishImage(this, c, f, opts);
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
    return releaseClaim(this, c);
  }

  /** Records a refused upload (a `fail` record) and counts it; false when it was recorded before (a redelivery). */
  async reject(image: Image, opts: RecordOptions = {}): Promise<boolean> {
    return rejectUpload(this, image, opts);
  }

  /** Counts another upload of a recorded image; false when this upload was counted before (a redelivery). */
  async addDuplicate(
    original: Image,
    fileName: string,
    upload: UploadRef,
    opts: RecordOptions & { note?: boolean } = {},
  ): Promise<boolean> {
    return addDuplicate(this, original, fileName, upload, opts);
  }

  // ---- an upload's attempts (upload-attempts.ts, docs/design.md §6) ------------------------------------------

  /** Counts an attempt as it starts; answers the attempts so far (this one included) and the fingerprint one found. */
  async startAttempt(upload: UploadRef): Promise<AttemptCount> {
    return startAttempt(this, upload);
  }

  /** Takes back an attempt that ended without failing (handed back until another run's lease is over). */
  async endAttempt(upload: UploadRef): Promise<void> {
    return endAttempt(this, upload);
  }

  /** Remembers the fingerprint an attempt found, for an attempt that gives up without decoding. */
  async noteFingerprint(upload: UploadRef, fprint: string): Promise<void> {
    return noteFingerprint(this, upload, fprint);
  }

  // ---- re-threshold and a person's verdict (reviews.ts, docs/design.md §10) --------------------------------------

  /** Re-thresholds a done batch from its stored cat confidences, no Rekognition call (reclassifyBatch). */
  async reclassify(clientId: string, batchId: string, catMinConfidence: number, opts: ReclassifyOptions): Promise<ReclassifyOutcome> {
    return reclassifyBatch(this, clientId, batchId, catMinConfidence, opts);
  }

  /** Gives a person's verdict on a classified image, or withdraws it (`verdict` undefined) (reviewImage). */
  async review(clientId: string, batchId: string, fprint: string, verdict: Verdict | undefined): Promise<ReviewOutcome> {
    return reviewImage(this, clientId, batchId, fprint, verdict);
  }
}
