// The `callbacks` function built from what it is given: the queue its next attempts go to, SQS on AWS (handler.ts)
// and the local stack's in-process queue locally. The rest it reads from its environment once, when built.
import { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDocumentClient } from '../../lib/aws/clients';
import { annotate, traceWork } from '../../lib/aws/tracing';
import { loadConfig } from '../../lib/config';
import type { JobQueue } from '../../lib/jobs/queue';
import { type CallbackConsumerDeps, handleCallbackMessage } from '../../lib/notify/consumer';
import { recordCallbackState } from '../../lib/store/callback/state';
import { loadCallbackSigningKey, loadNotifyConfig } from '../config';

export type CallbacksHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export interface CallbacksWiring {
  callbacks: JobQueue;
  /**
   * Where each attempt is counted, as `CallbackAttempts` by Outcome (delivered, retrying, gave_up, error: the attempt
   * could not be made or recorded): Powertools' EMF on AWS (handler.ts); the local stack counts none.
   */
  metrics?: Metrics;
}

export function createCallbacksHandler(wiring: CallbacksWiring): CallbacksHandler {
  const config = loadConfig();
  const logger = new Logger({ serviceName: 'icecat-callbacks' });
  const ddb = createDocumentClient();
  const deps: CallbackConsumerDeps = {
    signingKey: loadCallbackSigningKey(),
    config: loadNotifyConfig(),
    queue: wiring.callbacks,
    recordState: (clientId, batchId, state, final) => recordCallbackState(ddb, config.tableName, clientId, batchId, state, final),
  };
  const count = (outcome: string) => {
    if (!wiring.metrics) return;
    const single = wiring.metrics.singleMetric();
    single.addDimension('Outcome', outcome);
    single.addMetric('CallbackAttempts', MetricUnit.Count, 1);
  };
  return async (event) => {
    const failed: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        const report = await traceWork('callback', {}, async () => {
          const attempt = await handleCallbackMessage(deps, record.body);
          annotate(attempt);
          return attempt;
        });
        count(report.outcome);
        if (report.outcome === 'gave_up') logger.warn('callback given up: its retry window closed without a 2xx', { ...report });
      } catch (err) {
        count('error');
        logger.error('callback attempt failed; SQS delivers it again', { messageId: record.messageId, error: err as Error });
        failed.push({ itemIdentifier: record.messageId });
      }
    }
    // Each count is a single-metric document, written as it is counted: nothing is left to publish.
    return { batchItemFailures: failed };
  };
}
