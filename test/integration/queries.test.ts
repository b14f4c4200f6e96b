// The store's reads (lib/store/table/query.ts) against real items in the local DynamoDB, through the AWS SDK: each access
// pattern is reached through the query function that chooses it from the filters, as the API calls them.
import { BatchGetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { Image } from '../../lib/domain/image';
import { queryBatchImages, queryBatchLogs, queryVisibleBatchImages } from '../../lib/store/batch/images';
import { getBatch } from '../../lib/store/batch/read';
import { BatchStore } from '../../lib/store/batch-store';
import { queryClientImages } from '../../lib/store/client/images';
import { getImage, getImages } from '../../lib/store/image/reads';
import { CursorError, cursorCodec } from '../../lib/store/table/cursor';
import { StoreThrottledError } from '../../lib/store/table/errors';
import type { StoreContext } from '../../lib/store/table/query';
import { aws, stackEnv, uniqueId } from '../helpers';
import { DAY_S, fprints, type SeedImage, seedBatch } from '../helpers/api';

const T0 = Date.UTC(2024, 0, 1);
const nowS = () => Math.floor(Date.now() / 1000);
const ctx = (): StoreContext => ({
  ddb: aws().ddb,
  tableName: stackEnv('TABLE_NAME'),
  cursors: cursorCodec(stackEnv('CURSOR_SECRET')),
});
const ids = (items: Image[]) => items.map((i) => i.fprint);

async function allPages<T>(read: (cursor?: string) => Promise<{ items: T[]; cursor?: string }>) {
  const items: T[] = [];
  const sizes: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    items.push(...page.items);
    sizes.push(page.items.length);
    cursor = page.cursor;
  } while (cursor);
  return { items, sizes };
}

/**
 * One client, two batches. Batch A: 6 images a minute apart (a0..a5): a0 a cat, a1 a cat, a2 fail, a3 with logs,
 * a4 expired, a5 still processing. Batch B: b0 (a cat) and a copy of a0's fingerprint.
 */
const clientId = uniqueId('q');
let batchA: string;
let batchB: string;
const at = (minute: number) => T0 + minute * 60_000;

beforeAll(async () => {
  const a: SeedImage[] = [
    { fprint: 'a0', uploadTs: at(0), isCat: true },
    { fprint: 'a1', uploadTs: at(1), isCat: true },
    { fprint: 'a2', uploadTs: at(2), status: 'fail', error: { code: 'NotAnImage', message: 'not an image' } },
    { fprint: 'a3', uploadTs: at(3), logs: ['+0ms received', '+5ms claimed'] },
    { fprint: 'a4', uploadTs: at(4), isCat: true, logs: ['old'], ttl: nowS() - DAY_S },
    { fprint: 'a5', uploadTs: at(5), status: 'processing' },
  ];
  batchA = await seedBatch(clientId, a);
  batchB = await seedBatch(clientId, [
    { fprint: 'b0', uploadTs: at(10), isCat: true },
    { fprint: 'a0', uploadTs: at(11), isCat: true },
  ]);
});

describe('batch queries', () => {
  it('1: lists a batch’s images without its summary or expired items', async () => {
    const page = await queryBatchImages(ctx(), clientId, batchA, {}, { limit: 50 });

    expect(ids(page.items)).toEqual(['a0', 'a1', 'a2', 'a3', 'a5']);
  });

  it('1: shows nothing of the batch to another client', async () => {
    const page = await queryBatchImages(ctx(), 'someone-else', batchA, {}, { limit: 50 });

    expect(page.items).toEqual([]);
  });

  it('2: lists a batch by status', async () => {
    const page = await queryBatchImages(ctx(), clientId, batchA, { status: 'success' }, { limit: 50 });

    expect(ids(page.items)).toEqual(['a0', 'a1', 'a3']);
  });

  it('2: narrows a status to a time range', async () => {
    const page = await queryBatchImages(ctx(), clientId, batchA, { status: 'success', from: at(1), to: at(3) }, { limit: 50 });

    expect(ids(page.items)).toEqual(['a1', 'a3']);
  });

  it('4: lists only the images with logs, leaving out expired ones', async () => {
    const page = await queryBatchLogs(ctx(), clientId, batchA, {}, { limit: 50 });

    expect(page.items.map((i) => [i.fprint, i.logs])).toEqual([['a3', ['+0ms received', '+5ms claimed']]]);
  });

  it('7: lists a batch in a time range, oldest first', async () => {
    const page = await queryBatchImages(ctx(), clientId, batchA, { from: at(2), to: at(5) }, { limit: 50 });

    expect(ids(page.items)).toEqual(['a2', 'a3', 'a5']);
  });
});

describe('an image still being classified', () => {
  it('is listed by status processing from the batch itself, with its receipt time, before it has status keys', async () => {
    const owner = uniqueId('busy');
    const now = Date.now();
    const batch = await seedBatch(owner, [{ fprint: 'done', uploadTs: now - 1000 }]);
    const store = new BatchStore({
      ddb: aws().ddb,
      tableName: stackEnv('TABLE_NAME'),
      transactions: process.env.DDB_TRANSACTIONS === 'true',
    });
    const claimed = await store.claim({
      batchId: batch,
      fprint: 'busy',
      clientId: owner,
      key: `uploads/${owner}/${batch}/busy.png`,
      fileName: 'busy.png',
      phash: '0'.repeat(16),
      format: 'png',
      width: 100,
      height: 100,
      claimId: 'c1',
      now,
      leaseMs: 60_000,
      expiresAt: Math.floor(now / 1000) + 86_400,
    });

    const processing = await queryBatchImages(ctx(), owner, batch, { status: 'processing' }, { limit: 50 });
    const succeeded = await queryBatchImages(ctx(), owner, batch, { status: 'success' }, { limit: 50 });

    expect(claimed).toEqual({ held: true, takeover: false, uploadedAt: now });
    expect(processing.items.map((i) => [i.fprint, i.uploadedAt, i.status])).toEqual([['busy', now, 'processing']]);
    expect(ids(succeeded.items)).toEqual(['done']);
  });
});

describe('client queries', () => {
  it('3: lists a client’s images by status across batches', async () => {
    const page = await queryClientImages(ctx(), clientId, { status: 'success' }, { limit: 50 });

    expect(page.items.map((i) => `${i.batchId === batchA ? 'A' : 'B'}:${i.fprint}`)).toEqual(['A:a0', 'A:a1', 'A:a3', 'B:b0', 'B:a0']);
  });

  it('5b: finds one image across the client’s batches', async () => {
    const page = await queryClientImages(ctx(), clientId, { fprint: 'a0' }, { limit: 50 });

    expect(page.items.map((i) => i.batchId).sort()).toEqual([batchA, batchB].sort());
  });

  it('8: lists a client’s images in a time range', async () => {
    const page = await queryClientImages(ctx(), clientId, { from: at(5), to: at(10) }, { limit: 50 });

    expect(ids(page.items)).toEqual(['a5', 'b0']);
  });

  it('9: lists a client’s cats in a time range, leaving out expired ones', async () => {
    const page = await queryClientImages(ctx(), clientId, { cat: true, from: at(1) }, { limit: 50 });

    expect(ids(page.items)).toEqual(['a1', 'b0', 'a0']);
  });

  it('9: lists nothing for a client without cats', async () => {
    const page = await queryClientImages(ctx(), uniqueId('nobody'), { cat: true }, { limit: 50 });

    expect(page).toEqual({ items: [] });
  });
});

describe('key reads', () => {
  it('5: reads one image', async () => {
    const item = await getImage(ctx(), clientId, batchA, 'a2');

    expect(item).toMatchObject({ fprint: 'a2', status: 'fail', errorCode: 'NotAnImage' });
  });

  it('5: leaves out an expired image', async () => {
    expect(await getImage(ctx(), clientId, batchA, 'a4')).toBeUndefined();
  });

  it('5: finds nothing under another client’s batch of the same name', async () => {
    expect(await getImage(ctx(), 'someone-else', batchA, 'a0')).toBeUndefined();
  });

  it('5: never returns the summary as an image', async () => {
    expect(await getImage(ctx(), clientId, batchA, '#BATCH')).toBeUndefined();
  });

  it('6: reads many images in the order asked, leaving out missing and expired ones', async () => {
    const items = await getImages(ctx(), clientId, batchA, ['a3', 'nope', 'a0', 'a4', 'a0']);

    expect(ids(items)).toEqual(['a3', 'a0']);
  });

  it('reads the batch summary', async () => {
    const summary = await getBatch(ctx(), clientId, batchA);

    expect(summary).toMatchObject({ batchId: batchA, clientId, closed: false });
  });
});

describe('paging', () => {
  let big: string;
  const bigClient = uniqueId('p');
  beforeAll(async () => {
    // 120 images; every third one expired so that the ttl filter leaves DynamoDB pages short.
    big = await seedBatch(
      bigClient,
      fprints(120).map((fprint, i) => ({ fprint, uploadTs: at(i), ttl: i % 3 === 2 ? nowS() - 60 : undefined, isCat: i % 2 === 0 })),
    );
  });

  it('reads every live item exactly once across pages', async () => {
    const { items } = await allPages((cursor) => queryBatchImages(ctx(), bigClient, big, {}, { limit: 7, cursor }));

    expect(ids(items)).toEqual(fprints(120).filter((_, i) => i % 3 !== 2));
  });

  it('fills every page but the last despite the filter', async () => {
    const { sizes } = await allPages((cursor) => queryBatchImages(ctx(), bigClient, big, {}, { limit: 7, cursor }));

    expect(sizes.slice(0, -1).every((n) => n === 7)).toBe(true);
    expect(sizes[sizes.length - 1]).toBeGreaterThan(0);
  });

  it('gives no cursor when the last page ends exactly at the end', async () => {
    const { sizes } = await allPages((cursor) => queryBatchImages(ctx(), bigClient, big, {}, { limit: 80, cursor }));

    expect(sizes).toEqual([80]);
  });

  it('pages a GSI query (9) too', async () => {
    const { items } = await allPages((cursor) => queryClientImages(ctx(), bigClient, { cat: true }, { limit: 9, cursor }));

    expect(ids(items)).toEqual(fprints(120).filter((_, i) => i % 2 === 0 && i % 3 !== 2));
  });

  it('refuses a cursor from another batch', async () => {
    const first = await queryBatchImages(ctx(), bigClient, big, {}, { limit: 5 });

    await expect(queryBatchImages(ctx(), clientId, batchA, {}, { limit: 5, cursor: first.cursor })).rejects.toThrow(CursorError);
  });

  it('refuses a cursor from another index of the same batch', async () => {
    const first = await queryBatchImages(ctx(), bigClient, big, {}, { limit: 5 });

    await expect(queryBatchImages(ctx(), bigClient, big, { from: 0 }, { limit: 5, cursor: first.cursor })).rejects.toThrow(CursorError);
  });
});

describe('a batch’s images with its summary (GET /v1/batches/{id}/images)', () => {
  const bigClient = uniqueId('v');
  let big: string;
  beforeAll(async () => {
    // As in paging: every third image expired, so the ttl filter leaves the first Query's page short.
    big = await seedBatch(
      bigClient,
      fprints(40).map((fprint, i) => ({ fprint, uploadTs: at(i), ttl: i % 3 === 2 ? nowS() - 60 : undefined })),
    );
  });

  it('lists the first page as the listing does, without the summary', async () => {
    const page = await queryVisibleBatchImages(ctx(), clientId, batchA, {}, { limit: 50 });

    expect(page).toEqual(await queryBatchImages(ctx(), clientId, batchA, {}, { limit: 50 }));
    expect(ids(page!.items)).toEqual(['a0', 'a1', 'a2', 'a3', 'a5']);
  });

  it('fills the first page despite the filter and pages on with the listing’s cursor', async () => {
    const { items, sizes } = await allPages(
      async (cursor) => (await queryVisibleBatchImages(ctx(), bigClient, big, {}, { limit: 7, cursor }))!,
    );

    expect(ids(items)).toEqual(fprints(40).filter((_, i) => i % 3 !== 2));
    expect(sizes).toEqual([7, 7, 7, 6]);
    const first = await queryVisibleBatchImages(ctx(), bigClient, big, {}, { limit: 1 });
    expect(first).toEqual(await queryBatchImages(ctx(), bigClient, big, {}, { limit: 1 }));
  });

  it('is undefined for a batch being erased, expired, missing or another client’s, first page or not', async () => {
    const erasing = await seedBatch(clientId, [{ fprint: 'e0', uploadTs: at(0) }], { deleting: true });
    const expired = await seedBatch(clientId, [{ fprint: 'x0', uploadTs: at(0) }], { ttl: nowS() - 1 });
    const { cursor } = await queryBatchImages(ctx(), clientId, batchA, {}, { limit: 1 });

    for (const [owner, batchId] of [
      [clientId, erasing],
      [clientId, expired],
      [clientId, uniqueId('none')],
      ['someone-else', batchA],
    ] as const) {
      expect(await queryVisibleBatchImages(ctx(), owner, batchId, {}, { limit: 50 })).toBeUndefined();
      expect(await queryVisibleBatchImages(ctx(), owner, batchId, { status: 'success' }, { limit: 50 })).toBeUndefined();
      expect(await queryVisibleBatchImages(ctx(), owner, batchId, {}, { limit: 50, cursor })).toBeUndefined();
    }
  });
});

describe('BatchGetItem retries', () => {
  /** Answers the first `times` calls with every key unprocessed, then lets the real table answer. */
  function throttlingContext(times: number): { store: StoreContext; calls: () => number } {
    const real = ctx();
    let calls = 0;
    const ddb = {
      send: async (command: BatchGetCommand): Promise<BatchGetCommandOutput> => {
        calls++;
        if (calls <= times) return { UnprocessedKeys: command.input.RequestItems, Responses: {}, $metadata: {} };
        return real.ddb.send(command);
      },
    } as unknown as StoreContext['ddb'];
    return { store: { ...real, ddb }, calls: () => calls };
  }
  const fast = { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 };

  it('6: retries UnprocessedKeys under throttling until they are read', async () => {
    const { store, calls } = throttlingContext(2);

    const items = await getImages(store, clientId, batchA, ['a0', 'a1'], fast);

    expect([ids(items), calls()]).toEqual([['a0', 'a1'], 3]);
  });

  it('6: gives up with StoreThrottledError when throttling outlasts the retries', async () => {
    const { store } = throttlingContext(10);

    await expect(getImages(store, clientId, batchA, ['a0'], fast)).rejects.toThrow(StoreThrottledError);
  });
});
