// The HTTP API over loopback against the local stack: every endpoint, each access pattern, filters, paging, auth,
// tenancy and cursors. Items are seeded in the ingest's item shape (api-e2e.test.ts covers real uploads).

import { DeleteCommand, type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { routeTargets } from '../../lib/api/routes';
import { batchSummarySchema, createdBatchSchema } from '../../lib/api/schemas/batches';
import { errorSchema } from '../../lib/api/schemas/common';
import { batchGetResultSchema, type ImageAnswer, imageListSchema, imageSchema } from '../../lib/api/schemas/images';
import { logListSchema } from '../../lib/api/schemas/logs';
import { queryBatchImages } from '../../lib/store/batch/images';
import { markDeletingRequest } from '../../lib/store/batch/summary';
import { BatchStore } from '../../lib/store/batch-store';
import { cursorCodec } from '../../lib/store/table/cursor';
import { type StoreContext } from '../../lib/store/table/query';
import type { BatchItem } from '../../lib/store/table/schema';
import { batchKey } from '../../lib/store/table/schema';
import { aws, stackEnv, uniqueId } from '../helpers';
import {
  call,
  DAY_S,
  fprints,
  imageItem,
  newClient,
  readAllPages,
  type SeedImage,
  seedBatch,
  type TestClient,
  writeItems,
} from '../helpers/api';

const T0 = Date.UTC(2024, 2, 1);
const at = (minute: number) => T0 + minute * 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const nowS = () => Math.floor(Date.now() / 1000);
const fp = (items: { fprint: string }[]) => items.map((i) => i.fprint);
const storeContext = (): StoreContext => ({
  ddb: aws().ddb,
  tableName: stackEnv('TABLE_NAME'),
  cursors: cursorCodec(stackEnv('CURSOR_SECRET')),
});

let owner: TestClient;
let stranger: TestClient;
let batch: string;
let otherBatch: string;

beforeAll(async () => {
  [owner, stranger] = await Promise.all([newClient('own'), newClient('str')]);
  // a0 cat, a1 cat, a2 fail, a3 with logs, a4 expired cat, a5 still processing, a6 a duplicate-bearing non-cat.
  batch = await seedBatch(
    owner.clientId,
    [
      { fprint: 'a0', uploadTs: at(0), isCat: true, fileName: 'tabby.jpg' },
      { fprint: 'a1', uploadTs: at(1), isCat: true },
      { fprint: 'a2', uploadTs: at(2), status: 'fail', error: { code: 'NotAnImage', message: 'the file is not an image' } },
      { fprint: 'a3', uploadTs: at(3), logs: ['+0ms received', '+9ms a cat? no'] },
      { fprint: 'a4', uploadTs: at(4), isCat: true, ttl: nowS() - DAY_S, logs: ['expired'] },
      { fprint: 'a5', uploadTs: at(5), status: 'processing' },
      { fprint: 'a6', uploadTs: at(6), dupCount: 2 },
    ],
    { debug: true, expected: 8, closed: true, n_total: 8, n_pending: 1, n_success: 5, n_fail: 1, n_duplicate: 1, n_cats: 3 },
  );
  otherBatch = await seedBatch(owner.clientId, [
    { fprint: 'b0', uploadTs: at(10), isCat: true },
    { fprint: 'a0', uploadTs: at(11), isCat: true },
  ]);
});

describe('POST /v1/batches', () => {
  it('creates a batch with a ULID and one upload form per file', async () => {
    const res = await call('POST', '/v1/batches', {
      key: owner.key,
      body: {
        files: [
          { name: 'a.jpg', contentType: 'image/jpeg', size: 1000 },
          { name: 'b.png', contentType: 'image/png', size: 2000 },
        ],
      },
    });

    expect(res.status).toBe(201);
    expect(createdBatchSchema.parse(res.body).batchId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(res.body.uploads.map((u: { fields: Record<string, string> }) => u.fields.key)).toEqual([
      `uploads/${owner.clientId}/${res.body.batchId}/a.jpg`,
      `uploads/${owner.clientId}/${res.body.batchId}/b.png`,
    ]);
  });

  it('stores debug and retention, and the summary answers open until the files arrive', async () => {
    const created = await call('POST', '/v1/batches', {
      key: owner.key,
      body: { debug: true, retentionDays: 3, files: [{ name: 'a.jpg', contentType: 'image/jpeg', size: 10 }] },
    });

    const res = await call('GET', `/v1/batches/${created.body.batchId}`, { key: owner.key });

    expect(batchSummarySchema.parse(res.body)).toMatchObject({ status: 'open', debug: true, retentionDays: 3, expected: 1 });
    expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)).toBeGreaterThan(3 * DAY_S * 1000 - 2000);
  });

  it('creates a batch from an empty request', async () => {
    const res = await call('POST', '/v1/batches', { key: owner.key });

    expect([res.status, res.body.uploads, res.body.batch.status]).toEqual([201, [], 'open']);
  });

  it('answers 413 naming a declared file above the size cap', async () => {
    const res = await call('POST', '/v1/batches', {
      key: owner.key,
      body: { files: [{ name: 'huge.jpg', contentType: 'image/jpeg', size: 10 * 1024 * 1024 * 1024 }] },
    });

    expect([res.status, res.body.error.code, res.body.error.message]).toEqual([
      413,
      'file_too_large',
      expect.stringMatching(/^files\[0\]\.size: /),
    ]);
  });
});

describe('GET /v1/batches/{batchId}', () => {
  it('answers the summary: counters and status', async () => {
    const res = await call('GET', `/v1/batches/${batch}`, { key: owner.key });

    expect(batchSummarySchema.parse(res.body)).toMatchObject({
      batchId: batch,
      status: 'processing',
      counts: { total: 8, pending: 1, success: 5, fail: 1, duplicate: 1, reused: 0, cats: 3 },
      debug: true,
    });
  });

  it('answers done once closed and every declared file is finished', async () => {
    const done = await seedBatch(owner.clientId, [], {
      expected: 2,
      closed: true,
      n_total: 2,
      n_success: 1,
      n_duplicate: 1,
      done_ts: Date.now(),
    });

    const res = await call('GET', `/v1/batches/${done}`, { key: owner.key });

    expect(res.body.status).toBe('done');
  });

  it('answers 404 for an expired batch', async () => {
    const expired = await seedBatch(owner.clientId, [], { ttl: nowS() - 1 });

    const res = await call('GET', `/v1/batches/${expired}`, { key: owner.key });

    expect(res.status).toBe(404);
  });
});

describe('GET /v1/batches/{batchId}/images', () => {
  it('1: lists the batch’s live images, never the summary or an expired one', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key });

    expect(fp(imageListSchema.parse(res.body).items)).toEqual(['a0', 'a1', 'a2', 'a3', 'a5', 'a6']);
  });

  it('answers images in the docs/design.md §3 shape', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key });

    expect(res.body.items[0]).toEqual({
      batchId: batch,
      fprint: 'a0',
      fileName: 'tabby.jpg',
      status: 'success',
      isCat: true,
      catConfidence: null,
      labels: [
        { name: 'Cat', confidence: 91.5 },
        { name: 'Animal', confidence: 91.5 },
      ],
      cats: [],
      uploadedAt: iso(at(0)),
      classifiedAt: iso(at(0) + 500),
      duplicates: 0,
      duplicateFiles: [],
      reused: false,
      machineIsCat: true,
      // Seeded without a model (as a record written before records kept it, with no boxes either): none to name.
      model: null,
      previous: null,
      audit: null,
      review: null,
      error: null,
      capturedAt: null,
      camera: null,
      location: null,
      thumbnailUrl: expect.stringMatching(
        new RegExp(
          `^${stackEnv('AWS_ENDPOINT_URL_S3')}/${stackEnv('BUCKET_NAME')}/thumbnails/${owner.clientId}/${batch}/a0\\.webp\\?.*X-Amz-Signature=`,
        ),
      ),
      imageUrl: expect.stringMatching(
        new RegExp(
          `^${stackEnv('AWS_ENDPOINT_URL_S3')}/${stackEnv('BUCKET_NAME')}/processed/${owner.clientId}/${batch}/a0\\.jpg\\?.*X-Amz-Signature=`,
        ),
      ),
    });
  });

  it('2: filters by status', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query: { status: 'fail' } });

    expect(res.body.items.map((i: ImageAnswer) => [i.fprint, i.error])).toEqual([
      ['a2', { code: 'NotAnImage', message: 'the file is not an image' }],
    ]);
  });

  it('2: filters by status within a time range', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images`, {
      key: owner.key,
      query: { status: 'success', from: iso(at(1)), to: iso(at(3)) },
    });

    expect(fp(res.body.items)).toEqual(['a1', 'a3']);
  });

  it('7: filters by time range given as ISO-8601', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query: { from: iso(at(2)), to: iso(at(5)) } });

    expect(fp(res.body.items)).toEqual(['a2', 'a3', 'a5']);
  });

  it('7: filters by time range given as epoch seconds', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query: { from: at(5) / 1000 } });

    expect(fp(res.body.items)).toEqual(['a5', 'a6']);
  });
});

describe('GET /v1/batches/{batchId}/images: cat and fileName (docs/api.md)', () => {
  const list = async (query: Record<string, string | number | boolean | undefined>) => {
    const res = await call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query });
    if (res.status !== 200) throw new Error(`answered ${res.status}: ${JSON.stringify(res.body)}`);
    return fp(res.body.items);
  };

  it('lists the cats with cat=true and the classified non-cats with cat=false', async () => {
    expect(await list({ cat: true })).toEqual(['a0', 'a1']);
    expect(await list({ cat: false })).toEqual(['a3', 'a6']);
  });

  it('finds an image by the name it was uploaded as, or by the name of a duplicate upload of it', async () => {
    expect(await list({ fileName: 'tabby.jpg' })).toEqual(['a0']);
    expect(await list({ fileName: 'copy-of-a6.jpg' })).toEqual(['a6']);
    expect(await list({ fileName: 'TABBY.jpg' })).toEqual([]);
  });

  it('combines them with status, time and each other, and pages the filtered listing without short pages', async () => {
    expect(await list({ cat: true, status: 'success', from: iso(at(1)) })).toEqual(['a1']);
    expect(await list({ cat: false, fileName: 'tabby.jpg' })).toEqual([]);
    expect(await list({ fileName: 'a2.jpg', status: 'fail' })).toEqual(['a2']);
    const { items, pageSizes } = await readAllPages<ImageAnswer>(`/v1/batches/${batch}/images`, owner.key, { cat: true, limit: 1 });
    expect([fp(items), pageSizes]).toEqual([
      ['a0', 'a1'],
      [1, 1],
    ]);
  });

  it('answers 400 naming the parameter for a cat that is not true or false, and for an empty fileName', async () => {
    const answers = await Promise.all([
      call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query: { cat: 'yes' } }),
      call('GET', `/v1/batches/${batch}/images`, { key: owner.key, query: { fileName: '' } }),
    ]);

    expect(answers.map((a) => [a.status, a.body.error.code, a.body.error.message.split(':')[0]])).toEqual([
      [400, 'invalid_parameter', 'cat'],
      [400, 'invalid_parameter', 'fileName'],
    ]);
  });
});

describe('a batch being erased (its summary marked, the erasure still running)', () => {
  let who: TestClient;
  let kept: string;
  let erasing: string;
  beforeAll(async () => {
    who = await newClient('erasing');
    // Interleaved upload times, so the erasing batch's images fall between the kept batch's in every client index.
    kept = await seedBatch(
      who.clientId,
      [0, 2, 4].map((m) => ({ fprint: `k${m}`, uploadTs: at(m), isCat: true })),
      { done_ts: Date.now(), closed: true },
    );
    erasing = await seedCats(
      [1, 3, 5].map((m) => ({ fprint: `e${m}`, uploadTs: at(m), isCat: true })),
      { deleting: true },
    );
  });

  /** A done batch of cats found at 90 %, so that any threshold above 90 flips every one. */
  async function seedCats(images: SeedImage[], summary: Partial<BatchItem> = {}): Promise<string> {
    const name = await seedBatch(who.clientId, [], {
      done_ts: Date.now(),
      closed: true,
      n_total: images.length,
      n_success: images.length,
      n_cats: images.length,
      ...summary,
    });
    await writeItems(images.map((image) => ({ ...imageItem(who.clientId, name, image), cat_conf: 90 })));
    return name;
  }

  it('is left out of GET /v1/images under every index, pages still full, the other batch listed whole', async () => {
    const byTime = await readAllPages<ImageAnswer>('/v1/images', who.key, { limit: 2 });
    const cats = await readAllPages<ImageAnswer>('/v1/images', who.key, { cat: true, limit: 2 });
    const byStatus = await readAllPages<ImageAnswer>('/v1/images', who.key, { status: 'success' });
    const byFprint = await call('GET', '/v1/images', { key: who.key, query: { fprint: 'e1' } });

    expect([fp(byTime.items), byTime.pageSizes]).toEqual([
      ['k0', 'k2', 'k4'],
      [2, 1],
    ]);
    expect(fp(cats.items)).toEqual(['k0', 'k2', 'k4']);
    expect(fp(byStatus.items)).toEqual(['k0', 'k2', 'k4']);
    expect([byFprint.status, byFprint.body]).toEqual([200, { items: [] }]);
  });

  it('answers 404 to :reclassify and flips no flag', async () => {
    const res = await call('POST', `/v1/batches/${erasing}:reclassify`, { key: who.key, body: { catMinConfidence: 100 } });
    const keptAnswer = await call('POST', `/v1/batches/${kept}:reclassify`, { key: who.key, body: { catMinConfidence: 0 } });

    expect([res.status, res.body.error?.code]).toEqual([404, 'not_found']);
    expect(keptAnswer.status).toBe(200);
    // Read under the store, past the API's 404: the erasing batch's images kept their flags.
    const stored = await queryBatchImages(storeContext(), who.clientId, erasing, {}, { limit: 10 });
    expect(stored.items.map((i) => [i.fprint, i.isCat])).toEqual([
      ['e1', true],
      ['e3', true],
      ['e5', true],
    ]);
  });

  it.each([
    [
      'marked for erasure',
      (name: string) => new UpdateCommand(markDeletingRequest(stackEnv('TABLE_NAME'), who.clientId, name, Date.now())),
    ],
    [
      'erased to its last step (summary deleted)',
      (name: string) => new DeleteCommand({ TableName: stackEnv('TABLE_NAME'), Key: batchKey(who.clientId, name) }),
    ],
  ])(
    'ends a :reclassify run as missing when the batch is %s between two of its pages (the race, injected before the second page)',
    async (_, erase) => {
      const name = await seedCats(fprints(6, 'r').map((fprint, i) => ({ fprint, uploadTs: at(i), isCat: true })));
      const real = aws().ddb;
      let pages = 0;
      const racing = {
        send: async (command: unknown) => {
          if (command instanceof QueryCommand && ++pages === 2) await real.send(erase(name) as never);
          return real.send(command as never);
        },
      } as unknown as DynamoDBDocumentClient;
      const store = new BatchStore({ ddb: racing, tableName: stackEnv('TABLE_NAME'), transactions: false });

      const out = await store.reclassify(who.clientId, name, 100, { deadline: Date.now() + 60_000, pageSize: 2 });

      expect(out).toEqual({ outcome: 'missing' });
      expect(pages).toBe(2);
    },
  );

  it('answers 404 to :reclassify once its summary is gone and only items are left', async () => {
    await aws().ddb.send(new DeleteCommand({ TableName: stackEnv('TABLE_NAME'), Key: batchKey(who.clientId, erasing) }));

    const res = await call('POST', `/v1/batches/${erasing}:reclassify`, { key: who.key, body: { catMinConfidence: 100 } });

    expect([res.status, res.body.error?.code]).toEqual([404, 'not_found']);
  });
});

describe('GET /v1/batches/{batchId}/images/{fprint}', () => {
  it('5: answers one image', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images/a6`, { key: owner.key });

    expect(imageSchema.parse(res.body)).toMatchObject({ fprint: 'a6', duplicates: 2, isCat: false });
  });

  it('answers 404 for an expired image', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images/a4`, { key: owner.key });

    expect(res.status).toBe(404);
  });

  it('answers 404 for a missing image', async () => {
    const res = await call('GET', `/v1/batches/${batch}/images/nope`, { key: owner.key });

    expect([res.status, errorSchema.parse(res.body).error.code]).toEqual([404, 'not_found']);
  });
});

describe('POST /v1/batches/{batchId}/images:batchGet', () => {
  it('6: answers the images asked for, in order, and names the ones not found', async () => {
    const res = await call('POST', `/v1/batches/${batch}/images:batchGet`, { key: owner.key, body: { fprints: ['a5', 'a4', 'zz', 'a0'] } });

    expect(batchGetResultSchema.parse(res.body)).toMatchObject({ notFound: ['a4', 'zz'] });
    expect(fp(res.body.items)).toEqual(['a5', 'a0']);
  });
});

describe('GET /v1/batches/{batchId}/logs', () => {
  it('4: lists the debug logs of the images that have them, not expired ones', async () => {
    const res = await call('GET', `/v1/batches/${batch}/logs`, { key: owner.key });

    expect(logListSchema.parse(res.body).items).toEqual([
      {
        batchId: batch,
        fprint: 'a3',
        fileName: 'a3.jpg',
        status: 'success',
        loggedAt: iso(at(3)),
        lines: ['+0ms received', '+9ms a cat? no'],
      },
    ]);
  });
});

describe('GET /v1/images', () => {
  it('8: lists the client’s images across batches by upload time', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key });

    expect(res.body.items.map((i: ImageAnswer) => `${i.batchId === batch ? 'A' : 'B'}:${i.fprint}`)).toEqual([
      'A:a0',
      'A:a1',
      'A:a2',
      'A:a3',
      'A:a5',
      'A:a6',
      'B:b0',
      'B:a0',
    ]);
  });

  it('8: filters by time range', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { from: iso(at(6)), to: at(10) / 1000 } });

    expect(fp(res.body.items)).toEqual(['a6', 'b0']);
  });

  it('3: filters by status across batches', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { status: 'fail' } });

    expect(fp(res.body.items)).toEqual(['a2']);
  });

  it.each(['pending', 'processing', 'duplicate'])('refuses status=%s, which no client-wide listing can match', async (status) => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { status } });

    expect([res.status, res.body.error.message]).toEqual([400, expect.stringMatching(/^status: /)]);
  });

  it('5b: finds one image across the client’s batches', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { fprint: 'a0' } });

    expect(res.body.items.map((i: ImageAnswer) => i.batchId).sort()).toEqual([batch, otherBatch].sort());
  });

  it('9: lists the client’s cats, leaving out the expired one', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { cat: true } });

    expect(fp(res.body.items)).toEqual(['a0', 'a1', 'b0', 'a0']);
  });

  it('9: lists the client’s cats in a time range', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { cat: true, from: iso(at(1)), to: iso(at(10)) } });

    expect(fp(res.body.items)).toEqual(['a1', 'b0']);
  });

  it('lists classified non-cats with cat=false', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { cat: false } });

    expect(fp(res.body.items)).toEqual(['a3', 'a6']);
  });

  it('combines fingerprint and time filters', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { fprint: 'a0', from: iso(at(5)) } });

    expect(res.body.items.map((i: ImageAnswer) => i.batchId)).toEqual([otherBatch]);
  });

  it('combines cats and status', async () => {
    const res = await call('GET', '/v1/images', { key: owner.key, query: { cat: true, status: 'fail' } });

    expect(res.body.items).toEqual([]);
  });

  it('never lists another client’s images', async () => {
    const res = await call('GET', '/v1/images', { key: stranger.key, query: { fprint: 'a0' } });

    expect(res.body).toEqual({ items: [] });
  });
});

describe('paging', () => {
  let client: TestClient;
  let big: string;
  const all = fprints(250);
  beforeAll(async () => {
    client = await newClient('pg');
    big = await seedBatch(
      client.clientId,
      all.map((fprint, i) => ({ fprint, uploadTs: at(i), isCat: i % 2 === 0 })),
    );
  });

  it('pages through 250 images with limit 100: every image once, none missing', async () => {
    const { items, pageSizes } = await readAllPages<ImageAnswer>(`/v1/batches/${big}/images`, client.key, { limit: 100 });

    expect(pageSizes).toEqual([100, 100, 50]);
    expect(fp(items)).toEqual(all);
  });

  it('pages a client-wide listing the same way', async () => {
    const { items, pageSizes } = await readAllPages<ImageAnswer>('/v1/images', client.key, { limit: 100 });

    expect([pageSizes, fp(items)]).toEqual([[100, 100, 50], all]);
  });

  it('pages a filtered listing (cats) without short pages', async () => {
    const { items, pageSizes } = await readAllPages<ImageAnswer>('/v1/images', client.key, { limit: 100, cat: true });

    expect([pageSizes, fp(items)]).toEqual([[100, 25], all.filter((_, i) => i % 2 === 0)]);
  });

  it('answers no cursor on the last page', async () => {
    const res = await call('GET', `/v1/batches/${big}/images`, { key: client.key, query: { limit: 100, from: iso(at(200)) } });

    expect([res.body.items.length, res.body.cursor]).toEqual([50, undefined]);
  });

  it('answers 400 to a forged cursor', async () => {
    const first = await call('GET', `/v1/batches/${big}/images`, { key: client.key, query: { limit: 10 } });
    const [payload, mac] = (first.body.cursor as string).split('.');
    const forged = `${Buffer.from(JSON.stringify({ batch_id: big, img_fprint: 'f00200' })).toString('base64url')}.${mac}`;

    const res = await call('GET', `/v1/batches/${big}/images`, { key: client.key, query: { limit: 10, cursor: forged } });

    expect(payload).toBeDefined();
    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_cursor']);
  });

  it('answers 400 to a cursor used with other filters', async () => {
    const first = await call('GET', `/v1/batches/${big}/images`, { key: client.key, query: { limit: 10 } });

    const res = await call('GET', `/v1/batches/${big}/images`, {
      key: client.key,
      query: { limit: 10, status: 'success', cursor: first.body.cursor },
    });

    expect(res.status).toBe(400);
  });

  it('answers 400 to another client’s cursor', async () => {
    const theirs = await call('GET', '/v1/images', { key: client.key, query: { limit: 10 } });

    const res = await call('GET', '/v1/images', { key: owner.key, query: { limit: 10, cursor: theirs.body.cursor } });

    expect([res.status, res.body.error.code]).toEqual([400, 'invalid_cursor']);
  });
});

describe('authentication', () => {
  const routes = (b: string): [string, string, unknown?][] => [
    ['POST', '/v1/batches', {}],
    ['GET', `/v1/batches/${b}`],
    ['GET', `/v1/batches/${b}/images`],
    ['GET', `/v1/batches/${b}/images/a0`],
    ['POST', `/v1/batches/${b}/images:batchGet`, { fprints: ['a0'] }],
    ['GET', `/v1/batches/${b}/logs`],
    ['GET', '/v1/images'],
  ];

  it('answers 401 on every route without a key', async () => {
    const answers = await Promise.all(routes(batch).map(([m, p, body]) => call(m, p, { key: null, body })));

    expect(answers.map((a) => [a.status, a.body.error.code])).toEqual(routes(batch).map(() => [401, 'unauthorized']));
  });

  it('answers 401 on every route with an unknown key', async () => {
    const answers = await Promise.all(
      routes(batch).map(([m, p, body]) => call(m, p, { key: 'icw_not-a-real-key-at-all-000000000000000000', body })),
    );

    expect(answers.map((a) => a.status)).toEqual(routes(batch).map(() => 401));
  });

  it('answers 401 to another scheme than Bearer', async () => {
    const res = await call('GET', '/v1/images', { key: null, headers: { authorization: `Basic ${owner.key}` } });

    expect(res.status).toBe(401);
  });

  it('serves the OpenAPI document without a key', async () => {
    const res = await call('GET', '/v1/openapi.json', { key: null });

    expect([res.status, res.body.openapi, Object.keys(res.body.paths).length]).toEqual([
      200,
      '3.1.0',
      new Set(routeTargets().map((r) => r.path)).size,
    ]);
  });
});

describe('tenancy', () => {
  /** The answer for `path` with the batch id replaced, so a foreign batch's answer compares to a missing one's. */
  const normalise = (body: unknown, batchId: string) => JSON.parse(JSON.stringify(body).split(batchId).join('<batch>'));
  const batchRoutes = (b: string): [string, string, unknown?][] => [
    ['GET', `/v1/batches/${b}`],
    ['GET', `/v1/batches/${b}/images`],
    ['GET', `/v1/batches/${b}/images/a0`],
    ['POST', `/v1/batches/${b}/images:batchGet`, { fprints: ['a0'] }],
    ['GET', `/v1/batches/${b}/logs`],
  ];

  it('answers 404 to another client on every batch route', async () => {
    const answers = await Promise.all(batchRoutes(batch).map(([m, p, body]) => call(m, p, { key: stranger.key, body })));

    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404, 404]);
  });

  it('answers another client exactly as it answers a batch that does not exist', async () => {
    const missing = uniqueId('missing');

    const foreign = await Promise.all(batchRoutes(batch).map(([m, p, body]) => call(m, p, { key: stranger.key, body })));
    const absent = await Promise.all(batchRoutes(missing).map(([m, p, body]) => call(m, p, { key: stranger.key, body })));

    expect(foreign.map((a) => [a.status, normalise(a.body, batch)])).toEqual(absent.map((a) => [a.status, normalise(a.body, missing)]));
  });

  it('lets the owner read what the stranger cannot', async () => {
    const answers = await Promise.all(batchRoutes(batch).map(([m, p, body]) => call(m, p, { key: owner.key, body })));

    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
  });
});
