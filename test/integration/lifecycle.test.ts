// The batch lifecycle on the local stack (docs/design.md §6): per-client batch names, open → processing → done,
// :close with and without `expected`, auto-close, BatchClosed, more upload forms, the batch list, the counter
// invariant while uploads run, recount, and overwrites of one key.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import sharp from 'sharp';
import { fingerprint } from '../../lib/ingest/fingerprint';
import { BatchStore } from '../../lib/store/batch-store';
import { BATCH_SK, batchKey, batchPartition, type ImageItem } from '../../lib/store/table/schema';
import { aws, detectCalls, stackEnv, uniqueId, uploadFile, waitFor, waitForBridgeIdle } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));
const CAT = fixture('chelsea.png');
const NOT_CAT = fixture('coffee.png');

interface Summary {
  batchId: string;
  status: 'open' | 'processing' | 'done';
  closed: boolean;
  expected: number | null;
  counts: { total: number; pending: number; success: number; fail: number; duplicate: number; reused: number; cats: number };
  closedAt: string | null;
  doneAt: string | null;
}

/** Small distinct images (each its own fingerprint), cheap to classify. */
const distinctImage = (i: number): Promise<Buffer> =>
  sharp({ create: { width: 96 + i, height: 96, channels: 3, background: { r: (i * 37) % 256, g: (i * 91) % 256, b: (i * 53) % 256 } } })
    .png()
    .toBuffer();

let client: TestClient;
beforeAll(async () => {
  client = await newClient('life');
});

const summary = async (batchId: string, who: TestClient = client): Promise<Summary> =>
  (await call<Summary>('GET', `/v1/batches/${batchId}`, { key: who.key })).body;
const upload = (batchId: string, name: string, body: Buffer, who: TestClient = client) =>
  uploadFile(`uploads/${who.clientId}/${batchId}/${name}`, body);
const until = (batchId: string, done: (s: Summary) => boolean, what: string) =>
  waitFor(
    async () => {
      const s = await summary(batchId);
      return done(s) ? s : undefined;
    },
    { what, timeoutMs: 60_000 },
  );
const create = (body: Record<string, unknown> = {}, who: TestClient = client) => call('POST', '/v1/batches', { key: who.key, body });

describe('batch names belong to their client', () => {
  it('creates a batch under the name the client chose, at the configured cat threshold, and answers 409 when that client has it already', async () => {
    const name = uniqueId('holiday');

    const first = await create({ batchId: name });
    const again = await create({ batchId: name });

    expect([first.status, first.body.batchId]).toEqual([201, name]);
    expect(first.body.batch.catMinConfidence).toBe(Number(stackEnv('CAT_MIN_CONFIDENCE')));
    expect([again.status, again.body.error.code]).toEqual([409, 'batch_exists']);
  });

  it('lets two clients hold batches of one name, each seeing only its own', async () => {
    const other = await newClient('other');
    const name = uniqueId('shared');
    await create({ batchId: name, debug: true });
    await create({ batchId: name }, other);

    await upload(name, 'cat.png', CAT, other);
    await waitForBridgeIdle();

    expect([(await summary(name)).counts.total, (await summary(name, other)).counts.total]).toEqual([0, 1]);
    const mine = await call('GET', `/v1/batches/${name}/images`, { key: client.key });
    const theirs = await call('GET', `/v1/batches/${name}/images`, { key: other.key });
    expect([mine.body.items.length, theirs.body.items.length]).toEqual([0, 1]);
  });
});

describe('open → processing → done', () => {
  it('closes by itself when the declared files arrived, stamps doneAt once, and records a later upload as BatchClosed', async () => {
    const created = await create({
      files: [
        { name: 'a.png', contentType: 'image/png', size: CAT.length },
        { name: 'b.png', contentType: 'image/png', size: NOT_CAT.length },
      ],
    });
    const batchId = created.body.batchId as string;
    expect(created.body.batch).toMatchObject({ status: 'open', closed: false, expected: 2 });

    await upload(batchId, 'a.png', CAT);
    await upload(batchId, 'b.png', NOT_CAT);
    const done = await until(batchId, (s) => s.status === 'done', 'the batch to be done');
    await upload(batchId, 'late.png', await distinctImage(1));
    const after = await until(batchId, (s) => s.counts.total === 3, 'the late upload to be counted');

    expect(done).toMatchObject({ closed: true, counts: { total: 2, pending: 0, success: 2, cats: 1 } });
    expect(done.doneAt).not.toBeNull();
    expect(after).toMatchObject({ status: 'done', doneAt: done.doneAt, counts: { total: 3, fail: 1 } });
    const failed = await call('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { status: 'fail' } });
    expect(failed.body.items.map((i: { fileName: string; error: { code: string } }) => [i.fileName, i.error.code])).toEqual([
      ['late.png', 'BatchClosed'],
    ]);
  });

  it(':close without expected makes a batch with nothing pending done at once', async () => {
    const batchId = (await create()).body.batchId as string;
    await upload(batchId, 'one.png', NOT_CAT);
    await until(batchId, (s) => s.counts.success === 1, 'the upload');
    expect((await summary(batchId)).status).toBe('open');

    const closed = await call<Summary>('POST', `/v1/batches/${batchId}:close`, { key: client.key });

    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ status: 'done', closed: true, expected: null });
    expect(closed.body.doneAt).not.toBeNull();
  });

  it(':close with expected stays processing until that many uploads arrived, and refuses fewer than arrived', async () => {
    const batchId = (await create()).body.batchId as string;
    await upload(batchId, 'one.png', NOT_CAT);
    await until(batchId, (s) => s.counts.success === 1, 'the first upload');

    const tooFew = await call('POST', `/v1/batches/${batchId}:close`, { key: client.key, body: { expected: 0 } });
    const closed = await call<Summary>('POST', `/v1/batches/${batchId}:close`, { key: client.key, body: { expected: 2 } });
    await upload(batchId, 'two.png', CAT);
    const done = await until(batchId, (s) => s.status === 'done', 'the batch to be done');

    expect([tooFew.status, tooFew.body.error.code]).toEqual([409, 'expected_below_total']);
    expect(closed.body).toMatchObject({ status: 'processing', closed: true, expected: 2 });
    expect(done.counts).toMatchObject({ total: 2, success: 2 });
  });

  it('hands out more upload forms for an open batch, growing expected, and answers 409 once it is closed', async () => {
    const batchId = (await create({ files: [{ name: 'a.png', contentType: 'image/png', size: 10 }] })).body.batchId as string;

    const more = await call('POST', `/v1/batches/${batchId}/uploads`, {
      key: client.key,
      body: {
        files: [
          { name: 'b.png', contentType: 'image/png', size: 10 },
          { name: 'c.png', contentType: 'image/png', size: 10 },
        ],
      },
    });
    await call('POST', `/v1/batches/${batchId}:close`, { key: client.key });
    const late = await call('POST', `/v1/batches/${batchId}/uploads`, {
      key: client.key,
      body: { files: [{ name: 'd.png', contentType: 'image/png', size: 10 }] },
    });
    const missing = await call('POST', `/v1/batches/${uniqueId('nope')}/uploads`, {
      key: client.key,
      body: { files: [{ name: 'd.png', contentType: 'image/png', size: 10 }] },
    });

    expect([more.status, more.body.uploads.length, more.body.batch.expected]).toEqual([200, 2, 3]);
    expect(more.body.uploads[0].fields.key).toBe(`uploads/${client.clientId}/${batchId}/b.png`);
    expect([late.status, late.body.error.code]).toEqual([409, 'batch_closed']);
    expect(missing.status).toBe(404);
  });

  it('renews the forms of files already declared without growing expected, and answers 409 once the batch is closed', async () => {
    const declared = [{ name: 'a.png', contentType: 'image/png', size: 10 }];
    const created = await create({ files: declared });
    const batchId = created.body.batchId as string;

    const renewed = await call('POST', `/v1/batches/${batchId}/uploads`, { key: client.key, body: { files: declared, renew: true } });
    await call('POST', `/v1/batches/${batchId}:close`, { key: client.key });
    const late = await call('POST', `/v1/batches/${batchId}/uploads`, { key: client.key, body: { files: declared, renew: true } });

    expect([renewed.status, renewed.body.uploads.length, renewed.body.batch.expected]).toEqual([200, 1, 1]);
    expect(renewed.body.uploads[0].fields.key).toBe(`uploads/${client.clientId}/${batchId}/a.png`);
    expect(Date.parse(renewed.body.expiresAt)).toBeGreaterThanOrEqual(Date.parse(created.body.expiresAt));
    expect([late.status, late.body.error.code]).toEqual([409, 'batch_closed']);
  });

  it('keeps total = pending + success + fail + duplicate in every summary read while 20 uploads run', async () => {
    const batchId = (await create()).body.batchId as string;
    const images = await Promise.all(Array.from({ length: 20 }, (_, i) => distinctImage(i)));
    const samples: Summary[] = [];
    let uploading = true;
    const sampler = (async () => {
      while (uploading) {
        samples.push(await summary(batchId));
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    await Promise.all(images.map((body, i) => upload(batchId, `img-${i}.png`, i % 5 === 0 ? images[0]! : body)));
    await until(batchId, (s) => s.counts.total === 20 && s.counts.pending === 0, 'all 20 uploads');
    await call('POST', `/v1/batches/${batchId}:close`, { key: client.key });
    uploading = false;
    await sampler;
    const final = await summary(batchId);

    const broken = samples.filter((s) => s.counts.total !== s.counts.pending + s.counts.success + s.counts.fail + s.counts.duplicate);
    expect(samples.length).toBeGreaterThan(5);
    expect(samples.some((s) => s.counts.pending > 0)).toBe(true);
    expect(broken).toEqual([]);
    expect(final).toMatchObject({ status: 'done', counts: { total: 20, pending: 0, success: 17, duplicate: 3 } });
  });
});

describe('GET /v1/batches', () => {
  it("pages the client's own batches newest first, by status, and shows them to no one else", async () => {
    const lister = await newClient('list');
    const stranger = await newClient('stranger');
    const names: string[] = [];
    for (let i = 0; i < 5; i++) {
      names.push((await create({ batchId: `list-${i}` }, lister)).body.batchId as string);
      await new Promise((r) => setTimeout(r, 5));
    }
    await call('POST', `/v1/batches/${names[1]}:close`, { key: lister.key });

    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const res = await call('GET', '/v1/batches', { key: lister.key, query: { limit: 2, cursor } });
      expect(res.status).toBe(200);
      pages.push(res.body.items.map((b: Summary) => b.batchId));
      cursor = res.body.cursor;
    } while (cursor);
    const done = await call('GET', '/v1/batches', { key: lister.key, query: { status: 'done' } });
    const open = await call('GET', '/v1/batches', { key: lister.key, query: { status: 'open', limit: 3 } });
    const theirs = await call('GET', '/v1/batches', { key: stranger.key });

    expect(pages).toEqual([[names[4], names[3]], [names[2], names[1]], [names[0]]]);
    expect(done.body.items.map((b: Summary) => b.batchId)).toEqual([names[1]]);
    expect(open.body.items.map((b: Summary) => b.batchId)).toEqual([names[4], names[3], names[2]]);
    expect(theirs.body.items).toEqual([]);
  });
});

describe('recount', () => {
  it('repairs counters broken on purpose to the exact counts of the batch records', async () => {
    const batchId = (await create()).body.batchId as string;
    await upload(batchId, 'cat.png', CAT);
    await upload(batchId, 'junk.png', Buffer.from('not an image'));
    const exact = await until(batchId, (s) => s.counts.total === 2 && s.counts.pending === 0, 'both uploads');
    await aws().ddb.send(
      new UpdateCommand({
        TableName: stackEnv('TABLE_NAME'),
        Key: batchKey(client.clientId, batchId),
        UpdateExpression: 'SET n_total = :t, n_success = :s, n_pending = :p, n_cats = :c',
        ExpressionAttributeValues: { ':t': 7, ':s': 0, ':p': 3, ':c': 0 },
      }),
    );
    const store = new BatchStore({
      ddb: aws().ddb,
      tableName: stackEnv('TABLE_NAME'),
      transactions: process.env.DDB_TRANSACTIONS === 'true',
    });

    await store.recount(client.clientId, batchId);

    expect((await summary(batchId)).counts).toEqual(exact.counts);
  });
});

describe('an overwrite is a new upload', () => {
  it.each([0, 50, 150, 250, 400])(
    'keeps a cat and the image PUT %i ms later over it apart: each record rests with its own pixels',
    async (delayMs) => {
      const batchId = (await create()).body.batchId as string;
      const [cat, cup] = await Promise.all([fingerprint(CAT, { maxInputPixels: 1e8 }), fingerprint(NOT_CAT, { maxInputPixels: 1e8 })]);

      await upload(batchId, 'photo.png', CAT);
      await new Promise((r) => setTimeout(r, delayMs));
      await upload(batchId, 'photo.png', NOT_CAT);
      await until(batchId, (s) => s.counts.total === 2 && s.counts.pending === 0, 'both uploads to be recorded');
      await waitForBridgeIdle();

      const out = await aws().ddb.send(
        new QueryCommand({
          TableName: stackEnv('TABLE_NAME'),
          KeyConditionExpression: 'batch_id = :b AND img_fprint > :s',
          ExpressionAttributeValues: { ':b': batchPartition(client.clientId, batchId), ':s': BATCH_SK },
          ConsistentRead: true,
        }),
      );
      const records = (out.Items ?? []) as ImageItem[];
      const classified = records.filter((r) => r.op_status === 'success');
      // The newer upload is always classified; the cat is too, unless S3 replaced it before it could be read.
      expect(records).toHaveLength(2);
      expect(classified.map((r) => r.img_fprint)).toContain(cup.fprint);
      for (const record of records.filter((r) => r.op_status === 'fail')) expect(record.err_code).toBe('Overwritten');
      if (classified.length === 1) expect(records.find((r) => r.op_status === 'fail')?.etag).toBeDefined();
      else expect(classified.map((r) => r.img_fprint).sort()).toEqual([cat.fprint, cup.fprint].sort());
      for (const record of classified) {
        const object = await aws().s3.send(new GetObjectCommand({ Bucket: stackEnv('BUCKET_NAME'), Key: record.processed_key! }));
        const stored = Buffer.from(await object.Body!.transformToByteArray());
        expect((await fingerprint(stored, { maxInputPixels: 1e8 })).fprint).toBe(record.img_fprint);
      }
      const left = await aws().s3.send(
        new ListObjectsV2Command({ Bucket: stackEnv('BUCKET_NAME'), Prefix: `uploads/${client.clientId}/${batchId}/` }),
      );
      expect(left.KeyCount ?? 0).toBe(0);
    },
  );
});

describe('re-threshold: POST /v1/batches/{batchId}:reclassify', () => {
  const reclassify = (batchId: string, body: unknown, who: TestClient) =>
    call('POST', `/v1/batches/${batchId}:reclassify`, { key: who.key, body });
  const images = async (batchId: string, who: TestClient) =>
    (
      await call<{ items: { fileName: string; isCat: boolean; catConfidence: number; cats: unknown[]; fprint: string }[] }>(
        'GET',
        `/v1/batches/${batchId}/images`,
        { key: who.key },
      )
    ).body.items;
  const catsOf = async (batchId: string, who: TestClient) =>
    Object.fromEntries((await images(batchId, who)).map((i) => [i.fileName, i.isCat]));
  const clientCats = async (who: TestClient) =>
    (await call<{ items: { fprint: string }[] }>('GET', '/v1/images?cat=true', { key: who.key })).body.items.map((i) => i.fprint).sort();

  let who: TestClient;
  let name: string;
  beforeAll(async () => {
    who = await newClient('rethr');
    name = uniqueId('rethr');
    await create(
      { batchId: name, files: ['cat.png', 'grey.png', 'coffee.png'].map((n) => ({ name: n, contentType: 'image/png', size: 1_000_000 })) },
      who,
    );
    await upload(name, 'cat.png', CAT, who);
    await upload(name, 'grey.png', await sharp(CAT).greyscale().png().toBuffer(), who);
    await upload(name, 'coffee.png', NOT_CAT, who);
    await waitFor(async () => ((await summary(name, who)).status === 'done' ? true : undefined), {
      what: 'the batch to be done',
      timeoutMs: 60_000,
    });
    await waitForBridgeIdle();
  });

  it('moves isCat, the client-cats index and counts.cats up and down from stored confidences, with no DetectLabels call', async () => {
    const stored = Object.fromEntries((await images(name, who)).map((i) => [i.fileName, i]));
    const [cat, grey, coffee] = [stored['cat.png']!, stored['grey.png']!, stored['coffee.png']!];
    expect(cat.catConfidence).toBeGreaterThan(grey.catConfidence);
    expect(grey.catConfidence).toBeGreaterThan(0);
    expect(coffee).toMatchObject({ catConfidence: 0, cats: [], isCat: false });
    expect(cat.cats.length).toBeGreaterThan(0);
    const before = await detectCalls();

    const between = (cat.catConfidence + grey.catConfidence) / 2;
    const up = await reclassify(name, { catMinConfidence: between }, who);
    expect(up.status).toBe(200);
    expect(up.body.cursor).toBeUndefined();
    expect(up.body.batch).toMatchObject({ catMinConfidence: between, status: 'done', counts: { cats: 1, success: 3, total: 3 } });
    expect(await catsOf(name, who)).toEqual({ 'cat.png': true, 'grey.png': false, 'coffee.png': false });
    expect(await clientCats(who)).toEqual([cat.fprint]);

    const above = await reclassify(name, { catMinConfidence: Math.min(100, cat.catConfidence + 1) }, who);
    expect(above.body.batch.counts.cats).toBe(0);
    expect(await clientCats(who)).toEqual([]);

    const down = await reclassify(name, { catMinConfidence: 0 }, who);
    expect(down.body.batch).toMatchObject({ catMinConfidence: 0, counts: { cats: 2 } });
    expect(await catsOf(name, who)).toEqual({ 'cat.png': true, 'grey.png': true, 'coffee.png': false });
    expect(await clientCats(who)).toEqual([cat.fprint, grey.fprint].sort());
    expect((await summary(name, who)).counts.cats).toBe(2);
    expect((await detectCalls()) - before).toBe(0);
  });

  it('goes on page by page from where it stopped when its time budget runs out, ending with exact counts', async () => {
    const store = new BatchStore({
      ddb: aws().ddb,
      tableName: stackEnv('TABLE_NAME'),
      transactions: process.env.DDB_TRANSACTIONS === 'true',
    });
    const pages: (string | undefined)[] = [];
    let after: string | undefined;
    do {
      // A deadline already past: one page of one record per call.
      const out = await store.reclassify(who.clientId, name, 100, { deadline: 0, pageSize: 1, ...(after !== undefined ? { after } : {}) });
      if (out.outcome !== 'reclassified') throw new Error(out.outcome);
      after = out.after;
      pages.push(after);
    } while (after !== undefined && pages.length < 10);

    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(new Set(pages).size).toBe(pages.length);
    expect((await summary(name, who)).counts.cats).toBe(0);
    expect(Object.values(await catsOf(name, who))).toEqual([false, false, false]);
  });

  it("answers 400 for a threshold outside 0–100, 404 for another client's batch, 409 for a batch not done", async () => {
    const stranger = await newClient('rethr-str');
    const open = uniqueId('rethr-open');
    await create({ batchId: open }, who);

    const answers = await Promise.all([
      reclassify(name, { catMinConfidence: 101 }, who),
      reclassify(name, { catMinConfidence: -1 }, who),
      reclassify(name, { catMinConfidence: '50' }, who),
      reclassify(name, {}, who),
      reclassify(name, { catMinConfidence: 50 }, stranger),
      reclassify(open, { catMinConfidence: 50 }, who),
      reclassify(name, { catMinConfidence: 50, cursor: 'not-a-cursor' }, who),
    ]);

    expect(answers.map((a) => [a.status, a.body.error?.code])).toEqual([
      [400, 'invalid_parameter'],
      [400, 'invalid_parameter'],
      [400, 'invalid_parameter'],
      [400, 'invalid_parameter'],
      [404, 'not_found'],
      [409, 'batch_not_done'],
      [400, 'invalid_parameter'],
    ]);
  });
});
