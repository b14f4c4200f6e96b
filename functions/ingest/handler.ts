// SQS batch of S3 events in, partial batch failures out: the ingest (app.ts) built at cold start with its AWS
// wiring. A missing INGEST_QUEUE_URL, CALLBACK_QUEUE_URL or EVENT_BUS_NAME, like a bad number, stops it there,
// naming the variable, before any message is taken.
import { sqsClient } from '../../lib/aws/clients';
import { SqsMessageVisibility } from '../../lib/aws/message-visibility';
import { startTracing, tracedHandler } from '../../lib/aws/tracing';
import { loadTracingSettings } from '../../lib/config';
import { PowertoolsIngestMetrics } from '../../lib/ingest/metrics';
import { awsNotifyWiring } from '../../lib/notify/wiring';
import { loadNotifyWiringSettings, queueUrl } from '../config';
import { createIngestHandler } from './app';

// Tracing first: the clients built below are captured only once the tracer is started.
startTracing(loadTracingSettings());

export const handler = tracedHandler(
  createIngestHandler({
    ...awsNotifyWiring(loadNotifyWiringSettings()),
    visibility: new SqsMessageVisibility(sqsClient(), queueUrl('INGEST_QUEUE_URL')),
    metrics: new PowertoolsIngestMetrics(),
  }),
);
