// The `batches` function built from what it is given: its queues (the erasure's and the callbacks'), SQS on AWS
// (handler.ts) and the local stack's in-process queues locally. Everything else it reads from its environment once,
// when built: a missing TABLE_NAME, BUCKET_NAME or CALLBACK_SIGNING_KEY fails there, naming the variable.
import { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import { imageLinkSignerOf } from '../../lib/api/image-links';
import type { ImportApiDeps, ImportApiStore } from '../../lib/api/import-batch';
import { apiRoutes } from '../../lib/api/routes';
import { ApiKeyAuthenticator } from '../../lib/auth/api-keys';
import { createDocumentClient, createRekognitionClient, createS3Client } from '../../lib/aws/clients';
import { annotatingClient } from '../../lib/aws/tracing';
import { loadAwsClientSettings, redetectPaging, redetectResumeGraceMs } from '../../lib/config';
import type { ImportSource } from '../../lib/domain/import';
import { type ApiHandler, createApiHandler } from '../../lib/http/app';
import type { ImportEngine, ImportJob } from '../../lib/import/batch-operations';
import type { ImportMarks, ImportQueue, ImportQuota } from '../../lib/import/enqueue';
import type { JobQueue } from '../../lib/jobs/queue';
import { completionHook, type NotifyWiring } from '../../lib/notify/wiring';
import { containerRateLimiter } from '../../lib/quota/rate-limiter';
import { currentModel } from '../../lib/redetect/model';
import { BatchImagePages } from '../../lib/store/batch/pages';
import { BatchStore } from '../../lib/store/batch-store';
import { ApiKeyStore } from '../../lib/store/client/keys';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ClientSourcesStore } from '../../lib/store/client/sources';
import { ImportStore } from '../../lib/store/imports/imports';
import { ImportJobsStore } from '../../lib/store/imports/jobs';
import { ImportMarksStore } from '../../lib/store/imports/marks';
import { recordCurrentModel } from '../../lib/store/model/current-write';
import { Redetections } from '../../lib/store/redetect/images';
import {
  clientLimitsCacheMs,
  defaultClientLimits,
  IMAGE_URL_WINDOW_SECONDS,
  loadApiConfig,
  loadCallbackSigningKey,
  loadExportConfig,
  loadNotifyConfig,
  loadS3Settings,
} from '../config';

export interface BatchesWiring extends NotifyWiring {
  /** Where a DELETE queues the batch's erasure (functions/erase consumes it). */
  erasures: JobQueue;
  /** The uploads queue, where POST …:redetect queues its images (functions/ingest consumes them). */
  redetects: JobQueue;
  /**
   * How an import batch's source is fanned out (docs/design.md §16): on AWS an S3 Batch Operations job per import
   * (import-engine.ts); the batch service opening an import from a source calls `importEngine.start` once the source passed
   * the client's allowed sources. Locally the stack's lister (lib/import/lister.ts) takes its place.
   */
  importEngine?: ImportEngine;
  /**
   * Batches from a source (docs/design.md §16): the uploads queue :retry sends its images to (in their client's group),
   * and locally where a new import's listing starts (`listings`, the stack's lister). With no `listings` the
   * `importEngine` starts each import's job (AWS). Without either, a batch from a source answers 400
   * imports_not_configured.
   */
  imports?: { listings?: JobQueue; uploads: ImportQueue };
}

/** The stores an import's API is built on, each typed by what the API asks of it (built by createBatchesHandler). */
export interface ImportStores {
  /** The client's allowed sources (lib/store/client/sources.ts). */
  sources: ImportApiDeps['sources'];
  /** The import's items (lib/store/imports/imports.ts). */
  imports: ImportApiStore;
  /** The objects' send marks (lib/store/imports/marks.ts) and the images quota the enqueue counts against. */
  marks: ImportMarks;
  quota: ImportQuota;
  /** Where an AWS job's id is recorded on the import (lib/store/imports/jobs.ts). */
  jobs: { recordJob(clientId: string, batchId: string, job: { jobId: string; attempt: number }): Promise<void> };
  /** Today's usage (lib/store/client/quota.ts): :retry asks no more than are left. */
  limits: { usage(clientId: string, day: string): Promise<{ accepted: number }> };
}

/**
 * An import's API on the stores given: the allowed sources, its items, the listing's start (the local lister or the
 * AWS engine), and the once-only enqueue of :retry.
 */
export function importDeps(wiring: Pick<BatchesWiring, 'imports' | 'importEngine'>, stores: ImportStores): ImportApiDeps | undefined {
  const { imports, importEngine } = wiring;
  if (!imports) return undefined;
  // Locally the stack's lister; on AWS the engine's job, its id recorded on the import.
  const start = imports.listings
    ? { listings: imports.listings }
    : importEngine
      ? {
          engine: {
            check: (s: ImportSource) => importEngine.check(s),
            start: (j: ImportJob) => importEngine.start(j),
            recordJob: (clientId: string, batchId: string, job: { jobId: string; attempt: number }) =>
              stores.jobs.recordJob(clientId, batchId, job),
          },
        }
      : {};
  return {
    sources: stores.sources,
    imports: stores.imports,
    ...start,
    enqueue: { queue: imports.uploads, marks: stores.marks, quota: stores.quota },
    usage: (clientId, day) => stores.limits.usage(clientId, day),
  };
}

const withImports = (imports: ImportApiDeps | undefined) => (imports ? { imports } : {});

export function createBatchesHandler(wiring: BatchesWiring): ApiHandler {
  const config = loadApiConfig();
  const ddb = createDocumentClient();
  const signingKey = loadCallbackSigningKey();
  const notify = loadNotifyConfig();
  const table = { ddb, tableName: config.tableName };
  const limits = new ClientQuotaStore({ ...table, defaults: defaultClientLimits(), cacheMs: clientLimitsCacheMs() });
  const onDone = completionHook(wiring, config.pricePerImageUsd);
  // Closing can finish a batch: the completion callback starts here then.
  const store = new BatchStore({ ...table, transactions: config.transactions, onDone });
  // An import's stores: its enqueue counts an object and marks its upload in one write where the backend has transactions.
  const importStores: ImportStores = {
    sources: new ClientSourcesStore(table),
    imports: new ImportStore(table),
    marks: new ImportMarksStore(table),
    quota: new ClientQuotaStore({
      ...table,
      defaults: defaultClientLimits(),
      cacheMs: clientLimitsCacheMs(),
      transactions: config.transactions,
    }),
    jobs: new ImportJobsStore({ ...table, transactions: config.transactions }),
    limits,
  };
  const aws = loadAwsClientSettings();
  const rekognition = createRekognitionClient(aws);
  return createApiHandler({
    routes: apiRoutes(config).filter((route) => route.function === 'batches'),
    services: {
      batches: new BatchLifecycleService({
        store,
        s3: createS3Client(aws),
        bucketName: config.bucketName,
        defaultRetentionDays: config.defaultRetentionDays,
        catMinConfidence: config.catMinConfidence,
        maxUploadBytes: config.maxUploadBytes,
        uploadExpiresSeconds: config.uploadExpiresSeconds,
        pricePerImageUsd: config.pricePerImageUsd,
        exports: { images: new BatchImagePages(table), config: loadExportConfig() },
        erasures: wiring.erasures,
        callbacks: { signingKey, allowLoopback: notify.allowLoopback, loopbackPorts: notify.loopbackPorts },
        // A review answers the image, its links signed as the read function signs them.
        links: imageLinkSignerOf(
          { bucket: config.bucketName, seconds: config.imageUrlSeconds, windowSeconds: IMAGE_URL_WINDOW_SECONDS },
          loadS3Settings(),
        ),
        // Forms beyond today's images, and batches beyond today's, are refused (docs/api.md, "Limits").
        quota: limits,
        // POST …:redetect: the model answering now is learnt from one DetectLabels answer; re-detections count as uploads.
        redetect: {
          redetections: new Redetections(store.counters, onDone),
          currentModel: () => currentModel(rekognition, (model) => recordCurrentModel(table, model, Date.now())),
          queue: wiring.redetects,
          limitsOf: (clientId) => limits.limitsOf(clientId),
          pricePerImageUsd: config.pricePerImageUsd,
          isLive: (batch) => store.isLive(batch),
          resumeGraceMs: redetectResumeGraceMs(),
          ...redetectPaging(),
        },
        ...withImports(importDeps(wiring, importStores)),
      }),
    },
    authenticator: annotatingClient(new ApiKeyAuthenticator({ keys: new ApiKeyStore(table), cacheMs: config.apiKeyCacheMs })),
    rateLimiter: containerRateLimiter((clientId) => limits.limitsOf(clientId)),
  });
}
