// The batch lifecycle's writes, free of HTTP (docs/design.md §6): create a batch (POST /v1/batches), declare more files
// for it (…/uploads), close it (…:close). Apart from the reads (service.ts) because creating and adding sign upload
// forms and so need S3: the read function's bundle carries no S3 client.
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { encodeEraseMessage } from '../erase/message';
import type { ExportConfig } from '../export/config';
import type { ExportFormat } from '../export/encode';
import type { JobQueue } from '../jobs/queue';
import { deriveCallbackSecret } from '../notify/signature';
import { CallbackTargetError, checkCallbackUrl } from '../notify/target';
import { nowSeconds } from '../store/schema';
import { exportBatch } from './export-batch';
import type { HttpAnswer } from './http-answer';
import type { BatchStore } from '../store/batch-store';
import { newBatch } from '../store/writes';
import {
  BatchClosedError,
  BatchExistsError,
  BatchNotFoundError,
  ExpectedBelowTotalError,
  FileTooLargeError,
  InvalidParameterError,
} from './errors';
import { presentBatch } from './present';
import type { AddUploadsBody, BatchSummary, CloseBatchBody, CreateBatchBody, UploadForm } from './schemas';
import { presignUploads, type DeclaredFile } from './uploads';

export interface BatchLifecycleOptions {
  store: BatchStore;
  s3: S3Client;
  bucketName: string;
  defaultRetentionDays: number;
  maxUploadBytes: number;
  uploadExpiresSeconds: number;
  /** Clock, for tests (default Date.now). */
  now?: () => number;
  /** GET …/export: the document client it pages the batch's images with, and where large exports go. */
  exports?: { ddb: DynamoDBDocumentClient; tableName: string; config: ExportConfig };
  /** DELETE: where the erasure is queued (functions/erase consumes it). */
  erasures?: JobQueue;
  /** callbackUrl: the server key secrets are derived from, and whether loopback http is allowed (local only). */
  callbacks?: { signingKey: string; allowLoopback: boolean };
}

export interface DeletedBatch {
  batchId: string;
  status: 'deleting';
}

export interface UploadForms {
  uploads: UploadForm[];
  expiresAt: string;
  batch: BatchSummary;
}

export interface CreatedBatch extends UploadForms {
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
      if (f.size > this.opts.maxUploadBytes) throw new FileTooLargeError(`files[${i}].size`, f.size, this.opts.maxUploadBytes);
    });
  }

  private async forms(clientId: string, batchId: string, files: readonly DeclaredFile[], nowMs: number): Promise<Omit<UploadForms, 'batch'>> {
    const { s3, bucketName, uploadExpiresSeconds } = this.opts;
    return {
      uploads: await presignUploads(s3, bucketName, clientId, batchId, files, uploadExpiresSeconds),
      expiresAt: new Date(nowMs + uploadExpiresSeconds * 1000).toISOString(),
    };
  }

  async createBatch(clientId: string, body: CreateBatchBody): Promise<CreatedBatch> {
    const files = body.files ?? [];
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
    });
    if (!(await this.opts.store.createBatch(batch))) throw new BatchExistsError(batch.batchId);
    const callbackSecret = callbackUrl && this.opts.callbacks ? deriveCallbackSecret(this.opts.callbacks.signingKey, batch) : undefined;
    return {
      batchId: batch.batchId,
      ...(await this.forms(clientId, batch.batchId, files, nowMs)),
      ...(callbackSecret ? { callbackSecret } : {}),
      batch: presentBatch(batch),
    };
  }

  private checkCallbackUrl(raw: string): string {
    const callbacks = this.opts.callbacks;
    if (!callbacks) throw new InvalidParameterError('body.callbackUrl', 'callbacks are not configured on this server');
    try {
      return checkCallbackUrl(raw, { allowLoopback: callbacks.allowLoopback }).toString();
    } catch (err) {
      if (err instanceof CallbackTargetError) throw new InvalidParameterError('body.callbackUrl', err.message, { cause: err });
      throw err;
    }
  }

  /** A batch of this client's that exists, has not expired and is not being erased. */
  private async requireBatch(clientId: string, batchId: string) {
    const batch = await this.opts.store.getBatch(clientId, batchId);
    if (!batch || batch.deleting || batch.expiresAt <= nowSeconds(this.now())) throw new BatchNotFoundError(batchId);
    return batch;
  }

  /** One row per uploaded file: inline, or a 303 to the export stored in S3 once it outgrows the inline bound. */
  async exportBatch(clientId: string, batchId: string, format: ExportFormat): Promise<HttpAnswer> {
    const exports = this.opts.exports;
    if (!exports) throw new Error('exports are not configured for this function');
    await this.requireBatch(clientId, batchId);
    return exportBatch(
      { ...exports, s3: this.opts.s3, bucketName: this.opts.bucketName, ...(this.opts.now ? { now: this.opts.now } : {}) },
      clientId,
      batchId,
      format,
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
    if (!batch) throw new BatchNotFoundError(batchId);
    await erasures.send(encodeEraseMessage(clientId, batchId));
    return { batchId, status: 'deleting' };
  }

  /** More upload forms for an open batch; `expected` grows by their number. */
  async addUploads(clientId: string, batchId: string, body: AddUploadsBody): Promise<UploadForms> {
    this.checkSizes(body.files);
    const batch = await this.opts.store.addExpected(clientId, batchId, body.files.length);
    if (!batch) {
      const existing = await this.opts.store.getBatch(clientId, batchId);
      if (existing && !existing.deleting) throw new BatchClosedError(batchId);
      throw new BatchNotFoundError(batchId);
    }
    return { ...(await this.forms(clientId, batchId, body.files, this.now())), batch: presentBatch(batch) };
  }

  /** No more uploads: the batch is done once nothing is pending (and every declared file arrived). */
  async closeBatch(clientId: string, batchId: string, body: CloseBatchBody): Promise<BatchSummary> {
    const outcome = await this.opts.store.close(clientId, batchId, body.expected);
    if (outcome.closed) return presentBatch(outcome.batch);
    if (outcome.reason === 'missing') throw new BatchNotFoundError(batchId);
    const batch = outcome.batch!;
    if (outcome.reason === 'below-total') throw new ExpectedBelowTotalError(body.expected ?? 0, batch.counts.total);
    // Closing again is harmless unless it declares another number of files.
    if (body.expected !== undefined && body.expected !== batch.expected) throw new BatchClosedError(batchId);
    return presentBatch(batch);
  }
}
