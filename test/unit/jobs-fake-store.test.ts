// The jobs against hand-written fakes of the one interface each asks of the store: the expiry sweep (ExpiryStore,
// lib/erase/expiry.ts), the erase job (ErasureStore, lib/erase/erase-batch.ts) and one image's re-detection
// (RedetectImageStore, lib/redetect/job.ts). No DynamoDB client, mocked or real, anywhere in the test; S3 and
// Rekognition are mocked (aws-sdk-client-mock) as in ingest-fake-store.test.ts.
import { DetectLabelsCommand, RekognitionClient } from '@aws-sdk/client-rekognition';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import sharp from 'sharp';
import type { Batch } from '../../lib/domain/batch';
import type { Image } from '../../lib/domain/image';
import type { ErasureStore } from '../../lib/erase/erase-batch';
import { type ExpiryStore, sweepExpiredBatches } from '../../lib/erase/expiry';
import { runEraseJob } from '../../lib/erase/job';
import { decodeEraseMessage, encodeEraseMessage } from '../../lib/erase/message';
import { type RedetectImageStore, runRedetectJob } from '../../lib/redetect/job';
import { newBatch } from '../../lib/store/batch/summary';
import type { ExpiredBatchesPage, ExpiryStartKey } from '../../lib/store/expiry/expired';
import type { NewAnswer } from '../../lib/store/redetect/answers';

const s3 = mockClient(S3Client);
const rekognition = mockClient(RekognitionClient);
const REGION = { region: 'us-east-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' } };
const NOW = 1_700_000_000_000;
const NOW_S = NOW / 1000;

beforeEach(() => {
  s3.reset();
  rekognition.reset();
});

/** The expiring index in memory: batches by expiry, paged by position; the marks the sweep set, with their time. */
class FakeExpiry implements ExpiryStore {
  readonly marked = new Map<string, number>();
  readonly pagesRead: number[] = [];
  constructor(readonly batches: { clientId: string; batchId: string; expiresAt: number }[]) {}

  async expiredPage(nowS: number, pageSize: number, startKey?: ExpiryStartKey): Promise<ExpiredBatchesPage> {
    const due = this.batches.filter((b) => b.expiresAt <= nowS).sort((a, b) => a.expiresAt - b.expiresAt);
    const start = startKey ? Number(startKey.at) : 0;
    this.pagesRead.push(start);
    const end = start + pageSize;
    return { batches: due.slice(start, end), ...(end < due.length ? { next: { at: end } } : {}) };
  }
  async markExpired(clientId: string, batchId: string, now: number, staleBefore: number): Promise<boolean> {
    const at = this.marked.get(`${clientId}/${batchId}`);
    if (at !== undefined && at >= staleBefore) return false;
    this.marked.set(`${clientId}/${batchId}`, now);
    return true;
  }
}

describe('the expiry sweep against a fake store (ExpiryStore)', () => {
  const expired = (batchId: string, agoS: number) => ({ clientId: 'acme', batchId, expiresAt: NOW_S - agoS });

  test('every expired batch is marked and its erasure queued once, page after page; one not yet expired is left', async () => {
    const store = new FakeExpiry([
      expired('a', 10),
      expired('b', 7200),
      expired('c', 5),
      { clientId: 'acme', batchId: 'live', expiresAt: NOW_S + 60 },
    ]);
    const sent: string[] = [];
    const deps = { expired: store, erasures: { send: async (body: string) => void sent.push(body) }, now: () => NOW };

    const first = await sweepExpiredBatches(deps, { requeueAfterMs: 3_600_000, pageSize: 2 });
    expect(first).toMatchObject({ expired: 3, truncated: false, overdue: 1 });
    expect(first.queued.sort()).toEqual(['acme/a', 'acme/b', 'acme/c']);
    expect(store.pagesRead).toEqual([0, 2]);
    expect(sent.map((b) => decodeEraseMessage(b).batchId).sort()).toEqual(['a', 'b', 'c']);

    // A second run within the requeue period queues nothing again: the marks hold.
    const second = await sweepExpiredBatches(deps, { requeueAfterMs: 3_600_000, pageSize: 2 });
    expect(second.queued).toEqual([]);
    expect(sent).toHaveLength(3);
  });

  test('a run whose time runs short stops before the next batch and says so', async () => {
    const store = new FakeExpiry([expired('a', 10), expired('b', 9), expired('c', 8)]);
    let left = 30_000;
    const result = await sweepExpiredBatches(
      { expired: store, erasures: { send: async () => void (left -= 15_000) }, now: () => NOW },
      { requeueAfterMs: 3_600_000, remainingMs: () => left, reserveMs: 10_000 },
    );
    expect(result).toMatchObject({ queued: ['acme/a', 'acme/b'], truncated: true });
  });
});

/** A batch's items in memory and its mark; what the erasure asked, in order. */
class FakeErasure implements ErasureStore {
  readonly calls: string[] = [];
  constructor(
    public marked: boolean,
    public items: number,
  ) {}
  async isMarked() {
    return this.marked;
  }
  async eraseItems(clientId: string, batchId: string) {
    this.calls.push(`items ${clientId}/${batchId}`);
    const gone = this.items;
    this.items = 0;
    return gone;
  }
  async deleteSummary(clientId: string, batchId: string) {
    this.calls.push(`summary ${clientId}/${batchId}`);
  }
}

describe('the erase job against a fake store (ErasureStore)', () => {
  test('a batch no longer marked is left alone: a stale message touches nothing', async () => {
    const store = new FakeErasure(false, 5);
    const deps = { store, s3: new S3Client(REGION), bucketName: 'bucket' };
    await expect(runEraseJob(deps, encodeEraseMessage('acme', 'b1'))).resolves.toBeUndefined();
    expect(store.calls).toEqual([]);
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(0);
  });

  test('a marked batch loses its objects and items pass by pass, then its summary last', async () => {
    const store = new FakeErasure(true, 4);
    s3.on(ListObjectsV2Command)
      .resolvesOnce({ Contents: [{ Key: 'processed/acme/b1/f1.jpg' }] })
      .resolves({ Contents: [] });
    s3.on(DeleteObjectsCommand).resolves({});
    const report = await runEraseJob({ store, s3: new S3Client(REGION), bucketName: 'bucket' }, encodeEraseMessage('acme', 'b1'));
    expect(report).toEqual({ objects: 1, items: 4, passes: 2 });
    expect(store.calls).toEqual(['items acme/b1', 'items acme/b1', 'summary acme/b1']);
    expect(s3.commandCalls(DeleteObjectsCommand)[0]?.args[0].input.Delete?.Objects).toEqual([{ Key: 'processed/acme/b1/f1.jpg' }]);
  });
});

/** A batch under re-detection and its images in memory; the claims taken and the answers written. */
class FakeRedetections implements RedetectImageStore {
  readonly images = new Map<string, Image>();
  readonly answers: { fprint: string; answer: NewAnswer | undefined }[] = [];
  readonly settled: string[] = [];
  private claimed = new Set<string>();
  constructor(public batch: Batch) {}

  async getBatch() {
    return this.batch;
  }
  async getImage(_clientId: string, _batchId: string, fprint: string) {
    return this.images.get(fprint);
  }
  readonly runs = {
    claim: async (image: { fprint: string }, run: string) => {
      if (this.claimed.has(`${image.fprint}/${run}`)) return false;
      this.claimed.add(`${image.fprint}/${run}`);
      return true;
    },
  };
  async answer(image: Image, _run: string, answer: NewAnswer | undefined) {
    this.answers.push({ fprint: image.fprint, answer });
    this.images.set(image.fprint, { ...image, redetectRun: undefined });
    return 'answered' as const;
  }
  async settle(_clientId: string, _batchId: string, run: string) {
    this.settled.push(run);
    return this.batch;
  }
}

describe('one image re-detected against a fake store (RedetectImageStore)', () => {
  const config = {
    bucketName: 'bucket',
    maxUploadBytes: 1_000_000,
    minConfidence: 50,
    maxLabels: 25,
    catMinConfidence: 80,
    maxInputPixels: 100_000_000,
    claimLeaseSeconds: 120,
  };
  const running = (run: string): Batch => ({
    ...newBatch({ clientId: 'acme', batchId: 'b1', now: NOW, debug: false, retentionDays: 30 }),
    redetecting: { run } as Batch['redetecting'],
  });
  const message = { type: 'redetect' as const, clientId: 'acme', batchId: 'b1', fprint: 'f1', run: 'r2' };
  const record = (extra: Partial<Image> = {}): Image => ({
    clientId: 'acme',
    batchId: 'b1',
    fprint: 'f1',
    status: 'success',
    expiresAt: NOW_S + 86_400,
    restingKey: 'processed/acme/b1/f1.png',
    format: 'png',
    width: 64,
    height: 64,
    redetectRun: 'r2',
    ...extra,
  });
  const deps = (store: RedetectImageStore) => ({
    redetections: store,
    s3: new S3Client(REGION),
    rekognition: new RekognitionClient(REGION),
    config,
  });

  test('the image is claimed, read again, paid for once and answered; a copy of the message pays nothing', async () => {
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c08040' } })
      .png()
      .toBuffer();
    s3.on(GetObjectCommand).resolves({ Body: [png] as never, ContentLength: png.length, ETag: '"e"' });
    rekognition.on(DetectLabelsCommand).resolves({ Labels: [{ Name: 'Cat', Confidence: 96 }], LabelModelVersion: '3.1' });
    const store = new FakeRedetections(running('r2'));
    store.images.set('f1', record());

    await expect(runRedetectJob(deps(store), message)).resolves.toBe('answered');
    expect(store.answers).toEqual([{ fprint: 'f1', answer: expect.objectContaining({ isCat: true, catConfidence: 96 }) }]);
    expect(rekognition.commandCalls(DetectLabelsCommand)).toHaveLength(1);

    // Delivered again: the answer is written, so the run is only settled.
    await expect(runRedetectJob(deps(store), message)).resolves.toBe('answered-before');
    expect(store.settled).toEqual(['r2']);
    expect(rekognition.commandCalls(DetectLabelsCommand)).toHaveLength(1);
  });

  test('a message of a run that is over, or of a batch being erased, is stale and reads no image', async () => {
    const over = new FakeRedetections(running('r3'));
    over.images.set('f1', record());
    await expect(runRedetectJob(deps(over), message)).resolves.toBe('stale');
    const erasing = new FakeRedetections({ ...running('r2'), deleting: true });
    await expect(runRedetectJob(deps(erasing), message)).resolves.toBe('stale');
    expect(s3.commandCalls(GetObjectCommand)).toHaveLength(0);
  });

  test('another delivery holding the claim sends this one back for later; an image whose object is gone keeps its answer', async () => {
    const held = new FakeRedetections(running('r2'));
    held.images.set('f1', record());
    await held.runs.claim({ fprint: 'f1' }, 'r2');
    await expect(runRedetectJob(deps(held), message)).resolves.toBe('in-flight');

    const gone = new FakeRedetections(running('r2'));
    gone.images.set('f1', record({ restingKey: undefined }));
    await expect(runRedetectJob(deps(gone), message)).resolves.toBe('answered');
    expect(gone.answers).toEqual([{ fprint: 'f1', answer: undefined }]);
    expect(rekognition.commandCalls(DetectLabelsCommand)).toHaveLength(0);
  });
});
