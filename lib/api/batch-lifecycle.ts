// The batch lifecycle's writes, free of HTTP (docs/design.md §6): create a batch (POST /v1/batches), declare more files
// for it (…/uploads), close it (…:close). Apart from the reads (service.ts) because creating and adding sign upload
// forms and so need S3: the read function's bundle carries no S3 client.
import type { S3Client } from '@aws-sdk/client-s3';
import { ulid } from 'ulid';
import type { BatchStore } from '../store/batch-store';
import { newBatch } from '../store/writes';
import { BatchClosedError, BatchExistsError, BatchNotFoundError, ExpectedBelowTotalError, FileTooLargeError } from './errors';
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
}

export interface UploadForms {
  uploads: UploadForm[];
  expiresAt: string;
  batch: BatchSummary;
}

export interface CreatedBatch extends UploadForms {
  batchId: string;
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
    const nowMs = this.now();
    const batch = newBatch({
      clientId,
      batchId: body.batchId ?? ulid(nowMs),
      now: nowMs,
      debug: body.debug ?? false,
      retentionDays: body.retentionDays ?? this.opts.defaultRetentionDays,
      ...(files.length > 0 ? { expected: files.length } : {}),
    });
    if (!(await this.opts.store.createBatch(batch))) throw new BatchExistsError(batch.batchId);
    return { batchId: batch.batchId, ...(await this.forms(clientId, batch.batchId, files, nowMs)), batch: presentBatch(batch) };
  }

  /** More upload forms for an open batch; `expected` grows by their number. */
  async addUploads(clientId: string, batchId: string, body: AddUploadsBody): Promise<UploadForms> {
    this.checkSizes(body.files);
    const batch = await this.opts.store.addExpected(clientId, batchId, body.files.length);
    if (!batch) {
      if (await this.opts.store.getBatch(clientId, batchId)) throw new BatchClosedError(batchId);
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
