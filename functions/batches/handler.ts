// API Gateway HTTP API (payload v2) entry point of the `batches` function: the batch lifecycle's writes (create, more
// upload forms, close, delete) and the export. Creating and adding sign uploads and exports go to S3, so this is the
// one API function with an S3 client and the one whose role writes. Same app, middlewares and error mapping as
// functions/api. Built at cold start (app.ts) with its AWS queues: a missing ERASE_QUEUE_URL, INGEST_QUEUE_URL, CALLBACK_QUEUE_URL,
// EVENT_BUS_NAME, TABLE_NAME, BUCKET_NAME or CALLBACK_SIGNING_KEY stops it there, naming the variable.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { sqsClient } from '../../lib/aws/clients';
import { annotate, startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadTracingSettings } from '../../lib/config';
import { SqsImportQueue } from '../../lib/import/sqs-queue';
import { SqsJobQueue } from '../../lib/jobs/queue';
import { awsNotifyWiring } from '../../lib/notify/wiring';
import { loadNotifyWiringSettings, queueUrl } from '../config';
import { createBatchesHandler } from './app';
import { awsImportEngine } from './import-engine';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

const app = createBatchesHandler({
  erasures: new SqsJobQueue(sqsClient(), queueUrl('ERASE_QUEUE_URL')),
  // POST …:redetect queues its images where the ingest reads its uploads.
  redetects: new SqsJobQueue(sqsClient(), queueUrl('INGEST_QUEUE_URL')),
  // An import's fan-out: an S3 Batch Operations job (built when the first import starts); :retry sends the failed
  // imported images to the uploads queue again, in their client's group.
  importEngine: awsImportEngine(),
  imports: { uploads: new SqsImportQueue(sqsClient(), queueUrl('INGEST_QUEUE_URL')) },
  ...awsNotifyWiring(loadNotifyWiringSettings()),
});

export const handler = tracedHandler((event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => {
  annotate({ batchId: event.pathParameters?.batchId });
  return app(event, context);
});
