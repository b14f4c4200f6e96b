// An upload counts against its client's daily images quota exactly once, whatever becomes of its attempts
// (docs/design.md §11): the upload's own item records that it was counted, with the count. The pipeline runs in
// process against a stack of its own (its S3, DynamoDB and detector; no ingest consuming the bucket's events), so each
// attempt is one processUpload call; under DynamoDB Local the mark and the count are one transaction.

import { createHash, randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { RekognitionClient } from '@aws-sdk/client-rekognition';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { defaultClientLimits } from '../../functions/config';
import { registerApiKey } from '../../lib/auth/register';
import { loadConfig } from '../../lib/config';
import type { IngestDeps, UploadEvent, UploadQuota } from '../../lib/ingest/deps';
import { fingerprint } from '../../lib/ingest/fingerprint';
import type { IngestMetrics } from '../../lib/ingest/metrics';
import { processUpload } from '../../lib/ingest/pipeline';
import { utcDay } from '../../lib/quota/limits';
import { encodeS3EventKey, s3EventMessage, s3EventRecord } from '../../lib/reconcile/s3-event';
import { BatchStore } from '../../lib/store/batch-store';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { Registrations } from '../../lib/store/client/registrations';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { localS3Client } from '../../local/s3/s3';
import { forgiveInterruptedAttempts } from '../../local/stack/interrupted-attempts';
import type { Stack } from '../../local/stack/types';
import { startTestStack, uniqueId } from '../helpers';
import { distinctImages, seededRandom } from '../helpers/stack-process';

const silentMetrics: IngestMetrics = {
  image: () => undefined,
  detectLabelsCall: () => undefined,
  callSaved: () => undefined,
  detectLabelsRequest: () => undefined,
  thumbnailFailed: () => undefined,
  stepLatency: () => undefined,
  publish: () => undefined,
};

const table = LOCAL_NAMES.table;
let stack: Stack;
let s3: S3Client;
let ddb: DynamoDBDocumentClient;
let deps: IngestDeps;
let quota: ClientQuotaStore;
let images: Buffer[];
let next = 0;

beforeAll(async () => {
  stack = await startTestStack({ detector: true, reconcile: false, expiry: false, ingestHandler: async () => ({ batchItemFailures: [] }) });
  s3 = localS3Client(stack.endpoints.s3);
  ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.endpoints.dynamodb), { marshallOptions: { removeUndefinedValues: true } });
  const transactions = stack.env.DDB_TRANSACTIONS === 'true';
  quota = new ClientQuotaStore({ ddb, tableName: table, defaults: defaultClientLimits(), cacheMs: 0, transactions });
  deps = {
    s3,
    rekognition: new RekognitionClient({
      endpoint: stack.endpoints.rekognition,
      region: LOCAL_NAMES.region,
      credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
    }),
    store: new BatchStore({ ddb, tableName: table, transactions }),
    config: { ...loadConfig(), tableName: table, bucketName: stack.bucket, transactions, claimLeaseSeconds: 30 },
    logger: new Logger({ serviceName: 'quota-count-once', logLevel: 'SILENT' }),
    metrics: silentMetrics,
    quota,
  };
  images = await distinctImages(6, seededRandom(77));
}, 120_000);

afterAll(async () => {
  s3?.destroy();
  await stack?.stop();
});

/** A new client with a quota of 10 a day and one upload of its under uploads/; answers the upload's S3 event. */
async function oneUpload(prefix: string): Promise<{ clientId: string; event: UploadEvent; body: Buffer; key: string }> {
  const clientId = uniqueId(prefix);
  await registerApiKey(new Registrations({ ddb, tableName: table }), clientId);
  await quota.setLimits(clientId, { maxImagesPerDay: 10 });
  const body = images[next++ % images.length] as Buffer;
  const key = `uploads/${clientId}/b1/cat.png`;
  await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: body, ContentType: 'image/png' }));
  const event = {
    bucket: stack.bucket,
    encodedKey: encodeS3EventKey(key),
    size: body.length,
    etag: createHash('md5').update(body).digest('hex'),
    eventTime: Date.now(),
  };
  return { clientId, event, body, key };
}

const accepted = async (clientId: string): Promise<number> => (await quota.usage(clientId, utcDay(Date.now()))).accepted;

/** The quota, its limits read failing once (throttled past the SDK's retries): the attempt throws before counting. */
function failingOnce(port: UploadQuota): UploadQuota {
  let failed = false;
  return new Proxy(port, {
    get: (target, name, receiver) =>
      name === 'limitsOf'
        ? async (clientId: string) => {
            if (!failed) {
              failed = true;
              throw new Error('ProvisionedThroughputExceededException: the limits could not be read');
            }
            return target.limitsOf(clientId);
          }
        : Reflect.get(target, name, receiver),
  });
}

describe('an upload counted against the daily quota exactly once', () => {
  it('is counted by the next attempt when its first attempt threw before counting', async () => {
    const { clientId, event } = await oneUpload('qa');
    const flaky = { ...deps, quota: failingOnce(quota) };

    await expect(processUpload(flaky, event)).rejects.toThrow(/limits could not be read/);
    const result = await processUpload(flaky, event);

    expect([result.outcome, await accepted(clientId)]).toEqual(['success', 1]);
  });

  it('is counted once when a replacement with the same bytes (the same ETag) follows a first attempt that threw before counting', async () => {
    const { clientId, event, body, key } = await oneUpload('qb');
    const flaky = { ...deps, quota: failingOnce(quota) };
    await expect(processUpload(flaky, event)).rejects.toThrow(/limits could not be read/);

    await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: body, ContentType: 'image/png' }));
    const replacement = await processUpload(flaky, { ...event, eventTime: Date.now() });
    const original = await processUpload(flaky, event);

    expect([replacement.outcome, original.outcome, await accepted(clientId)]).toEqual(['success', 'redelivered', 1]);
  });

  it('is counted once when an attempt is deferred (another run leased its claim) and the next takes the claim over', async () => {
    const { clientId, event, body, key } = await oneUpload('qc');
    const print = await fingerprint(body, { maxInputPixels: 100_000_000 });
    const now = Date.now();
    await deps.store.openBatch({ clientId, batchId: 'b1', now, retentionDays: 30 });
    // Another delivery of this very upload holds the claim for a second.
    await deps.store.claim({
      clientId,
      batchId: 'b1',
      fprint: print.fprint,
      claimId: randomUUID(),
      key,
      etag: event.etag,
      fileName: 'cat.png',
      phash: print.phash,
      format: print.format,
      width: print.width,
      height: print.height,
      now,
      leaseMs: 1000,
      expiresAt: Math.floor(now / 1000) + 86_400,
    });

    const deferred = await processUpload(deps, event);
    await new Promise((resolve) => setTimeout(resolve, 1100 - (Date.now() - now)));
    const taken = await processUpload(deps, event);

    expect([deferred.outcome, taken.outcome, await accepted(clientId)]).toEqual(['deferred', 'success', 1]);
  });

  it("is counted once when the local stack's restart hands its attempt back and its message is delivered again", async () => {
    const { clientId, event, body, key } = await oneUpload('qd');
    const first = await processUpload(deps, event);
    const message = s3EventMessage(
      s3EventRecord(
        { operation: 'Put', bucket: stack.bucket, key, size: body.length, eTag: event.etag, sourceIp: '127.0.0.1', time: new Date() },
        { region: LOCAL_NAMES.region },
      ),
    );

    await forgiveInterruptedAttempts([message], stack.endpoints.dynamodb, table);
    const again = await processUpload(deps, event);

    expect([first.outcome, again.outcome, await accepted(clientId)]).toEqual(['success', 'redelivered', 1]);
  });
});
