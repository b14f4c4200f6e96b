// SQS batch of S3 events in, partial batch failures out. The work is lib/ingest/pipeline.ts.
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { clients } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import { processUpload, type IngestDeps } from '../../lib/ingest/pipeline';
import { uploadsIn } from './events';

const logger = new Logger({ serviceName: 'icecat-ingest' });
const deps: IngestDeps = { clients: clients(), config: loadConfig(), logger };
const PARALLEL = Number(process.env.INGEST_PARALLELISM ?? 4);

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failed: SQSBatchResponse['batchItemFailures'] = [];
  const queue = [...event.Records];
  const worker = async (): Promise<void> => {
    for (let record = queue.shift(); record; record = queue.shift()) {
      try {
        for (const upload of uploadsIn(record)) {
          const result = await processUpload(deps, upload);
          logger.info('upload handled', { messageId: record.messageId, ...result });
        }
      } catch (err) {
        logger.error('upload failed; SQS will redeliver it', { messageId: record.messageId, error: err as Error });
        failed.push({ itemIdentifier: record.messageId });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker));
  return { batchItemFailures: failed };
};
