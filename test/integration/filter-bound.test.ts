// A filtered listing examines a bounded number of stored items per request (issue 29, item 10): a label that matches
// little answers short, even empty, pages with a cursor instead of reading the whole batch for one page, and following
// the cursors still yields every match once, in order. The bound is set small here (the store's own is MAX_EXAMINED, 1,000).
import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { ApiClient } from '../../lib/cli/api-client';
import type { Image } from '../../lib/domain/image';
import { queryBatchImages } from '../../lib/store/batch/images';
import { cursorCodec } from '../../lib/store/table/cursor';
import type { StoreContext } from '../../lib/store/table/query';
import { aws, stackEnv, uniqueId } from '../helpers';
import { call, fprints, imageItem, newClient, seedBatch, writeItems } from '../helpers/api';

const BOUND = 10;

/** The store's context on the local table, counting the stored items each Query examined (its ScannedCount). */
function counting(): { ctx: StoreContext; examined: () => number } {
  let examined = 0;
  const real = aws().ddb;
  const ddb = {
    send: async (command: unknown) => {
      const out = await real.send(command as never);
      if (command instanceof QueryCommand) examined += (out as QueryCommandOutput).ScannedCount ?? 0;
      return out;
    },
  } as unknown as StoreContext['ddb'];
  const ctx: StoreContext = { ddb, tableName: stackEnv('TABLE_NAME'), cursors: cursorCodec(stackEnv('CURSOR_SECRET')), maxExamined: BOUND };
  return { ctx, examined: () => examined };
}

test('?label=Zebra&limit=1 examines at most the bound per request, answers short pages with a cursor, and the cursors reach every match', async () => {
  const clientId = uniqueId('bound');
  const ids = fprints(40, 'z');
  const zebras = [ids[5]!, ids[22]!, ids[38]!];
  const batchId = await seedBatch(clientId, []);
  await writeItems(
    ids.map((fprint, i) => {
      const item = imageItem(clientId, batchId, { fprint, uploadTs: Date.UTC(2024, 0, 1) + i * 1000 });
      return {
        ...item,
        labels: zebras.includes(fprint) ? [{ name: 'Zebra', confidence: 93 }] : [{ name: 'Grass', confidence: 88 }],
      } as unknown as Record<string, unknown>;
    }),
  );
  const { ctx, examined } = counting();

  const pages: { items: string[]; cursor: boolean; examined: number }[] = [];
  let cursor: string | undefined;
  do {
    const before = examined();
    const page = await queryBatchImages(ctx, clientId, batchId, { label: ['Zebra'] }, { limit: 1, ...(cursor ? { cursor } : {}) });
    pages.push({ items: page.items.map((i: Image) => i.fprint), cursor: page.cursor !== undefined, examined: examined() - before });
    cursor = page.cursor;
  } while (cursor && pages.length < 20);

  expect(pages[0]).toMatchObject({ items: [zebras[0]], cursor: true });
  expect(pages.every((p) => p.examined <= BOUND)).toBe(true);
  expect(pages.some((p) => p.items.length === 0 && p.cursor)).toBe(true); // a stretch without zebras: an empty page, and on
  expect(pages.flatMap((p) => p.items)).toEqual(zebras);
  expect(pages.at(-1)?.cursor).toBe(false);
});

test("GET …/images?label= answers a short page with a cursor at the API's bound, and the CLI follows it to the last match", async () => {
  // 1,100 images, zebras at the first and the last: the API's own bound (1,000 examined) answers a short page with the
  // first zebra and a cursor, then the last. (The empty pages of a longer stretch: the test above.)
  const client = await newClient('bound');
  const ids = fprints(1_100, 'y');
  const zebras = [ids[0]!, ids[1_099]!];
  const batchId = await seedBatch(client.clientId, []);
  await writeItems(
    ids.map((fprint, i) => {
      const item = imageItem(client.clientId, batchId, { fprint, uploadTs: Date.UTC(2024, 0, 1) + i * 1000 });
      return {
        ...item,
        labels: zebras.includes(fprint) ? [{ name: 'Zebra', confidence: 93 }] : [{ name: 'Grass', confidence: 88 }],
      } as unknown as Record<string, unknown>;
    }),
  );
  const first = await call('GET', `/v1/batches/${batchId}/images?label=Zebra&limit=100`, { key: client.key });
  const cli = new ApiClient({ apiUrl: stackEnv('ICECAT_API_URL'), apiKey: client.key });

  const listed: string[] = [];
  for await (const image of cli.images(batchId, { label: ['Zebra'] })) listed.push(image.fprint);

  expect([first.body.items.length, typeof first.body.cursor]).toEqual([1, 'string']);
  expect(listed).toEqual(zebras);
});
