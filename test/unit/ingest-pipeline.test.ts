// The ingest pipeline, branch by branch, with its S3, DynamoDB and Rekognition clients mocked (aws-sdk-client-mock):
// no server, milliseconds per case. The same pipeline runs end to end on the local stack in test/integration.
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { ConditionalCheckFailedException, DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DetectLabelsCommand, InvalidImageFormatException, RekognitionClient, ThrottlingException } from '@aws-sdk/client-rekognition';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import sharp from 'sharp';
import type { Config } from '../../lib/config';
import type { Batch } from '../../lib/domain/batch';
import { ZERO_COUNTS } from '../../lib/domain/counts';
import type { ModelVersion } from '../../lib/domain/detection';
import type { Image } from '../../lib/domain/image';
import type { Fingerprint } from '../../lib/domain/upload';
import type { IngestDeps, UploadEvent, UploadQuota } from '../../lib/ingest/deps';
import { fingerprint } from '../../lib/ingest/fingerprint';
import { type IngestMetrics, ListenedMetrics, PowertoolsIngestMetrics } from '../../lib/ingest/metrics';
import { processUpload } from '../../lib/ingest/pipeline';
import { newBatch } from '../../lib/store/batch/summary';
import { BatchStore } from '../../lib/store/batch-store';
import { CURRENT_MODEL_KEY } from '../../lib/store/model/current';
import { toBatchItem, toImageItem } from '../../lib/store/table/attributes';
import { decodeDetections, encodeDetections } from '../../lib/store/table/detections';
import { batchKey, clientKey, imageKey } from '../../lib/store/table/schema';
import { startAttemptRequest } from '../../lib/store/upload/attempts';
import { emfWrittenBy } from '../helpers/emf';

const s3 = mockClient(S3Client);
const ddb = mockClient(DynamoDBDocumentClient);
const rekognition = mockClient(RekognitionClient);

const REGION = { region: 'us-east-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' } };
const CONFIG: Config = {
  tableName: 'T',
  bucketName: 'bucket',
  catMinConfidence: 80,
  minConfidence: 50,
  maxLabels: 25,
  maxUploadBytes: 1_000_000,
  pricePerImageUsd: 0.001,
  maxInputPixels: 100_000_000,
  claimLeaseSeconds: 120,
  defaultRetentionDays: 30,
  maxRetentionDays: 365,
  transactions: false,
  maxAttempts: 5,
};
const NOW = 1_700_000_000_000;
const ETAG = 'etag-1';
const KEY = 'uploads/demo/b1/photo.png';

let image: Buffer;
let fp: Fingerprint;
/** What the pipeline counted, as `Images:refused:InvalidKey`, `DetectLabelsCalls`, `CallsSaved:reuse`; latencies apart. */
let metrics: string[];
let steps: string[];
/** Each DetectLabels request as the pipeline reported it: its outcome. */
let requests: string[];

const recordingMetrics = (): IngestMetrics => ({
  image: (outcome, code) => metrics.push(`Images:${outcome}${code ? `:${code}` : ''}`),
  detectLabelsCall: () => metrics.push('DetectLabelsCalls'),
  detectLabelsRequest: (outcome, ms) => requests.push(`${outcome}${ms >= 0 ? '' : ' (negative time)'}`),
  callSaved: (by) => metrics.push(`CallsSaved:${by}`),
  stepLatency: (step) => steps.push(step),
  thumbnailFailed: () => metrics.push('ThumbnailFailures'),
  publish: () => undefined,
});

beforeAll(async () => {
  image = await sharp({ create: { width: 120, height: 90, channels: 3, background: '#3a6' } })
    .png()
    .toBuffer();
  fp = await fingerprint(image, { maxInputPixels: CONFIG.maxInputPixels });
});

function deps(transactions = false): IngestDeps {
  const document = DynamoDBDocumentClient.from(new DynamoDBClient(REGION));
  return {
    s3: new S3Client(REGION),
    rekognition: new RekognitionClient({ ...REGION, maxAttempts: 1 }),
    store: new BatchStore({ ddb: document, tableName: 'T', transactions, now: () => NOW }),
    config: { ...CONFIG, transactions },
    logger: new Logger({ serviceName: 'test', logLevel: 'SILENT' }),
    metrics: recordingMetrics(),
    now: () => NOW,
  };
}

const event = (over: Partial<UploadEvent> = {}): UploadEvent => ({
  bucket: 'bucket',
  encodedKey: KEY,
  size: image.length,
  etag: ETAG,
  ...over,
});

const batch = (over: Partial<Batch> = {}): Batch => ({
  ...newBatch({ clientId: 'demo', batchId: 'b1', now: NOW - 1000, debug: false, retentionDays: 30 }),
  ...over,
});

const record = (over: Partial<Image> = {}): Image => ({
  clientId: 'demo',
  batchId: 'b1',
  fprint: fp.fprint,
  status: 'success',
  expiresAt: NOW / 1000 + 86_400,
  key: KEY,
  etag: ETAG,
  fileName: 'photo.png',
  restingKey: `processed/demo/b1/${fp.fprint}.png`,
  ...over,
});

const conditionFailed = () => new ConditionalCheckFailedException({ message: 'condition', $metadata: {} });
const preconditionFailed = () =>
  new S3ServiceException({
    name: 'PreconditionFailed',
    $fault: 'client',
    message: 'At least one of the pre-conditions you specified did not hold',
    $metadata: { httpStatusCode: 412 },
  });

const REKOGNITION_3_0: ModelVersion = { name: 'rekognition-detect-labels', version: '3.0' };

/**
 * What a reuse's model read answers (lib/store/model/current.ts): the model answering now and the earlier records'
 * model facts. By default Rekognition 3.0 answers now and answered the earlier record b0 a day ago.
 */
let modelRead: { current?: ModelVersion; records: Record<string, unknown>[] };

/** A registered client `demo` whose batch b1 is `summary`; the object under KEY holds `body` with ETag `etag`. */
function given(opts: { summary?: Batch; body?: Buffer; etag?: string; existing?: Image } = {}) {
  const summary = opts.summary ?? batch();
  ddb.on(GetCommand, { Key: clientKey('demo') }).resolves({ Item: { ...clientKey('demo'), registered_ts: 1 } });
  ddb.on(GetCommand, { Key: clientKey('ghost') }).resolves({});
  ddb.on(GetCommand, { Key: batchKey('demo', 'b1') }).resolves({ Item: toBatchItem(summary) });
  ddb.on(GetCommand, { Key: imageKey('demo', 'b1', fp.fprint) }).resolves(opts.existing ? { Item: toImageItem(opts.existing) } : {});
  // The earlier batch's record a reuse reads the other labels' boxes from: none unless a test gives some.
  ddb.on(GetCommand, { Key: imageKey('demo', 'b0', fp.fprint) }).resolves({});
  // The earlier batch b0 a reuse checks is visible (neither being erased nor expired).
  ddb.on(BatchGetCommand).callsFake(async (input: { RequestItems?: Record<string, { Keys?: Record<string, unknown>[] }> }) => {
    const keys = input.RequestItems?.T?.Keys ?? [];
    if (!keys.some((k) => k.batch_id === CURRENT_MODEL_KEY.batch_id)) return { Responses: { T: [toBatchItem(batch({ batchId: 'b0' }))] } };
    const current = modelRead.current ? [{ ...CURRENT_MODEL_KEY, rek_model: modelRead.current }] : [];
    return { Responses: { T: [...current, ...modelRead.records] } };
  });
  modelRead = {
    current: REKOGNITION_3_0,
    records: [{ ...imageKey('demo', 'b0', fp.fprint), rek_ts: NOW - 86_400_000, rek_model: REKOGNITION_3_0 }],
  };
  ddb.on(UpdateCommand).resolves({ Attributes: toBatchItem(summary) });
  ddb.on(PutCommand).resolves({});
  ddb.on(QueryCommand).resolves({ Items: [] });
  ddb.on(TransactWriteCommand).resolves({});
  const body = opts.body ?? image;
  s3.on(GetObjectCommand).resolves({ Body: [body] as never, ContentLength: body.length, ETag: `"${opts.etag ?? ETAG}"` });
  s3.on(CopyObjectCommand).resolves({});
  s3.on(DeleteObjectCommand).resolves({});
  s3.on(PutObjectCommand).resolves({});
  rekognition.on(DetectLabelsCommand).resolves({ Labels: [{ Name: 'Cup', Confidence: 91 }], LabelModelVersion: '3.0' });
}

const allUpdates = () => ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input as UpdateCommandInput);
/** The upload's own item (its attempts, its fingerprint, whether it was counted): partitions apart from the batch's. */
const isUploadItem = (u: UpdateCommandInput) => String(u.Key?.batch_id).startsWith('UPLOAD#');
const updates = () => allUpdates().filter((u) => !isUploadItem(u));
const uploadItemWrites = () => allUpdates().filter(isUploadItem);
/** The counter moves sent, as domain names: `{ total: 1, pending: 1 }`. */
const counterMoves = () =>
  updates()
    .filter((u) => u.UpdateExpression?.startsWith('ADD') && u.Key?.img_fprint === '#BATCH')
    // The counters moved; :nowS is the condition's clock (a live batch) and :false a claim's, not counters.
    .map((u) =>
      Object.fromEntries(
        Object.entries(u.ExpressionAttributeValues ?? {})
          .filter(([k, v]) => k !== ':nowS' && typeof v === 'number')
          .map(([k, v]) => [k.slice(1), v]),
      ),
    );
const failRecords = () => ddb.commandCalls(PutCommand).map((c) => c.args[0].input.Item as Record<string, unknown>);
const copies = () => s3.commandCalls(CopyObjectCommand).map((c) => c.args[0].input);
const puts = () => s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
const thumbnailPuts = () => puts().filter((p) => p.Key?.startsWith('thumbnails/'));
const detectCalls = () => rekognition.commandCalls(DetectLabelsCommand).length;
const deletes = () => s3.commandCalls(DeleteObjectCommand).map((c) => c.args[0].input.Key);
const PROCESSED = () => `processed/demo/b1/${fp.fprint}.png`;

/** What S3 held at the moment a DynamoDB write was sent: the copies made and the deletes sent before it. */
interface SeenAtWrite {
  copied: (string | undefined)[];
  deleted: (string | undefined)[];
}
const seenNow = (): SeenAtWrite => ({ copied: copies().map((c) => c.Key), deleted: deletes() });

beforeEach(() => {
  s3.reset();
  ddb.reset();
  rekognition.reset();
  metrics = [];
  steps = [];
  requests = [];
});

describe('an upload that succeeds', () => {
  it('copies it to processed/ before the record that says success is written, and deletes the source only after', async () => {
    given();
    let atRecord: SeenAtWrite | undefined;
    ddb.on(UpdateCommand, { ConditionExpression: '#claimId = :claim' }).callsFake(() => {
      atRecord = seenNow();
      return { Attributes: toBatchItem(batch()) };
    });

    expect((await processUpload(deps(), event())).outcome).toBe('success');

    expect(atRecord).toEqual({ copied: [PROCESSED()], deleted: [] });
    expect(deletes()).toEqual([KEY]);
  });

  it("copies it before the record's transaction (record and counters in one write) when the backend has them", async () => {
    given();
    const atWrite: SeenAtWrite[] = [];
    ddb.on(TransactWriteCommand).callsFake(() => {
      atWrite.push(seenNow());
      return {};
    });

    await processUpload(deps(true), event());

    // The claim's transaction, then the result's.
    expect(atWrite).toEqual([
      { copied: [], deleted: [] },
      { copied: [PROCESSED()], deleted: [] },
    ]);
    expect(deletes()).toEqual([KEY]);
  });

  it('claims, classifies, records and moves it by its ETag, counting pending then success', async () => {
    given();

    const result = await processUpload(deps(), event());

    expect(result).toEqual({ outcome: 'success', batchId: 'b1', fprint: fp.fprint });
    expect(counterMoves()).toEqual([
      { total: 1, pending: 1 },
      { pending: -1, success: 1 },
    ]);
    expect(copies()).toEqual([expect.objectContaining({ Key: `processed/demo/b1/${fp.fprint}.png`, CopySourceIfMatch: ETAG })]);
    expect(s3.commandCalls(DeleteObjectCommand)[0]?.args[0].input).toMatchObject({ Key: KEY, IfMatch: ETAG });
    expect(updates().find((u) => u.UpdateExpression?.includes('#etag'))?.ExpressionAttributeValues).toMatchObject({ ':etag': ETAG });
  });

  it('writes each record with its counter move in one transaction when the backend has them', async () => {
    given();

    await processUpload(deps(true), event());

    const transactions = ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems?.length);
    // The claim's carries the fingerprint's note on the upload's own item too: no write of its own. The result's carries
    // the client's known item of these pixels (POST /v1/fingerprints:known reads it by key).
    expect(transactions).toEqual([3, 3]);
    expect(counterMoves()).toEqual([]);
  });

  it('writes the bytes it holds when the key was overwritten between the read and the copy, and leaves the newer object', async () => {
    given();
    s3.on(CopyObjectCommand).rejects(preconditionFailed());

    const result = await processUpload(deps(), event());

    expect(result.outcome).toBe('success');
    expect(puts().find((p) => p.Key?.startsWith('processed/'))).toMatchObject({ Key: `processed/demo/b1/${fp.fprint}.png`, Body: image });
    expect(s3.commandCalls(DeleteObjectCommand)).toHaveLength(0);
  });

  it('sends DetectLabels the bytes it read, never the key: a newer object under the key cannot lend the record its labels', async () => {
    given();

    await processUpload(deps(), event());

    const sent = rekognition.commandCalls(DetectLabelsCommand).map((c) => c.args[0].input.Image);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.S3Object).toBeUndefined();
    expect(Buffer.from(sent[0]?.Bytes ?? new Uint8Array()).equals(image)).toBe(true);
  });

  it('leaves a newer object that replaced the upload between the copy and the delete', async () => {
    given();
    s3.on(DeleteObjectCommand).rejects(preconditionFailed());

    expect((await processUpload(deps(), event())).outcome).toBe('success');
  });
});

/** A summary item as DynamoDB answers it in a cancelled transaction's reasons (AttributeValues: it is not unmarshalled). */
const asAttributeValues = (item: Record<string, unknown>): Record<string, never> =>
  Object.fromEntries(
    Object.entries(item).map(([k, v]) => [
      k,
      typeof v === 'number' ? { N: String(v) } : typeof v === 'boolean' ? { BOOL: v } : { S: String(v) },
    ]),
  ) as Record<string, never>;

describe('requests per image (docs/design.md §9): the summary is read once, when the upload arrives', () => {
  const summaryReads = () => ddb.commandCalls(GetCommand).filter((c) => c.args[0].input.Key?.img_fprint === '#BATCH').length;
  const uploadItemCalls = () => uploadItemWrites().length;
  type Transact = { TransactItems: { Update?: UpdateCommandInput; Put?: unknown }[] };
  const cancelledFinding = (input: Transact, found: Batch) =>
    new TransactionCanceledException({
      message: 'cancelled',
      $metadata: {},
      CancellationReasons: input.TransactItems.map((_, i) =>
        i === input.TransactItems.length - 1
          ? { Code: 'ConditionalCheckFailed', Item: asAttributeValues(toBatchItem(found) as never) }
          : { Code: 'None' },
      ),
    });

  it.each([
    ['with transactions', true, { transactions: 2, updates: 0 }],
    ['without transactions (the counter move answers the summary)', false, { transactions: 0, updates: 5 }],
  ])("%s: one summary read and one write of the upload's own item for a new image", async (_name, transactions, sent) => {
    given();

    expect((await processUpload(deps(transactions), event())).outcome).toBe('success');

    expect(summaryReads()).toBe(1);
    // With transactions the fingerprint's note is in the claim's; without, it is written just before the claim.
    expect(uploadItemCalls()).toBe(transactions ? 1 : 2);
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(sent.transactions);
    // Without: the note, the claim, its counter move, the result, its counter move.
    expect(allUpdates().length - 1).toBe(sent.updates);
  });

  it('with transactions, the last declared image closes the batch and makes it done without reading the summary again', async () => {
    const open = batch({ expected: 1 });
    given({ summary: open });
    const calls: string[] = [];
    ddb.on(TransactWriteCommand).callsFake((input: Transact) => {
      const condition = input.TransactItems.at(-1)?.Update?.ConditionExpression ?? '';
      const exact = condition.includes(':was_total');
      const finishing = input.TransactItems.at(-1)?.Update?.ExpressionAttributeValues?.[':pending'] === -1;
      calls.push(`${finishing ? 'finish' : 'claim'}${exact ? ' (exact)' : ''}`);
      if (exact) return {};
      // The guard finds settling due: the claim counts the last declared file, the result the last pending image.
      throw cancelledFinding(
        input,
        finishing ? { ...open, closed: true, closedAt: NOW, counts: { ...ZERO_COUNTS, total: 1, pending: 1 } } : open,
      );
    });
    const closes = ddb.on(UpdateCommand, { UpdateExpression: 'SET #closed = :true, #closedAt = :now' });
    closes.resolves({
      Attributes: toBatchItem({ ...open, closed: true, closedAt: NOW, counts: { ...ZERO_COUNTS, total: 1, pending: 1 } }),
    });
    const done = { ...open, closed: true, closedAt: NOW, doneAt: NOW, counts: { ...ZERO_COUNTS, total: 1, success: 1 } };
    ddb.on(UpdateCommand, { UpdateExpression: 'SET #doneAt = :now' }).resolves({ Attributes: toBatchItem(done) });

    expect((await processUpload(deps(true), event())).outcome).toBe('success');

    expect(calls).toEqual(['claim', 'claim (exact)', 'finish', 'finish (exact)']);
    const settles = allUpdates()
      .map((u) => u.UpdateExpression)
      .filter((e) => e === 'SET #closed = :true, #closedAt = :now' || e === 'SET #doneAt = :now');
    expect(settles).toEqual(['SET #closed = :true, #closedAt = :now', 'SET #doneAt = :now']);
    expect(summaryReads()).toBe(1);
  });

  it('with transactions, a claim the guard refuses in a batch closed meanwhile is BatchClosed, told by the summary the refusal answered', async () => {
    given();
    ddb.on(TransactWriteCommand).callsFake((input: Transact) => {
      if (input.TransactItems.at(-1)?.Update?.ExpressionAttributeValues?.[':pending'] === 1) {
        throw cancelledFinding(input, batch({ closed: true, closedAt: NOW, doneAt: NOW }));
      }
      return {};
    });

    expect(await processUpload(deps(true), event())).toMatchObject({ outcome: 'fail', errorCode: 'BatchClosed' });
    expect(summaryReads()).toBe(1);
  });
});

describe('copy first, then record, then delete the source: every recorded upload', () => {
  const thumbnail = () => `thumbnails/demo/b1/${fp.fprint}.webp`;

  it('a duplicate: copied under duplicates/ before it is counted on the original', async () => {
    given({ existing: record({ key: 'uploads/demo/b1/first.png', fileName: 'first.png' }) });
    let atCount: SeenAtWrite | undefined;
    ddb.on(UpdateCommand, { UpdateExpression: 'ADD #duplicates :one, #duplicateFiles :name' }).callsFake(() => {
      atCount = seenNow();
      return {};
    });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    expect((await processUpload(deps(), event())).outcome).toBe('duplicate');

    expect(atCount).toEqual({ copied: [`duplicates/demo/b1/${fp.fprint}/photo.png`], deleted: [] });
    expect(deletes()).toEqual([KEY]);
  });

  it('a rejection: copied under failed/ before its fail record', async () => {
    given({ body: Buffer.alloc(0) });
    let atRecord: SeenAtWrite | undefined;
    ddb.on(PutCommand).callsFake(() => {
      atRecord = seenNow();
      return {};
    });

    expect((await processUpload(deps(), event())).outcome).toBe('fail');

    expect(atRecord).toEqual({ copied: ['failed/demo/b1/photo.png'], deleted: [] });
    expect(deletes()).toEqual([KEY]);
  });

  it('a redelivery that finds the record: copied again (the same key) before the batch is recounted and settled', async () => {
    given({ existing: record() });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());
    let atRecount: SeenAtWrite | undefined;
    ddb.on(QueryCommand).callsFake(() => {
      atRecount = seenNow();
      return { Items: [] };
    });

    expect((await processUpload(deps(), event())).outcome).toBe('redelivered');

    expect(atRecount).toEqual({ copied: [PROCESSED()], deleted: [] });
    expect(deletes()).toEqual([KEY]);
  });

  it('a result refused because the batch is being erased: the copy is deleted with the source and the thumbnail', async () => {
    given();
    ddb.on(UpdateCommand, { Key: batchKey('demo', 'b1') }).callsFake((input: UpdateCommandInput) => {
      if (input.ExpressionAttributeValues?.[':success'] !== undefined) throw conditionFailed();
      return { Attributes: toBatchItem(batch()) };
    });

    expect(await processUpload(deps(), event())).toEqual({ outcome: 'refused', key: KEY, code: 'BatchErased' });

    expect(deletes().sort()).toEqual([KEY, PROCESSED(), thumbnail()].sort());
  });

  it('a redelivery whose batch turned out to be being erased: its copy again is deleted, and it is a discard', async () => {
    given({ existing: record() });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());
    ddb
      .on(GetCommand, { Key: batchKey('demo', 'b1') })
      .resolvesOnce({ Item: toBatchItem(batch()) })
      .resolves({ Item: toBatchItem(batch({ deleting: true })) });

    expect(await processUpload(deps(), event())).toEqual({ outcome: 'refused', key: KEY, code: 'BatchErased' });

    expect(deletes().sort()).toEqual([KEY, PROCESSED()].sort());
  });

  it('a copy whose source an erasure deleted meanwhile: a discard, nothing recorded', async () => {
    given();
    s3.on(CopyObjectCommand).rejects(new NoSuchKey({ message: 'gone', $metadata: {} }));
    s3.on(HeadObjectCommand).rejects(new NotFound({ message: 'not found', $metadata: {} }));
    ddb
      .on(GetCommand, { Key: batchKey('demo', 'b1') })
      .resolvesOnce({ Item: toBatchItem(batch()) })
      .resolves({});

    expect(await processUpload(deps(), event())).toEqual({ outcome: 'refused', key: KEY, code: 'BatchErased' });

    expect(counterMoves()).toEqual([{ total: 1, pending: 1 }]);
    expect(deletes().sort()).toEqual([KEY, thumbnail()].sort());
  });
});

describe('reuse across batches', () => {
  const earlierRecord = () => ({
    ...toImageItem(
      record({
        batchId: 'b0',
        catConfidence: 88,
        cats: [{ confidence: 88, box: { left: 0.1, top: 0.2, width: 0.3, height: 0.4 } }],
        labels: [{ name: 'Cat', confidence: 88 }],
      }),
    ),
    rek_ts: NOW - 86_400_000,
  });
  let earlier: ReturnType<typeof earlierRecord>;
  beforeEach(() => {
    earlier = earlierRecord();
  });

  it("copies the client's earlier classification of the same pixels (another batch) without calling DetectLabels", async () => {
    given();
    ddb.on(QueryCommand, { IndexName: 'client-fprint' }).resolves({ Items: [earlier] });
    const dogs = { model: '3.0', boxes: [{ name: 'Dog', confidence: 91, box: { left: 0.5, top: 0.5, width: 0.2, height: 0.2 } }] };
    // A record written before records kept their model: its boxes name it (Rekognition 3.0, the one answering now).
    modelRead.records = [{ ...imageKey('demo', 'b0', fp.fprint), rek_ts: NOW - 86_400_000, rek_dets: encodeDetections(dogs) }];

    const result = await processUpload(deps(), event());

    expect(result).toEqual({ outcome: 'success', batchId: 'b1', fprint: fp.fprint });
    expect(detectCalls()).toBe(0);
    const lookup = ddb.commandCalls(QueryCommand).find((c) => c.args[0].input.IndexName === 'client-fprint')!.args[0].input;
    expect(lookup).toMatchObject({
      ExpressionAttributeValues: { ':client': 'demo', ':fprint': fp.fprint, ':success': 'success', ':now': NOW / 1000 },
    });
    expect(lookup.ConsistentRead).toBeUndefined();
    const finish = updates().find((u) => u.UpdateExpression?.includes('#reused'))!;
    expect(finish.ExpressionAttributeValues).toMatchObject({
      ':reused': true,
      ':cat': true,
      ':catConfidence': 88,
      ':now': NOW - 86_400_000,
      ':cats': earlier.rek_cats,
      ':model': REKOGNITION_3_0,
    });
    // The other labels' boxes come from the earlier record itself (client-fprint does not project them), read with
    // the model answering now and the record's own.
    expect(decodeDetections(finish.ExpressionAttributeValues?.[':detections'])).toEqual(dogs);
    const modelFacts = ddb
      .commandCalls(BatchGetCommand)
      .map((c) => c.args[0].input.RequestItems?.T)
      .find((r) => r?.Keys?.some((k) => k.batch_id === CURRENT_MODEL_KEY.batch_id))!;
    expect(modelFacts).toMatchObject({ ConsistentRead: true, Keys: [CURRENT_MODEL_KEY, imageKey('demo', 'b0', fp.fprint)] });
    expect(Object.values(modelFacts.ExpressionAttributeNames ?? {})).toEqual(expect.arrayContaining(['rek_model', 'rek_dets', 'rek_ts']));
    expect(counterMoves()).toEqual([
      { total: 1, pending: 1 },
      { pending: -1, success: 1, cats: 1, reused: 1 },
    ]);
  });

  it('classifies again, not reused, pixels answered by another model than the one answering now', async () => {
    given();
    ddb.on(QueryCommand, { IndexName: 'client-fprint' }).resolves({ Items: [earlier] });
    modelRead.current = { name: 'rekognition-detect-labels', version: '3.1' };

    await processUpload(deps(), event());

    expect(detectCalls()).toBe(1);
    expect(counterMoves()[1]).toEqual({ pending: -1, success: 1 });
  });

  it('classifies again while no answer has named the model answering now', async () => {
    given();
    ddb.on(QueryCommand, { IndexName: 'client-fprint' }).resolves({ Items: [earlier] });
    delete modelRead.current;

    await processUpload(deps(), event());

    expect(detectCalls()).toBe(1);
  });

  it("keeps a new answer's model on its record and its known item, and records it once as the model answering now", async () => {
    given();
    const d = deps();

    await processUpload(d, event());
    await processUpload(d, event({ encodedKey: KEY.replace('photo', 'photo2'), etag: 'e2' }));

    const finish = updates().find((u) => u.ExpressionAttributeValues?.[':statusKey'] !== undefined)!;
    expect(finish.ExpressionAttributeValues?.[':model']).toEqual(REKOGNITION_3_0);
    const puts = ddb.commandCalls(PutCommand).map((c) => c.args[0].input.Item ?? {});
    expect(puts.find((i) => String(i.batch_id).startsWith('KNOWN#'))).toMatchObject({ rek_model: REKOGNITION_3_0 });
    expect(puts.filter((i) => i.batch_id === CURRENT_MODEL_KEY.batch_id)).toEqual([
      { ...CURRENT_MODEL_KEY, rek_model: REKOGNITION_3_0, learned_ts: NOW },
    ]);
  });

  it("judges a reused classification by this batch's own threshold", async () => {
    given({ summary: batch({ catMinConfidence: 95 }) });
    ddb.on(QueryCommand, { IndexName: 'client-fprint' }).resolves({ Items: [earlier] });

    await processUpload(deps(), event());

    expect(updates().find((u) => u.UpdateExpression?.includes('#reused'))!.ExpressionAttributeValues).toMatchObject({ ':cat': false });
    expect(counterMoves()[1]).toEqual({ pending: -1, success: 1, reused: 1 });
  });

  it('calls DetectLabels when the only earlier record is in a batch being erased', async () => {
    given();
    ddb.on(QueryCommand, { IndexName: 'client-fprint' }).resolves({ Items: [earlier] });
    ddb.on(BatchGetCommand).resolves({ Responses: { T: [toBatchItem(batch({ batchId: 'b0', deleting: true }))] } });

    await processUpload(deps(), event());

    expect(detectCalls()).toBe(1);
    expect(ddb.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.T).toMatchObject({ ConsistentRead: true });
    expect(counterMoves()[1]).toEqual({ pending: -1, success: 1 });
  });

  it("calls DetectLabels when the only record of these pixels is this batch's own claim", async () => {
    given();
    ddb.on(QueryCommand, { IndexName: 'client-fprint' }).resolves({ Items: [{ ...earlier, batch_id: 'demo#b1' }] });

    await processUpload(deps(), event());

    expect(detectCalls()).toBe(1);
    expect(counterMoves()[1]).toEqual({ pending: -1, success: 1 });
  });
});

describe('uploads no batch can hold', () => {
  it('refuses a key outside the layout: logged, counted, moved under failed/_invalid/, never recorded', async () => {
    given();

    const result = await processUpload(deps(), event({ encodedKey: 'uploads/stray.png' }));

    expect(result).toEqual({ outcome: 'refused', key: 'uploads/stray.png', code: 'InvalidKey' });
    expect(copies()[0]).toMatchObject({ Key: 'failed/_invalid/uploads/stray.png' });
    expect(metrics).toEqual(['Images:refused:InvalidKey']);
    expect(updates()).toEqual([]);
  });

  it('refuses an unknown client: never claimed, never classified, moved under failed/, counted in a metric', async () => {
    given();

    const result = await processUpload(deps(), event({ encodedKey: 'uploads/ghost/b1/photo.png' }));

    expect(result).toEqual({ outcome: 'refused', key: 'uploads/ghost/b1/photo.png', code: 'UnknownClient' });
    expect(metrics).toEqual(['Images:refused:UnknownClient']);
    expect(detectCalls()).toBe(0);
    expect(updates()).toEqual([]);
    expect(failRecords()).toEqual([]);
    expect(copies()[0]).toMatchObject({ Key: 'failed/ghost/b1/photo.png' });
  });
});

describe('rejections become one fail record, counted total and fail, and an object under failed/', () => {
  it.each([
    ['the event says it is too large', () => event({ size: CONFIG.maxUploadBytes + 1 }), {}, 'FileTooLarge'],
    ['it is empty', () => event(), { body: Buffer.alloc(0) }, 'EmptyFile'],
    ['it is not an image', () => event(), { body: Buffer.from('not a picture') }, 'NotAnImage'],
  ] as const)('when %s', async (_what, makeEvent, objectGiven, code) => {
    given(objectGiven);

    const result = await processUpload(deps(), makeEvent());

    expect(result.outcome).toBe('fail');
    expect(failRecords()).toEqual([expect.objectContaining({ op_status: 'fail', err_code: code, etag: ETAG, batch_id: 'demo#b1' })]);
    expect(counterMoves()).toEqual([{ total: 1, fail: 1 }]);
    expect(copies()[0]).toMatchObject({ Key: 'failed/demo/b1/photo.png', CopySourceIfMatch: ETAG });
    expect(detectCalls()).toBe(0);
  });

  it('when it is below 80 px a side', async () => {
    given({
      body: await sharp({ create: { width: 60, height: 40, channels: 3, background: '#000' } })
        .png()
        .toBuffer(),
    });

    await processUpload(deps(), event());

    expect(failRecords()[0]).toMatchObject({ err_code: 'ImageTooSmall' });
  });

  it('when the key already holds a newer upload: recorded as Overwritten, and the newer object is left for its own event', async () => {
    given({ etag: 'etag-2' });

    const result = await processUpload(deps(), event());

    expect(result.outcome).toBe('fail');
    expect(failRecords()[0]).toMatchObject({ err_code: 'Overwritten', etag: ETAG });
    expect(copies()).toEqual([]);
  });

  it("when the batch was closed after this upload read it open: the claim's own transaction refuses it, BatchClosed", async () => {
    // The upload reads the summary open; by the claim's transaction a close has made it done.
    given();
    let reads = 0;
    ddb.on(GetCommand, { Key: batchKey('demo', 'b1') }).callsFake(() => ({
      Item: toBatchItem(reads++ === 0 ? batch() : batch({ closed: true, closedAt: NOW, doneAt: NOW })),
    }));
    ddb.on(TransactWriteCommand).callsFake((input: { TransactItems: { Update?: UpdateCommandInput }[] }) => {
      const counts = input.TransactItems.at(-1)?.Update;
      if (counts?.ExpressionAttributeValues?.[':pending'] === 1 && counts.ConditionExpression?.includes('#closed')) {
        const reasons = input.TransactItems.map((_, i) => ({
          Code: i === input.TransactItems.length - 1 ? 'ConditionalCheckFailed' : 'None',
        }));
        throw new TransactionCanceledException({ message: 'cancelled', $metadata: {}, CancellationReasons: reasons });
      }
      return {};
    });

    const result = await processUpload(deps(true), event());

    expect(result).toMatchObject({ outcome: 'fail', errorCode: 'BatchClosed' });
    expect(detectCalls()).toBe(0);
    expect(ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems?.[0]?.Put?.Item?.err_code)).toContain(
      'BatchClosed',
    );
  });

  it('when the batch is closed: BatchClosed, never claimed or classified', async () => {
    given({ summary: batch({ closed: true, closedAt: NOW - 10 }) });

    await processUpload(deps(), event());

    expect(failRecords()[0]).toMatchObject({ err_code: 'BatchClosed' });
    expect(counterMoves()).toEqual([{ total: 1, fail: 1 }]);
    expect(detectCalls()).toBe(0);
  });

  it('when Rekognition refuses the image after the claim: the claimed record finishes as fail, pending becomes fail', async () => {
    given();
    rekognition.on(DetectLabelsCommand).rejects(new InvalidImageFormatException({ message: 'bad', $metadata: {} }));

    const result = await processUpload(deps(), event());

    expect(result).toEqual({ outcome: 'fail', batchId: 'b1', fprint: fp.fprint, errorCode: 'DetectionRejected' });
    expect(failRecords()).toEqual([]);
    expect(updates().find((u) => u.ConditionExpression === '#claimId = :claim')?.ExpressionAttributeValues).toMatchObject({
      ':errorCode': 'DetectionRejected',
    });
    expect(counterMoves()).toEqual([
      { total: 1, pending: 1 },
      { pending: -1, fail: 1 },
    ]);
  });

  it('gives two bad uploads under one name, with different ETags, a record each', async () => {
    given({ body: Buffer.alloc(0) });
    await processUpload(deps(), event());
    given({ body: Buffer.alloc(0), etag: 'etag-2' });
    await processUpload(deps(), event({ etag: 'etag-2' }));

    const [first, second] = failRecords();
    expect(first?.img_fprint).not.toBe(second?.img_fprint);
  });

  it('recounts instead of counting again when the record was written by an earlier delivery', async () => {
    given({ body: Buffer.alloc(0) });
    ddb.on(PutCommand).rejects(conditionFailed());

    await processUpload(deps(), event());

    expect(counterMoves()).toEqual([]);
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(1);
  });
});

describe('an image the batch already has', () => {
  it('counts another upload of the same pixels as a duplicate, unclassified, and moves it under duplicates/', async () => {
    given({ existing: record({ key: 'uploads/demo/b1/first.png', fileName: 'first.png' }) });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    const result = await processUpload(deps(), event());

    expect(result).toEqual({ outcome: 'duplicate', batchId: 'b1', fprint: fp.fprint });
    expect(counterMoves()).toEqual([{ total: 1, duplicate: 1 }]);
    expect(detectCalls()).toBe(0);
    expect(copies()[0]).toMatchObject({ Key: `duplicates/demo/b1/${fp.fprint}/photo.png` });
  });

  it('counts a new upload (another ETag) of the same pixels to the same key as a duplicate', async () => {
    given({ existing: record({ etag: 'etag-0' }) });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    expect((await processUpload(deps(), event())).outcome).toBe('duplicate');
  });

  it('takes over a claim whose lease expired, without counting the image again', async () => {
    given({ existing: record({ status: 'processing', claimId: 'crashed', leaseUntil: NOW - 1, uploadedAt: NOW - 60_000 }) });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    const result = await processUpload(deps(), event());

    expect(result.outcome).toBe('success');
    expect(updates().some((u) => u.ExpressionAttributeValues?.[':previous'] === 'crashed')).toBe(true);
    expect(counterMoves()).toEqual([{ pending: -1, success: 1 }]);
    expect(updates().find((u) => u.ExpressionAttributeValues?.[':statusKey'])?.ExpressionAttributeValues?.[':uploadedAt']).toBe(
      NOW - 60_000,
    );
  });

  it('hands an upload whose claim another run still leases back until the lease is over, touching nothing', async () => {
    given({ existing: record({ status: 'processing', claimId: 'live', leaseUntil: NOW + 60_000 }) });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    expect(await processUpload(deps(), event())).toEqual({ outcome: 'deferred', key: KEY, retryAfterSeconds: 61 });
    expect(copies()).toEqual([]);
    expect(detectCalls()).toBe(0);
  });

  it('hands it back for at least a second when the lease ends within the same millisecond', async () => {
    given({ existing: record({ status: 'processing', claimId: 'live', leaseUntil: NOW }) });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    expect(await processUpload(deps(), event())).toEqual({ outcome: 'deferred', key: KEY, retryAfterSeconds: 1 });
  });
});

describe('redelivered events', () => {
  it('does nothing when the object was already moved', async () => {
    given();
    s3.on(GetObjectCommand).rejects(new NoSuchKey({ message: 'gone', $metadata: {} }));

    expect(await processUpload(deps(), event())).toEqual({ outcome: 'redelivered', key: KEY });
    expect(updates()).toEqual([]);
  });

  it('recounts and finishes the move when the record exists but the object is still under uploads/', async () => {
    given({ existing: record() });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    const result = await processUpload(deps(), event());

    expect(result).toEqual({ outcome: 'redelivered', key: KEY });
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(1);
    expect(copies()[0]).toMatchObject({ Key: `processed/demo/b1/${fp.fprint}.png` });
    expect(detectCalls()).toBe(0);
  });

  it('with transactions, settles the batch without recounting it when the record exists but the object is still under uploads/', async () => {
    given({ summary: batch({ closed: true, counts: { ...ZERO_COUNTS, total: 1, success: 1 } }), existing: record() });
    ddb.on(TransactWriteCommand).rejectsOnce(
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }],
      }),
    );

    const result = await processUpload(deps(true), event());

    expect(result).toEqual({ outcome: 'redelivered', key: KEY });
    expect(ddb.commandCalls(QueryCommand)).toHaveLength(0);
    expect(updates().map((u) => u.UpdateExpression)).toEqual(['SET #doneAt = :now']);
    expect(copies()[0]).toMatchObject({ Key: `processed/demo/b1/${fp.fprint}.png` });
  });

  it('recognises its own record in a batch closed since, instead of refusing it', async () => {
    given({ summary: batch({ closed: true }), existing: record() });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    expect((await processUpload(deps(), event())).outcome).toBe('redelivered');
    expect(failRecords()).toEqual([]);
  });

  it('treats a transaction cancelled by its record condition as already recorded', async () => {
    given({ existing: record({ key: 'uploads/demo/b1/first.png' }) });
    ddb.on(TransactWriteCommand).rejectsOnce(
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }],
      }),
    );

    expect((await processUpload(deps(true), event())).outcome).toBe('duplicate');
  });
});

describe('DetectLabels requests by outcome', () => {
  it('reports a request answered as ok', async () => {
    given();
    await processUpload(deps(), event());
    expect(requests).toEqual(['ok']);
  });

  it('reports a throttle that outlasted the retries as throttled', async () => {
    given();
    rekognition.on(DetectLabelsCommand).rejects(new ThrottlingException({ message: 'slow down', $metadata: {} }));
    await expect(processUpload(deps(), event())).rejects.toThrow(/slow down/);
    expect(requests).toEqual(['throttled']);
  });

  it('reports a refused image as refused, then its converted copy as sent again', async () => {
    given();
    rekognition
      .on(DetectLabelsCommand)
      .rejectsOnce(new InvalidImageFormatException({ message: 'bad', $metadata: {} }))
      .resolves({ Labels: [{ Name: 'Cup', Confidence: 91 }], LabelModelVersion: '3.0' });
    await processUpload(deps(), event());
    expect(requests).toEqual(['refused', 'ok']);
  });

  it('reports any other fault as failed', async () => {
    given();
    rekognition
      .on(DetectLabelsCommand)
      .rejects(
        Object.assign(new Error('We encountered an internal error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }),
      );
    await expect(processUpload(deps(), event())).rejects.toThrow(/internal error/);
    expect(requests).toEqual(['failed']);
  });
});

describe('transient faults', () => {
  it('gives the claim back and fails for SQS to redeliver when throttling outlasts the retries', async () => {
    given();
    rekognition.on(DetectLabelsCommand).rejects(new ThrottlingException({ message: 'slow down', $metadata: {} }));

    await expect(processUpload(deps(), event())).rejects.toThrow(/slow down/);

    expect(updates().some((u) => u.UpdateExpression === 'SET #leaseUntil = :zero')).toBe(true);
    expect(counterMoves()).toEqual([{ total: 1, pending: 1 }]);
    expect(copies()).toEqual([]);
  });

  it('fails when its claim was taken over by a delivery of the same upload, leaving its copy (the same key) and the source', async () => {
    given({ existing: record({ status: 'processing', claimId: 'newer', leaseUntil: NOW + 60_000, restingKey: undefined, format: 'png' }) });
    ddb.on(UpdateCommand, { ConditionExpression: '#claimId = :claim' }).rejects(conditionFailed());

    await expect(processUpload(deps(), event())).rejects.toThrow(/was lost/);
    expect(copies().map((c) => c.Key)).toEqual([PROCESSED()]);
    expect(deletes()).toEqual([]);
  });

  it('removes its copy when its claim was taken over by another upload of the pixels, which rests elsewhere', async () => {
    const holder = { key: 'uploads/demo/b1/other.webp', etag: 'etag-9', fileName: 'other.webp', format: 'webp' };
    given({ existing: record({ status: 'processing', claimId: 'newer', leaseUntil: NOW + 60_000, restingKey: undefined, ...holder }) });
    ddb.on(UpdateCommand, { ConditionExpression: '#claimId = :claim' }).rejects(conditionFailed());

    await expect(processUpload(deps(), event())).rejects.toThrow(/was lost/);
    // This upload comes back as a duplicate of the holder's and rests under duplicates/.
    expect(deletes()).toEqual([PROCESSED()]);
  });

  it('gives the claim back and records nothing when the copy fails, for the retry to take the claim at once', async () => {
    given();
    s3.on(CopyObjectCommand).rejects(
      new S3ServiceException({
        name: 'InternalError',
        $fault: 'server',
        message: 'We encountered an internal error',
        $metadata: { httpStatusCode: 500 },
      }),
    );

    await expect(processUpload(deps(), event())).rejects.toThrow(/internal error/);

    expect(updates().some((u) => u.UpdateExpression === 'SET #leaseUntil = :zero')).toBe(true);
    expect(counterMoves()).toEqual([{ total: 1, pending: 1 }]);
    expect(deletes()).toEqual([]);
  });
});

describe('an upload that never finishes (a timeout, out of memory, a fault that persists)', () => {
  /** The upload's stored attempts as the next attempt finds them: `attempts` counts this one too. */
  const storedAttempts = (attempts: number, fprint?: string) => {
    s3.on(HeadObjectCommand).resolves({ ETag: `"${ETAG}"` });
    ddb
      .on(UpdateCommand)
      .callsFake((input: UpdateCommandInput) =>
        isUploadItem(input)
          ? { Attributes: { ...input.Key, attempts, ...(fprint ? { seen_fprint: fprint } : {}) } }
          : { Attributes: toBatchItem(batch()) },
      );
  };
  const accessDenied = () =>
    new S3ServiceException({ name: 'AccessDenied', $fault: 'client', message: 'Access Denied', $metadata: { httpStatusCode: 403 } });

  it('counts every attempt where the next one sees it, before reading the object', async () => {
    given();
    let readsBeforeCount = -1;
    ddb.on(UpdateCommand).callsFake((input: UpdateCommandInput) => {
      if (isUploadItem(input) && input.UpdateExpression?.includes('ADD') && readsBeforeCount < 0)
        readsBeforeCount = s3.commandCalls(GetObjectCommand).length;
      return { Attributes: toBatchItem(batch()) };
    });

    expect((await processUpload(deps(), event())).outcome).toBe('success');

    expect(readsBeforeCount).toBe(0);
  });

  it('past the limit, records ProcessingFailed and moves it under failed/ without reading or classifying it again', async () => {
    given();
    storedAttempts(CONFIG.maxAttempts + 1);

    const result = await processUpload(deps(), event());

    expect(result).toMatchObject({ outcome: 'fail', errorCode: 'ProcessingFailed' });
    expect(s3.commandCalls(GetObjectCommand)).toHaveLength(0);
    expect(detectCalls()).toBe(0);
    expect(failRecords()).toEqual([expect.objectContaining({ op_status: 'fail', err_code: 'ProcessingFailed', etag: ETAG })]);
    expect(counterMoves()).toEqual([{ total: 1, fail: 1 }]);
    expect(copies()).toEqual([expect.objectContaining({ Key: 'failed/demo/b1/photo.png', CopySourceIfMatch: ETAG })]);
    expect(deletes()).toEqual([KEY]);
  });

  it('past the limit, finishes the claim a dead run left processing as fail, so pending becomes fail and the batch can end', async () => {
    given({ existing: record({ status: 'processing', claimId: 'dead-run', leaseUntil: NOW - 1, restingKey: undefined }) });
    storedAttempts(CONFIG.maxAttempts + 1, fp.fprint);

    const result = await processUpload(deps(), event());

    expect(result).toMatchObject({ outcome: 'fail', errorCode: 'ProcessingFailed', fprint: fp.fprint });
    expect(s3.commandCalls(GetObjectCommand)).toHaveLength(0);
    const finish = updates().find((u) => u.ConditionExpression === '#claimId = :claim');
    expect(finish?.ExpressionAttributeValues).toMatchObject({ ':claim': 'dead-run', ':status': 'fail', ':errorCode': 'ProcessingFailed' });
    expect(counterMoves()).toEqual([{ pending: -1, fail: 1 }]);
    expect(copies().map((c) => c.Key)).toEqual(['failed/demo/b1/photo.png']);
  });

  it('past the limit, leaves a claim a live run still leases, and hands the message back until the lease is over', async () => {
    given({ existing: record({ status: 'processing', claimId: 'live-run', leaseUntil: NOW + 30_000, restingKey: undefined }) });
    storedAttempts(CONFIG.maxAttempts + 1, fp.fprint);

    const result = await processUpload(deps(), event());

    expect(result).toMatchObject({ outcome: 'deferred', retryAfterSeconds: 31 });
    expect(counterMoves()).toEqual([]);
    expect(copies()).toEqual([]);
    // The deferral is not an attempt that failed.
    expect(uploadItemWrites().filter((u) => u.ExpressionAttributeValues?.[':minus'] === -1)).toHaveLength(1);
  });

  it('past the limit, finds an upload already recorded (a late redelivery) and only finishes its move', async () => {
    given({ existing: record() });
    storedAttempts(CONFIG.maxAttempts + 1, fp.fprint);

    expect((await processUpload(deps(), event())).outcome).toBe('redelivered');
    expect(failRecords()).toEqual([]);
    expect(counterMoves()).toEqual([]);
  });

  it('at the last attempt, a fault that reaches the catch records ProcessingFailed instead of failing the message again', async () => {
    // What the table holds once this attempt claimed the image and gave the claim back on the fault.
    given({ existing: record({ status: 'processing', claimId: 'this-run', leaseUntil: 0, restingKey: undefined }) });
    storedAttempts(CONFIG.maxAttempts);
    rekognition.on(DetectLabelsCommand).rejects(new ThrottlingException({ message: 'slow down', $metadata: {} }));

    const result = await processUpload(deps(), event());

    expect(result).toMatchObject({ outcome: 'fail', errorCode: 'ProcessingFailed', fprint: fp.fprint });
    expect(counterMoves()).toEqual([
      { total: 1, pending: 1 },
      { pending: -1, fail: 1 },
    ]);
    expect(copies().map((c) => c.Key)).toEqual(['failed/demo/b1/photo.png']);
  });

  it('below the limit, a persistent AccessDenied still fails the message for SQS to deliver again', async () => {
    given();
    storedAttempts(CONFIG.maxAttempts - 1);
    s3.on(GetObjectCommand).rejects(accessDenied());

    await expect(processUpload(deps(), event())).rejects.toThrow(/Access Denied/);
    expect(failRecords()).toEqual([]);
  });

  it('at the last attempt, a persistent AccessDenied ends as a ProcessingFailed record', async () => {
    given();
    storedAttempts(CONFIG.maxAttempts);
    s3.on(GetObjectCommand).rejects(accessDenied());

    const result = await processUpload(deps(), event());

    expect(result).toMatchObject({ outcome: 'fail', errorCode: 'ProcessingFailed' });
    expect(failRecords()).toEqual([expect.objectContaining({ err_code: 'ProcessingFailed' })]);
    expect(counterMoves()).toEqual([{ total: 1, fail: 1 }]);
  });
});

describe('thumbnails', () => {
  const thumbnailOf = (fprint: string) => `thumbnails/demo/b1/${fprint}.webp`;

  it('stores a WebP of at most 256 px a side beside the processed object, after the claim and before classifying', async () => {
    given();

    await processUpload(deps(), event());

    expect(thumbnailPuts()).toEqual([
      expect.objectContaining({ Bucket: 'bucket', Key: thumbnailOf(fp.fprint), ContentType: 'image/webp' }),
    ]);
    const meta = await sharp(thumbnailPuts()[0]!.Body as Buffer).metadata();
    expect(meta).toMatchObject({ format: 'webp', width: 120, height: 90 });
    expect(steps).toEqual(['Read', 'Fingerprint', 'Claim', 'Thumbnail', 'Detect', 'Record', 'Move']);
  });

  it('stores none for a duplicate: it shows its original thumbnail', async () => {
    given({ existing: record({ key: 'uploads/demo/b1/first.png', fileName: 'first.png' }) });
    ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());

    expect((await processUpload(deps(), event())).outcome).toBe('duplicate');
    expect(thumbnailPuts()).toEqual([]);
  });

  it.each([
    ['below 80 px a side', { body: 'small' }, 'ImageTooSmall'],
    ['sent to a closed batch', { summary: 'closed' }, 'BatchClosed'],
  ] as const)('stores one under the fail record of an image rejected after its decode (%s)', async (_what, how, code) => {
    const small = await sharp({ create: { width: 60, height: 40, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    given('body' in how ? { body: small } : { summary: batch({ closed: true, closedAt: NOW - 10 }) });

    const result = await processUpload(deps(), event());

    expect(result).toMatchObject({ outcome: 'fail', errorCode: code });
    const fprint = (result as { fprint: string }).fprint;
    expect(fprint).toMatch(/^fail-/);
    expect(thumbnailPuts().map((p) => p.Key)).toEqual([thumbnailOf(fprint)]);
    expect(failRecords()[0]).toMatchObject({ img_fprint: fprint, err_code: code });
  });

  it('stores one for an image Rekognition refuses after the claim, once', async () => {
    given();
    rekognition.on(DetectLabelsCommand).rejects(new InvalidImageFormatException({ message: 'bad', $metadata: {} }));

    await processUpload(deps(), event());

    expect(thumbnailPuts().map((p) => p.Key)).toEqual([thumbnailOf(fp.fprint)]);
  });

  it('stores none for a file that could not be decoded', async () => {
    given({ body: Buffer.from('not a picture') });

    expect((await processUpload(deps(), event())).outcome).toBe('fail');
    expect(thumbnailPuts()).toEqual([]);
  });

  it('when S3 refuses the thumbnail PutObject, the image still ends success: recorded, moved, the fault logged and counted', async () => {
    given();
    s3.on(PutObjectCommand, { Key: thumbnailOf(fp.fprint) }).rejects(
      new S3ServiceException({
        name: 'InternalError',
        $fault: 'server',
        message: 'We encountered an internal error',
        $metadata: { httpStatusCode: 500 },
      }),
    );
    const logged: unknown[] = [];
    const withLog = deps();
    jest.spyOn(withLog.logger, 'error').mockImplementation((...args: unknown[]) => void logged.push(args));

    const result = await processUpload(withLog, event());

    expect(result).toEqual({ outcome: 'success', batchId: 'b1', fprint: fp.fprint });
    expect(metrics).toEqual(['ThumbnailFailures', 'DetectLabelsCalls', 'Images:success']);
    expect(logged).toEqual([
      [
        'thumbnail not stored; the image goes on without it',
        expect.objectContaining({ thumbnail: thumbnailOf(fp.fprint), reason: expect.stringContaining('internal error') }),
      ],
    ]);
    expect(counterMoves()).toEqual([
      { total: 1, pending: 1 },
      { pending: -1, success: 1 },
    ]);
    expect(copies()).toEqual([expect.objectContaining({ Key: `processed/demo/b1/${fp.fprint}.png` })]);
  });
});

describe('metrics (Powertools, CloudWatch EMF on stdout)', () => {
  const emfDocuments = emfWrittenBy;
  const metricNames = (doc: Record<string, unknown>) =>
    (doc._aws as { CloudWatchMetrics: { Metrics: { Name: string }[] }[] }).CloudWatchMetrics[0]!.Metrics.map((m) => m.Name).sort();

  it('writes images by outcome, DetectLabels calls, calls saved and per-step latencies as EMF lines', async () => {
    const real = new PowertoolsIngestMetrics(new Metrics({ namespace: 'IceCatWrangler', serviceName: 'test' }));
    const withMetrics = (): IngestDeps => ({ ...deps(), metrics: real });

    const docs = await emfDocuments(async () => {
      given();
      await processUpload(withMetrics(), event());
      given({ existing: record({ key: 'uploads/demo/b1/first.png', fileName: 'first.png' }) });
      ddb.on(UpdateCommand, { ConditionExpression: 'attribute_not_exists(#fprint)' }).rejects(conditionFailed());
      await processUpload(withMetrics(), event());
      await processUpload(withMetrics(), event({ encodedKey: 'uploads/stray.png' }));
      real.publish();
    });

    const images = docs.filter((d) => 'Images' in d).map((d) => [d.Outcome, d.ErrorCode ?? null, d.Images]);
    // Each DetectLabels request in a document of its own, by outcome (alarms and the dashboard read it so).
    expect(docs.filter((d) => 'DetectLabelsRequests' in d).map((d) => [d.Outcome, d.DetectLabelsRequests, d.service])).toEqual([
      ['ok', 1, 'test'],
    ]);
    expect(images).toEqual([
      ['success', null, 1],
      ['duplicate', null, 1],
      ['refused', 'InvalidKey', 1],
    ]);
    const stored = docs.find((d) => 'DetectLabelsCalls' in d)!;
    expect(stored).toMatchObject({ DetectLabelsCalls: 1, CallsSavedByDuplicates: 1, service: 'test' });
    expect(metricNames(stored)).toEqual(
      [
        'CallsSavedByDuplicates',
        'ClaimLatency',
        'DetectLabelsCalls',
        'DetectLabelsLatency',
        'DetectLatency',
        'FingerprintLatency',
        'MoveLatency',
        'ReadLatency',
        'RecordLatency',
        'ThumbnailLatency',
      ].sort(),
    );
    expect((stored._aws as { CloudWatchMetrics: { Namespace: string }[] }).CloudWatchMetrics[0]!.Namespace).toBe('IceCatWrangler');
  });

  /**
   * One upload processed with metrics given a listener (echo as given), then more on metrics given none: the document
   * kind of each document the listener heard, and every document written to stdout.
   */
  async function listenedUpload(echo: boolean, after: (plain: PowertoolsIngestMetrics) => void) {
    const heard: Record<string, unknown>[] = [];
    const listened = PowertoolsIngestMetrics.listenedBy({ listener: (doc) => heard.push(doc), echo });
    const plain = new PowertoolsIngestMetrics(new ListenedMetrics({ namespace: 'IceCatWrangler', serviceName: 'test' }));
    const docs = await emfDocuments(async () => {
      given();
      await processUpload({ ...deps(), metrics: listened }, event());
      listened.publish();
      // Published again: nothing is left stored to write or hand on.
      listened.publish();
      after(plain);
      plain.publish();
    });
    const kinds = heard.map((d) =>
      'Images' in d
        ? 'Images'
        : 'DetectLabelsCalls' in d
          ? 'DetectLabelsCalls'
          : 'DetectLabelsRequests' in d
            ? 'DetectLabelsRequests'
            : '?',
    );
    return { heard, kinds, docs };
  }

  it('hands its listener exactly the EMF documents it writes, single-metric ones too, and metrics without one none', async () => {
    const { heard, kinds, docs } = await listenedUpload(true, (plain) => {
      plain.image('success');
      plain.detectLabelsCall();
    });
    expect(docs).toHaveLength(5);
    const strip = (doc: Record<string, unknown>) => ({ ...doc, _aws: { ...(doc._aws as object), Timestamp: 0 } });
    expect(heard.map(strip)).toEqual(docs.slice(0, 3).map(strip));
    expect(kinds).toEqual(['DetectLabelsRequests', 'Images', 'DetectLabelsCalls']);
  });

  it('hands a quiet listener (echo: false) the documents instead of stdout, and leaves nothing stored behind', async () => {
    const { heard, kinds, docs } = await listenedUpload(false, (plain) => plain.detectLabelsCall());
    expect(kinds).toEqual(['DetectLabelsRequests', 'Images', 'DetectLabelsCalls']);
    expect(heard[2]).toMatchObject({ DetectLabelsCalls: 1 });
    // Only the unlistened call is written: the quiet publish cleared what it had stored.
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ DetectLabelsCalls: 1 });
    expect(docs[0]).not.toHaveProperty('ReadLatency');
  });

  it('counts a call saved by reuse, and no DetectLabels call', async () => {
    given();
    ddb.on(QueryCommand, { IndexName: 'client-fprint' }).resolves({
      Items: [{ ...toImageItem(record({ batchId: 'b0', catConfidence: 0, cats: [], labels: [] })), rek_ts: NOW - 1 }],
    });

    await processUpload(deps(), event());

    expect(metrics).toEqual(['CallsSaved:reuse', 'Images:success']);
    expect(steps).toEqual(['Read', 'Fingerprint', 'Claim', 'Thumbnail', 'Detect', 'Record', 'Move']);
  });
});

/** A transaction cancelled by a TransactionConflict on its last write (the batch summary every image moves). */
const conflict = (input: { TransactItems?: unknown[] }) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
    $metadata: {},
    CancellationReasons: (input.TransactItems ?? []).map((_, i, all) => ({ Code: i === all.length - 1 ? 'TransactionConflict' : 'None' })),
  });
/** The record's transaction (not the claim's): it writes the result's status key. */
const isRecordWrite = (input: { TransactItems?: { Update?: UpdateCommandInput }[] }) =>
  input.TransactItems?.some((t) => t.Update?.ExpressionAttributeValues?.[':statusKey'] !== undefined) === true;

describe('a TransactionConflict (a fault DynamoDB Local does not produce: 400 concurrent transactions on one item gave none)', () => {
  it('a TransactionConflict on the record write is retried in process and DetectLabels is called once', async () => {
    given();
    let conflicts = 0;
    ddb.on(TransactWriteCommand).callsFake((input) => {
      if (isRecordWrite(input) && conflicts < 2) {
        conflicts += 1;
        throw conflict(input);
      }
      return {};
    });

    const result = await processUpload(deps(true), event());

    expect(result.outcome).toBe('success');
    expect(detectCalls()).toBe(1);
    expect(ddb.commandCalls(TransactWriteCommand).filter((c) => isRecordWrite(c.args[0].input))).toHaveLength(3);
  });

  it('a record write that keeps meeting TransactionConflicts keeps the paid answer on the claim: the run taking the claim over calls no DetectLabels', async () => {
    given();
    ddb.on(TransactWriteCommand).callsFake((input) => {
      if (isRecordWrite(input)) throw conflict(input);
      return {};
    });
    await expect(processUpload(deps(true), event())).rejects.toBeInstanceOf(TransactionCanceledException);
    const kept = updates().find((u) => u.ExpressionAttributeValues?.[':paid'] !== undefined);
    expect(kept?.ConditionExpression).toBe('#claimId = :claim');
    const claimId = String(kept?.ExpressionAttributeValues?.[':claim']);

    // The next delivery: the claim is still `processing`, holding the answer the first run paid for.
    rekognition.resetHistory();
    ddb.reset();
    given({ existing: record({ status: 'processing', claimId, leaseUntil: NOW - 1, uploadedAt: NOW - 1000 }) });
    ddb.on(GetCommand, { Key: imageKey('demo', 'b1', fp.fprint) }).resolves({
      Item: {
        ...toImageItem(record({ status: 'processing', claimId, leaseUntil: NOW - 1, uploadedAt: NOW - 1000 })),
        rek_paid: kept?.ExpressionAttributeValues?.[':paid'],
      },
    });
    ddb.on(TransactWriteCommand).callsFake((input) => {
      if (!isRecordWrite(input))
        throw new TransactionCanceledException({
          message: 'cancelled',
          $metadata: {},
          CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }],
        });
      return {};
    });

    const result = await processUpload(deps(true), event());

    expect(result.outcome).toBe('success');
    expect(detectCalls()).toBe(0);
    const recorded = ddb
      .commandCalls(TransactWriteCommand)
      .map((c) => c.args[0].input)
      .find(isRecordWrite);
    expect(recorded?.TransactItems?.[0]?.Update?.ExpressionAttributeValues).toMatchObject({ ':labels': [{ name: 'Cup', confidence: 91 }] });
  });
});

describe("an upload against its client's daily images quota", () => {
  /** The quota as a port: an in-memory day counter (the store's requests have their own tests). */
  function memoryQuota(limit: number) {
    const calls = { counted: 0, refused: [] as string[] };
    const quota: UploadQuota = {
      limitsOf: async () => ({ ratePerSecond: 50, maxImagesPerDay: limit, maxBatchesPerDay: 1000 }),
      countUpload: async (_client, _day, max) => {
        if (calls.counted >= max) return false;
        calls.counted += 1;
        return true;
      },
      refuseUpload: async (upload, day) => void calls.refused.push(`${upload.key}@${day}`),
    };
    return { quota, calls };
  }
  const withAttempts = (attempts: number, mark?: string, counted?: string) =>
    ddb.on(UpdateCommand, { UpdateExpression: ATTEMPT_EXPRESSION }).resolves({
      Attributes: { attempts, ...(mark ? { quota_over: mark } : {}), ...(counted ? { quota_day: counted } : {}) },
    });
  const ATTEMPT_EXPRESSION = startAttemptRequest('T', { clientId: 'demo', batchId: 'b1', key: KEY, expiresAt: 1 }).UpdateExpression;

  it('counts a first attempt within the quota and classifies it', async () => {
    given();
    withAttempts(1);
    const { quota, calls } = memoryQuota(5);

    const result = await processUpload({ ...deps(), quota }, event({ eventTime: Date.parse('2026-11-25T10:00:00Z') }));

    expect([result.outcome, calls.counted, detectCalls()]).toEqual(['success', 1, 1]);
  });

  it('ends an upload beyond the quota as a QuotaExceeded fail record, its object deleted, marked for its later attempts, never classified', async () => {
    given();
    withAttempts(1);
    const { quota, calls } = memoryQuota(0);

    const result = await processUpload({ ...deps(), quota }, event({ eventTime: Date.parse('2026-11-25T23:59:59Z') }));

    expect(result).toMatchObject({ outcome: 'fail', errorCode: 'QuotaExceeded' });
    expect(detectCalls()).toBe(0);
    expect(calls.refused).toEqual([`${KEY}@2026-11-25`]);
    expect(failRecords().map((r) => [r.err_code, String(r.err_msg)])).toEqual([
      ['QuotaExceeded', expect.stringContaining('quota of 0 images per UTC day is used up for 2026-11-25')],
    ]);
    // The record stays, the bytes go: nothing under failed/.
    expect(copies()).toEqual([]);
    expect(s3.commandCalls(DeleteObjectCommand).map((c) => c.args[0].input.Key)).toEqual([KEY]);
    expect(failRecords()[0]?.processed_key).toBeUndefined();
    expect(metrics).toContain('Images:fail:QuotaExceeded');
  });

  it('does not count an upload its item marks as counted again (a redelivery or a retry)', async () => {
    given();
    withAttempts(2, undefined, '2026-11-25');
    const { quota, calls } = memoryQuota(0);

    const result = await processUpload({ ...deps(), quota }, event());

    expect([result.outcome, calls.counted, calls.refused]).toEqual(['success', 0, []]);
  });

  it('ends every later attempt at an upload marked beyond the quota the same way, counting nothing', async () => {
    given();
    withAttempts(3, '2026-11-24');
    const { quota, calls } = memoryQuota(100);

    const result = await processUpload({ ...deps(), quota }, event());

    expect(result).toMatchObject({ outcome: 'fail', errorCode: 'QuotaExceeded' });
    expect([calls.counted, calls.refused, detectCalls()]).toEqual([0, [], 0]);
    expect(String(failRecords()[0]?.err_msg)).toContain('for 2026-11-24');
  });
});
