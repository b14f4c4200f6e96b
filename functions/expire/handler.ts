// Scheduled: the expiry sweep (lib/erase/expiry.ts). Every batch whose retention is over is marked as being erased and
// its erasure queued to the erase function, which deletes its objects under every prefix and its items as a DELETE
// would (docs/design.md §6, "A batch expires whole"). Its role reads one index, marks summaries and sends to one queue.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { createDocumentClient, createSqsClient } from '../../lib/aws/clients';
import { startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadTracingSettings } from '../../lib/config';
import { ERASURE_REQUEUE_MS, type ExpirySweepResult, sweepExpiredBatches } from '../../lib/erase/expiry';
import { METRICS_NAMESPACE } from '../../lib/ingest/metrics';
import { SqsJobQueue } from '../../lib/jobs/queue';
import { ExpiredBatches } from '../../lib/store/expiry/expired';
import { loadTableName, queueUrl } from '../config';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

const logger = new Logger({ serviceName: 'icecat-expire' });
const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'icecat-expire' });
const deps = {
  expired: new ExpiredBatches({ ddb: createDocumentClient(), tableName: loadTableName() }),
  erasures: new SqsJobQueue(createSqsClient(), queueUrl('ERASE_QUEUE_URL')),
  log: (line: string, details?: Record<string, unknown>) => logger.info(line, details ?? {}),
};

type Summary = Omit<ExpirySweepResult, 'queued'> & { queued: number };

export const handler = tracedHandler(async (_event: ScheduledEvent, context: Context): Promise<Summary> => {
  // Until nothing due remains, within the function's time; the next scheduled run goes on from there.
  const result = await sweepExpiredBatches(deps, {
    requeueAfterMs: ERASURE_REQUEUE_MS,
    remainingMs: () => context.getRemainingTimeInMillis(),
  });
  const summary = { ...result, queued: result.queued.length };
  logger.info('expiry sweep done', summary);
  // Every run, 0 included: the erasures-overdue alarm reads a missing value as a sweep that no longer runs.
  metrics.addMetric('ErasuresOverdue', MetricUnit.Count, result.overdue);
  metrics.addMetric('BatchesExpired', MetricUnit.Count, result.expired);
  metrics.publishStoredMetrics();
  return summary;
});
