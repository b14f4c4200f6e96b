// The API's read operations against a hand-written fake of the one interface they ask of the store (ApiReads,
// lib/api/service.ts): no DynamoDB client, mocked or real, anywhere in the test. The fake keeps batches and records
// in memory, per client, and pages them with a plain offset cursor; what is checked is the service's own part: which
// client's batch it reads, what answers 404, the thresholds it hands down, and how it presents what it read.
import { BatchNotFoundError, ImageNotFoundError } from '../../lib/api/errors';
import { type ApiReads, ApiService } from '../../lib/api/service';
import type { Batch } from '../../lib/domain/batch';
import type { LabelCount, ModelCount } from '../../lib/domain/detection';
import type { Image } from '../../lib/domain/image';
import type { AuditedEntry, StrataSizes } from '../../lib/store/audit/queue';
import { newBatch } from '../../lib/store/batch/summary';
import type { ReviewedVerdict } from '../../lib/store/review/queue';
import type { Page, PageRequest } from '../../lib/store/table/query';

const NOW = 1_700_000_000_000;
const MODEL = { name: 'rekognition', version: '3.0' };

/** Pages a list with the index of its next item as the cursor. */
function pageOf<T>(items: readonly T[], page: PageRequest): Page<T> {
  const start = page.cursor === undefined ? 0 : Number(page.cursor);
  const end = start + page.limit;
  return { items: items.slice(start, end), ...(end < items.length ? { cursor: String(end) } : {}) };
}

/** The store as the API sees it, in memory: summaries by `client/batch`, records by `client/batch` in key order. */
class FakeReads implements ApiReads {
  readonly batches = new Map<string, Batch>();
  readonly records = new Map<string, Image[]>();
  readonly reads: string[] = [];
  /** The threshold each review-queue read was asked at. */
  readonly reviewThresholds: number[] = [];
  labelThreshold: number | undefined;
  strata: StrataSizes | undefined;
  entries: AuditedEntry[] = [];

  addBatch(b: Partial<Batch> & { clientId: string; batchId: string }): Batch {
    const batch = { ...newBatch({ clientId: b.clientId, batchId: b.batchId, now: NOW, debug: false, retentionDays: 30 }), ...b };
    this.batches.set(`${b.clientId}/${b.batchId}`, batch);
    this.records.set(`${b.clientId}/${b.batchId}`, []);
    return batch;
  }
  addImage(i: Partial<Image> & { clientId: string; batchId: string; fprint: string }): Image {
    const image: Image = { status: 'success', expiresAt: NOW / 1000 + 86_400, ...i };
    const list = this.records.get(`${i.clientId}/${i.batchId}`) ?? [];
    list.push(image);
    list.sort((a, b) => a.fprint.localeCompare(b.fprint));
    this.records.set(`${i.clientId}/${i.batchId}`, list);
    return image;
  }
  private of(clientId: string, batchId: string): Image[] {
    return this.records.get(`${clientId}/${batchId}`) ?? [];
  }

  async batch(clientId: string, batchId: string) {
    this.reads.push(`batch ${clientId}/${batchId}`);
    const batch = this.batches.get(`${clientId}/${batchId}`);
    return batch?.deleting ? undefined : batch;
  }
  async batchImages(clientId: string, batchId: string, filter: { status?: string }, page: PageRequest) {
    this.reads.push(`images ${clientId}/${batchId}`);
    if (!(await this.batch(clientId, batchId))) return undefined;
    return pageOf(
      this.of(clientId, batchId).filter((i) => filter.status === undefined || i.status === filter.status),
      page,
    );
  }
  async batchLogs(clientId: string, batchId: string, _range: unknown, page: PageRequest) {
    return pageOf(
      this.of(clientId, batchId).filter((i) => i.logs),
      page,
    );
  }
  async *imagePages(clientId: string, batchId: string) {
    yield this.of(clientId, batchId);
  }
  async labelCounts(_clientId: string, _batchId: string, threshold: number): Promise<{ labels: LabelCount[]; models: ModelCount[] }> {
    this.labelThreshold = threshold;
    return { labels: [{ name: 'Cat', images: 2 }], models: [{ ...MODEL, images: 2 }] };
  }
  async image(clientId: string, batchId: string, fprint: string) {
    return this.of(clientId, batchId).find((i) => i.fprint === fprint);
  }
  async images(clientId: string, batchId: string, fprints: string[]) {
    return this.of(clientId, batchId).filter((i) => fprints.includes(i.fprint));
  }
  async reviewQueue(clientId: string, batchId: string, threshold: number, page: PageRequest) {
    this.reviewThresholds.push(threshold);
    return pageOf(
      this.of(clientId, batchId).filter((i) => !i.review),
      page,
    );
  }
  async reviewedVerdicts(clientId: string, batchId: string): Promise<ReviewedVerdict[]> {
    return this.of(clientId, batchId).flatMap((i) =>
      i.review ? [{ fprint: i.fprint, catConfidence: i.catConfidence ?? 0, review: i.review }] : [],
    );
  }
  async auditQueue(clientId: string, batchId: string, page: PageRequest) {
    return pageOf(
      this.of(clientId, batchId).filter((i) => i.audit),
      page,
    );
  }
  async strataSizes() {
    return this.strata;
  }
  async auditEntries() {
    return this.entries;
  }
  async auditCandidates(clientId: string, batchId: string) {
    return this.of(clientId, batchId).filter((i) => i.status === 'success');
  }
  async answersAfterRedetect() {
    return undefined;
  }
  async changedImages(clientId: string, batchId: string, page: PageRequest) {
    return pageOf(
      this.of(clientId, batchId).filter((i) => i.previous),
      page,
    );
  }
  async clientBatches(clientId: string, _filter: unknown, page: PageRequest) {
    return pageOf(
      [...this.batches.values()].filter((b) => b.clientId === clientId),
      page,
    );
  }
  async clientImages(clientId: string, _filter: unknown, page: PageRequest) {
    return pageOf(
      [...this.records.values()].flat().filter((i) => i.clientId === clientId),
      page,
    );
  }
  async knownFingerprints(clientId: string, fprints: readonly string[]) {
    const mine = new Set(
      [...this.records.values()]
        .flat()
        .filter((i) => i.clientId === clientId)
        .map((i) => i.fprint),
    );
    return fprints.filter((f) => mine.has(f));
  }
}

const cat = (
  clientId: string,
  batchId: string,
  fprint: string,
  extra: Partial<Image> = {},
): Partial<Image> & Pick<Image, 'clientId' | 'batchId' | 'fprint'> => ({
  clientId,
  batchId,
  fprint,
  isCat: true,
  catConfidence: 97,
  model: MODEL,
  labels: [{ name: 'Cat', confidence: 97 }],
  ...extra,
});

function serviceOn(store: FakeReads) {
  return new ApiService({ store, catMinConfidence: 80, pricePerImageUsd: 0.001, now: () => NOW });
}

describe('the API against a fake store (ApiReads)', () => {
  test('a batch reads under its own client: another client of the same batch name answers 404, as a missing one does', async () => {
    const store = new FakeReads();
    store.addBatch({ clientId: 'acme', batchId: 'b1' });
    store.addImage(cat('acme', 'b1', 'f1'));
    const api = serviceOn(store);

    await expect(api.getBatch('acme', 'b1')).resolves.toMatchObject({ batchId: 'b1', status: 'open' });
    await expect(api.getBatch('other', 'b1')).rejects.toBeInstanceOf(BatchNotFoundError);
    await expect(api.getBatchImage('other', 'b1', 'f1')).rejects.toBeInstanceOf(BatchNotFoundError);
    await expect(api.listBatchImages('other', 'b1', { limit: 10 })).rejects.toBeInstanceOf(BatchNotFoundError);
    expect(store.reads).toContain('batch other/b1');
    expect(store.reads.filter((r) => r.includes('acme') && r.startsWith('batch'))).toEqual(['batch acme/b1']);
  });

  test('a batch being erased answers 404 at once on every read the service makes of it', async () => {
    const store = new FakeReads();
    store.addBatch({ clientId: 'acme', batchId: 'gone', deleting: true });
    store.addImage(cat('acme', 'gone', 'f1'));
    const api = serviceOn(store);
    for (const read of [
      () => api.getBatch('acme', 'gone'),
      () => api.getBatchImage('acme', 'gone', 'f1'),
      () => api.batchGetImages('acme', 'gone', ['f1']),
      () => api.listBatchLogs('acme', 'gone', { limit: 5 }),
      () => api.similarGroups('acme', 'gone', {}),
      () => api.agreement('acme', 'gone'),
      () => api.accuracy('acme', 'gone'),
      () => api.changes('acme', 'gone', { limit: 5 }),
      () => api.listBatchImages('acme', 'gone', { limit: 5, review: 'pending' }),
    ]) {
      await expect(read()).rejects.toBeInstanceOf(BatchNotFoundError);
    }
  });

  test('a done batch is presented with its label counts, read at its own threshold, and priced', async () => {
    const store = new FakeReads();
    store.addBatch({ clientId: 'acme', batchId: 'b1', closed: true, doneAt: NOW, catMinConfidence: 65 });
    const summary = await serviceOn(store).getBatch('acme', 'b1');
    expect(summary.status).toBe('done');
    expect(store.labelThreshold).toBe(65);
    expect(summary).toMatchObject({ labels: [{ name: 'Cat', images: 2 }], models: [{ ...MODEL, images: 2 }] });
  });

  test('listings page through the store’s cursor and present each record; a missing image is named', async () => {
    const store = new FakeReads();
    store.addBatch({ clientId: 'acme', batchId: 'b1' });
    for (const f of ['f1', 'f2', 'f3']) store.addImage(cat('acme', 'b1', f));
    store.addImage({ clientId: 'acme', batchId: 'b1', fprint: 'f4', status: 'fail', errorCode: 'CorruptImage' });
    const api = serviceOn(store);

    const first = await api.listBatchImages('acme', 'b1', { limit: 2 });
    expect(first.items.map((i) => i.fprint)).toEqual(['f1', 'f2']);
    const second = await api.listBatchImages('acme', 'b1', { limit: 2, cursor: first.cursor });
    expect(second.items.map((i) => i.fprint)).toEqual(['f3', 'f4']);
    expect(second.cursor).toBeUndefined();
    const failed = await api.listBatchImages('acme', 'b1', { limit: 10, status: 'fail' });
    expect(failed.items).toEqual([expect.objectContaining({ fprint: 'f4', status: 'fail' })]);

    await expect(api.getBatchImage('acme', 'b1', 'nope')).rejects.toBeInstanceOf(ImageNotFoundError);
    const got = await api.batchGetImages('acme', 'b1', ['f1', 'nope', 'f3', 'nope']);
    expect(got.items.map((i) => i.fprint)).toEqual(['f1', 'f3']);
    expect(got.notFound).toEqual(['nope']);
  });

  test('the review queue is read at the batch’s threshold, or the configured one for a batch that kept none', async () => {
    const store = new FakeReads();
    store.addBatch({ clientId: 'acme', batchId: 'own', catMinConfidence: 55 });
    store.addBatch({ clientId: 'acme', batchId: 'old' });
    const api = serviceOn(store);
    await api.listBatchImages('acme', 'own', { limit: 5, review: 'pending' });
    await api.listBatchImages('acme', 'old', { limit: 5, review: 'pending' });
    expect(store.reviewThresholds).toEqual([55, 80]);
  });

  test('agreement, accuracy and changes are computed from what the store read', async () => {
    const store = new FakeReads();
    store.addBatch({ clientId: 'acme', batchId: 'b1', catMinConfidence: 70 });
    store.addImage(cat('acme', 'b1', 'f1', { review: { isCat: true, machineIsCat: true, reviewedAt: NOW } }));
    store.addImage(cat('acme', 'b1', 'f2', { review: { isCat: false, machineIsCat: true, reviewedAt: NOW } }));
    store.addImage(
      cat('acme', 'b1', 'f3', { previous: { model: { name: 'rekognition', version: '2.0' }, isCat: false, catConfidence: 40 } }),
    );
    store.addImage({ clientId: 'acme', batchId: 'b1', fprint: 'f4', status: 'success', isCat: false, catConfidence: 3 });
    const api = serviceOn(store);

    await expect(api.agreement('acme', 'b1')).resolves.toMatchObject({ reviewed: 2, agree: 1, catMinConfidence: 70 });
    // Never audited: no sample, the strata as the batch's classified images are now.
    const accuracy = await api.accuracy('acme', 'b1');
    expect(accuracy.sampled).toBe(0);
    expect(accuracy.strata.map((s) => [s.stratum, s.images])).toEqual([
      ['cat', 3],
      ['notCat', 1],
    ]);
    const changes = await api.changes('acme', 'b1', { limit: 10 });
    expect(changes.items).toEqual([expect.objectContaining({ fprint: 'f3', change: 'not cat → cat' })]);
  });

  test('near-duplicate groups come from the pages the store hands, with each image’s name', async () => {
    const store = new FakeReads();
    store.addBatch({ clientId: 'acme', batchId: 'b1' });
    store.addImage(cat('acme', 'b1', 'f1', { phash: 'ffff0000ffff0000', fileName: 'a.jpg' }));
    store.addImage(cat('acme', 'b1', 'f2', { phash: 'ffff0000ffff0001', fileName: 'b.jpg' }));
    store.addImage(cat('acme', 'b1', 'f3', { phash: '0123456789abcdef', fileName: 'c.jpg' }));
    const { groups } = await serviceOn(store).similarGroups('acme', 'b1', {});
    expect(groups).toEqual([expect.objectContaining({ fprints: ['f1', 'f2'], fileNames: ['a.jpg', 'b.jpg'] })]);
  });

  test('a client’s own listings and known fingerprints never show another client’s', async () => {
    const store = new FakeReads();
    store.addBatch({ clientId: 'acme', batchId: 'b1' });
    store.addBatch({ clientId: 'other', batchId: 'b2' });
    store.addImage(cat('acme', 'b1', 'f1'));
    store.addImage(cat('other', 'b2', 'f2'));
    const api = serviceOn(store);
    expect((await api.listBatches('acme', { limit: 10 })).items.map((b) => b.batchId)).toEqual(['b1']);
    expect((await api.listClientImages('acme', { limit: 10 })).items.map((i) => i.fprint)).toEqual(['f1']);
    await expect(api.knownFingerprints('acme', ['f1', 'f2'])).resolves.toEqual({ known: ['f1'], pricePerImageUsd: 0.001 });
  });
});
