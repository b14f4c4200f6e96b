// The batch lifecycle (POST /v1/batches and the batch's other writes) against a hand-written fake of the one interface
// it asks of the store (LifecycleStore, lib/api/batch-lifecycle-deps.ts): no DynamoDB client, mocked or real. The
// fake keeps summaries and records in memory; S3 is a client with test credentials, used only to sign forms offline.

import type { LifecycleStore } from '../../lib/api/batch-lifecycle-deps';
import {
  BatchExistsError,
  BatchNotFoundError,
  ExpectedBelowTotalError,
  ImageNotClassifiedError,
  NothingToAuditError,
} from '../../lib/api/errors';
import type { Batch } from '../../lib/domain/batch';
import type { Image } from '../../lib/domain/image';
import type { Audit } from '../../lib/domain/review';
import { decodeEraseMessage } from '../../lib/erase/message';
import type { StrataSizes } from '../../lib/store/audit/queue';
import type { CloseOutcome } from '../../lib/store/batch/summary';
import type { ReclassifyOutcome, ReviewOutcome, Verdict } from '../../lib/store/review/verdicts';
import { lifecycleServiceOn } from '../helpers/lifecycle-service';

const NOW = 1_700_000_000_000;

class FakeLifecycleStore implements LifecycleStore {
  readonly batches = new Map<string, Batch>();
  readonly images = new Map<string, Image>();
  strata: StrataSizes | undefined;
  readonly audited: string[] = [];

  async getBatch(clientId: string, batchId: string) {
    return this.batches.get(`${clientId}/${batchId}`);
  }
  isLive(batch: Batch | undefined) {
    return batch !== undefined && !batch.deleting;
  }
  async createBatch(batch: Batch) {
    if (this.batches.has(`${batch.clientId}/${batch.batchId}`)) return false;
    this.batches.set(`${batch.clientId}/${batch.batchId}`, batch);
    return true;
  }
  async markExpired() {
    return false;
  }
  async markDeleting(clientId: string, batchId: string) {
    const batch = this.batches.get(`${clientId}/${batchId}`);
    if (!batch || batch.deleting) return undefined;
    batch.deleting = true;
    return batch;
  }
  async addExpected(clientId: string, batchId: string, files: number) {
    const batch = this.batches.get(`${clientId}/${batchId}`);
    if (!batch || batch.closed) return undefined;
    batch.expected = (batch.expected ?? 0) + files;
    return batch;
  }
  async close(clientId: string, batchId: string, expected?: number): Promise<CloseOutcome> {
    const batch = this.batches.get(`${clientId}/${batchId}`);
    if (!batch) return { closed: false, reason: 'missing' };
    if (expected !== undefined && expected < batch.counts.total) return { closed: false, reason: 'below-total', batch };
    if (batch.closed) return { closed: false, reason: 'closed', batch };
    batch.closed = true;
    if (expected !== undefined) batch.expected = expected;
    return { closed: true, batch };
  }
  async review(clientId: string, batchId: string, fprint: string, verdict: Verdict | undefined): Promise<ReviewOutcome> {
    const image = this.images.get(`${clientId}/${batchId}/${fprint}`);
    if (!image) return { outcome: 'missing' };
    if (image.status === 'processing') return { outcome: 'not-classified', image } as ReviewOutcome;
    const reviewed = {
      ...image,
      ...(verdict ? { review: { ...verdict, reviewedAt: NOW, machineIsCat: image.isCat === true }, isCat: verdict.isCat } : {}),
    };
    this.images.set(`${clientId}/${batchId}/${fprint}`, reviewed);
    return { outcome: 'reviewed', image: reviewed } as ReviewOutcome;
  }
  async reclassify(): Promise<ReclassifyOutcome> {
    throw new Error('not asked in this test');
  }
  async auditCandidates(clientId: string, batchId: string) {
    return [...this.images.values()].filter((i) => i.clientId === clientId && i.batchId === batchId && i.status === 'success');
  }
  async setStrataSizes(clientId: string, batchId: string, sizes: StrataSizes) {
    if (!this.batches.has(`${clientId}/${batchId}`)) return false;
    this.strata = sizes;
    return true;
  }
  async markAudited(drawn: readonly { image: Image; audit: Audit }[]) {
    for (const d of drawn) this.audited.push(d.image.fprint);
    return drawn.map((d) => ({ ...d.image, audit: d.audit }));
  }
}

function lifecycleOn(store: FakeLifecycleStore, erased: string[] = []) {
  return lifecycleServiceOn(store, NOW, { erasures: { send: async (body: string) => void erased.push(body) } });
}

const image = (fprint: string, extra: Partial<Image> = {}): Image => ({
  clientId: 'acme',
  batchId: 'b1',
  fprint,
  status: 'success',
  expiresAt: NOW / 1000 + 86_400,
  isCat: true,
  catConfidence: 95,
  ...extra,
});

describe('the batch lifecycle against a fake store (LifecycleStore)', () => {
  test('a batch is created with a form per file and the configured threshold; its name a second time answers 409', async () => {
    const store = new FakeLifecycleStore();
    const lifecycle = lifecycleOn(store);
    const created = await lifecycle.createBatch('acme', {
      batchId: 'b1',
      files: [{ name: 'a.jpg', contentType: 'image/jpeg', size: 1000 }],
    });
    expect(created.batchId).toBe('b1');
    expect(created.uploads).toHaveLength(1);
    expect(store.batches.get('acme/b1')).toMatchObject({ clientId: 'acme', catMinConfidence: 80, expected: 1, closed: false });
    await expect(lifecycle.createBatch('acme', { batchId: 'b1', files: [] })).rejects.toBeInstanceOf(BatchExistsError);
  });

  test('close declares the files the batch gets; fewer than already arrived is refused, a missing batch is 404', async () => {
    const store = new FakeLifecycleStore();
    const lifecycle = lifecycleOn(store);
    await lifecycle.createBatch('acme', { batchId: 'b1', files: [] });
    store.batches.get('acme/b1')!.counts.total = 3;
    await expect(lifecycle.closeBatch('acme', 'b1', { expected: 2 })).rejects.toBeInstanceOf(ExpectedBelowTotalError);
    await expect(lifecycle.closeBatch('acme', 'b1', { expected: 3 })).resolves.toMatchObject({ batchId: 'b1' });
    expect(store.batches.get('acme/b1')).toMatchObject({ closed: true, expected: 3 });
    await expect(lifecycle.closeBatch('acme', 'nope', {})).rejects.toBeInstanceOf(BatchNotFoundError);
  });

  test('delete marks the batch and queues its erasure once; a batch already being erased is 404', async () => {
    const store = new FakeLifecycleStore();
    const erased: string[] = [];
    const lifecycle = lifecycleOn(store, erased);
    await lifecycle.createBatch('acme', { batchId: 'b1', files: [] });
    await expect(lifecycle.deleteBatch('acme', 'b1')).resolves.toEqual({ batchId: 'b1', status: 'deleting' });
    await expect(lifecycle.deleteBatch('acme', 'b1')).rejects.toBeInstanceOf(BatchNotFoundError);
    expect(erased.map(decodeEraseMessage)).toEqual([{ type: 'erase', clientId: 'acme', batchId: 'b1' }]);
  });

  test('a review answers the image as it is now; one still being classified is refused', async () => {
    const store = new FakeLifecycleStore();
    store.images.set('acme/b1/f1', image('f1'));
    store.images.set('acme/b1/f2', image('f2', { status: 'processing', isCat: undefined }));
    const lifecycle = lifecycleOn(store);
    await expect(lifecycle.reviewImage('acme', 'b1', 'f1', { isCat: false })).resolves.toMatchObject({ fprint: 'f1', isCat: false });
    await expect(lifecycle.reviewImage('acme', 'b1', 'f2', { isCat: true })).rejects.toBeInstanceOf(ImageNotClassifiedError);
  });

  test('an audit draw remembers the strata first and marks the drawn; a batch with nothing classified has nothing to draw', async () => {
    const store = new FakeLifecycleStore();
    const lifecycle = lifecycleOn(store);
    await lifecycle.createBatch('acme', { batchId: 'b1', files: [] });
    await expect(lifecycle.audit('acme', 'b1', { size: 2 })).rejects.toBeInstanceOf(NothingToAuditError);
    for (const f of ['f1', 'f2', 'f3']) store.images.set(`acme/b1/${f}`, image(f));
    store.images.set('acme/b1/f4', image('f4', { isCat: false, catConfidence: 2 }));
    const result = await lifecycle.audit('acme', 'b1', { size: 2 });
    expect(store.strata).toEqual({ cat: 3, notCat: 1 });
    expect(result.drawn).toBe(2);
    expect(store.audited).toHaveLength(2);
    await expect(lifecycle.audit('other', 'b1', { size: 2 })).rejects.toBeInstanceOf(BatchNotFoundError);
  });
});
