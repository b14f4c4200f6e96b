// Uploads that must end (docs/design.md §6): one whose attempts never finish ends as a ProcessingFailed record, a
// duplicate past the names kept is counted once however often it is delivered, and a claim refuses a batch closed
// and complete meanwhile. On the local stack, through the AWS SDK; the last case runs the pipeline itself against a
// private stack whose bridge ingests nothing, so that it alone chooses the interleaving.

import { createHash } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { RekognitionClient } from '@aws-sdk/client-rekognition';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { uploadsIn } from '../../functions/ingest/events';
import { registerClient } from '../../lib/auth/register';
import { loadConfig } from '../../lib/config';
import type { Claim, UploadRef } from '../../lib/domain/upload';
import { eraseBatch } from '../../lib/erase/erase-batch';
import type { IngestDeps } from '../../lib/ingest/deps';
import { fingerprint } from '../../lib/ingest/fingerprint';
import type { IngestMetrics } from '../../lib/ingest/metrics';
import { processUpload } from '../../lib/ingest/pipeline';
import { encodeS3EventKey } from '../../lib/reconcile/s3-event';
import { BatchErasure } from '../../lib/store/batch/erasure';
import { newBatch } from '../../lib/store/batch/summary';
import { takeBack } from '../../lib/store/batch/take-back';
import { BatchStore } from '../../lib/store/batch-store';
import { Registrations } from '../../lib/store/client/registrations';
import type { ClaimOutcome } from '../../lib/store/image/claim';
import { uploadItemKey } from '../../lib/store/table/schema';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import type { BatchHandler } from '../../local/queue/options';
import { localS3Client } from '../../local/s3/s3';
import type { Stack } from '../../local/stack/types';
import { aws, deadLetters, detectCalls, stackEnv, startTestStack, uniqueId, uploadFile, waitFor, waitForBridgeIdle } from '../helpers';
import { distinctImages, seededRandom } from '../helpers/stack-process';

const md5 = (body: Buffer) => createHash('md5').update(body).digest('hex');
const transactions = () => process.env.DDB_TRANSACTIONS === 'true';

let store: BatchStore;
let images: Buffer[];

beforeAll(async () => {
  store = new BatchStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME'), transactions: transactions() });
  images = await distinctImages(4, seededRandom(19));
});

async function keysUnder(prefix: string, s3: S3Client = aws().s3, bucket = stackEnv('BUCKET_NAME')): Promise<string[]> {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key as string).sort();
}

/** A client of its own, so that no other test's classification of the same pixels is reused. */
async function freshClient(): Promise<string> {
  const clientId = uniqueId('endings');
  await registerClient(new Registrations({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }), clientId);
  return clientId;
}

describe('an upload whose attempts never finish', () => {
  const faults = (patch: Record<string, number>) =>
    fetch(`${stackEnv('AWS_ENDPOINT_URL_REKOGNITION')}/__faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(patch),
    });
  afterEach(() => faults({ throttleNext: 0, throttleRate: 0 }));

  it('ends at its last attempt as ProcessingFailed, under failed/, and its batch can turn done (a step that always fails)', async () => {
    // Arrange: DetectLabels always fails (injected at the local detector), past the SDK's retries at every receive.
    const clientId = await freshClient();
    const batchId = uniqueId('poison');
    const key = `uploads/${clientId}/${batchId}/cat.png`;
    await waitForBridgeIdle();
    await faults({ throttleRate: 1 });

    // Act
    await uploadFile(key, images[0] as Buffer, 'image/png');
    const batch = await waitFor(
      async () => {
        const b = await store.getBatch(clientId, batchId);
        return b && b.counts.fail === 1 ? b : undefined;
      },
      { timeoutMs: 60_000, what: 'the upload to end as fail' },
    );
    await waitForBridgeIdle();

    // Assert: one fail record with its code, nothing pending, the object under failed/, no dead letter.
    expect(batch.counts).toMatchObject({ total: 1, pending: 0, success: 0, fail: 1 });
    const print = await fingerprint(images[0] as Buffer, { maxInputPixels: 100_000_000 });
    expect(await store.getImage(clientId, batchId, print.fprint)).toMatchObject({
      status: 'fail',
      errorCode: 'ProcessingFailed',
      restingKey: `failed/${clientId}/${batchId}/cat.png`,
    });
    expect(await keysUnder(`failed/${clientId}/${batchId}/`)).toEqual([`failed/${clientId}/${batchId}/cat.png`]);
    expect(await keysUnder(`uploads/${clientId}/${batchId}/`)).toEqual([]);
    expect((await deadLetters()).filter((d) => d.description.includes(batchId))).toEqual([]);
    expect(await store.close(clientId, batchId)).toMatchObject({ closed: true, batch: { doneAt: expect.any(Number) } });
  });

  it('whose earlier runs died without a word (timed out, out of memory) ends when delivered again, before any risky step', async () => {
    // Arrange: as many runs as the limit counted their attempt, found the pixels, claimed them and never returned.
    const clientId = await freshClient();
    const batchId = uniqueId('died');
    const key = `uploads/${clientId}/${batchId}/huge.png`;
    const body = images[1] as Buffer;
    const print = await fingerprint(body, { maxInputPixels: 100_000_000 });
    const { batch: opened } = await store.openBatch({ clientId, batchId, now: Date.now(), retentionDays: 30 });
    const upload: UploadRef = { clientId, batchId, key, etag: md5(body), expiresAt: opened.expiresAt };
    const claim: Claim = {
      clientId,
      batchId,
      fprint: print.fprint,
      claimId: 'died',
      key,
      etag: md5(body),
      fileName: 'huge.png',
      phash: print.phash,
      format: print.format,
      width: print.width,
      height: print.height,
      now: Date.now() - 60_000,
      leaseMs: 1000,
      expiresAt: opened.expiresAt,
    };
    expect(await store.claim(claim)).toMatchObject({ held: true });
    const limit = Number(stackEnv('INGEST_MAX_ATTEMPTS'));
    for (let i = 0; i < limit; i++) await store.startAttempt(upload);
    await store.noteFingerprint(upload, print.fprint);
    await waitForBridgeIdle();
    const detectBefore = await detectCalls();

    // Act
    await uploadFile(key, body, 'image/png');
    const record = await waitFor(
      async () => {
        const found = await store.getImage(clientId, batchId, print.fprint);
        return found?.status === 'fail' ? found : undefined;
      },
      { timeoutMs: 30_000, what: 'the record to end as fail' },
    );
    await waitForBridgeIdle();

    // Assert: the claim the dead runs left is that fail record; pending became fail; no DetectLabels call.
    expect(record).toMatchObject({ errorCode: 'ProcessingFailed', key, restingKey: `failed/${clientId}/${batchId}/huge.png` });
    expect(record).not.toHaveProperty('claimId');
    expect((await store.getBatch(clientId, batchId))?.counts).toMatchObject({ total: 1, pending: 0, fail: 1 });
    expect(await detectCalls()).toBe(detectBefore);
    expect(await keysUnder(`failed/${clientId}/${batchId}/`)).toEqual([`failed/${clientId}/${batchId}/huge.png`]);
    expect(await keysUnder(`uploads/${clientId}/${batchId}/`)).toEqual([]);
  });
});

describe('an upload whose every run times out, through the dead letters and the sweep', () => {
  let stack: Stack;
  let s3: S3Client;
  let private_: BatchStore;

  beforeAll(async () => {
    // Every read of an upload never returns, as a run the Lambda timeout stops: it never reaches a catch. The bridge
    // counts an invocation past 1.5 s as failed, dead-letters after 3 receives; the test runs the sweep itself.
    const limit = 3;
    const ingest: { deps?: IngestDeps } = {};
    const handler: BatchHandler = async (event) => {
      const failed: { itemIdentifier: string }[] = [];
      for (const record of event.Records) {
        try {
          for (const upload of uploadsIn(record)) await processUpload(ingest.deps as IngestDeps, upload);
        } catch {
          failed.push({ itemIdentifier: record.messageId });
        }
      }
      return { batchItemFailures: failed };
    };
    stack = await startTestStack({
      ingestHandler: handler,
      reconcile: { intervalMs: 3_600_000, graceMs: 0 },
      bridge: { maxReceiveCount: limit, invocationTimeoutMs: 1500, retryBaseMs: 100, retryMaxMs: 300, batchWindowMs: 10 },
    });
    s3 = localS3Client(stack.endpoints.s3);
    const send = s3.send.bind(s3) as (command: unknown) => Promise<unknown>;
    const hangingReads = new Proxy(s3, {
      get: (target, name, receiver) =>
        name === 'send'
          ? (command: unknown) => (command instanceof GetObjectCommand ? new Promise(() => undefined) : send(command))
          : Reflect.get(target, name, receiver),
    });
    const ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.endpoints.dynamodb), {
      marshallOptions: { removeUndefinedValues: true },
    });
    const strict = stack.env.DDB_TRANSACTIONS === 'true';
    private_ = new BatchStore({ ddb, tableName: LOCAL_NAMES.table, transactions: strict, takeBack: takeBack(ddb, LOCAL_NAMES.table) });
    ingest.deps = {
      s3: hangingReads,
      rekognition: new RekognitionClient({
        endpoint: 'http://127.0.0.1:9',
        region: LOCAL_NAMES.region,
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      }),
      store: private_,
      config: { ...loadConfig(), tableName: LOCAL_NAMES.table, bucketName: stack.bucket, transactions: strict, maxAttempts: limit },
      logger: new Logger({ serviceName: 'upload-endings', logLevel: 'SILENT' }),
      metrics: silentMetrics,
    };
  }, 120_000);

  afterAll(async () => {
    s3?.destroy();
    await stack?.stop();
  });

  it("ends as ProcessingFailed at the sweep's delivery after the dead letter, before reading it again", async () => {
    // Arrange
    const batchId = uniqueId('hung');
    const key = `uploads/demo/${batchId}/huge.png`;

    // Act: the upload's three receives all time out, then the sweep queues it again.
    await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: images[0], ContentType: 'image/png' }));
    await waitFor(() => stack.bridge.deadLetters().some((d) => d.description.includes(batchId)), {
      timeoutMs: 30_000,
      what: 'the dead letter',
    });
    const sweep = await stack.reconcile!.sweep();
    await stack.whenIdle(30_000);

    // Assert: one fail record, nothing pending, the object under failed/, the dead letter gone with its cause.
    expect(sweep.queued).toEqual([key]);
    expect((await private_.getBatch('demo', batchId))?.counts).toMatchObject({ total: 1, pending: 0, fail: 1 });
    expect(await keysUnder(`failed/demo/${batchId}/`, s3, stack.bucket)).toEqual([`failed/demo/${batchId}/huge.png`]);
    expect(await keysUnder(`uploads/demo/${batchId}/`, s3, stack.bucket)).toEqual([]);
    expect(stack.bridge.deadLetters().filter((d) => d.description.includes(batchId))).toEqual([]);
    // A later sweep has nothing left to queue.
    expect((await stack.reconcile!.sweep()).queued).toEqual([]);
  });
});

describe('a duplicate past the 50 names kept', () => {
  it('is counted once when the same upload is delivered again', async () => {
    // Arrange: one image, then 51 more uploads of its pixels: the last counted keeps no name on the original.
    const clientId = await freshClient();
    const batchId = uniqueId('dups');
    const body = images[2] as Buffer;
    const print = await fingerprint(body, { maxInputPixels: 100_000_000 });
    await uploadFile(`uploads/${clientId}/${batchId}/original.png`, body, 'image/png');
    await waitFor(async () => (await store.getImage(clientId, batchId, print.fprint))?.status === 'success', {
      timeoutMs: 30_000,
      what: 'the original',
    });
    // 50 at once (each keeps its name: the cap is read before the write, so a few more may keep theirs), then one
    // alone, once 50 names are kept: the last counted keeps no name on the original.
    const names = Array.from({ length: 50 }, (_, i) => `copy-${String(i).padStart(2, '0')}.png`);
    for (let i = 0; i < names.length; i += 10)
      await Promise.all(names.slice(i, i + 10).map((name) => uploadFile(`uploads/${clientId}/${batchId}/${name}`, body, 'image/png')));
    await waitFor(async () => (await store.getBatch(clientId, batchId))?.counts.duplicate === 50, {
      timeoutMs: 60_000,
      what: '50 duplicates',
    });
    await waitForBridgeIdle();
    await uploadFile(`uploads/${clientId}/${batchId}/late.png`, body, 'image/png');
    await waitFor(async () => (await store.getBatch(clientId, batchId))?.counts.duplicate === 51, {
      timeoutMs: 30_000,
      what: 'the 51st duplicate',
    });
    await waitForBridgeIdle();
    expect((await store.getImage(clientId, batchId, print.fprint))?.duplicateFiles).not.toContain('late.png');

    // Act: the same upload again (same key, same bytes, so the same ETag), as a redelivery after a crash before the
    // source's delete would bring it.
    await uploadFile(`uploads/${clientId}/${batchId}/late.png`, body, 'image/png');
    await waitForBridgeIdle();

    // Assert
    expect((await store.getBatch(clientId, batchId))?.counts).toMatchObject({ total: 52, duplicate: 51, success: 1, pending: 0 });
    expect((await store.getImage(clientId, batchId, print.fprint))?.duplicates).toBe(51);
    expect(await keysUnder(`uploads/${clientId}/${batchId}/`)).toEqual([]);
  });
});

describe('erasing a batch', () => {
  it('removes its upload items (attempts, duplicate marks) with its records', async () => {
    // Arrange: a batch whose upload left its item (its attempt counted, its fingerprint noted).
    const clientId = await freshClient();
    const batchId = uniqueId('erase-items');
    const { batch } = await store.openBatch({ clientId, batchId, now: Date.now(), retentionDays: 30 });
    const upload: UploadRef = { clientId, batchId, key: `uploads/${clientId}/${batchId}/a.png`, etag: 'e1', expiresAt: batch.expiresAt };
    await store.startAttempt(upload);
    await store.noteFingerprint(upload, 'f'.repeat(32));
    const uploadItems = async () =>
      (
        await aws().ddb.send(
          new QueryCommand({
            TableName: stackEnv('TABLE_NAME'),
            KeyConditionExpression: 'batch_id = :pk',
            ExpressionAttributeValues: { ':pk': uploadItemKey(upload).batch_id },
            ConsistentRead: true,
          }),
        )
      ).Items ?? [];
    expect(await uploadItems()).toHaveLength(1);

    // Act
    await store.markDeleting(clientId, batchId);
    await eraseBatch(
      { s3: aws().s3, store: new BatchErasure({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }) },
      { clientId, batchId, bucket: stackEnv('BUCKET_NAME') },
    );

    // Assert
    expect(await uploadItems()).toEqual([]);
  });
});

/** A store that runs a hook right before a claim: the moment a close may slip in mid-upload. */
class StoreWithClaimHook extends BatchStore {
  beforeClaim: (() => Promise<void>) | undefined;

  override async claim(c: Claim): Promise<ClaimOutcome> {
    const hook = this.beforeClaim;
    this.beforeClaim = undefined;
    await hook?.();
    return super.claim(c);
  }
}

const silentMetrics: IngestMetrics = {
  image: () => undefined,
  detectLabelsCall: () => undefined,
  detectLabelsRequest: () => undefined,
  callSaved: () => undefined,
  thumbnailFailed: () => undefined,
  stepLatency: () => undefined,
  publish: () => undefined,
};

describe('an upload whose batch is closed while it is ingested', () => {
  let stack: Stack;
  let s3: S3Client;
  let hooked: StoreWithClaimHook;
  let deps: IngestDeps;

  beforeAll(async () => {
    stack = await startTestStack({ reconcile: false, ingestHandler: async () => ({ batchItemFailures: [] }) });
    s3 = localS3Client(stack.endpoints.s3);
    const ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.endpoints.dynamodb), {
      marshallOptions: { removeUndefinedValues: true },
    });
    const strict = stack.env.DDB_TRANSACTIONS === 'true';
    hooked = new StoreWithClaimHook({
      ddb,
      tableName: LOCAL_NAMES.table,
      transactions: strict,
      takeBack: takeBack(ddb, LOCAL_NAMES.table),
    });
    deps = {
      s3,
      // Never called: the upload ends before DetectLabels.
      rekognition: new RekognitionClient({
        endpoint: 'http://127.0.0.1:9',
        region: LOCAL_NAMES.region,
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      }),
      store: hooked,
      config: { ...loadConfig(), tableName: LOCAL_NAMES.table, bucketName: stack.bucket, transactions: strict },
      logger: new Logger({ serviceName: 'upload-endings', logLevel: 'SILENT' }),
      metrics: silentMetrics,
    };
  }, 120_000);

  afterAll(async () => {
    s3?.destroy();
    await stack?.stop();
  });

  it('is refused by its claim once the close made the batch done: BatchClosed, and the batch stays done with nothing pending', async () => {
    // Arrange: an open batch; the upload reads it open, then the client closes it (no expected count) before the claim.
    const batchId = uniqueId('late');
    await hooked.createBatch(newBatch({ clientId: 'demo', batchId, now: Date.now(), debug: false, retentionDays: 30 }));
    const body = images[3] as Buffer;
    const key = `uploads/demo/${batchId}/late.png`;
    await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: body, ContentType: 'image/png' }));
    let closedDone: number | undefined;
    hooked.beforeClaim = async () => {
      const closed = await hooked.close('demo', batchId);
      closedDone = closed.closed ? closed.batch.doneAt : undefined;
    };

    // Act
    const result = await processUpload(deps, {
      bucket: stack.bucket,
      encodedKey: encodeS3EventKey(key),
      size: body.length,
      etag: md5(body),
    });

    // Assert: the close made it done; the upload did not count as pending in it, and ended as a BatchClosed record.
    expect(closedDone).toEqual(expect.any(Number));
    expect(result).toMatchObject({ outcome: 'fail', errorCode: 'BatchClosed' });
    const batch = await hooked.getBatch('demo', batchId);
    expect(batch).toMatchObject({ doneAt: closedDone, counts: { total: 1, pending: 0, fail: 1 } });
    const print = await fingerprint(body, { maxInputPixels: 100_000_000 });
    expect(await hooked.getImage('demo', batchId, print.fprint)).toBeUndefined();
    expect(await keysUnder(`failed/demo/${batchId}/`, s3, stack.bucket)).toEqual([`failed/demo/${batchId}/late.png`]);
  });
});
