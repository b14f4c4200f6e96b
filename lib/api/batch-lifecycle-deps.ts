// What the batch lifecycle (batch-lifecycle.ts) is built with: its store, S3, queues, policies and the quota it asks.
import type { S3Client } from '@aws-sdk/client-s3';
import type { ExportConfig } from '../export/writer';
import type { JobQueue } from '../jobs/queue';
import { type CallbackPolicy } from '../notify/target';
import { type ClientLimits } from '../quota/limits';
import type { RedetectPlanDeps } from '../redetect/plan';
import type { BatchStore } from '../store/batch-store';
import type { TableRef } from '../store/table/access';
import { type ImageLinkSigner } from './image-links';
import { type ImportApiDeps } from './import-batch';

export interface BatchLifecycleOptions {
  store: BatchStore;
  s3: S3Client;
  bucketName: string;
  defaultRetentionDays: number;
  /** The configured cat threshold, which a new batch starts with (the ingest classifies at it). */
  catMinConfidence?: number;
  maxUploadBytes: number;
  uploadExpiresSeconds: number;
  /** Dollars per DetectLabels call the batch summaries it answers are priced at (ICECAT_PRICE_PER_IMAGE_USD). */
  pricePerImageUsd: number;
  /** How long one :reclassify request starts new pages (ms); the rest goes on with its cursor. */
  reclassifyBudgetMs?: number;
  /** Records per :reclassify page (tests make it small). */
  reclassifyPageSize?: number;
  /** Clock, for tests (default Date.now). */
  now?: () => number;
  /** GET …/export: the document client it pages the batch's images with, and where large exports go. */
  exports?: TableRef & { config: ExportConfig };
  /** DELETE: where the erasure is queued (functions/erase consumes it). */
  erasures?: JobQueue;
  /** callbackUrl: the server key secrets are derived from, and whether loopback http is allowed (local only). */
  callbacks?: { signingKey: string } & CallbackPolicy;
  /** Signs the thumbnailUrl and imageUrl of an image a review answers; without it both are null. */
  links?: ImageLinkSigner;
  /** The clients' daily limits on forms (images left) and batches created; without it, none are applied. */
  quota?: LifecycleQuota;
  /** POST …:redetect: the model answering now, the uploads queue its images go to (lib/redetect/plan.ts). */
  redetect?: RedetectPlanDeps;
  /** Batches from a source (docs/design.md §16): allowed sources, the listing's start, the report, :retry. */
  imports?: ImportApiDeps;
}

/** A client's daily limits as the batch lifecycle applies them (lib/store/client/quota.ts ClientQuotaStore). */
export interface LifecycleQuota {
  limitsOf(clientId: string): Promise<ClientLimits>;
  /** Today's usage: `accepted` uploads. */
  usage(clientId: string, day: string): Promise<{ accepted: number }>;
  /** Counts a batch about to be created; false when the day's limit is reached (nothing counted). */
  countBatch(clientId: string, day: string, limit: number): Promise<boolean>;
  /** Takes back a counted batch that was not created. */
  uncountBatch(clientId: string, day: string): Promise<void>;
}
