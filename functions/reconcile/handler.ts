// Scheduled: queues again every upload left under uploads/ past the grace period. The work is lib/reconcile/sweep.ts.
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { createS3Client, createSqsClient } from '../../lib/aws/clients';
import { loadReconcileConfig } from '../../lib/reconcile/config';
import { sqsSender } from '../../lib/reconcile/sqs-sender';
import { sweepUploads, type SweepResult } from '../../lib/reconcile/sweep';

const logger = new Logger({ serviceName: 'icecat-reconcile' });
const config = loadReconcileConfig();
const s3 = createS3Client();
const sendMessages = sqsSender(createSqsClient(), config.queueUrl);

/** Leaves this much of the function's time for the last page's sends. */
const MARGIN_MS = 10_000;

export const handler = async (_event: ScheduledEvent, context: Context): Promise<Omit<SweepResult, 'queued'> & { queued: number }> => {
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
  const summary = { ...result, queued: result.queued.length };
  logger.info('sweep done', summary);
  return summary;
};
