// POST /v1/batches, free of HTTP: records the new batch and signs one upload form per declared file. Apart from the
// reads (service.ts) because it alone needs S3: the read function's bundle carries no S3 client.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { PutCommand, type DynamoDBDocumentClient, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { ulid } from 'ulid';
import { BATCH_SK, ttlFor, type BatchItem } from '../store/schema';
import { BatchExistsError, FileTooLargeError } from './errors';
import { presentBatch } from './present';
import type { BatchSummary, CreateBatchBody, UploadForm } from './schemas';
import { presignUploads } from './uploads';

export interface BatchCreationOptions {
  ddb: DynamoDBDocumentClient;
  tableName: string;
  s3: S3Client;
  bucketName: string;
  defaultRetentionDays: number;
  maxUploadBytes: number;
  uploadExpiresSeconds: number;
  /** Clock, for tests (default Date.now). */
  now?: () => number;
}

export interface CreatedBatch {
  batchId: string;
  uploads: UploadForm[];
  expiresAt: string;
  batch: BatchSummary;
}

/** The summary item a new batch starts with (pure). */
export function newBatchItem(
  batchId: string,
  clientId: string,
  body: CreateBatchBody,
  nowMs: number,
  defaultRetentionDays: number,
): BatchItem {
  const retentionDays = body.retentionDays ?? defaultRetentionDays;
  return {
    batch_id: batchId,
    img_fprint: BATCH_SK,
    owner_id: clientId,
    created_ts: nowMs,
    debug: body.debug ?? false,
    retention_days: retentionDays,
    ttl: ttlFor(nowMs, retentionDays),
    ...(body.files && body.files.length > 0 ? { expected: body.files.length } : {}),
    n_total: 0,
    n_success: 0,
    n_fail: 0,
    n_duplicate: 0,
    n_cats: 0,
  };
}

export function createBatchRequest(tableName: string, item: BatchItem): PutCommandInput {
  return { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(batch_id)' };
}

export class BatchCreationService {
  constructor(private readonly opts: BatchCreationOptions) {}

  async createBatch(clientId: string, body: CreateBatchBody): Promise<CreatedBatch> {
    const files = body.files ?? [];
    files.forEach((f, i) => {
      if (f.size > this.opts.maxUploadBytes) throw new FileTooLargeError(`files[${i}].size`, f.size, this.opts.maxUploadBytes);
    });
    const nowMs = (this.opts.now ?? Date.now)();
    const item = newBatchItem(ulid(nowMs), clientId, body, nowMs, this.opts.defaultRetentionDays);
    try {
      await this.opts.ddb.send(new PutCommand(createBatchRequest(this.opts.tableName, item)));
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) throw new BatchExistsError('batch id already taken; retry', { cause: err });
      throw err;
    }
    const uploads = await presignUploads(this.opts.s3, this.opts.bucketName, clientId, item.batch_id, files, this.opts.uploadExpiresSeconds);
    return {
      batchId: item.batch_id,
      uploads,
      expiresAt: new Date(nowMs + this.opts.uploadExpiresSeconds * 1000).toISOString(),
      batch: presentBatch(item),
    };
  }
}
