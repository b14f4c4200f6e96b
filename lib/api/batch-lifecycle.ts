// The batch lifecycle's writes, free of HTTP (docs/design.md §6): create a batch (POST /v1/batches), declare more files
// for it (…/uploads), close it (…:close). Apart from the reads (service.ts) because creating and adding sign upload
// forms and so need S3: the read function's bundle carries no S3 client.
import { ulid } from 'ulid';
import { type Batch, isVisibleBatch } from '../domain/batch';
import type { BatchSummary } from '../domain/summary';
import { ERASURE_REQUEUE_MS } from '../erase/expiry';
import { encodeEraseMessage } from '../erase/message';
import { BatchClosedError } from '../errors';
import type { ExportFormat } from '../export/encode';
import { deriveCallbackSecret } from '../notify/signature';
import { CallbackTargetError, checkCallbackUrl } from '../notify/target';
import { batchesBeyondQuota, formsBeyondQuota, utcDay } from '../quota/limits';
import { newBatch } from '../store/batch/summary';
import type { ReviewOutcome, Verdict } from '../store/review/verdicts';
import { nowSeconds } from '../store/table/schema';
import { drawAudit } from './audit-draw';
import type { BatchLifecycleOptions } from './batch-lifecycle-deps';
import {
  BatchErasingError,
  BatchExistsError,
  BatchNotDoneError,
  BatchNotFoundError,
  ExpectedBelowTotalError,
  FileTooLargeError,
  ImageFailedError,
  ImageNotClassifiedError,
  ImageNotFoundError,
  InvalidParameterError,
} from './errors';
import { exportBatch } from './export-batch';
import type { HttpAnswer } from './http-answer';
import { NO_LINKS } from './image-links';
import { checkSource, newImport, type RetryResult, retryFailed, startListing } from './import-batch';
import { streamReport } from './import-report';
import { presentBatch, presentImage } from './present';
import { decodeReclassifyCursor, encodeReclassifyCursor, RECLASSIFY_BUDGET_MS } from './reclassify-cursor';
import { redetectAnswer } from './redetect';
import type { AuditBody, AuditResult } from './schemas/audit';
import type { AddUploadsBody, CloseBatchBody, CreateBatchBody, ReclassifyBody, ReclassifyResult, UploadForm } from './schemas/batches';
import type { ImageAnswer } from './schemas/images';
import type { RedetectBody, RedetectResult } from './schemas/redetect';
import type { ReviewBody } from './schemas/reviews';
import { type DeclaredFile, presignUploads } from './uploads';

/** The cat threshold of a batch made before batches kept theirs, and of a deployment that configures none (Rekognition's 80). */
const DEFAULT_CAT_MIN_CONFIDENCE = 80;

export interface DeletedBatch {
  batchId: string;
  status: 'deleting';
}

interface UploadForms {
  uploads: UploadForm[];
  expiresAt: string;
  batch: BatchSummary;
}

interface CreatedBatch extends UploadForms {
  batchId: string;
  callbackSecret?: string;
}

export class BatchLifecycleService {
  constructor(private readonly opts: BatchLifecycleOptions) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private checkSizes(files: readonly DeclaredFile[]): void {
    files.forEach((f, i) => {
      if (f.size > this.opts.maxUploadBytes)
        throw new FileTooLargeError(`${f.size} bytes is more than the ${this.opts.maxUploadBytes} bytes accepted per file`, {
          parameter: `files[${i}].size`,
          size: f.size,
          max: this.opts.maxUploadBytes,
        });
    });
  }

  /** Refuses (429 quota_exceeded) more forms than the client's images left today: no bytes are asked that would be refused. */
  private async checkImagesLeft(clientId: string, files: number, nowMs: number): Promise<void> {
    const quota = this.opts.quota;
    if (!quota || files === 0) return;
    const [limits, used] = await Promise.all([quota.limitsOf(clientId), quota.usage(clientId, utcDay(nowMs))]);
    if (files > limits.maxImagesPerDay - used.accepted) throw formsBeyondQuota(limits, used.accepted, files, nowMs);
  }

  private async forms(
    clientId: string,
    batchId: string,
    files: readonly DeclaredFile[],
    nowMs: number,
  ): Promise<Omit<UploadForms, 'batch'>> {
    const { s3, bucketName, uploadExpiresSeconds } = this.opts;
    return {
      uploads: await presignUploads(s3, bucketName, clientId, batchId, files, uploadExpiresSeconds),
      expiresAt: new Date(nowMs + uploadExpiresSeconds * 1000).toISOString(),
    };
  }

  async createBatch(clientId: string, body: CreateBatchBody): Promise<CreatedBatch> {
    const files = body.files ?? [];
    // An import's source is checked before anything is written or listed (403 outside the client's sources).
    const imports = body.source ? await checkSource(this.opts.imports, clientId, body.source) : undefined;
    this.checkSizes(files);
    const callbackUrl = body.callbackUrl === undefined ? undefined : this.checkCallbackUrl(body.callbackUrl);
    const nowMs = this.now();
    const batch = newBatch({
      ...(callbackUrl ? { callbackUrl } : {}),
      clientId,
      batchId: body.batchId ?? ulid(nowMs),
      now: nowMs,
      debug: body.debug ?? false,
      retentionDays: body.retentionDays ?? this.opts.defaultRetentionDays,
      ...(files.length > 0 ? { expected: files.length } : {}),
      ...(this.opts.catMinConfidence !== undefined ? { catMinConfidence: this.opts.catMinConfidence } : {}),
    });
    if (body.source) batch.import = newImport(body.source);
    await this.checkImagesLeft(clientId, files.length, nowMs);
    await imports?.imports.markLive(clientId, batch.batchId);
    await this.createCounted(clientId, batch, nowMs);
    if (imports) await startListing(imports, batch);
    const callbackSecret = callbackUrl && this.opts.callbacks ? deriveCallbackSecret(this.opts.callbacks.signingKey, batch) : undefined;
    return {
      batchId: batch.batchId,
      ...(await this.forms(clientId, batch.batchId, files, nowMs)),
      ...(callbackSecret ? { callbackSecret } : {}),
      batch: presentBatch(batch, this.opts.pricePerImageUsd),
    };
  }

  /**
   * Creates the batch counted against the client's batches of the day (429 quota_exceeded beyond them); a batch not
   * created after all (its name is taken: 409) is taken back from the count.
   */
  private async createCounted(clientId: string, batch: Batch, nowMs: number): Promise<void> {
    const quota = this.opts.quota;
    const day = utcDay(nowMs);
    if (quota) {
      const limits = await quota.limitsOf(clientId);
      if (!(await quota.countBatch(clientId, day, limits.maxBatchesPerDay))) {
        // A name the client still has answers 409 as ever, whatever the count.
        if (this.opts.store.isLive(await this.opts.store.getBatch(clientId, batch.batchId)))
          throw new BatchExistsError(`you already have a batch ${batch.batchId}`, { batchId: batch.batchId });
        throw batchesBeyondQuota(limits, nowMs);
      }
    }
    try {
      if (!(await this.opts.store.createBatch(batch))) await this.reuseName(clientId, batch);
    } catch (err) {
      await quota?.uncountBatch(clientId, day);
      throw err;
    }
  }

  /**
   * POST /v1/batches with the name of a batch the client no longer has: expired, or being erased. Its name is free
   * once its erasure has deleted it (docs/design.md §6): the erasure of an expired batch starts here if the expiry
   * sweep has not started it yet, and the batch is created if the erasure is over by then (locally it runs before
   * `send` returns); otherwise 409 batch_erasing, to try again shortly. A batch the client still has is 409 batch_exists.
   */
  private async reuseName(clientId: string, batch: Batch): Promise<void> {
    const { store, erasures } = this.opts;
    const existing = await store.getBatch(clientId, batch.batchId);
    if (store.isLive(existing)) throw new BatchExistsError(`you already have a batch ${batch.batchId}`, { batchId: batch.batchId });
    if (existing && !existing.deleting && erasures && (await store.markExpired(clientId, batch.batchId, this.now() - ERASURE_REQUEUE_MS))) {
      await erasures.send(encodeEraseMessage(clientId, batch.batchId));
    }
    if (!(await store.createBatch(batch)))
      throw new BatchErasingError(
        `batch ${batch.batchId} expired or was deleted and is being erased; its name can be used again once that is done, try again shortly`,
        { batchId: batch.batchId },
      );
  }

  private checkCallbackUrl(raw: string): string {
    const callbacks = this.opts.callbacks;
    if (!callbacks) throw new InvalidParameterError('callbacks are not configured on this server', { parameter: 'body.callbackUrl' });
    try {
      return checkCallbackUrl(raw, { allowLoopback: callbacks.allowLoopback, loopbackPorts: callbacks.loopbackPorts }).toString();
    } catch (err) {
      if (err instanceof CallbackTargetError) throw new InvalidParameterError(err.message, { parameter: 'body.callbackUrl', cause: err });
      throw err;
    }
  }

  /** A batch of this client's that exists, has not expired and is not being erased. */
  private async requireBatch(clientId: string, batchId: string) {
    const batch = await this.opts.store.getBatch(clientId, batchId);
    if (!isVisibleBatch(batch, nowSeconds(this.now()))) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    return batch;
  }

  /** One row per uploaded file: inline, or a 303 to the export stored in S3 once it outgrows the inline bound. */
  async exportBatch(clientId: string, batchId: string, format: ExportFormat): Promise<HttpAnswer> {
    const exports = this.opts.exports;
    if (!exports) throw new Error('exports are not configured for this function');
    const batch = await this.requireBatch(clientId, batchId);
    const catMinConfidence = batch.catMinConfidence ?? this.opts.catMinConfidence ?? DEFAULT_CAT_MIN_CONFIDENCE;
    return exportBatch(
      { ...exports, s3: this.opts.s3, bucketName: this.opts.bucketName, ...(this.opts.now ? { now: this.opts.now } : {}) },
      clientId,
      batchId,
      format,
      { catMinConfidence, ...(batch.doneAt !== undefined ? { doneAt: batch.doneAt } : {}) },
    );
  }

  /**
   * Marks the batch as being erased (from then on it answers 404 and the ingest refuses uploads into it), then queues
   * its erasure. Asking again while it is being erased answers 202 again and queues the erasure again, which resumes
   * where it stopped; once erased, the batch answers 404.
   */
  async deleteBatch(clientId: string, batchId: string): Promise<DeletedBatch> {
    const erasures = this.opts.erasures;
    if (!erasures) throw new Error('erasure is not configured for this function');
    const batch = await this.opts.store.markDeleting(clientId, batchId);
    if (!batch) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    await erasures.send(encodeEraseMessage(clientId, batchId));
    return { batchId, status: 'deleting' };
  }

  /** More upload forms for an open batch; `expected` grows by their number. */
  async addUploads(clientId: string, batchId: string, body: AddUploadsBody): Promise<UploadForms> {
    this.checkSizes(body.files);
    await this.checkImagesLeft(clientId, body.files.length, this.now());
    if (body.renew) return this.renewUploads(clientId, batchId, body.files);
    const batch = await this.opts.store.addExpected(clientId, batchId, body.files.length);
    if (!batch) {
      const existing = await this.opts.store.getBatch(clientId, batchId);
      if (this.opts.store.isLive(existing)) throw new BatchClosedError(`batch ${batchId} is closed`, { batchId });
      throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    }
    return { ...(await this.forms(clientId, batchId, body.files, this.now())), batch: presentBatch(batch, this.opts.pricePerImageUsd) };
  }

  /**
   * Forms again for files already declared (theirs expired, or will before the client gets to them): `expected` stays.
   * The names are not checked against the declaration, which is not stored per file: a client that renews forms for
   * files it never declared only keeps its own batch from closing by itself.
   */
  private async renewUploads(clientId: string, batchId: string, files: readonly DeclaredFile[]): Promise<UploadForms> {
    const batch = await this.requireBatch(clientId, batchId);
    if (batch.closed) throw new BatchClosedError(`batch ${batchId} is closed`, { batchId });
    return { ...(await this.forms(clientId, batchId, files, this.now())), batch: presentBatch(batch, this.opts.pricePerImageUsd) };
  }

  /** No more uploads: the batch is done once nothing is pending (and every declared file arrived). */
  async closeBatch(clientId: string, batchId: string, body: CloseBatchBody): Promise<BatchSummary> {
    const outcome = await this.opts.store.close(clientId, batchId, body.expected);
    if (outcome.closed) return presentBatch(outcome.batch, this.opts.pricePerImageUsd);
    if (outcome.reason === 'missing') throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    const batch = outcome.batch!;
    if (outcome.reason === 'below-total')
      throw new ExpectedBelowTotalError(
        `expected: ${body.expected ?? 0} is fewer than the ${batch.counts.total} uploads that already arrived`,
        { expected: body.expected ?? 0, total: batch.counts.total },
      );
    // Closing again is harmless unless it declares another number of files.
    if (body.expected !== undefined && body.expected !== batch.expected)
      throw new BatchClosedError(`batch ${batchId} is closed`, { batchId });
    return presentBatch(batch, this.opts.pricePerImageUsd);
  }

  /** A person's verdict on one image (docs/design.md §10): the image as it is now. */
  async reviewImage(clientId: string, batchId: string, fprint: string, body: ReviewBody): Promise<ImageAnswer> {
    const verdict: Verdict = { isCat: body.isCat, ...(body.note ? { note: body.note } : {}) };
    return this.reviewed(batchId, fprint, await this.opts.store.review(clientId, batchId, fprint, verdict));
  }

  /** Withdraws a person's verdict: isCat is the machine's again. */
  async withdrawReview(clientId: string, batchId: string, fprint: string): Promise<ImageAnswer> {
    return this.reviewed(batchId, fprint, await this.opts.store.review(clientId, batchId, fprint, undefined));
  }

  private async reviewed(batchId: string, fprint: string, out: ReviewOutcome): Promise<ImageAnswer> {
    if (out.outcome === 'missing') throw new ImageNotFoundError(`image ${fprint} not found in batch ${batchId}`, { batchId, fprint });
    if (out.outcome === 'failed')
      throw new ImageFailedError(`image ${fprint} failed (${out.image.errorCode ?? 'unknown error'}): it has no verdict to review`, {
        fprint,
        errorCode: out.image.errorCode,
      });
    if (out.outcome === 'not-classified')
      throw new ImageNotClassifiedError(`image ${fprint} is still being classified; review it once it is (its status is then success)`, {
        fprint,
      });
    return presentImage(out.image, this.opts.links ? await this.opts.links.linksOf(out.image) : NO_LINKS);
  }

  /** Draws more of the batch's classified images into its audit sample (docs/accuracy.md). */
  async audit(clientId: string, batchId: string, body: AuditBody): Promise<AuditResult> {
    const { store } = this.opts;
    if (!store.isLive(await store.getBatch(clientId, batchId))) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    return drawAudit(store, clientId, batchId, body.size, this.now());
  }

  /** The cat flags and counters again at a new threshold, from stored confidences (no Rekognition call), in pages. */
  async reclassify(clientId: string, batchId: string, body: ReclassifyBody): Promise<ReclassifyResult> {
    const after = body.cursor !== undefined ? decodeReclassifyCursor(body.cursor, body.catMinConfidence) : undefined;
    const out = await this.opts.store.reclassify(clientId, batchId, body.catMinConfidence, {
      ...(after !== undefined ? { after } : {}),
      deadline: this.now() + (this.opts.reclassifyBudgetMs ?? RECLASSIFY_BUDGET_MS),
      ...(this.opts.reclassifyPageSize !== undefined ? { pageSize: this.opts.reclassifyPageSize } : {}),
    });
    if (out.outcome === 'missing') throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    if (out.outcome === 'not-done')
      throw new BatchNotDoneError(`batch ${batchId} is still open or processing; re-threshold it once it is done`, { batchId });
    return {
      batch: presentBatch(out.batch, this.opts.pricePerImageUsd),
      ...(out.after !== undefined ? { cursor: encodeReclassifyCursor({ after: out.after, catMinConfidence: body.catMinConfidence }) } : {}),
    };
  }

  /** GET …/report?format=s3-batch-operations: one row per object the import sent, streamed as the exports are. */
  async report(clientId: string, batchId: string): Promise<HttpAnswer> {
    const batch = await this.requireBatch(clientId, batchId);
    const { imports, exports } = this.opts;
    if (!imports || !batch.import || !exports) throw new BatchNotFoundError(`batch ${batchId} is not an import`, { batchId });
    return streamReport({ s3: this.opts.s3, bucketName: this.opts.bucketName, config: exports.config }, imports, clientId, batchId);
  }

  /** POST …:retry: exactly the batch's failed imported images, sent again. */
  retry(clientId: string, batchId: string): Promise<RetryResult> {
    return retryFailed(this.opts.imports, clientId, batchId, this.opts.pricePerImageUsd);
  }

  /** Classifies again the batch's images answered by another model (all with `all`), or prices it (dryRun). */
  async redetect(clientId: string, batchId: string, body: RedetectBody): Promise<RedetectResult> {
    if (!this.opts.redetect) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    return redetectAnswer(this.opts.redetect, clientId, batchId, body);
  }
}
