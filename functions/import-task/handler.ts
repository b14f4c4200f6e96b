// S3 Batch Operations' LambdaInvoke entry point of the `importTask` function (docs/decisions/0042): one object of an
// import's job per invocation, sent to the fair uploads queue in its client's message group; the answer is the
// response Batch Operations expects (lib/import/batch-operations-task.ts). A missing INGEST_QUEUE_URL or TABLE_NAME
// stops it at cold start, naming the variable.
import { Logger } from '@aws-lambda-powertools/logger';
import { createSqsClient } from '../../lib/aws/clients';
import { annotate, startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadTracingSettings } from '../../lib/config';
import type { BatchOperationsResponse } from '../../lib/import/batch-operations-task';
import { SqsImportQueue } from '../../lib/import/sqs-queue';
import { queueUrl } from '../config';
import { createImportTaskHandler } from './app';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

const logger = new Logger({ serviceName: 'icecat-import-task' });
const app = createImportTaskHandler({ queue: new SqsImportQueue(createSqsClient(), queueUrl('INGEST_QUEUE_URL')) });

export const handler = tracedHandler(async (event: unknown): Promise<BatchOperationsResponse> => {
  const args = (event as { job?: { userArguments?: Record<string, string> } } | null)?.job?.userArguments;
  annotate({ clientId: args?.clientId, batchId: args?.batchId });
  const response = await app(event);
  for (const r of response.results) if (r.resultCode !== 'Succeeded') logger.warn('import task not done', { ...r });
  return response;
});
