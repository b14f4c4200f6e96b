// SQS entry point of the `callbacks` function: one completion callback attempt per message. A failed attempt queues
// the next one with its backoff as DelaySeconds (lib/notify/schedule.ts), until delivered or the window closes.
// Built at cold start (app.ts): a missing CALLBACK_QUEUE_URL, TABLE_NAME or CALLBACK_SIGNING_KEY stops it there.
import { Metrics } from '@aws-lambda-powertools/metrics';
import { sqsClient } from '../../lib/aws/clients';
import { startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadTracingSettings } from '../../lib/config';
import { METRICS_NAMESPACE } from '../../lib/ingest/metrics';
import { SqsJobQueue } from '../../lib/jobs/queue';
import { queueUrl } from '../config';
import { createCallbacksHandler } from './app';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

export const handler = tracedHandler(
  createCallbacksHandler({
    callbacks: new SqsJobQueue(sqsClient(), queueUrl('CALLBACK_QUEUE_URL')),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'icecat-callbacks' }),
  }),
);
