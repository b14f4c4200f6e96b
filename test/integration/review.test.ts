// Review and correction on the local stack (docs/design.md §10): a person's verdict over the API, the counts it moves,
// the review queue, agreement against hand-computed figures, re-thresholds that leave verdicts alone, the bad input
// and the races (a review against the image's own classification, the batch's erasure, a re-threshold, another review).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import sharp from 'sharp';
import { batchSummarySchema } from '../../lib/api/schemas/batches';
import { type ImageAnswer, imageListSchema, imageSchema } from '../../lib/api/schemas/images';
import { agreementSchema } from '../../lib/api/schemas/reviews';
import type { Counts } from '../../lib/domain/counts';
import { countRecords, recountQuery } from '../../lib/store/batch/counters';
import type { ImageItem } from '../../lib/store/table/schema';
import { aws, detectCalls, stackEnv, uniqueId, uploadFile, waitFor, waitForBridgeIdle } from '../helpers';
import { call, newClient, readAllPages, seedBatch, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));
const T0 = Date.UTC(2024, 4, 1);
const at = (minute: number) => T0 + minute * 60_000;
const fp = (items: { fprint: string }[]) => items.map((i) => i.fprint);

const reviewPath = (batchId: string, fprint: string) => `/v1/batches/${batchId}/images/${fprint}/review`;
const review = (who: TestClient, batchId: string, fprint: string, body: unknown) =>
  call('PUT', reviewPath(batchId, fprint), { key: who.key, body });
const withdraw = (who: TestClient, batchId: string, fprint: string) => call('DELETE', reviewPath(batchId, fprint), { key: who.key });
const counts = async (who: TestClient, batchId: string): Promise<Counts> =>
  batchSummarySchema.parse((await call('GET', `/v1/batches/${batchId}`, { key: who.key })).body).counts;
const image = async (who: TestClient, batchId: string, fprint: string): Promise<ImageAnswer> =>
  imageSchema.parse((await call('GET', `/v1/batches/${batchId}/images/${fprint}`, { key: who.key })).body);
const agreement = async (who: TestClient, batchId: string) =>
  agreementSchema.parse((await call('GET', `/v1/batches/${batchId}/agreement`, { key: who.key })).body);
const queue = (who: TestClient, batchId: string, query: Record<string, string | number> = {}) =>
  call('GET', `/v1/batches/${batchId}/images`, { key: who.key, query: { review: 'pending', order: 'uncertain', ...query } });

/** What the batch's records add up to, read under the API (the counters must equal it). */
async function recounted(who: TestClient, batchId: string): Promise<Counts> {
  const items: ImageItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await aws().ddb.send(
      new QueryCommand({ ...recountQuery(stackEnv('TABLE_NAME'), who.clientId, batchId), ExclusiveStartKey: start }),
    );
    items.push(...((out.Items ?? []) as ImageItem[]));
    start = out.LastEvaluatedKey;
  } while (start);
  return countRecords(items);
}

/**
 * A done batch at threshold 80 with confidences chosen for hand-computed figures: r1 95, r2 85, r3 82 (cats), r4 78,
 * r5 60, r6 30, r7 0 (not), f1 a failure, p1 still being classified.
 */
async function seedReviewBatch(who: TestClient, extra: Record<string, unknown> = {}): Promise<string> {
  const confidences: [string, number][] = [
    ['r1', 95],
    ['r2', 85],
    ['r3', 82],
    ['r4', 78],
    ['r5', 60],
    ['r6', 30],
    ['r7', 0],
  ];
  return seedBatch(
    who.clientId,
    [
      ...confidences.map(([fprint, catConfidence], i) => ({ fprint, uploadTs: at(i), isCat: catConfidence >= 80, catConfidence })),
      { fprint: 'f1', uploadTs: at(20), status: 'fail' as const, error: { code: 'NotAnImage', message: 'not an image' } },
      { fprint: 'p1', uploadTs: at(21), status: 'processing' as const },
    ],
    { closed: true, done_ts: Date.now(), cat_min_conf: 80, n_total: 9, n_pending: 1, n_success: 7, n_fail: 1, n_cats: 3, ...extra },
  );
}

let owner: TestClient;
let stranger: TestClient;
beforeAll(async () => {
  [owner, stranger] = await Promise.all([newClient('rev'), newClient('revx')]);
});

describe('a verdict, the counts, the queue and agreement (hand-computed on a seeded batch)', () => {
  let batch: string;
  beforeAll(async () => {
    batch = await seedReviewBatch(owner);
  });

  it('lists the queue nearest the threshold first, across pages (ties: at or above it first)', async () => {
    const all = await readAllPages<ImageAnswer>(`/v1/batches/${batch}/images`, owner.key, {
      review: 'pending',
      order: 'uncertain',
      limit: 3,
    });

    // |c − 80|: r3 2, r4 2, r2 5, r1 15, r5 20, r6 50, r7 80. The failure and the image still classified never appear.
    expect([fp(all.items), all.pageSizes]).toEqual([
      ['r3', 'r4', 'r2', 'r1', 'r5', 'r6', 'r7'],
      [3, 3, 1],
    ]);
    expect(all.items.every((i) => i.review === null && i.machineIsCat === i.isCat)).toBe(true);
  });

  it('gives the person’s verdict: isCat follows it, machineIsCat keeps the detector’s, counts move', async () => {
    const r1 = await review(owner, batch, 'r1', { isCat: true });
    const r3 = await review(owner, batch, 'r3', { isCat: false, note: 'a cushion' });
    const r4 = await review(owner, batch, 'r4', { isCat: true });
    const r6 = await review(owner, batch, 'r6', { isCat: false });

    expect([r1.status, r3.status, r4.status, r6.status]).toEqual([200, 200, 200, 200]);
    expect(imageSchema.parse(r3.body)).toMatchObject({
      fprint: 'r3',
      isCat: false,
      machineIsCat: true,
      review: { isCat: false, note: 'a cushion' },
    });
    expect(r4.body).toMatchObject({ isCat: true, machineIsCat: false, review: { isCat: true, note: null } });
    expect(Date.parse(r4.body.review.reviewedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(await image(owner, batch, 'r3')).toMatchObject({ isCat: false, machineIsCat: true, review: { note: 'a cushion' } });
    // cats: r1, r2 and r4 (r3 corrected away, r4 corrected in); corrected: r3 and r4.
    expect(await counts(owner, batch)).toMatchObject({ total: 9, success: 7, cats: 3, reviewed: 4, corrected: 2 });
    expect(await counts(owner, batch)).toEqual(await recounted(owner, batch));
  });

  it('leaves reviewed images out of the queue, and follows isCat in the cat filter and the client’s cats', async () => {
    const pending = await queue(owner, batch);
    const cats = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query: { cat: 'true' } });
    const clientCats = await call('GET', '/v1/images', { key: owner.key, query: { cat: 'true' } });

    expect(fp(imageListSchema.parse(pending.body).items)).toEqual(['r2', 'r5', 'r7']);
    expect(fp(cats.body.items).sort()).toEqual(['r1', 'r2', 'r4']);
    expect(fp(clientCats.body.items).sort()).toEqual(['r1', 'r2', 'r4']);
  });

  it('answers agreement as computed by hand, the suggestion the lowest of the best thresholds', async () => {
    // Reviewed: r1 95 cat/cat, r3 82 machine cat/person not, r4 78 not/cat, r6 30 not/not. Agree: r1, r6.
    // Precision: machine cats r1, r3 → r1 is a cat: 1/2. Recall: people's cats r1, r4 → the machine had r1: 1/2.
    // Agreement by threshold, each stretch from its lowest point: 0.01 → 2, just above r6 (30.01) → 3, 78.01 → 2,
    // 82.01 → 3, 95.01 → 2: (30, 78] and (82, 95] tie at 3; 30.01 is the lowest.
    expect(await agreement(owner, batch)).toEqual({
      reviewed: 4,
      agree: 2,
      precision: 0.5,
      recall: 0.5,
      suggestedCatMinConfidence: 30.01,
      catMinConfidence: 80,
    });
  });

  it('re-thresholds to the suggestion without touching a verdict: machineIsCat and corrected move, isCat stays', async () => {
    const res = await call('POST', `/v1/batches/${batch}:reclassify`, { key: owner.key, body: { catMinConfidence: 30.01 } });

    expect(res.status).toBe(200);
    // r4 (78) is now a machine cat too: it agrees; r3 stays the person's not-a-cat; r6 (30) stays below; of the
    // unreviewed, r5 (60) becomes a cat: cats r1, r2, r4, r5.
    expect(res.body.batch.counts).toMatchObject({ cats: 4, reviewed: 4, corrected: 1 });
    expect(await image(owner, batch, 'r5')).toMatchObject({ isCat: true, machineIsCat: true });
    expect(await image(owner, batch, 'r3')).toMatchObject({ isCat: false, machineIsCat: true });
    expect(await image(owner, batch, 'r4')).toMatchObject({ isCat: true, machineIsCat: true });
    expect(await agreement(owner, batch)).toEqual({
      reviewed: 4,
      agree: 3,
      precision: 0.6667,
      recall: 1,
      suggestedCatMinConfidence: 30.01,
      catMinConfidence: 30.01,
    });
    // Nearest 30.01 first: r5 (60, 29.99 above), r7 (0, 30.01 below), r2 (85, 54.99 above).
    expect(fp((await queue(owner, batch)).body.items)).toEqual(['r5', 'r7', 'r2']);
    expect(await counts(owner, batch)).toEqual(await recounted(owner, batch));
  });

  it('withdraws a verdict: isCat is the machine’s again, the image is back in the queue', async () => {
    const res = await withdraw(owner, batch, 'r3');
    const again = await withdraw(owner, batch, 'r3');

    expect(res.body).toMatchObject({ fprint: 'r3', isCat: true, machineIsCat: true, review: null });
    expect([again.status, again.body.review]).toEqual([200, null]);
    // At 30.01: cats r1, r2, r3, r4, r5; the reviews left (r1, r4, r6) all agree with the machine.
    expect(await counts(owner, batch)).toMatchObject({ cats: 5, reviewed: 3, corrected: 0 });
    expect(fp((await queue(owner, batch)).body.items)).toEqual(['r5', 'r7', 'r3', 'r2']);
    expect(await counts(owner, batch)).toEqual(await recounted(owner, batch));
  });

  it('replaces a verdict given again, changing only what differs', async () => {
    await review(owner, batch, 'r5', { isCat: true, note: 'behind the fence' });
    const changed = await review(owner, batch, 'r5', { isCat: false });

    // r5 (60) is a machine cat at 30.01: the second verdict corrects it; the note went with the first.
    expect(changed.body).toMatchObject({ isCat: false, machineIsCat: true, review: { isCat: false, note: null } });
    expect(await counts(owner, batch)).toMatchObject({ cats: 4, reviewed: 4, corrected: 1 });
    expect(await counts(owner, batch)).toEqual(await recounted(owner, batch));
  });
});

describe('bad input: each a clear 4xx, nothing counted', () => {
  let batch: string;
  let erasing: string;
  beforeAll(async () => {
    batch = await seedReviewBatch(owner);
    erasing = await seedReviewBatch(owner, { deleting: true });
  });

  it.each([
    ['a missing image', 'nope', 404, 'not_found'],
    ['a fail image', 'f1', 409, 'image_failed'],
    ['an image still being classified', 'p1', 409, 'image_not_classified'],
  ])('answers %s (%s) %i %s', async (_, fprint, status, code) => {
    const res = await review(owner, batch, fprint, { isCat: true });

    expect([res.status, res.body.error.code]).toEqual([status, code]);
    expect(res.body.error.message).toMatch(fprint);
  });

  it('answers another client’s image 404, as a missing one', async () => {
    const put = await review(stranger, batch, 'r1', { isCat: false });
    const del = await withdraw(stranger, batch, 'r1');
    const agree = await call('GET', `/v1/batches/${batch}/agreement`, { key: stranger.key });

    expect([put.status, del.status, agree.status]).toEqual([404, 404, 404]);
  });

  it('answers a batch being erased 404', async () => {
    const put = await review(owner, erasing, 'r1', { isCat: false });
    const del = await withdraw(owner, erasing, 'r1');
    const pending = await queue(owner, erasing);

    expect([put.status, del.status, pending.status]).toEqual([404, 404, 404]);
  });

  it.each([
    ['no isCat', {}, 'isCat'],
    ['isCat not a boolean', { isCat: 'yes' }, 'isCat'],
    ['an unknown field', { isCat: true, verdict: 'cat' }, ''],
    ['a note over 500 characters', { isCat: true, note: 'x'.repeat(501) }, 'note'],
    ['a note that is not a string', { isCat: true, note: 5 }, 'note'],
    ['a body that is not an object', [true], ''],
  ])('answers a body with %s 400, naming what is wrong', async (_, body, field) => {
    const res = await review(owner, batch, 'r2', body);

    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_parameter']);
    expect(res.body.error.message).toContain(field);
  });

  it('answers a body that is no JSON 400', async () => {
    const res = await review(owner, batch, 'r2', '{isCat: true');

    expect([res.status, res.body.error.code]).toEqual([400, 'malformed_body']);
  });

  it('takes a note of exactly 500 characters', async () => {
    const res = await review(owner, batch, 'r7', { isCat: false, note: 'n'.repeat(500) });

    expect(res.status).toBe(200);
    expect(res.body.review.note).toHaveLength(500);
  });

  it.each([
    ['order=uncertain alone', { order: 'uncertain' }, 'order'],
    ['review=pending with cat', { review: 'pending', cat: 'true' }, 'cat'],
    ['review=pending with status', { review: 'pending', status: 'success' }, 'status'],
    ['an unknown review filter', { review: 'done' }, 'review'],
  ])('answers a listing with %s 400', async (_, query, field) => {
    const res = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query });

    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_parameter']);
    expect(res.body.error.message).toContain(field);
  });

  it('answers a queue cursor after a re-threshold 400 (the queue starts over)', async () => {
    const first = await queue(owner, batch, { limit: 2 });
    await call('POST', `/v1/batches/${batch}:reclassify`, { key: owner.key, body: { catMinConfidence: 70 } });

    const next = await queue(owner, batch, { limit: 2, cursor: first.body.cursor });

    expect([next.status, next.body.error.code]).toEqual([400, 'invalid_cursor']);
  });

  it('counted nothing for any of it: only the one verdict given', async () => {
    expect(await counts(owner, batch)).toMatchObject({ reviewed: 1, corrected: 0 });
    expect(await counts(owner, batch)).toEqual(await recounted(owner, batch));
  });
});

describe('races, on the local stack: counts exact afterwards', () => {
  it('many reviews of one image at once: each answered, the counters those of the last verdict', async () => {
    const batch = await seedReviewBatch(owner);

    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => review(owner, batch, 'r2', { isCat: i % 2 === 0 })));

    // Each applied, or (when the others kept winning) a defined 409 with nothing written.
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body.error.code])).toEqual(
      answers.filter((a) => a.status !== 200).map(() => [409, 'review_conflict']),
    );
    expect(answers.some((a) => a.status === 200)).toBe(true);
    const final = await image(owner, batch, 'r2');
    expect(await counts(owner, batch)).toMatchObject({ reviewed: 1, corrected: final.isCat ? 0 : 1, cats: final.isCat ? 3 : 2 });
    expect(await counts(owner, batch)).toEqual(await recounted(owner, batch));
  });

  it('reviews racing a re-threshold: verdicts kept, counts exact', async () => {
    const batch = await seedReviewBatch(owner);

    const [rethreshold, ...answers] = await Promise.all([
      call('POST', `/v1/batches/${batch}:reclassify`, { key: owner.key, body: { catMinConfidence: 50 } }),
      ...['r1', 'r2', 'r3', 'r4', 'r5', 'r6'].map((fprint, i) => review(owner, batch, fprint, { isCat: i % 2 === 1 })),
    ]);

    expect([rethreshold!.status, ...answers.map((a) => a.status)]).toEqual(Array(7).fill(200));
    const items = (await readAllPages<ImageAnswer>(`/v1/batches/${batch}/images`, owner.key)).items;
    const verdicts = Object.fromEntries(items.filter((i) => i.review).map((i) => [i.fprint, [i.isCat, i.machineIsCat]]));
    // The person's verdicts stand; the machine's are those at 50.
    expect(verdicts).toEqual({
      r1: [false, true],
      r2: [true, true],
      r3: [false, true],
      r4: [true, true],
      r5: [false, true],
      r6: [true, false],
    });
    expect(await counts(owner, batch)).toMatchObject({ reviewed: 6, corrected: 4 });
    expect(await counts(owner, batch)).toEqual(await recounted(owner, batch));
  });

  it('reviews racing the batch’s erasure: each a verdict or 404, then the batch is gone', async () => {
    const batch = await seedReviewBatch(owner);
    const fprints = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'];

    const [erase, ...answers] = await Promise.all([
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return call('DELETE', `/v1/batches/${batch}`, { key: owner.key });
      })(),
      ...fprints.map((fprint) => review(owner, batch, fprint, { isCat: true })),
    ]);

    expect(erase!.status).toBe(202);
    expect(answers.every((a) => a.status === 200 || (a.status === 404 && a.body.error.code === 'not_found'))).toBe(true);
    expect((await call('GET', `/v1/batches/${batch}`, { key: owner.key })).status).toBe(404);
    expect((await review(owner, batch, 'r1', { isCat: false })).status).toBe(404);
    await waitFor(async () => (await recounted(owner, batch)).total === 0, { what: 'the erasure to delete every record' });
  });

  it('a review racing the image’s own classification: 404 or 409 until it is classified, then applied, counts exact', async () => {
    const name = uniqueId('revrace');
    await call('POST', '/v1/batches', {
      key: owner.key,
      body: { batchId: name, files: [{ name: 'cat.png', contentType: 'image/png', size: 1_000_000 }] },
    });
    const pixels = await sharp(fixture('chelsea.png')).resize(300).png().toBuffer();
    const fprintOf = async () =>
      (await call('GET', `/v1/batches/${name}/images`, { key: owner.key })).body.items[0]?.fprint as string | undefined;

    await uploadFile(`uploads/${owner.clientId}/${name}/cat.png`, pixels);
    const seen: number[] = [];
    const fprint = await waitFor(fprintOf, { what: 'the claim' });
    const applied = await waitFor(
      async () => {
        const res = await review(owner, name, fprint, { isCat: false, note: 'a toy' });
        seen.push(res.status);
        if (res.status === 409) expect(res.body.error.code).toBe('image_not_classified');
        return res.status === 200 ? res.body : undefined;
      },
      { what: 'the review to apply', timeoutMs: 60_000, intervalMs: 20 },
    );
    await waitForBridgeIdle();

    expect(seen.every((s) => s === 200 || s === 409)).toBe(true);
    expect(applied).toMatchObject({ status: 'success', isCat: false, review: { isCat: false, note: 'a toy' } });
    const summary = await counts(owner, name);
    expect(summary).toMatchObject({ total: 1, success: 1, pending: 0, reviewed: 1, cats: 0, corrected: applied.machineIsCat ? 1 : 0 });
    expect(summary).toEqual(await recounted(owner, name));
  });
});

describe('a verdict carried everywhere (real uploads)', () => {
  const cat = fixture('chelsea.png');
  let first: string;
  let fprint: string;
  beforeAll(async () => {
    first = uniqueId('carry');
    await call('POST', '/v1/batches', {
      key: owner.key,
      body: { batchId: first, files: ['cat.png', 'copy.png'].map((n) => ({ name: n, contentType: 'image/png', size: 1_000_000 })) },
    });
    await uploadFile(`uploads/${owner.clientId}/${first}/cat.png`, cat);
    await waitFor(async () => (await counts(owner, first)).success === 1, { what: 'the first upload' });
    await uploadFile(`uploads/${owner.clientId}/${first}/copy.png`, cat);
    await waitFor(async () => (await call('GET', `/v1/batches/${first}`, { key: owner.key })).body.status === 'done', {
      what: 'the batch to be done',
    });
    fprint = (await call('GET', `/v1/batches/${first}/images`, { key: owner.key })).body.items[0].fprint;
  });

  it('shares the verdict with the image’s duplicates, in the listing and the export', async () => {
    const res = await review(owner, first, fprint, { isCat: false, note: 'a "cat" statue, really' });
    const jsonl = await fetch(new URL(`/v1/batches/${first}/export?format=jsonl`, stackEnv('ICECAT_API_URL')), {
      headers: { authorization: `Bearer ${owner.key}` },
    });

    expect(res.body).toMatchObject({ duplicates: 1, duplicateFiles: ['copy.png'], isCat: false, machineIsCat: true });
    const rows = (await jsonl.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows.map((r) => [r.file_name, r.status, r.is_cat, r.machine_is_cat, r.reviewed, r.review_note])).toEqual([
      ['cat.png', 'success', false, true, true, 'a "cat" statue, really'],
      ['copy.png', 'duplicate', false, true, true, 'a "cat" statue, really'],
    ]);
    expect(await counts(owner, first)).toMatchObject({ total: 2, duplicate: 1, cats: 0, reviewed: 1, corrected: 1 });
  });

  it('carries the verdict into a later batch of the client with the same pixels: never asked twice, no DetectLabels call', async () => {
    const later = uniqueId('carry2');
    const before = await detectCalls();

    await uploadFile(`uploads/${owner.clientId}/${later}/again.png`, cat);
    await waitForBridgeIdle();

    const [carried] = (await call('GET', `/v1/batches/${later}/images`, { key: owner.key })).body.items as ImageAnswer[];
    expect(carried).toMatchObject({
      fprint,
      reused: true,
      isCat: false,
      machineIsCat: true,
      review: { isCat: false, note: 'a "cat" statue, really' },
    });
    expect(await counts(owner, later)).toMatchObject({ total: 1, success: 1, reused: 1, cats: 0, reviewed: 1, corrected: 1 });
    expect(await counts(owner, later)).toEqual(await recounted(owner, later));
    expect((await queue(owner, later)).body.items).toEqual([]);
    expect((await detectCalls()) - before).toBe(0);
  });

  it('does not carry it to another client’s same pixels', async () => {
    const theirs = uniqueId('carry3');

    await uploadFile(`uploads/${stranger.clientId}/${theirs}/cat.png`, cat);
    await waitForBridgeIdle();

    const [own] = (await call('GET', `/v1/batches/${theirs}/images`, { key: stranger.key })).body.items as ImageAnswer[];
    expect(own).toMatchObject({ fprint, review: null, reused: false, isCat: true });
  });
});
