// The audit sample and its accuracy on the local stack (docs/accuracy.md; design §13): draws over the API, the pending
// queue, reviews inside and outside the sample, hand-computed estimates, the CLI, the bad input and another client's
// batch. Batches are seeded records, so the file takes seconds.
import { accuracySchema, auditResultSchema } from '../../lib/api/schemas/audit';
import { type ImageAnswer, imageSchema } from '../../lib/api/schemas/images';
import { call, newClient, readAllPages, seedBatch, type TestClient } from '../helpers/api';
import { icecat } from '../helpers/cli';

const T0 = Date.UTC(2024, 6, 1);
const draw = (who: TestClient, batchId: string, body: unknown) => call('POST', `/v1/batches/${batchId}/audit`, { key: who.key, body });
const accuracy = (who: TestClient, batchId: string) => call('GET', `/v1/batches/${batchId}/accuracy`, { key: who.key });
const review = (who: TestClient, batchId: string, fprint: string, isCat: boolean) =>
  call('PUT', `/v1/batches/${batchId}/images/${fprint}/review`, { key: who.key, body: { isCat } });
const pending = async (who: TestClient, batchId: string, limit = 7) =>
  (await readAllPages<ImageAnswer>(`/v1/batches/${batchId}/images`, who.key, { audit: 'pending', limit })).items;

/** 10 machine-cats (c00–c09, confidence 90) and 30 machine-non-cats (n00–n29, 20); a duplicate, a failure, one classifying. */
async function seedAuditBatch(who: TestClient): Promise<string> {
  const id = (p: string, i: number) => `${p}${String(i).padStart(2, '0')}`;
  return seedBatch(
    who.clientId,
    [
      ...Array.from({ length: 10 }, (_, i) => ({ fprint: id('c', i), uploadTs: T0 + i, isCat: true, catConfidence: 90 })),
      ...Array.from({ length: 30 }, (_, i) => ({
        fprint: id('n', i),
        uploadTs: T0 + 100 + i,
        isCat: false,
        catConfidence: 20,
        dupCount: i === 0 ? 2 : 0,
      })),
      { fprint: 'bad', uploadTs: T0 + 500, status: 'fail' as const, error: { code: 'NotAnImage', message: 'not an image' } },
      { fprint: 'busy', uploadTs: T0 + 501, status: 'processing' as const },
    ],
    {
      closed: true,
      done_ts: Date.now(),
      cat_min_conf: 80,
      n_total: 44,
      n_pending: 1,
      n_success: 40,
      n_fail: 1,
      n_duplicate: 2,
      n_cats: 10,
    },
  );
}

let owner: TestClient;
let stranger: TestClient;
beforeAll(async () => {
  [owner, stranger] = await Promise.all([newClient('aud'), newClient('audx')]);
});

describe('an audit: draws, the pending queue, reviews and the estimates (hand-computed)', () => {
  let batch: string;
  let first: ImageAnswer[];
  beforeAll(async () => {
    batch = await seedAuditBatch(owner);
  });

  it('answers null estimates, not an error, on a batch never audited', async () => {
    const res = await accuracy(owner, batch);
    expect(res.status).toBe(200);
    expect(accuracySchema.parse(res.body)).toEqual({
      sampled: 0,
      reviewed: 0,
      strata: [
        { stratum: 'cat', images: 10, sampled: 0, reviewed: 0, agree: 0 },
        { stratum: 'notCat', images: 30, sampled: 0, reviewed: 0, agree: 0 },
      ],
      precision: null,
      recall: null,
      accuracy: null,
      cats: null,
    });
  });

  it('draws a stratified sample of the success images (duplicates once), marking each drawn image', async () => {
    const res = await draw(owner, batch, { size: 8 });
    expect(res.status).toBe(200);
    const out = auditResultSchema.parse(res.body);
    // Proportional 2 of 10 and 6 of 30 (a quarter of 8 is the floor: 2).
    expect(out).toMatchObject({
      batchId: batch,
      drawn: 8,
      sampled: 8,
      strata: [
        { stratum: 'cat', images: 10, sampled: 2, drawn: 2 },
        { stratum: 'notCat', images: 30, sampled: 6, drawn: 6 },
      ],
    });
    first = await pending(owner, batch, 3);
    expect(first).toHaveLength(8);
    expect(new Set(first.map((i) => i.fprint)).size).toBe(8);
    expect(first.every((i) => i.audit !== null && i.status === 'success')).toBe(true);
    expect(first.filter((i) => i.audit?.stratum === 'cat').every((i) => i.fprint.startsWith('c'))).toBe(true);
    // Random order, stable across pages and reads.
    expect((await pending(owner, batch, 5)).map((i) => i.fprint)).toEqual(first.map((i) => i.fprint));
    const one = imageSchema.parse((await call('GET', `/v1/batches/${batch}/images/${first[0]!.fprint}`, { key: owner.key })).body);
    expect(one.audit).toEqual({ drawnAt: expect.any(String), stratum: first[0]!.audit!.stratum });
  });

  it('counts the reviews of audited images only, weighted by the strata (hand-computed)', async () => {
    const drawn = new Set(first.map((i) => i.fprint));
    const outside = ['n00', 'n01', 'n02', 'n03', 'n04', 'n05', 'n06', 'n07'].find((f) => !drawn.has(f))!;
    // A review outside the sample: a machine-non-cat called a cat. It must not enter the estimates.
    expect((await review(owner, batch, outside, true)).status).toBe(200);
    // Inside: every drawn image as the machine said, but one machine-non-cat is a cat.
    const miss = first.find((i) => i.audit?.stratum === 'notCat')!.fprint;
    for (const image of first)
      expect((await review(owner, batch, image.fprint, image.fprint === miss || image.isCat === true)).status).toBe(200);
    expect(await pending(owner, batch)).toEqual([]);

    const res = await accuracy(owner, batch);
    expect(res).toMatchObject({ status: 200 });
    const out = accuracySchema.parse(res.body);
    expect(out.strata).toEqual([
      { stratum: 'cat', images: 10, sampled: 2, reviewed: 2, agree: 2 },
      { stratum: 'notCat', images: 30, sampled: 6, reviewed: 6, agree: 5 },
    ]);
    expect([out.sampled, out.reviewed]).toEqual([8, 8]);
    // Precision 2/2; cats 10·1 + 30·(1/6) = 15; recall 10/15; accuracy (10 + 30·5/6)/40 = 0.875.
    expect(out.precision).toMatchObject({ estimate: 1, high: 1 });
    expect(out.cats?.estimate).toBe(15);
    expect(out.recall?.estimate).toBe(0.6667);
    expect(out.accuracy?.estimate).toBe(0.875);
    for (const e of [out.precision, out.recall, out.accuracy, out.cats]) expect(e!.low <= e!.estimate && e!.estimate <= e!.high).toBe(true);
  });

  it('a withdrawn verdict puts the image back in the queue', async () => {
    const fprint = first[1]!.fprint;
    expect((await call('DELETE', `/v1/batches/${batch}/images/${fprint}/review`, { key: owner.key })).status).toBe(200);
    expect((await pending(owner, batch)).map((i) => i.fprint)).toEqual([fprint]);
    expect(accuracySchema.parse((await accuracy(owner, batch)).body).reviewed).toBe(7);
  });

  it('drawing again adds to the sample, never redraws; beyond what is left draws what is left, then nothing', async () => {
    const more = auditResultSchema.parse((await draw(owner, batch, { size: 500 })).body);
    expect([more.drawn, more.sampled]).toEqual([32, 40]);
    expect(more.strata.map((s) => [s.sampled, s.drawn])).toEqual([
      [10, 8],
      [30, 24],
    ]);
    // The queue: the 31 new drawn images not reviewed and the withdrawn one; the one reviewed before its draw counts now.
    expect(await pending(owner, batch, 100)).toHaveLength(32);
    expect(accuracySchema.parse((await accuracy(owner, batch)).body)).toMatchObject({ sampled: 40, reviewed: 8 });
    expect(auditResultSchema.parse((await draw(owner, batch, { size: 5 })).body)).toMatchObject({ drawn: 0, sampled: 40 });
  });
});

describe('bad input, and another client', () => {
  let batch: string;
  beforeAll(async () => {
    batch = await seedAuditBatch(owner);
  });

  it.each([[{ size: 0 }], [{ size: 501 }], [{ size: 'ten' }], [{ size: 2.5 }], [{}], [{ size: 5, seed: 1 }]])(
    'refuses %j with 400',
    async (body) => {
      const res = await draw(owner, batch, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: { code: 'invalid_parameter' } });
    },
  );

  it('refuses audit=pending with another filter', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query: { audit: 'pending', review: 'pending' } });
    expect(res.status).toBe(400);
  });

  it('answers 409 nothing_to_audit for a batch without a success image, and draws nothing', async () => {
    const failed = await seedBatch(
      owner.clientId,
      [{ fprint: 'bad', uploadTs: T0, status: 'fail', error: { code: 'NotAnImage', message: 'not an image' } }],
      { closed: true, done_ts: Date.now(), n_total: 1, n_fail: 1 },
    );
    const res = await draw(owner, failed, { size: 10 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: { code: 'nothing_to_audit' } });
    expect(accuracySchema.parse((await accuracy(owner, failed)).body)).toMatchObject({ sampled: 0, precision: null });
  });

  it("answers 404 on every audit route for another client's batch, and draws nothing in it", async () => {
    expect((await draw(stranger, batch, { size: 5 })).status).toBe(404);
    expect((await accuracy(stranger, batch)).status).toBe(404);
    expect((await call('GET', `/v1/batches/${batch}/images`, { key: stranger.key, query: { audit: 'pending' } })).status).toBe(404);
    expect(await pending(owner, batch)).toEqual([]);
  });
});

describe('icecat audit and icecat accuracy', () => {
  let batch: string;
  beforeAll(async () => {
    batch = await seedAuditBatch(owner);
  });

  it('draws, lists the queue, and prints the estimates as a table and as JSON', async () => {
    const text = await icecat(['audit', batch, '--size', '4'], owner.key);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^drew 4 \(seed \d+\); the sample holds 4/);
    expect(text.stdout).toMatch(/machine: cat\s+10\s+1\s+1/);
    const more = await call('POST', `/v1/batches/${batch}/audit`, { key: owner.key, body: { size: 2 } });
    expect(auditResultSchema.parse(more.body)).toMatchObject({ drawn: 2, sampled: 6 });

    const queue = await icecat(['images', batch, '--audit', 'pending', '--json'], owner.key);
    const drawn = JSON.parse(queue.stdout).items as ImageAnswer[];
    expect(drawn).toHaveLength(6);
    for (const image of drawn) expect((await review(owner, batch, image.fprint, image.isCat === true)).status).toBe(200);

    const table = await icecat(['accuracy', batch], owner.key);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^estimate\s+value\s+95% interval/);
    expect(table.stdout).toMatch(/precision\s+100\.0%\s+\d+\.\d% – 100\.0%/);
    const json = accuracySchema.parse(JSON.parse((await icecat(['accuracy', batch, '--json'], owner.key)).stdout));
    expect(json).toMatchObject({ sampled: 6, reviewed: 6, precision: { estimate: 1 }, recall: { estimate: 1 } });
  });

  it('refuses a size out of range before asking the service', async () => {
    const out = await icecat(['audit', batch, '--size', '0'], owner.key);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/--size.*1 to 500/);
  });
});
