// Real sample events, captured from the local stack by events/capture.ts (S3 → bridge → handler, and the HTTP
// gateway), and AWS's own documented payload 2.0 sample. Tests and `osls invoke local --path events/...` use them.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { APIGatewayProxyEventV2, S3Event, SQSEvent } from 'aws-lambda';

/** The upload captured in the samples: uploads/demo/{SAMPLE_BATCH_ID}/{SAMPLE_FILE_NAME}. */
export const SAMPLE_BATCH_ID = '01JB4W6ZK3Q8V2N5R7T9X1Y3Z5';
export const SAMPLE_FILE_NAME = 'my cat+1 (café) 猫.png';
/** Its key as S3 writes it into the event (form-encoded). */
export const SAMPLE_ENCODED_KEY = `uploads/demo/${SAMPLE_BATCH_ID}/my+cat%2B1+%28caf%C3%A9%29+%E7%8C%AB.png`;

// A fresh copy per call, so that a test changing its event does not change another's.
const load = <T>(name: string): T => JSON.parse(readFileSync(path.join(__dirname, name), 'utf8')) as T;

/** The S3 notification (eventVersion 2.1) for the sample upload. */
export const s3ObjectCreatedEvent = (): S3Event => load('s3-object-created.json');
/** The SQS event carrying that notification, as the ingest handler receives it. */
export const sqsS3ObjectCreatedEvent = (): SQSEvent => load('sqs-s3-object-created.json');
/** GET /v1/batches/{SAMPLE_BATCH_ID}/images?limit=2 as the API handler receives it (payload 2.0). */
export const apiGetBatchImagesEvent = (): APIGatewayProxyEventV2 => load('api-get-batch-images.json');

/**
 * AWS's documented payload format 2.0 sample event, as published (not captured here): the "2.0" example of "Create
 * AWS Lambda proxy integrations for HTTP APIs in API Gateway", Amazon API Gateway Developer Guide,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html (source:
 * github.com/awsdocs/amazon-api-gateway-developer-guide, doc_source/http-api-develop-integrations-lambda.md). Its
 * `authentication` (mutual TLS), `authorizer` and `stageVariables` appear only when an API has them; this one has none.
 * test/integration/gateway-events.test.ts compares the local gateway's events with it.
 */
export const awsHttpApiSampleEvent = (): APIGatewayProxyEventV2 => load('aws-http-api-v2-sample.json');

/**
 * The sample SQS event re-aimed at another object: the captured shapes, with this bucket, key (form-encoded, as S3
 * writes it) and size, and the body's MD5 to match.
 */
export function sqsEventFor(bucket: string, encodedKey: string, size: number, messageId?: string): SQSEvent {
  const event = sqsS3ObjectCreatedEvent();
  const record = event.Records[0]!;
  const body = JSON.parse(record.body) as S3Event;
  const s3 = body.Records[0]!.s3;
  s3.bucket.name = bucket;
  s3.bucket.arn = `arn:aws:s3:::${bucket}`;
  s3.object.key = encodedKey;
  s3.object.size = size;
  record.body = JSON.stringify(body);
  record.md5OfBody = createHash('md5').update(record.body).digest('hex');
  if (messageId) record.messageId = messageId;
  return event;
}
