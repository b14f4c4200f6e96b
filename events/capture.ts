// Regenerates the sample events from the local stack itself: `npx tsx events/capture.ts`.
// An upload with a space, '+', parentheses and unicode in its name goes through s3rver and the bridge (whose SQS
// event and S3 record are written as they reached the handler), and a GET through the HTTP gateway.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, S3Event, SQSEvent } from 'aws-lambda';
import { localS3Client } from '../local/s3/s3';
import { startStack } from '../local/stack/stack';
import { SAMPLE_BATCH_ID, SAMPLE_FILE_NAME } from './index';

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'icecat-events-'));
  let sqsEvent: SQSEvent | undefined;
  let apiEvent: APIGatewayProxyEventV2 | undefined;
  const stack = await startStack({
    dataDir,
    ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 },
    quiet: true,
    detector: false,
    applyEnv: false,
    ingestHandler: async (event) => {
      sqsEvent ??= event;
      return { batchItemFailures: [] };
    },
    apiHandler: async (event) => {
      apiEvent = event;
      return { statusCode: 200, body: '{"items":[]}' };
    },
  });
  try {
    const s3 = localS3Client(stack.endpoints.s3);
    const image = readFileSync(path.join(__dirname, '..', 'test', 'fixtures', 'chelsea.png'));
    await s3.send(
      new PutObjectCommand({
        Bucket: stack.bucket,
        Key: `uploads/demo/${SAMPLE_BATCH_ID}/${SAMPLE_FILE_NAME}`,
        Body: image,
        ContentType: 'image/png',
      }),
    );
    await stack.whenIdle(10_000);
    await fetch(`${stack.endpoints.api}/v1/batches/${SAMPLE_BATCH_ID}/images?limit=2`, {
      headers: { authorization: 'Bearer icw_demo_example_key', 'user-agent': 'curl/8.5.0', accept: 'application/json' },
    });
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (!sqsEvent || !apiEvent) throw new Error('no event captured');
  const s3Event: S3Event = JSON.parse(sqsEvent.Records[0]?.body ?? '{}') as S3Event;
  const write = (name: string, value: unknown) => {
    writeFileSync(path.join(__dirname, name), JSON.stringify(value, null, 2) + '\n');
    console.log(`wrote events/${name}`);
  };
  write('s3-object-created.json', s3Event);
  write('sqs-s3-object-created.json', sqsEvent);
  write('api-get-batch-images.json', apiEvent);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
