// POST …:redetect asked more than once at a time (issue 37 items 4 and 5): the run is taken first, by one call only;
// an image is claimed before DetectLabels is paid for it; a call during a run starts nothing and charges nothing.
// Done batches are seeded as records with their resting objects (small distinct PNGs), as the ingest leaves them.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchPartition } from '../../lib/store/table/schema';
import { aws, detectCalls, stackEnv, uploadFile, waitFor } from '../helpers';
import { call, imageItem, newClient, seedBatch, type TestClient, writeItems } from '../helpers/api';
import { distinctImages, seededRandom } from '../helpers/stack-process';

interface Stored {
  img_fprint: string;
  prev?: unknown;
  rd_run?: string;
}

/** A done batch of `n` distinct images, each record with its resting object. */
async function doneBatchOf(client: TestClient, n: number, seed: number): Promise<string> {
  const pngs = await distinctImages(n, seededRandom(seed));
  const now = Date.now();
  const images = pngs.map((_, i) => ({ fprint: `fp${seed}-${String(i).padStart(3, '0')}`, uploadTs: now - 60_000 + i }));
  const batchId = await seedBatch(client.clientId, [], {
    closed: true,
    closed_ts: now - 30_000,
    done_ts: now - 20_000,
    n_total: n,
    n_pending: 0,
    n_success: n,
  });
  await writeItems(images.map((image) => ({ ...imageItem(client.clientId, batchId, image), format: 'png', width: 96, height: 96 })));
  await Promise.all(
    images.map((image, i) => uploadFile(`processed/${client.clientId}/${batchId}/${image.fprint}.jpg`, pngs[i] as Buffer, 'image/png')),
  );
  return batchId;
}

async function records(client: TestClient, batchId: string): Promise<{ summary: Record<string, unknown>; images: Stored[] }> {
  const out = await aws().ddb.send(
    new QueryCommand({
      TableName: stackEnv('TABLE_NAME'),
      KeyConditionExpression: 'batch_id = :p',
      ExpressionAttributeValues: { ':p': batchPartition(client.clientId, batchId) },
      ConsistentRead: true,
    }),
  );
  const items = out.Items ?? [];
  return {
    summary: items.find((i) => i.img_fprint === '#BATCH') as Record<string, unknown>,
    images: items.filter((i) => i.img_fprint !== '#BATCH') as Stored[],
  };
}

const accepted = async (client: TestClient): Promise<number> =>
  (await call('GET', '/v1/usage', { key: client.key })).body.images.accepted as number;

const doneBatch = (client: TestClient, batchId: string) =>
  waitFor(
    async () => {
      const b = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body;
      return b?.status === 'done' ? b : undefined;
    },
    { timeoutMs: 90_000, what: `batch ${batchId} done` },
  );

describe('POST …:redetect asked again while it runs', () => {
  it('two at once: one run, DetectLabels once per image, charged once, the batch done with every image re-detected', async () => {
    // Arrange
    const n = 6;
    const client = await newClient('rd-two');
    const batchId = await doneBatchOf(client, n, 41);
    const [calls, before] = [await detectCalls(), await accepted(client)];

    // Act
    const [a, b] = await Promise.all(
      [0, 1].map(() => call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { all: true } })),
    );
    const done = await doneBatch(client, batchId);

    // Assert: one call started the run; the other found it going and started nothing (200, newCalls 0).
    const after = await records(client, batchId);
    expect({
      detectLabels: (await detectCalls()) - calls,
      charged: (await accepted(client)) - before,
      redetected: after.images.filter((i) => i.prev !== undefined && i.rd_run === undefined).length,
      run: after.summary.rd_run,
    }).toEqual({ detectLabels: n, charged: n, redetected: n, run: undefined });
    expect([a?.status, b?.status]).toEqual([200, 200]);
    expect([a?.body.newCalls, b?.body.newCalls].sort((x, y) => x - y)).toEqual([0, n]);
    expect(done.counts).toMatchObject({ total: n, success: n, pending: 0 });
  }, 120_000);

  it('twenty calls during one run pay no more DetectLabels calls than images, and charge once', async () => {
    // Arrange
    const n = 5;
    const client = await newClient('rd-twenty');
    const batchId = await doneBatchOf(client, n, 42);
    const [calls, before] = [await detectCalls(), await accepted(client)];

    // Act
    const first = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { all: true } });
    const again = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { all: true } })),
    );
    await doneBatch(client, batchId);

    // Assert
    const after = await records(client, batchId);
    expect({
      detectLabels: (await detectCalls()) - calls,
      charged: (await accepted(client)) - before,
      redetected: after.images.filter((i) => i.prev !== undefined && i.rd_run === undefined).length,
    }).toEqual({ detectLabels: n, charged: n, redetected: n });
    expect(first.body).toMatchObject({ newCalls: n, batch: { status: 'processing' } });
    expect(again.map((r) => r.status)).toEqual(again.map(() => 200));
    // They came during the run (some at least: the test means nothing otherwise) and started nothing.
    expect(again.some((r) => r.body.batch.status === 'processing')).toBe(true);
    expect(again.filter((r) => r.body.batch.status === 'processing').every((r) => r.body.newCalls === 0)).toBe(true);
  }, 120_000);
});
