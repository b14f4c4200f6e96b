// SQS entry point of the `erase` function: one batch erasure per message (DELETE /v1/batches/{batchId} queues it).
// The work is lib/erase; it resumes where an interrupted run stopped, so a failed message is simply received again.
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createDocumentClient, createS3Client } from '../../lib/aws/clients';
import { startTracing, tracedHandler, traceWork } from '../../lib/aws/tracing';
import { loadAwsClientSettings, loadConfig, loadTracingSettings } from '../../lib/config';
import { runEraseJob } from '../../lib/erase/job';
import { decodeEraseMessage } from '../../lib/erase/message';
import { BatchErasure } from '../../lib/store/batch/erasure';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

const config = loadConfig();
const logger = new Logger({ serviceName: 'icecat-erase' });
const deps = {
  s3: createS3Client(loadAwsClientSettings()),
  store: new BatchErasure({ ddb: createDocumentClient(), tableName: config.tableName }),
  bucketName: config.bucketName,
};

/** The batch a message names, for the trace; none for a message that does not decode (runEraseJob says why). */
function traceKeysOf(body: string): { clientId?: string; batchId?: string } {
  try {
    return decodeEraseMessage(body);
  } catch {
    return {};
  }
}

export const handler = tracedHandler(async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const failed: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const report = await traceWork('erasure', traceKeysOf(record.body), () => runEraseJob(deps, record.body));
      logger.info(report ? 'batch erased' : 'no batch marked for erasure', { messageId: record.messageId, ...report });
    } catch (err) {
      logger.error('erasure interrupted; it resumes when the message is received again', {
        messageId: record.messageId,
        error: err as Error,
      });
      failed.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failed };
});
