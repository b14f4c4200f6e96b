// The ingest against a hand-written fake of the one interface it asks of the store (IngestStore, lib/ingest/deps.ts):
// no DynamoDB client, mocked or real, anywhere in the test. S3 and Rekognition are mocked (aws-sdk-client-mock) as in
// ingest-pipeline.test.ts; the store is an in-memory map of batches and records that keeps what the ingest told it.
import { Logger } from '@aws-lambda-powertools/logger';
import { DetectLabelsCommand, RekognitionClient } from '@aws-sdk/client-rekognition';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import sharp from 'sharp';
import type { Config } from '../../lib/config';
import type { Batch } from '../../lib/domain/batch';
import type { ModelVersion } from '../../lib/domain/detection';
import type { Image } from '../../lib/domain/image';
import type { Claim, Finish, UploadRef } from '../../lib/domain/upload';
import type { IngestDeps, IngestStore } from '../../lib/ingest/deps';
import { processUpload } from '../../lib/ingest/pipeline';
import type { BatchCounter, NewBatch } from '../../lib/store/batch/summary';
import { newBatch } from '../../lib/store/batch/summary';
import type { ClaimOutcome } from '../../lib/store/image/claim';
import type { PaidResult } from '../../lib/store/image/paid-result';
import type { AttemptCount } from '../../lib/store/upload/attempts';

const s3 = mockClient(S3Client);
const rekognition = mockClient(RekognitionClient);
const REGION = { region: 'us-east-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' } };
const NOW = 1_700_000_000_000;
const CONFIG: Config = {
  tableName: 'T',
  bucketName: 'bucket',
  catMinConfidence: 80,
  minConfidence: 50,
  maxLabels: 25,
  maxUploadBytes: 1_000_000,
  maxInputPixels: 100_000_000,
  claimLeaseSeconds: 120,
  defaultRetentionDays: 30,
  maxRetentionDays: 365,
  transactions: false,
  maxAttempts: 5,
  pricePerImageUsd: 0.001,
};

/** The store as the ingest sees it, in memory: registered clients, batches by `client/batch`, records by fingerprint. */
class FakeStore implements IngestStore {
  readonly clients = new Set<string>(['demo']);
  readonly batches = new Map<string, Batch>();
  readonly records = new Map<string, Image>();
  readonly finished: { claim: Claim; finish: Finish }[] = [];
  readonly models: ModelVersion[] = [];
  private attempts = new Map<string, number>();

  async isRegisteredClient(clientId: string) {
    return this.clients.has(clientId);
  }
  async openBatch(b: Omit<NewBatch, 'debug' | 'expected'>, counter: BatchCounter | undefined) {
    const existing = this.batches.get(`${b.clientId}/${b.batchId}`);
    if (existing) return { batch: existing, opened: false };
    if (counter && !(await counter.count())) return undefined;
    const batch = newBatch({ ...b, debug: false });
    this.batches.set(`${b.clientId}/${b.batchId}`, batch);
    return { batch, opened: true };
  }
  async dropOpenedBatch(clientId: string, batchId: string) {
    return this.batches.delete(`${clientId}/${batchId}`);
  }
  async getBatch(clientId: string, batchId: string) {
    return this.batches.get(`${clientId}/${batchId}`);
  }
  isLive(batch: Batch | undefined) {
    return batch !== undefined && !batch.deleting && batch.expiresAt > NOW / 1000;
  }
  async startAttempt(upload: UploadRef): Promise<AttemptCount> {
    const attempts = (this.attempts.get(upload.key) ?? 0) + 1;
    this.attempts.set(upload.key, attempts);
    return { attempts };
  }
  async endAttempt(upload: UploadRef) {
    this.attempts.set(upload.key, (this.attempts.get(upload.key) ?? 1) - 1);
  }
  async getImage(_clientId: string, _batchId: string, fprint: string) {
    return this.records.get(fprint);
  }
  async claim(c: Claim): Promise<ClaimOutcome> {
    const existing = this.records.get(c.fprint);
    if (existing) return { held: false, existing };
    this.records.set(c.fprint, {
      clientId: c.clientId,
      batchId: c.batchId,
      fprint: c.fprint,
      status: 'processing',
      expiresAt: c.expiresAt,
    });
    return { held: true, takeover: false, uploadedAt: c.now };
  }
  async release() {}
  async findReusable() {
    return undefined;
  }
  async noteAnswerModel(model: ModelVersion) {
    this.models.push(model);
  }
  async paidResult(): Promise<PaidResult | undefined> {
    return undefined;
  }
  async keepPaidResult() {
    return true;
  }
  async finish(claim: Claim, finish: Finish) {
    this.finished.push({ claim, finish });
    const was = this.records.get(claim.fprint)!;
    this.records.set(claim.fprint, {
      ...was,
      status: finish.result.status,
      ...(finish.result.status === 'success' ? { isCat: finish.result.isCat } : {}),
    });
    return true;
  }
  async reject(image: Image) {
    this.records.set(image.fprint, image);
    return true;
  }
  async addDuplicate() {
    return true;
  }
  async repairAfterRedelivery(clientId: string, batchId: string) {
    return this.getBatch(clientId, batchId);
  }
}

let image: Buffer;
beforeAll(async () => {
  image = await sharp({ create: { width: 120, height: 90, channels: 3, background: '#3a6' } })
    .png()
    .toBuffer();
});

function deps(store: IngestStore): IngestDeps {
  return {
    s3: new S3Client(REGION),
    rekognition: new RekognitionClient({ ...REGION, maxAttempts: 1 }),
    store,
    config: CONFIG,
    logger: new Logger({ serviceName: 'test', logLevel: 'SILENT' }),
    metrics: {
      image: () => undefined,
      detectLabelsCall: () => undefined,
      detectLabelsRequest: () => undefined,
      callSaved: () => undefined,
      stepLatency: () => undefined,
      thumbnailFailed: () => undefined,
      publish: () => undefined,
    },
    now: () => NOW,
  };
}

beforeEach(() => {
  s3.reset();
  rekognition.reset();
  s3.on(GetObjectCommand).resolves({ Body: [image] as never, ContentLength: image.length, ETag: '"etag-1"' });
  s3.on(CopyObjectCommand).resolves({});
  s3.on(DeleteObjectCommand).resolves({});
  s3.on(PutObjectCommand).resolves({});
  rekognition.on(DetectLabelsCommand).resolves({ Labels: [{ Name: 'Cat', Confidence: 97 }], LabelModelVersion: '3.0' });
});

const upload = { bucket: 'bucket', encodedKey: 'uploads/demo/b1/photo.png', etag: 'etag-1', size: 0 };

test('an upload opens its batch, is claimed, classified and recorded as a cat through the store interface alone', async () => {
  const store = new FakeStore();

  const result = await processUpload(deps(store), { ...upload, size: image.length });

  expect(result).toMatchObject({ outcome: 'success', batchId: 'b1' });
  expect([...store.batches.keys()]).toEqual(['demo/b1']);
  expect(store.finished).toHaveLength(1);
  expect(store.finished[0]!.finish.result).toMatchObject({ status: 'success', isCat: true });
  expect([...store.records.values()]).toEqual([expect.objectContaining({ status: 'success', isCat: true })]);
  expect(store.models).toEqual([expect.objectContaining({ version: '3.0' })]);
  expect(s3.commandCalls(DeleteObjectCommand).map((c) => c.args[0].input.Key)).toEqual(['uploads/demo/b1/photo.png']);
});

test('an upload of a client the store does not know is refused and never classified', async () => {
  const store = new FakeStore();
  store.clients.clear();

  const result = await processUpload(deps(store), { ...upload, size: image.length });

  expect(result).toMatchObject({ outcome: 'refused', code: 'UnknownClient' });
  expect(store.batches.size).toBe(0);
  expect(rekognition.commandCalls(DetectLabelsCommand)).toHaveLength(0);
});

test('the second upload of the same pixels in the batch finds the record the store holds and is not classified again', async () => {
  const store = new FakeStore();
  await processUpload(deps(store), { ...upload, size: image.length });

  const again = await processUpload(deps(store), { ...upload, encodedKey: 'uploads/demo/b1/copy.png', size: image.length });

  expect(again).toMatchObject({ outcome: 'duplicate' });
  expect(rekognition.commandCalls(DetectLabelsCommand)).toHaveLength(1);
});
