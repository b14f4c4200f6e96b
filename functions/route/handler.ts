// SQS entry point of the `route` function (docs/design.md §11): S3 notifications carry no MessageGroupId, so S3 sends
// them to the upload events queue, and this router sends each one on, unchanged, to the fair uploads queue the ingest
// reads, in the message group of the client the object was uploaded under. A failed send fails the whole batch: its
// messages are received again and sent again (the ingest is idempotent: a doubled message costs one more receive).
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createSqsClient } from '../../lib/aws/clients';
import { annotate, startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadTracingSettings } from '../../lib/config';
import { uploadGroupOf } from '../../lib/reconcile/s3-event';
import { sqsSender } from '../../lib/reconcile/sqs-sender';
import { queueUrl } from '../config';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

const logger = new Logger({ serviceName: 'icecat-route' });
const send = sqsSender(createSqsClient(), queueUrl('INGEST_QUEUE_URL'), 3, uploadGroupOf);

export const handler = tracedHandler(async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const bodies = event.Records.map((record) => record.body);
  const groups = [...new Set(bodies.map((b) => uploadGroupOf(b) ?? '-'))];
  // The client, when every message is one client's (the message group is the client id).
  if (groups.length === 1 && groups[0] !== '-') annotate({ clientId: groups[0] });
  await send(bodies);
  logger.info('upload events routed', { messages: bodies.length, groups });
  return { batchItemFailures: [] };
});
