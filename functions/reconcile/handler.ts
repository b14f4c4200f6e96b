// Scheduled: queues again every upload left under uploads/ past the grace period (lib/reconcile/sweep.ts), every
// completion callback whose message was lost (lib/reconcile/callbacks.ts), looks after each re-detection run (pages on
// a start its call left, queues again what is owed and in no one's hands, ends a run owing nothing:
// lib/reconcile/redetect-runs.ts), and follows each running import's S3 Batch Operations job to its end, closing its
// batch (lib/reconcile/import-jobs.ts).
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { presentBatch } from '../../lib/api/present';
import { createDocumentClient, createS3Client, createSqsClient } from '../../lib/aws/clients';
import { startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadAwsClientSettings, loadTracingSettings } from '../../lib/config';
import type { Batch } from '../../lib/domain/batch';
import { jobAllow } from '../../lib/import/sources';
import { SqsJobQueue } from '../../lib/jobs/queue';
import { awsNotifyWiring, completionHook } from '../../lib/notify/wiring';
import { type CallbackSweepResult, callbackSweepLimits, sweepCallbacks } from '../../lib/reconcile/callbacks';
import { type ImportJobSweepDeps, type ImportJobSweepResult, sweepImportJobs } from '../../lib/reconcile/import-jobs';
import { type RedetectSweepResult, redetectSweepOf } from '../../lib/reconcile/redetect-runs';
import { uploadGroupOf } from '../../lib/reconcile/s3-event';
import { sqsSender } from '../../lib/reconcile/sqs-sender';
import { type SweepResult, sweepUploads } from '../../lib/reconcile/sweep';
import { BatchStore } from '../../lib/store/batch-store';
import { CallbackRequeues } from '../../lib/store/callback/requeue';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ClientSourcesStore } from '../../lib/store/client/sources';
import { ImportStore } from '../../lib/store/imports/imports';
import { ImportJobsStore } from '../../lib/store/imports/jobs';
import { Redetections } from '../../lib/store/redetect/images';
import { readRunningRedetections } from '../../lib/store/redetect/running';
import { awsImportEngine } from '../batches/import-engine';
import {
  clientLimitsCacheMs,
  defaultClientLimits,
  loadNotifyConfig,
  loadNotifyWiringSettings,
  loadReconcileConfig,
  loadReconcileImports,
  loadReconcileRedetect,
} from '../config';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

const logger = new Logger({ serviceName: 'icecat-reconcile' });
const config = loadReconcileConfig();
const s3 = createS3Client(loadAwsClientSettings());
const sqs = createSqsClient();
// Each upload again in its client's message group of the fair uploads queue (docs/design.md §11).
const sendMessages = sqsSender(sqs, config.queueUrl, 3, uploadGroupOf);
const table = { ddb: createDocumentClient(), tableName: config.callbacks.tableName };
const callbackDeps = {
  owed: new CallbackRequeues(table),
  callbacks: new SqsJobQueue(sqs, config.callbacks.queueUrl),
  present: (batch: Batch) => presentBatch(batch, config.pricePerImageUsd),
  log: (line: string, details?: Record<string, unknown>) => logger.info(line, details ?? {}),
};
const callbackLimits = callbackSweepLimits(loadNotifyConfig(), config.callbacks.graceSeconds);

/** Leaves this much of the function's time for the last page's sends. */
const MARGIN_MS = 10_000;

type Summary = Omit<SweepResult, 'queued'> & {
  queued: number;
  callbacks: Omit<CallbackSweepResult, 'requeued'> & { requeued: number };
  redetections: RedetectSweepResult;
  imports?: ImportJobSweepResult;
};

// Re-detection runs (docs/decisions/0039): a start whose call ended its time budget is paged on here, each page
// charged to its client's quota and queued to the uploads queue; a run that ends finishes its batch (callback, event).
const redetect = loadReconcileRedetect();
const quota = new ClientQuotaStore({ ...table, defaults: defaultClientLimits(), cacheMs: clientLimitsCacheMs() });
const sweepRedetections = redetectSweepOf({
  redetections: new Redetections(
    new BatchStore({ ...table, transactions: redetect.transactions }).counters,
    completionHook(awsNotifyWiring(loadNotifyWiringSettings()), config.pricePerImageUsd, (line, details) => logger.error(line, details)),
  ),
  batches: () => readRunningRedetections(table),
  queue: new SqsJobQueue(sqs, config.queueUrl),
  limitsOf: (clientId) => quota.limitsOf(clientId),
  graceMs: redetect.graceMs,
  ...(redetect.pageSize !== undefined ? { pageSize: redetect.pageSize } : {}),
  log: (line, details) => logger.info(line, details ?? {}),
});

// Imports on AWS (docs/decisions/0043): each running import's S3 Batch Operations job followed to its end. Only where the
// stack has the import task (IMPORT_TASK_FUNCTION_ARN); its engine and stores built at the first sweep.
const importsConfig = loadReconcileImports();
const importDeps = (transactions: boolean): ImportJobSweepDeps => {
  const { ddb, tableName } = table;
  const jobs = new ImportJobsStore({ ddb, tableName, transactions });
  const imports = new ImportStore({ ddb, tableName });
  const batches = new BatchStore({ ddb, tableName, transactions });
  const sources = new ClientSourcesStore({ ddb, tableName });
  return {
    live: () => imports.liveImports(),
    read: (clientId, batchId) => jobs.readJob(clientId, batchId),
    engine: awsImportEngine(),
    recordJob: (clientId, batchId, job) => jobs.recordJob(clientId, batchId, job),
    finish: (clientId, batchId, jobId) => jobs.finish(clientId, batchId, jobId),
    close: async (clientId, batchId, expected) => void (await batches.close(clientId, batchId, expected)),
    endLive: (clientId, batchId) => imports.endLive(clientId, batchId),
    allow: (clientId, source) => jobAllow(sources, clientId, source),
    log: (line, details) => logger.info(line, details ?? {}),
  };
};
let importSweep: ImportJobSweepDeps | undefined;
const sweepImports = (maxDurationMs: number): Promise<ImportJobSweepResult> | undefined => {
  if (!importsConfig) return undefined;
  importSweep ??= importDeps(importsConfig.transactions);
  return sweepImportJobs(importSweep, { maxImports: 200, maxDurationMs, startGraceMs: 120_000 });
};

export const handler = tracedHandler(async (_event: ScheduledEvent, context: Context): Promise<Summary> => {
  const maxDurationMs = Math.min(config.limits.maxDurationMs, Math.max(1000, context.getRemainingTimeInMillis() - MARGIN_MS));
  const result = await sweepUploads(
    {
      s3,
      bucket: config.bucketName,
      region: config.region,
      sendMessages,
      log: (line, details) => logger.info(line, details ?? {}),
    },
    { ...config.limits, maxDurationMs },
  );
  const callbacks = await sweepCallbacks(callbackDeps, callbackLimits);
  // What is left of the function's time, shared by the last two looks.
  const left = () => Math.max(1000, context.getRemainingTimeInMillis() - MARGIN_MS);
  const redetections = await sweepRedetections({ maxBatches: 5_000, maxDurationMs: Math.min(30_000, left() / 2) });
  const imports = await sweepImports(Math.min(30_000, left()));
  const summary: Summary = {
    ...result,
    queued: result.queued.length,
    callbacks: { ...callbacks, requeued: callbacks.requeued.length },
    redetections,
    ...(imports ? { imports } : {}),
  };
  logger.info('sweep done', summary);
  return summary;
});
