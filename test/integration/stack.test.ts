// The local stack itself: S3 notifications through the bridge, the table from resources/table.yml, paged
// listings, persistence. Each test runs a private stack with a recording handler in place of the ingest.

import { readFileSync } from 'node:fs';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  paginateListObjectsV2,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { S3Event, SQSEvent, SQSRecord } from 'aws-lambda';
import { INDEX } from '../../lib/store/table/schema';
import { controlHeaders } from '../../local/bridge/control-token';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { localS3Client } from '../../local/s3/s3';
import type { Stack } from '../../local/stack/types';
import { deadLetters, startTestStack, tempDataDir, waitForBridgeIdle } from '../helpers';

const s3For = (stack: Stack) => localS3Client(stack.endpoints.s3);
const ddbFor = (stack: Stack) => DynamoDBDocumentClient.from(localDynamoClient(stack.endpoints.dynamodb));

/** A stack whose ingest handler records what it receives. */
async function recordingStack(opts: Parameters<typeof startTestStack>[0] = {}) {
  const events: SQSEvent[] = [];
  const stack = await startTestStack({
    ingestHandler: async (event) => {
      events.push(event);
      return { batchItemFailures: [] };
    },
    ...opts,
  });
  const records = (): SQSRecord[] => events.flatMap((e) => e.Records);
  const s3Records = () => records().flatMap((r) => (JSON.parse(r.body) as S3Event).Records);
  return { stack, events, records, s3Records, s3: s3For(stack) };
}

describe('local stack: S3 notifications through the bridge', () => {
  let ctx: Awaited<ReturnType<typeof recordingStack>>;
  beforeAll(async () => {
    ctx = await recordingStack();
  });
  afterAll(async () => {
    await ctx.stack.stop();
  });

  it('delivers one SQS record per upload, whose body is an S3 event with the AWS-encoded key', async () => {
    // Arrange
    const key = 'uploads/demo/b-encoding/my cat+1 (ü) 猫.jpg';
    const before = ctx.records().length;

    // Act
    await ctx.s3.send(new PutObjectCommand({ Bucket: ctx.stack.bucket, Key: key, Body: 'jpeg bytes' }));
    await ctx.stack.whenIdle(10_000);

    // Assert
    const delivered = ctx.records().slice(before);
    expect(delivered).toHaveLength(1);
    const sqs = delivered[0] as SQSRecord;
    expect(sqs).toMatchObject({ eventSource: 'aws:sqs', awsRegion: 'us-east-1', attributes: { ApproximateReceiveCount: '1' } });
    const body = JSON.parse(sqs.body) as S3Event;
    expect(body.Records).toHaveLength(1);
    expect(body.Records[0]).toMatchObject({
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      eventName: 'ObjectCreated:Put',
      s3: {
        bucket: { name: 'icecat-images', arn: 'arn:aws:s3:::icecat-images' },
        object: {
          key: 'uploads/demo/b-encoding/my+cat%2B1+%28%C3%BC%29+%E7%8C%AB.jpg',
          size: 10,
          eTag: expect.stringMatching(/^[0-9a-f]{32}$/),
        },
      },
    });
  });

  it('does not notify for objects written under processed/, also when copied there from uploads/', async () => {
    // Arrange
    const source = 'uploads/demo/b-moves/a.jpg';
    await ctx.s3.send(new PutObjectCommand({ Bucket: ctx.stack.bucket, Key: source, Body: 'x' }));
    await ctx.stack.whenIdle(10_000);
    const before = ctx.records().length;

    // Act
    await ctx.s3.send(new PutObjectCommand({ Bucket: ctx.stack.bucket, Key: 'processed/demo/b-moves/f.jpg', Body: 'x' }));
    await ctx.s3.send(
      new CopyObjectCommand({ Bucket: ctx.stack.bucket, Key: 'processed/demo/b-moves/g.jpg', CopySource: `${ctx.stack.bucket}/${source}` }),
    );
    await ctx.stack.whenIdle(10_000);

    // Assert
    expect(ctx.records().slice(before)).toHaveLength(0);
  });

  it('notifies ObjectCreated:Copy with the ETag for a copy into uploads/', async () => {
    // Arrange
    await ctx.s3.send(new PutObjectCommand({ Bucket: ctx.stack.bucket, Key: 'staging/c.jpg', Body: 'copy me' }));
    const before = ctx.s3Records().length;

    // Act
    await ctx.s3.send(
      new CopyObjectCommand({
        Bucket: ctx.stack.bucket,
        Key: 'uploads/demo/b-copy/c.jpg',
        CopySource: `${ctx.stack.bucket}/staging/c.jpg`,
      }),
    );
    await ctx.stack.whenIdle(10_000);

    // Assert
    const [record] = ctx.s3Records().slice(before);
    expect(record).toMatchObject({
      eventName: 'ObjectCreated:Copy',
      s3: { object: { key: 'uploads/demo/b-copy/c.jpg', size: 7, eTag: expect.stringMatching(/^[0-9a-f]{32}$/) } },
    });
  });

  it('names a completed multipart upload ObjectCreated:CompleteMultipartUpload', async () => {
    // Arrange
    const Key = 'uploads/demo/b-multipart/big.jpg';
    const { UploadId } = await ctx.s3.send(new CreateMultipartUploadCommand({ Bucket: ctx.stack.bucket, Key }));
    const part = await ctx.s3.send(new UploadPartCommand({ Bucket: ctx.stack.bucket, Key, UploadId, PartNumber: 1, Body: 'only part' }));
    const before = ctx.s3Records().length;

    // Act
    await ctx.s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: ctx.stack.bucket,
        Key,
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    await ctx.stack.whenIdle(10_000);

    // Assert
    expect(
      ctx
        .s3Records()
        .slice(before)
        .map((r) => r.eventName),
    ).toEqual(['ObjectCreated:CompleteMultipartUpload']);
  });

  it('copies keys holding + & = and spaces (s3rver alone answers NoSuchKey for them)', async () => {
    // Arrange
    const source = 'staging/a+b & c=d.jpg';
    await ctx.s3.send(new PutObjectCommand({ Bucket: ctx.stack.bucket, Key: source, Body: 'tricky' }));

    // Act
    await ctx.s3.send(
      new CopyObjectCommand({
        Bucket: ctx.stack.bucket,
        Key: 'processed/tricky.jpg',
        CopySource: `${ctx.stack.bucket}/${encodeURIComponent(source).replace(/%2F/g, '/')}`,
      }),
    );

    // Assert
    const copy = await ctx.s3.send(new GetObjectCommand({ Bucket: ctx.stack.bucket, Key: 'processed/tricky.jpg' }));
    expect(await copy.Body?.transformToString()).toBe('tricky');
  });

  it('pages ListObjectsV2 with continuation tokens (DES on OpenSSL 3)', async () => {
    // Arrange
    const prefix = 'staging/paging/';
    for (let i = 0; i < 5; i += 1) {
      await ctx.s3.send(new PutObjectCommand({ Bucket: ctx.stack.bucket, Key: `${prefix}${i}.txt`, Body: String(i) }));
    }

    // Act
    const keys: string[] = [];
    let pages = 0;
    for await (const page of paginateListObjectsV2({ client: ctx.s3, pageSize: 2 }, { Bucket: ctx.stack.bucket, Prefix: prefix })) {
      pages += 1;
      keys.push(...(page.Contents ?? []).map((o) => o.Key as string));
    }

    // Assert
    expect(pages).toBe(3);
    expect(keys).toEqual([0, 1, 2, 3, 4].map((i) => `${prefix}${i}.txt`));
  });

  it('creates the table with every index of resources/table.yml', async () => {
    // Act
    const { Table } = await localDynamoClient(ctx.stack.endpoints.dynamodb).send(new DescribeTableCommand({ TableName: ctx.stack.table }));

    // Assert
    const names = [...(Table?.LocalSecondaryIndexes ?? []), ...(Table?.GlobalSecondaryIndexes ?? [])].map((i) => i.IndexName);
    expect(names.sort()).toEqual(Object.values(INDEX).sort());
  });
});

describe('local stack: failures', () => {
  it('dead-letters an upload the handler keeps failing, visibly: in the file and over HTTP', async () => {
    // Arrange
    const stack = await startTestStack({
      ingestHandler: async (event) => ({ batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) }),
      bridge: { maxReceiveCount: 2, retryBaseMs: 10, retryMaxMs: 20 },
    });
    try {
      // Act
      await s3For(stack).send(new PutObjectCommand({ Bucket: stack.bucket, Key: 'uploads/demo/b-dlq/poison pill.jpg', Body: 'x' }));
      await waitForBridgeIdle({ bridgeUrl: stack.endpoints.bridge, timeoutMs: 10_000 });

      // Assert
      const letters = await deadLetters(stack.endpoints.bridge);
      expect(letters).toEqual([
        expect.objectContaining({ receiveCount: 2, description: 's3://icecat-images/uploads/demo/b-dlq/poison pill.jpg' }),
      ]);
      const persisted = readFileSync(stack.dlqFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(persisted.map((l) => l.messageId)).toEqual(letters.map((l) => l.messageId));
    } finally {
      await stack.stop();
    }
  });
});

describe('local stack: dead-letter redrive', () => {
  it('sends dead letters back through the real handler when asked over HTTP, and they are processed', async () => {
    // Arrange: the first deliveries fail (a broken dependency), then the handler works.
    let broken = true;
    const handled: string[] = [];
    const stack = await startTestStack({
      ingestHandler: async (event) => {
        if (broken) return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
        handled.push(...event.Records.map((r) => JSON.parse(r.body).Records[0].s3.object.key as string));
        return { batchItemFailures: [] };
      },
      bridge: { maxReceiveCount: 1, retryBaseMs: 10, retryMaxMs: 20 },
    });
    try {
      await s3For(stack).send(new PutObjectCommand({ Bucket: stack.bucket, Key: 'uploads/demo/b-redrive/late cat.jpg', Body: 'x' }));
      await waitForBridgeIdle({ bridgeUrl: stack.endpoints.bridge, timeoutMs: 10_000 });
      broken = false;

      // Act
      const res = await fetch(`${stack.endpoints.bridge}/dead-letters/redrive`, { method: 'POST', headers: controlHeaders(stack.dataDir) });
      await waitForBridgeIdle({ bridgeUrl: stack.endpoints.bridge, timeoutMs: 10_000 });

      // Assert
      expect(await res.json()).toEqual({ redriven: 1 });
      expect(handled).toEqual(['uploads/demo/b-redrive/late+cat.jpg']);
      expect(await deadLetters(stack.endpoints.bridge)).toEqual([]);
    } finally {
      await stack.stop();
    }
  });
});

describe('local stack: persistence', () => {
  it('keeps S3 objects and DynamoDB items across a restart on the same data dir', async () => {
    // Arrange
    const dataDir = tempDataDir();
    const first = await recordingStack({ dataDir });
    await first.s3.send(new PutObjectCommand({ Bucket: first.stack.bucket, Key: 'processed/demo/p/kept.jpg', Body: 'kept' }));
    await ddbFor(first.stack).send(new PutCommand({ TableName: first.stack.table, Item: { batch_id: 'p', img_fprint: 'kept' } }));
    await first.stack.stop();

    // Act
    const second = await recordingStack({ dataDir });
    try {
      const object = await second.s3.send(new GetObjectCommand({ Bucket: second.stack.bucket, Key: 'processed/demo/p/kept.jpg' }));
      const item = await ddbFor(second.stack).send(
        new GetCommand({ TableName: second.stack.table, Key: { batch_id: 'p', img_fprint: 'kept' } }),
      );

      // Assert
      expect(await object.Body?.transformToString()).toBe('kept');
      expect(item.Item).toEqual({ batch_id: 'p', img_fprint: 'kept' });
    } finally {
      await second.stack.stop();
    }
  });
});

describe('the global stack', () => {
  it('gives test workers its environment: the bucket answers at AWS_ENDPOINT_URL_S3', async () => {
    // Arrange
    const s3 = new S3Client({ forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });

    // Act
    const listing = await s3.send(new ListObjectsV2Command({ Bucket: process.env.BUCKET_NAME, MaxKeys: 1 }));

    // Assert
    expect(process.env.AWS_ENDPOINT_URL_S3).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(listing.Name).toBe('icecat-images');
  });
});
