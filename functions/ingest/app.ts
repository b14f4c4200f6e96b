// The `ingest` function built from what it is given: the callbacks queue and event bus its completions go to, how a
// deferred message goes back to its queue, and its metrics. On AWS handler.ts gives SQS, EventBridge and Powertools'
// EMF; the local stack gives its in-process queues and a listener of the EMF documents. The rest it reads from its
// environment once, when built: a bad number stops it there, naming the variable, before any message is taken.
// A message whose image is claimed by another run is failed and made visible again only once that claim's lease is
// over (lib/aws/message-visibility.ts).
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { clients } from '../../lib/aws/clients';
import type { MessageVisibility, RetryLater } from '../../lib/aws/message-visibility';
import { loadIngestConfig } from '../../lib/config';
import type { IngestMetrics } from '../../lib/ingest/metrics';
import { processUpload, type IngestDeps } from '../../lib/ingest/pipeline';
import { completionHook, type NotifyWiring } from '../../lib/notify/wiring';
import { BatchStore } from '../../lib/store/batch-store';
import { takeBack } from '../../lib/store/take-back';
import { uploadsIn } from './events';

export interface IngestWiring extends NotifyWiring {
  /** How a deferred message is handed back to its queue for a set time. */
  visibility: MessageVisibility;
  metrics: IngestMetrics;
}

export type IngestHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export function createIngestHandler(wiring: IngestWiring): IngestHandler {
  const config = loadIngestConfig();
  const logger = new Logger({ serviceName: 'icecat-ingest' });
  const { s3, ddb, rekognition } = clients();
  const deps: IngestDeps = {
    s3,
    rekognition,
    store: new BatchStore({
      ddb,
      tableName: config.tableName,
      transactions: config.transactions,
      onDone: completionHook(wiring, (message, details) => logger.error(message, details)),
      takeBack: takeBack(ddb, config.tableName),
    }),
    config,
    logger,
    metrics: wiring.metrics,
  };
  const visibility = wiring.visibility;

  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const failed: SQSBatchResponse['batchItemFailures'] = [];
    const later: RetryLater[] = [];
    const queue = [...event.Records];
    const worker = async (): Promise<void> => {
      for (let record = queue.shift(); record; record = queue.shift()) {
        try {
          let delaySeconds = 0;
          for (const upload of uploadsIn(record)) {
            const result = await processUpload(deps, upload);
            logger.info('upload handled', { messageId: record.messageId, ...result });
            if (result.outcome === 'deferred') delaySeconds = Math.max(delaySeconds, result.retryAfterSeconds);
          }
          if (delaySeconds > 0) {
            failed.push({ itemIdentifier: record.messageId });
            later.push({ messageId: record.messageId, receiptHandle: record.receiptHandle, delaySeconds });
          }
        } catch (err) {
          logger.error('upload failed; SQS will redeliver it', { messageId: record.messageId, error: err as Error });
          failed.push({ itemIdentifier: record.messageId });
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(config.parallelism, queue.length) }, worker));
      if (later.length > 0) await visibility.retryLater(later, (message, details) => logger.warn(message, details));
    } finally {
      deps.metrics.publish();
    }
    return { batchItemFailures: failed };
  };
}
