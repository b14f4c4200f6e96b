// What the ingest is handed and what it answers: the event of one upload, the services it uses, and how the upload
// ended. The steps (lib/ingest/steps/) and their orchestration (pipeline.ts) share these.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { RekognitionClient } from '@aws-sdk/client-rekognition';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config, IngestConfig } from '../config';
import type { Batch } from '../domain/batch';
import type { ModelVersion } from '../domain/detection';
import type { Image, Outcome } from '../domain/image';
import type { Claim, Finish, ImageResult, UploadRef } from '../domain/upload';
import type { ClientLimits } from '../quota/limits';
import type { RecordOptions } from '../store/batch/counters';
import type { BatchCounter, NewBatch } from '../store/batch/summary';
import type { ClaimOutcome } from '../store/image/claim';
import type { PaidResult } from '../store/image/paid-result';
import type { AttemptCount } from '../store/upload/attempts';
import type { IngestMetrics } from './metrics';

/** What the handler hands over from one S3 event record. */
export interface UploadEvent {
  bucket: string;
  /** As it arrives in the event: URL-encoded. */
  encodedKey: string;
  size?: number;
  /** The ETag of the object the event announces: same key and ETag is the same upload. */
  etag?: string;
  /** When S3 says the object was created (epoch ms): the UTC day whose quota the upload counts against. */
  eventTime?: number;
}

/** The clients' daily images quotas (docs/design.md §11; lib/store/client/quota.ts). */
export interface UploadQuota {
  limitsOf(clientId: string): Promise<ClientLimits>;
  /**
   * Counts the upload against the day's quota once, on a mark on its own item written with the count: true when it
   * is counted (by this call or an earlier one), false (nothing counted) when `limit` are counted already.
   */
  countUpload(upload: UploadRef, day: string, limit: number): Promise<boolean>;
  /** Marks the upload beyond the quota, for its later attempts, and counts it refused. */
  refuseUpload(upload: UploadRef, day: string): Promise<void>;
  /** Counts a batch an upload has just opened; false (nothing counted) when `limit` are counted already. */
  countBatch?(clientId: string, day: string, limit: number): Promise<boolean>;
  /** Counts an upload refused on the day (GET /v1/usage `rejected`) that no batch can record. */
  countRefused?(clientId: string, day: string): Promise<void>;
}

/**
 * Why no batch can hold an upload: its key, its client, or its batch is being erased (DELETE) or was meanwhile, or its
 * retention is over (an expired batch is erased as a deleted one is: docs/design.md §6).
 */
export type RefusalCode = 'InvalidKey' | 'UnknownClient' | 'BatchErased' | 'BatchExpired' | 'BatchQuotaExceeded';

export type IngestResult =
  | { outcome: Outcome; batchId: string; fprint: string; errorCode?: string }
  /** No batch of the uploader's can hold it (a key outside the layout, an unknown client): moved under failed/. */
  | { outcome: 'refused'; key: string; code: RefusalCode }
  /** A redelivered event: the work was done by another delivery. */
  | { outcome: 'redelivered'; key: string }
  /**
   * The image's claim is leased by another run, alive or killed: the message comes back once the lease is over
   * (`retryAfterSeconds`), to find the finished record (a redelivery) or an expired claim to take over.
   */
  | { outcome: 'deferred'; key: string; retryAfterSeconds: number };

/**
 * What the ingest asks of the store, and only that (lib/store/batch-store.ts implements it; a test may hand a fake):
 * the client and batch an upload belongs to, its attempts, the claim of its pixels, the answer paid for them, and the
 * record that ends it with the counters it moves.
 */
export interface IngestStore {
  isRegisteredClient(clientId: string): Promise<boolean>;
  /** The batch, opened by this upload when it is its first; undefined when the counter refused it (taken back). */
  openBatch(b: Omit<NewBatch, 'debug' | 'expected'>, counter?: BatchCounter): Promise<{ batch: Batch; opened: boolean } | undefined>;
  dropOpenedBatch(clientId: string, batchId: string): Promise<boolean>;
  getBatch(clientId: string, batchId: string): Promise<Batch | undefined>;
  isLive(batch: Batch | undefined): boolean;
  startAttempt(upload: UploadRef): Promise<AttemptCount>;
  endAttempt(upload: UploadRef): Promise<void>;
  getImage(clientId: string, batchId: string, fprint: string): Promise<Image | undefined>;
  claim(c: Claim, opts?: RecordOptions & { note?: UploadRef }): Promise<ClaimOutcome>;
  release(c: Claim): Promise<void>;
  findReusable(clientId: string, batchId: string, fprint: string): Promise<Image | undefined>;
  noteAnswerModel(model: ModelVersion): Promise<void>;
  paidResult(c: Claim): Promise<PaidResult | undefined>;
  keepPaidResult(c: Claim, result: PaidResult): Promise<boolean>;
  finish(c: Claim, f: Finish, opts?: RecordOptions): Promise<boolean>;
  reject(image: Image, opts?: RecordOptions): Promise<boolean>;
  addDuplicate(original: Image, fileName: string, upload: UploadRef, opts?: RecordOptions & { note?: boolean }): Promise<boolean>;
  repairAfterRedelivery(clientId: string, batchId: string): Promise<Batch | undefined>;
}

export interface IngestDeps {
  s3: S3Client;
  rekognition: RekognitionClient;
  store: IngestStore;
  /** The ingest's own settings too when built by the ingest function (a sweep gives the common ones only). */
  config: Config & Partial<Pick<IngestConfig, 'clientHint'>>;
  logger: Logger;
  metrics: IngestMetrics;
  /** Without one, uploads are not counted against any quota. */
  quota?: UploadQuota;
  now?: () => number;
}

export type SuccessResult = Extract<ImageResult, { status: 'success' }>;
