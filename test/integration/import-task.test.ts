// The importTask function (docs/decisions/0042) driven as S3 Batch Operations invokes it, with AWS's documented
// schema 2.0 event (events/) re-aimed at a batch's objects, against a local stack of its own: its DynamoDB holds the
// send marks and the quota, its queue (the bridge the ingest reads) receives the messages; the consumer here only
// records what arrives, so each message is seen as the ingest would see it.

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { encodeManifestKey, s3BatchInvocationEvent, s3BatchInvocationFor } from '../../events/s3-batch-operations';
import { defaultClientLimits } from '../../functions/config';
import type { ImportTaskHandler } from '../../functions/import-task/app';
import { registerApiKey } from '../../lib/auth/register';
import { readManifestFacts } from '../../lib/import/batch-operations';
import { importRef } from '../../lib/import/enqueue';
import { type ImportMessage, importMessageIn } from '../../lib/import/message';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { Registrations } from '../../lib/store/client/registrations';
import { uploadItemKey } from '../../lib/store/table/schema';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { localS3Client } from '../../local/s3/s3';
import type { Stack } from '../../local/stack/types';
import { startTestStack, uniqueId, waitFor } from '../helpers';

const received: { message: ImportMessage; group: string | undefined }[] = [];
let stack: Stack;
let ddb: DynamoDBDocumentClient;
let handler: ImportTaskHandler;

beforeAll(async () => {
  stack = await startTestStack({
    applyEnv: true,
    reconcile: false,
    expiry: false,
    ingestHandler: async (event: SQSEvent) => {
      for (const r of event.Records) {
        const message = importMessageIn(r.body);
        if (message) received.push({ message, group: r.attributes.MessageGroupId });
      }
      return { batchItemFailures: [] };
    },
  });
  ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.endpoints.dynamodb), { marshallOptions: { removeUndefinedValues: true } });
  const { createImportTaskHandler } = await import('../../functions/import-task/app');
  const bridge = stack.bridge;
  handler = createImportTaskHandler({ queue: { send: async (body, groupId) => void bridge.send(body, { groupId }) } });
}, 60_000);

afterAll(() => stack?.stop());

const EXPIRES = Math.floor(Date.now() / 1000) + 30 * 86400;
const argumentsOf = (clientId: string, batchId: string, allow = ['s3://acme-photos/2024/']) => ({
  clientId,
  batchId,
  expiresAt: String(EXPIRES),
  allow: JSON.stringify(allow),
});
const messagesOf = (batchId: string) => received.filter((r) => r.message.batchId === batchId);

async function newClient(maxImagesPerDay?: number): Promise<string> {
  const clientId = uniqueId('imp').replace(/[^A-Za-z0-9_-]/g, '');
  await registerApiKey(new Registrations({ ddb, tableName: LOCAL_NAMES.table }), clientId);
  if (maxImagesPerDay !== undefined) {
    const quota = new ClientQuotaStore({ ddb, tableName: LOCAL_NAMES.table, defaults: defaultClientLimits(), cacheMs: 0 });
    await quota.setLimits(clientId, { maxImagesPerDay });
  }
  return clientId;
}

describe('the importTask function, invoked as S3 Batch Operations invokes it', () => {
  it("sends the task's object to the uploads queue once, in its client's group, and answers Succeeded; redriven, it sends nothing more", async () => {
    // Arrange
    const clientId = await newClient();
    const batchId = uniqueId('b');
    const key = '2024/trip/cat 1+café.jpg';
    const event = s3BatchInvocationFor(argumentsOf(clientId, batchId), {
      bucket: 'acme-photos',
      encodedKey: encodeManifestKey(key),
      versionId: 'v7',
    });

    // Act
    const first = await handler(event);
    const again = await handler(event);

    // Assert
    const task = event.tasks[0]!.taskId;
    expect(first).toEqual({
      invocationSchemaVersion: '2.0',
      treatMissingKeysAs: 'TemporaryFailure',
      invocationId: s3BatchInvocationEvent().invocationId,
      results: [{ taskId: task, resultCode: 'Succeeded', resultString: expect.stringMatching(/^enqueued s3:\/\/acme-photos\//) }],
    });
    expect(again.results).toEqual([{ taskId: task, resultCode: 'Succeeded', resultString: expect.stringMatching(/^sent before: /) }]);
    await waitFor(() => messagesOf(batchId).length > 0, { what: 'the import message' });
    await stack.whenIdle();
    expect(messagesOf(batchId)).toEqual([
      {
        group: clientId,
        message: {
          type: 'import',
          clientId,
          batchId,
          source: { bucket: 'acme-photos', key, versionId: 'v7' },
          listedAt: expect.any(Number),
        },
      },
    ]);
    const ref = importRef({ clientId, batchId, expiresAt: EXPIRES }, { bucket: 'acme-photos', key, versionId: 'v7' });
    const item = await ddb.send(new GetCommand({ TableName: LOCAL_NAMES.table, Key: uploadItemKey(ref), ConsistentRead: true }));
    expect([item.Item?.imp_send, typeof item.Item?.quota_day]).toEqual(['sent', 'string']);
  });

  it("answers TemporaryFailure, sending nothing, for an object beyond today's images quota, with when the import goes on", async () => {
    const clientId = await newClient(1);
    const batchId = uniqueId('b');
    const event = (name: string, taskId: string) =>
      s3BatchInvocationFor(argumentsOf(clientId, batchId), { bucket: 'acme-photos', encodedKey: `2024/${name}`, taskId });

    const inQuota = await handler(event('a.jpg', 'task-a'));
    const beyond = await handler(event('b.jpg', 'task-b'));

    expect(inQuota.results[0]?.resultCode).toBe('Succeeded');
    expect(beyond.results).toEqual([
      {
        taskId: 'task-b',
        resultCode: 'TemporaryFailure',
        resultString: expect.stringMatching(/^QuotaExceeded: .* goes on at \d{4}-\d\d-\d\dT00:00:00\.000Z$/),
      },
    ]);
    await stack.whenIdle();
    expect(messagesOf(batchId).map((m) => m.message.source.key)).toEqual(['2024/a.jpg']);
  });

  it("answers PermanentFailure, sending nothing, for an object outside the batch's source or a job without the batch in its arguments", async () => {
    const clientId = await newClient();
    const batchId = uniqueId('b');

    const outside = await handler(
      s3BatchInvocationFor(argumentsOf(clientId, batchId), { bucket: 'acme-photos', encodedKey: '2023/a.jpg' }),
    );
    const otherBucket = await handler(
      s3BatchInvocationFor(argumentsOf(clientId, batchId), { bucket: 'zeta-photos', encodedKey: '2024/a.jpg' }),
    );
    const documented = await handler(s3BatchInvocationEvent());

    expect([outside, otherBucket, documented].map((a) => [a.results[0]?.resultCode, a.results[0]?.resultString.split(':')[0]])).toEqual([
      ['PermanentFailure', 'InvalidTask'],
      ['PermanentFailure', 'InvalidTask'],
      ['PermanentFailure', 'InvalidJob'],
    ]);
    await stack.whenIdle();
    expect(messagesOf(batchId)).toEqual([]);
  });
});

describe('a manifest as CreateJob needs it (lib/import/batch-operations.ts)', () => {
  it('reads its ETag and columns with one ranged GET, a Batch Operations CSV of 3 columns or an Inventory manifest.json', async () => {
    const s3 = localS3Client(stack.endpoints.s3);
    const prefix = uniqueId('manifests');
    const csv = `${stack.bucket},2024/a%2Bb.jpg,v1\n${stack.bucket},2024/c.jpg,v2\n`;
    const put = await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: `${prefix}/m.csv`, Body: csv }));
    await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: `${prefix}/inv/manifest.json`, Body: '{"files": []}' }));

    const facts = await readManifestFacts(s3, `s3://${stack.bucket}/${prefix}/m.csv`);
    const inventory = await readManifestFacts(s3, `s3://${stack.bucket}/${prefix}/inv/manifest.json`);

    expect(facts).toEqual({ bucket: stack.bucket, key: `${prefix}/m.csv`, etag: put.ETag?.replace(/"/g, ''), format: 'csv3' });
    expect(inventory.format).toBe('inventory');
    await expect(readManifestFacts(s3, `s3://${stack.bucket}/${prefix}/none.csv`)).rejects.toThrow(/key does not exist|NoSuchKey/i);
  });
});
