// The `batches` function built from what it is given: its queues (the erasure's and the callbacks'), SQS on AWS
// (handler.ts) and the local stack's in-process queues locally. Everything else it reads from its environment once,
// when built: a missing TABLE_NAME, BUCKET_NAME or CALLBACK_SIGNING_KEY fails there, naming the variable.
import { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import { imageLinkSignerOf } from '../../lib/api/image-links';
import type { ImportApiDeps } from '../../lib/api/import-batch';
import { apiRoutes } from '../../lib/api/routes';
import { ApiKeyAuthenticator } from '../../lib/auth/api-keys';
import { createDocumentClient, createRekognitionClient, createS3Client } from '../../lib/aws/clients';
import { annotatingClient } from '../../lib/aws/tracing';
import { loadAwsClientSettings, redetectPaging, redetectResumeGraceMs } from '../../lib/config';
import type { ImportSource } from '../../lib/domain/import';
import { type ApiHandler, createApiHandler } from '../../lib/http/app';
import type { ImportEngine, ImportJob } from '../../lib/import/batch-operations';
import type { ImportQueue } from '../../lib/import/enqueue';
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
import type { TableRef } from '../../lib/store/table/access';
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

/** An import's API: the allowed sources, its items, the listing's start, and the once-only enqueue of :retry. */
export function importDeps(
  wiring: Pick<BatchesWiring, 'imports' | 'importEngine'>,
  ddb: TableRef['ddb'],
  config: { tableName: string; transactions: boolean },
  limits: ClientQuotaStore,
): ImportApiDeps | undefined {
  const { tableName, transactions } = config;
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
            recordJob: jobsStore(ddb, config),
          },
        }
      : {};
  return {
    sources: new ClientSourcesStore({ ddb, tableName }),
    imports: new ImportStore({ ddb, tableName }),
    ...start,
    enqueue: {
      queue: imports.uploads,
      marks: new ImportMarksStore({ ddb, tableName }),
      quota: new ClientQuotaStore({ ddb, tableName, defaults: defaultClientLimits(), cacheMs: clientLimitsCacheMs(), transactions }),
    },
    usage: (clientId, day) => limits.usage(clientId, day),
  };
}

const jobsStore = (ddb: TableRef['ddb'], config: { tableName: string; transactions: boolean }) => {
  const store = new ImportJobsStore({ ddb, ...config });
  return (clientId: string, batchId: string, job: { jobId: string; attempt: number }) => store.recordJob(clientId, batchId, job);
};

const withImports = (imports: ImportApiDeps | undefined) => (imports ? { imports } : {});

export function createBatchesHandler(wiring: BatchesWiring): ApiHandler {
  const config = loadApiConfig();
  const ddb = createDocumentClient();
  const signingKey = loadCallbackSigningKey();
  const notify = loadNotifyConfig();
  const limits = new ClientQuotaStore({
    ddb,
    tableName: config.tableName,
    defaults: defaultClientLimits(),
    cacheMs: clientLimitsCacheMs(),
  });
  const onDone = completionHook(wiring, config.pricePerImageUsd);
  // Closing can finish a batch: the completion callback starts here then.
  const store = new BatchStore({ ddb, tableName: config.tableName, transactions: config.transactions, onDone });
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
        exports: { images: new BatchImagePages({ ddb, tableName: config.tableName }), config: loadExportConfig() },
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
          currentModel: () =>
            currentModel(rekognition, (model) => recordCurrentModel({ ddb, tableName: config.tableName }, model, Date.now())),
          queue: wiring.redetects,
          limitsOf: (clientId) => limits.limitsOf(clientId),
          pricePerImageUsd: config.pricePerImageUsd,
          isLive: (batch) => store.isLive(batch),
          resumeGraceMs: redetectResumeGraceMs(),
          ...redetectPaging(),
        },
        ...withImports(importDeps(wiring, ddb, config, limits)),
      }),
    },
    authenticator: annotatingClient(
      new ApiKeyAuthenticator({ keys: new ApiKeyStore({ ddb, tableName: config.tableName }), cacheMs: config.apiKeyCacheMs }),
    ),
    rateLimiter: containerRateLimiter((clientId) => limits.limitsOf(clientId)),
  });
}
