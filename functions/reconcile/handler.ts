// Scheduled: queues again every upload left under uploads/ past the grace period (lib/reconcile/sweep.ts), and every
// completion callback whose message was lost (lib/reconcile/callbacks.ts).
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { presentBatch } from '../../lib/api/present';
import type { Batch } from '../../lib/domain';
import { createDocumentClient, createS3Client, createSqsClient } from '../../lib/aws/clients';
import { startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadAwsClientSettings, loadTracingSettings } from '../../lib/config';
import { SqsJobQueue } from '../../lib/jobs/queue';
import { callbackSweepLimits, sweepCallbacks, type CallbackSweepResult } from '../../lib/reconcile/callbacks';
import { uploadGroupOf } from '../../lib/reconcile/s3-event';
import { sqsSender } from '../../lib/reconcile/sqs-sender';
import { sweepUploads, type SweepResult } from '../../lib/reconcile/sweep';
import { loadNotifyConfig, loadReconcileConfig } from '../config';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

const logger = new Logger({ serviceName: 'icecat-reconcile' });
const config = loadReconcileConfig();
const s3 = createS3Client(loadAwsClientSettings());
const sqs = createSqsClient();
// Each upload again in its client's message group of the fair uploads queue (docs/design.md §11).
const sendMessages = sqsSender(sqs, config.queueUrl, 3, uploadGroupOf);
const callbackDeps = {
  ddb: createDocumentClient(),
  table: config.callbacks.tableName,
  callbacks: new SqsJobQueue(sqs, config.callbacks.queueUrl),
  present: (batch: Batch) => presentBatch(batch, config.pricePerImageUsd),
  log: (line: string, details?: Record<string, unknown>) => logger.info(line, details ?? {}),
};
const callbackLimits = callbackSweepLimits(loadNotifyConfig(), config.callbacks.graceSeconds);

/** Leaves this much of the function's time for the last page's sends. */
const MARGIN_MS = 10_000;

type Summary = Omit<SweepResult, 'queued'> & { queued: number; callbacks: Omit<CallbackSweepResult, 'requeued'> & { requeued: number } };

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
  const summary = { ...result, queued: result.queued.length, callbacks: { ...callbacks, requeued: callbacks.requeued.length } };
  logger.info('sweep done', summary);
  return summary;
});
