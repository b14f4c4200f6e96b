// An upload in flight while its batch is erased (DELETE): whatever the interleaving, once the erasure is over nothing
// of the batch is left (no object under any prefix, no item, no summary, no log), and another batch is untouched.
// Each case interleaves deterministically: the erasure is run at a chosen step of the real pipeline, against a
// private local stack (S3, DynamoDB, the offline detector) whose own bridge acknowledges events without ingesting,
// so that the test alone delivers them.

import { createHash } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { RekognitionClient } from '@aws-sdk/client-rekognition';
import { CopyObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { loadConfig } from '../../lib/config';
import type { Claim } from '../../lib/domain/upload';
import { eraseBatch } from '../../lib/erase/erase-batch';
import { BATCH_OBJECT_PREFIXES } from '../../lib/erase/objects';
import type { IngestDeps, UploadEvent } from '../../lib/ingest/deps';
import type { IngestMetrics } from '../../lib/ingest/metrics';
import { processUpload } from '../../lib/ingest/pipeline';
import { encodeS3EventKey } from '../../lib/reconcile/s3-event';
import { BatchErasure } from '../../lib/store/batch/erasure';
import { newBatch } from '../../lib/store/batch/summary';
import { takeBack } from '../../lib/store/batch/take-back';
import { BatchStore } from '../../lib/store/batch-store';
import type { ClaimOutcome } from '../../lib/store/image/claim';
import { batchPartition } from '../../lib/store/table/schema';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { localS3Client } from '../../local/s3/s3';
import type { Stack } from '../../local/stack/types';
import { startTestStack, uniqueId } from '../helpers';
import { distinctImages, seededRandom } from '../helpers/stack-process';

/** A store that runs a hook right after each claim: the moment an erasure may slip in mid-upload. */
class StorePausingAtClaim extends BatchStore {
  afterClaim: (() => Promise<void>) | undefined;

  override async claim(c: Claim): Promise<ClaimOutcome> {
    const outcome = await super.claim(c);
    const hook = this.afterClaim;
    this.afterClaim = undefined;
    await hook?.();
    return outcome;
  }
}

/**
 * The fault: S3 lands a copy to processed/ late. It reads the source (on its ETag) at once and writes the copy only
 * after `meanwhile`, as a copy still in flight does while an erasure passes over the source's and the copy's prefixes.
 */
function landingCopiesLate(s3: S3Client, meanwhile: () => Promise<void>): S3Client {
  const send = s3.send.bind(s3) as (command: unknown) => Promise<unknown>;
  const late = async (copy: CopyObjectCommand): Promise<unknown> => {
    const { Bucket, Key, CopySource, CopySourceIfMatch } = copy.input;
    const source = decodeURIComponent(CopySource as string).slice(`${Bucket}/`.length);
    const read = (await send(new GetObjectCommand({ Bucket, Key: source, IfMatch: CopySourceIfMatch }))) as {
      Body: { transformToByteArray(): Promise<Uint8Array> };
    };
    const bytes = await read.Body.transformToByteArray();
    await meanwhile();
    await send(new PutObjectCommand({ Bucket, Key, Body: bytes }));
    return {};
  };
  return new Proxy(s3, {
    get: (target, name, receiver) =>
      name === 'send'
        ? (command: unknown) =>
            command instanceof CopyObjectCommand && command.input.Key?.startsWith('processed/') ? late(command) : send(command)
        : Reflect.get(target, name, receiver),
  });
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

let stack: Stack;
let s3: S3Client;
let ddb: DynamoDBDocumentClient;
let store: StorePausingAtClaim;
let deps: IngestDeps;
let images: Buffer[];
let next = 0;
const table = LOCAL_NAMES.table;

beforeAll(async () => {
  stack = await startTestStack({ detector: true, reconcile: false, ingestHandler: async () => ({ batchItemFailures: [] }) });
  s3 = localS3Client(stack.endpoints.s3);
  ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.endpoints.dynamodb), { marshallOptions: { removeUndefinedValues: true } });
  const transactions = stack.env.DDB_TRANSACTIONS === 'true';
  store = new StorePausingAtClaim({ ddb, tableName: table, transactions, takeBack: takeBack(ddb, table) });
  const rekognition = new RekognitionClient({
    endpoint: stack.endpoints.rekognition,
    region: LOCAL_NAMES.region,
    credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
  });
  deps = {
    s3,
    rekognition,
    store,
    config: { ...loadConfig(), tableName: table, bucketName: stack.bucket, transactions },
    logger: new Logger({ serviceName: 'erase-race', logLevel: 'SILENT' }),
    metrics: silentMetrics,
  };
  images = await distinctImages(8, seededRandom(31));
}, 120_000);

afterAll(async () => {
  s3?.destroy();
  await stack?.stop();
});

/** A debug batch (its records carry logs) with one upload stored under uploads/; answers that upload's S3 event. */
async function uploadInto(batchId: string, fileName = 'cat.png'): Promise<UploadEvent> {
  await store.createBatch(newBatch({ clientId: 'demo', batchId, now: Date.now(), debug: true, retentionDays: 30 }));
  const body = images[next++ % images.length] as Buffer;
  const key = `uploads/demo/${batchId}/${fileName}`;
  await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: body, ContentType: 'image/png' }));
  return { bucket: stack.bucket, encodedKey: encodeS3EventKey(key), size: body.length, etag: createHash('md5').update(body).digest('hex') };
}

/** DELETE's two steps: the mark, then the erasure itself. */
async function erase(batchId: string): Promise<void> {
  await store.markDeleting('demo', batchId);
  await eraseBatch({ s3, store: new BatchErasure({ ddb, tableName: table }) }, { clientId: 'demo', batchId, bucket: stack.bucket });
}

async function leftOf(batchId: string): Promise<{ objects: string[]; items: number; logs: number }> {
  const objects: string[] = [];
  for (const prefix of BATCH_OBJECT_PREFIXES) {
    const out = await s3.send(new ListObjectsV2Command({ Bucket: stack.bucket, Prefix: `${prefix}/demo/${batchId}/` }));
    objects.push(...(out.Contents ?? []).map((o) => o.Key as string));
  }
  const count = async (IndexName?: string) =>
    (
      await ddb.send(
        new QueryCommand({
          TableName: table,
          ...(IndexName ? { IndexName } : {}),
          KeyConditionExpression: 'batch_id = :pk',
          ExpressionAttributeValues: { ':pk': batchPartition('demo', batchId) },
          Select: 'COUNT',
          ...(IndexName ? {} : { ConsistentRead: true }),
        }),
      )
    ).Count ?? 0;
  return { objects, items: await count(), logs: await count('batch-logs') };
}

const NOTHING = { objects: [], items: 0, logs: 0 };

describe('an upload racing the erasure of its batch', () => {
  let other: string;
  let otherBefore: Awaited<ReturnType<typeof leftOf>>;

  beforeAll(async () => {
    other = uniqueId('untouched');
    expect(await processUpload(deps, await uploadInto(other))).toMatchObject({ outcome: 'success' });
    otherBefore = await leftOf(other);
  });

  afterEach(async () => {
    // Another batch of the same client keeps its object, record, log and summary.
    expect(await leftOf(other)).toEqual(otherBefore);
    expect((await store.getBatch('demo', other))?.counts).toMatchObject({ total: 1, success: 1 });
  });

  it('delivered after the batch was marked for erasure: refused as BatchErased, its object deleted, nothing written', async () => {
    // Arrange
    const batchId = uniqueId('marked');
    const event = await uploadInto(batchId);
    await store.markDeleting('demo', batchId);

    // Act
    const result = await processUpload(deps, event);
    const whileErasing = await leftOf(batchId);
    await eraseBatch({ s3, store: new BatchErasure({ ddb, tableName: table }) }, { clientId: 'demo', batchId, bucket: stack.bucket });

    // Assert: only the summary (marked) was there until the erasure took it.
    expect(result).toEqual({ outcome: 'refused', key: `uploads/demo/${batchId}/cat.png`, code: 'BatchErased' });
    expect(whileErasing).toEqual({ objects: [], items: 1, logs: 0 });
    expect(await leftOf(batchId)).toEqual(NOTHING);
  });

  it('erased right after the upload claimed its image: the later writes are refused and nothing comes back', async () => {
    // Arrange
    const batchId = uniqueId('mid-claim');
    const event = await uploadInto(batchId);
    store.afterClaim = () => erase(batchId);

    // Act
    const result = await processUpload(deps, event);

    const redelivered = await processUpload(deps, event);

    // Assert: no summary recreated by a counter update, no record, no object under any prefix; the same event
    // delivered again finds it so too.
    expect([result, redelivered]).toMatchObject([
      { outcome: 'refused', code: 'BatchErased' },
      { outcome: 'refused', code: 'BatchErased' },
    ]);
    expect(await leftOf(batchId)).toEqual(NOTHING);
    expect(await store.getBatch('demo', batchId)).toBeUndefined();
  });

  it('erased while marked, with the claim written before the mark: the erasure removes the claim, the upload nothing more', async () => {
    // Arrange: the mark lands between the claim and the record; the erasure runs after the upload gave up.
    const batchId = uniqueId('mark-mid-claim');
    const event = await uploadInto(batchId);
    store.afterClaim = async () => void (await store.markDeleting('demo', batchId));

    // Act
    const result = await processUpload(deps, event);
    await eraseBatch({ s3, store: new BatchErasure({ ddb, tableName: table }) }, { clientId: 'demo', batchId, bucket: stack.bucket });

    // Assert
    expect(result).toMatchObject({ outcome: 'refused', code: 'BatchErased' });
    expect(await leftOf(batchId)).toEqual(NOTHING);
  });

  it('its copy landing only after the erasure passed (the fault: a late CopyObject): refused BatchErased, the copy deleted', async () => {
    // Arrange: the erasure marks the batch and passes over every prefix while the copy to processed/ is in flight.
    const batchId = uniqueId('late-copy');
    const event = await uploadInto(batchId);
    const late = { ...deps, s3: landingCopiesLate(s3, () => erase(batchId)) };

    // Act
    const result = await processUpload(late, event);

    // Assert: the record that would have named the copy was refused, and the upload deleted the copy itself: no
    // erasure pass is left to find it.
    expect(result).toMatchObject({ outcome: 'refused', code: 'BatchErased' });
    expect(await leftOf(batchId)).toEqual(NOTHING);
    expect(await store.getBatch('demo', batchId)).toBeUndefined();
  });

  it('delivered again after the erasure finished (a stale event): no batch is opened again for an object that is gone', async () => {
    // Arrange
    const batchId = uniqueId('stale');
    const event = await uploadInto(batchId);
    expect(await processUpload(deps, event)).toMatchObject({ outcome: 'success' });
    await erase(batchId);

    // Act
    const result = await processUpload(deps, event);

    // Assert
    expect(result).toMatchObject({ outcome: 'refused', code: 'BatchErased' });
    expect(await leftOf(batchId)).toEqual(NOTHING);
    expect(await store.getBatch('demo', batchId)).toBeUndefined();
  });

  it("still opens a batch again for a new upload under an erased batch's name", async () => {
    // Arrange
    const batchId = uniqueId('reused-name');
    await processUpload(deps, await uploadInto(batchId));
    await erase(batchId);
    const body = images[next++ % images.length] as Buffer;
    const key = `uploads/demo/${batchId}/new.png`;
    await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: body, ContentType: 'image/png' }));

    // Act
    const result = await processUpload(deps, { bucket: stack.bucket, encodedKey: key, size: body.length });

    // Assert
    expect(result).toMatchObject({ outcome: 'success' });
    expect((await store.getBatch('demo', batchId))?.counts).toMatchObject({ total: 1, success: 1 });
  });
});
