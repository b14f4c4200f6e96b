// What the ingest is handed and what it answers: the event of one upload, the services it uses, and how the upload
// ended. The steps (lib/ingest/steps/) and their orchestration (pipeline.ts) share these.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { RekognitionClient } from '@aws-sdk/client-rekognition';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ClientLimits } from '../quota/limits';
import type { Config, IngestConfig } from '../config';
import type { BatchStore } from '../store/batch-store';
import type { ImageResult, UploadRef } from '../domain/upload';
import type { Outcome } from '../domain/image';
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

/** The clients' daily images quotas (docs/design.md §11; lib/store/quota-writes.ts). */
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

export interface IngestDeps {
  s3: S3Client;
  rekognition: RekognitionClient;
  store: BatchStore;
  /** The ingest's own settings too when built by the ingest function (a sweep gives the common ones only). */
  config: Config & Partial<Pick<IngestConfig, 'clientHint'>>;
  logger: Logger;
  metrics: IngestMetrics;
  /** Without one, uploads are not counted against any quota. */
  quota?: UploadQuota;
  now?: () => number;
}

export type SuccessResult = Extract<ImageResult, { status: 'success' }>;
