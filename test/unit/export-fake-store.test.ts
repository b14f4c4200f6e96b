// GET /v1/batches/{batchId}/export (exportBatch, and BatchLifecycleService.exportBatch before it) against hand-written
// fakes of the interfaces it asks of the store (ExportReads, lib/api/export-batch.ts; LifecycleStore,
// lib/api/batch-lifecycle-deps.ts): no DynamoDB client, mocked or real. The fakes keep a batch's summary and its
// images' pages in memory and note every read asked. Every export here stays under the inline bound; the spill to S3
// is the integration test's (test/integration/export.test.ts): S3 is a client with test credentials that sends nothing.
import { S3Client } from '@aws-sdk/client-s3';
import type { LifecycleStore } from '../../lib/api/batch-lifecycle-deps';
import { BatchNotFoundError } from '../../lib/api/errors';
import { type ExportReads, exportBatch } from '../../lib/api/export-batch';
import type { Batch } from '../../lib/domain/batch';
import { ZERO_COUNTS } from '../../lib/domain/counts';
import type { Image } from '../../lib/domain/image';
import { CONTENT_TYPES } from '../../lib/export/encode';
import { lifecycleServiceOn, OFFLINE_S3 } from '../helpers/lifecycle-service';

const NOW = 1_700_000_000_000;
const DAY_S = 86_400;
const CONFIG = { inlineMaxBytes: 1 << 20, urlSeconds: 300 };

/** A batch's images a page at a time, from memory; every read asked, and how many pages were handed out, noted. */
class FakeExportReads implements ExportReads {
  readonly pages = new Map<string, Image[][]>();
  readonly asked: { clientId: string; batchId: string; read: 'rows' | 'detections' }[] = [];
  served = 0;
  finished = 0;

  async *imagePages(clientId: string, batchId: string, read: 'rows' | 'detections'): AsyncGenerator<Image[]> {
    this.asked.push({ clientId, batchId, read });
    for (const page of this.pages.get(`${clientId}/${batchId}`) ?? []) {
      this.served += 1;
      yield page;
    }
    this.finished += 1;
  }
}

/** Batch summaries from memory: what the export reads of the lifecycle's store (the batch), nothing else. */
class FakeSummaryStore implements LifecycleStore {
  readonly batches = new Map<string, Batch>();

  async getBatch(clientId: string, batchId: string) {
    return this.batches.get(`${clientId}/${batchId}`);
  }
  isLive(batch: Batch | undefined) {
    return batch !== undefined && !batch.deleting;
  }
  private notAsked(): never {
    throw new Error('not asked by an export');
  }
  createBatch = async (): Promise<boolean> => this.notAsked();
  markExpired = async (): Promise<boolean> => this.notAsked();
  markDeleting = async (): Promise<Batch | undefined> => this.notAsked();
  addExpected = async (): Promise<Batch | undefined> => this.notAsked();
  close: LifecycleStore['close'] = async () => this.notAsked();
  review: LifecycleStore['review'] = async () => this.notAsked();
  reclassify: LifecycleStore['reclassify'] = async () => this.notAsked();
  auditCandidates: LifecycleStore['auditCandidates'] = async () => this.notAsked();
  setStrataSizes: LifecycleStore['setStrataSizes'] = async () => this.notAsked();
  markAudited: LifecycleStore['markAudited'] = async () => this.notAsked();
}

const batchOf = (clientId: string, batchId: string, extra: Partial<Batch> = {}): Batch => ({
  clientId,
  batchId,
  createdAt: NOW - 60_000,
  debug: false,
  retentionDays: 30,
  expiresAt: NOW / 1000 + 30 * DAY_S,
  closed: true,
  counts: { ...ZERO_COUNTS },
  ...extra,
});

const image = (fprint: string, extra: Partial<Image> = {}): Image => ({
  clientId: 'acme',
  batchId: 'b1',
  fprint,
  status: 'success',
  expiresAt: NOW / 1000 + DAY_S,
  isCat: true,
  catConfidence: 95,
  ...extra,
});

/** The service with its exports on the fakes, the configured threshold 80. */
function serviceOn(store: FakeSummaryStore, images: FakeExportReads) {
  return lifecycleServiceOn(store, NOW, { exports: { images, config: CONFIG } });
}

/** Two pages of acme's b1: a cat, a non-cat uploaded twice (one duplicate), and a file that is not an image. */
function twoPages(): FakeExportReads {
  const images = new FakeExportReads();
  images.pages.set('acme/b1', [
    [
      image('f1', { fileName: 'cat.jpg' }),
      image('f2', { fileName: 'dog.jpg', isCat: false, catConfidence: 3, duplicates: 1, duplicateFiles: ['dog-copy.jpg'] }),
    ],
    [image('f3', { fileName: 'notes.txt', status: 'fail', isCat: false, errorCode: 'UnsupportedFormat' })],
  ]);
  return images;
}

describe('the export against fakes of the store (ExportReads, LifecycleStore)', () => {
  test('CSV answers 200 inline with a row per uploaded file, duplicates included, counted in X-Export-Rows', async () => {
    const store = new FakeSummaryStore();
    store.batches.set('acme/b1', batchOf('acme', 'b1'));
    const images = twoPages();

    const out = await serviceOn(store, images).exportBatch('acme', 'b1', 'csv');

    expect(out.statusCode).toBe(200);
    expect(out.headers).toEqual({
      'Content-Type': CONTENT_TYPES.csv,
      'Content-Disposition': 'attachment; filename="b1.csv"',
      'X-Export-Rows': '4',
    });
    const [header, ...rows] = out.body.trimEnd().split('\r\n');
    expect(header?.split(',').slice(0, 3)).toEqual(['file_name', 'status', 'is_cat']);
    expect(rows.map((r) => r.split(',').slice(0, 3))).toEqual([
      ['cat.jpg', 'success', 'true'],
      ['dog.jpg', 'success', 'false'],
      ['dog-copy.jpg', 'duplicate', 'false'],
      ['notes.txt', 'fail', 'false'],
    ]);
    expect(images.asked).toEqual([{ clientId: 'acme', batchId: 'b1', read: 'rows' }]);
  });

  test('JSON Lines reads the rows too, every page consumed in order to the end', async () => {
    const store = new FakeSummaryStore();
    store.batches.set('acme/b1', batchOf('acme', 'b1'));
    const images = new FakeExportReads();
    images.pages.set('acme/b1', [
      [image('f1', { fileName: 'a.jpg' })],
      [],
      [image('f2', { fileName: 'b.jpg' })],
      [image('f3', { fileName: 'c.jpg' })],
    ]);

    const out = await serviceOn(store, images).exportBatch('acme', 'b1', 'jsonl');

    expect([out.statusCode, out.headers['Content-Type'], out.headers['X-Export-Rows']]).toEqual([200, CONTENT_TYPES.jsonl, '3']);
    const names = out.body
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { file_name: string }).file_name);
    expect(names).toEqual(['a.jpg', 'b.jpg', 'c.jpg']);
    expect([images.served, images.finished]).toEqual([4, 1]);
    expect(images.asked).toEqual([{ clientId: 'acme', batchId: 'b1', read: 'rows' }]);
  });

  test("MegaDetector reads the detections, and the file carries the batch's own threshold and completion time", async () => {
    const store = new FakeSummaryStore();
    store.batches.set('acme/b1', batchOf('acme', 'b1', { catMinConfidence: 65, doneAt: Date.UTC(2024, 5, 1, 12, 30) }));
    const images = twoPages();

    const out = await serviceOn(store, images).exportBatch('acme', 'b1', 'megadetector');

    expect(out.statusCode).toBe(200);
    expect(out.headers['Content-Type']).toBe(CONTENT_TYPES.megadetector);
    expect(out.headers['Content-Disposition']).toBe('attachment; filename="b1.json"');
    const file = JSON.parse(out.body) as {
      images: { file: string }[];
      info: { detection_completion_time: string; detector_metadata: { typical_detection_threshold: number } };
    };
    expect(file.info.detector_metadata.typical_detection_threshold).toBe(0.65);
    expect(file.info.detection_completion_time).toBe('2024-06-01 12:30:00');
    expect(file.images.map((i) => i.file)).toEqual(['cat.jpg', 'dog.jpg', 'dog-copy.jpg', 'notes.txt']);
    expect(images.asked).toEqual([{ clientId: 'acme', batchId: 'b1', read: 'detections' }]);
  });

  test("a batch that is not the client's, is being erased, has expired or is missing answers 404, no image read", async () => {
    const store = new FakeSummaryStore();
    store.batches.set('other/b1', batchOf('other', 'b1'));
    store.batches.set('acme/gone', batchOf('acme', 'gone', { deleting: true }));
    store.batches.set('acme/old', batchOf('acme', 'old', { expiresAt: NOW / 1000 - 1 }));
    const images = twoPages();
    images.pages.set('other/b1', [[image('f9', { clientId: 'other', fileName: 'theirs.jpg' })]]);
    const service = serviceOn(store, images);

    for (const batchId of ['b1', 'gone', 'old', 'nope'])
      await expect(service.exportBatch('acme', batchId, 'csv')).rejects.toBeInstanceOf(BatchNotFoundError);

    expect(images.asked).toEqual([]);
  });

  test('exportBatch on its own reads what the format needs, at the threshold it is given (0 when none)', async () => {
    const images = twoPages();
    const deps = { images, s3: new S3Client(OFFLINE_S3), bucketName: 'bucket', config: CONFIG };

    const detections = await exportBatch(deps, 'acme', 'b1', 'megadetector');
    const rows = await exportBatch(deps, 'acme', 'b1', 'jsonl', { catMinConfidence: 50 });

    expect((JSON.parse(detections.body) as { info: { detector_metadata: unknown } }).info.detector_metadata).toEqual({
      typical_detection_threshold: 0,
    });
    expect(rows.headers['X-Export-Rows']).toBe('4');
    expect(images.asked.map((a) => a.read)).toEqual(['detections', 'rows']);
  });
});
