// What the batch lifecycle (batch-lifecycle.ts) is built with: its store, S3, queues, policies and the quota it asks.
import type { S3Client } from '@aws-sdk/client-s3';
import type { Batch } from '../domain/batch';
import type { ExportConfig } from '../export/writer';
import type { JobQueue } from '../jobs/queue';
import { type CallbackPolicy } from '../notify/target';
import { type ClientLimits } from '../quota/limits';
import type { RedetectPlanDeps } from '../redetect/plan';
import type { CloseOutcome } from '../store/batch/summary';
import type { ReclassifyOptions, ReclassifyOutcome, ReviewOutcome, Verdict } from '../store/review/verdicts';
import type { AuditDrawStore } from './audit-draw';
import type { ExportReads } from './export-batch';
import { type ImageLinkSigner } from './image-links';
import { type ImportApiDeps } from './import-batch';

/**
 * What the batch lifecycle asks of the store, and only that (lib/store/batch-store.ts BatchStore implements it; a test
 * may hand a fake): the summary's life from creation to erasure, a person's verdicts, the re-threshold, the audit draw.
 */
export interface LifecycleStore extends AuditDrawStore {
  getBatch(clientId: string, batchId: string): Promise<Batch | undefined>;
  /** The batch exists, is not being erased and has not expired. */
  isLive(batch: Batch | undefined): boolean;
  /** Creates the batch; false when the client already has one of that name. */
  createBatch(batch: Batch): Promise<boolean>;
  /** Marks an expired batch as being erased unless its erasure was queued at or after `staleBefore` (epoch ms). */
  markExpired(clientId: string, batchId: string, staleBefore: number): Promise<boolean>;
  markDeleting(clientId: string, batchId: string): Promise<Batch | undefined>;
  addExpected(clientId: string, batchId: string, files: number): Promise<Batch | undefined>;
  close(clientId: string, batchId: string, expected?: number): Promise<CloseOutcome>;
  review(clientId: string, batchId: string, fprint: string, verdict: Verdict | undefined): Promise<ReviewOutcome>;
  reclassify(clientId: string, batchId: string, catMinConfidence: number, opts: ReclassifyOptions): Promise<ReclassifyOutcome>;
}

export interface BatchLifecycleOptions {
  store: LifecycleStore;
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
  /** GET …/export and …/report: the batch's images a page at a time (the report reads none), and the exports' bounds. */
  exports?: { images: ExportReads; config: ExportConfig };
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
