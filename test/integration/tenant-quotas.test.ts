// One client's quota is its own cost (issue 29, items 7 and 8): no upload forms beyond today's remaining images, no
// bytes kept of an upload refused for quota, and a daily limit on the batches a client creates, through the API or
// by plain-S3 uploads into new batch ids.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { defaultClientLimits } from '../../functions/config';
import { sweepExpiredBatches } from '../../lib/erase/expiry';
import { runEraseJob } from '../../lib/erase/job';
import { nextUtcDay } from '../../lib/quota/limits';
import { BatchErasure } from '../../lib/store/batch/erasure';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ExpiredBatches } from '../../lib/store/expiry/expired';
import { aws, stackEnv, uploadFile, waitForBridgeIdle } from '../helpers';
import { batchItem, call, newClient, type TestClient, writeItems } from '../helpers/api';
import { distinctImages, seededRandom } from '../helpers/stack-process';

const quotaStore = () =>
  new ClientQuotaStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME'), defaults: defaultClientLimits(), cacheMs: 0 });

async function limitedClient(limits: { maxImagesPerDay?: number; maxBatchesPerDay?: number }, prefix: string): Promise<TestClient> {
  const client = await newClient(prefix);
  await quotaStore().setLimits(client.clientId, limits);
  return client;
}

async function keysUnder(prefix: string): Promise<string[]> {
  const out = await aws().s3.send(new ListObjectsV2Command({ Bucket: stackEnv('BUCKET_NAME'), Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key as string);
}

const file = (name: string) => ({ name, contentType: 'image/png', size: 1000 });
const resetAt = () => new Date(nextUtcDay(Date.now())).toISOString();

describe('upload forms and the daily images quota', () => {
  it("refuses forms beyond today's remaining images: 429 quota_exceeded naming the reset time", async () => {
    const client = await limitedClient({ maxImagesPerDay: 2 }, 'qf');

    const tooMany = await call('POST', '/v1/batches', {
      key: client.key,
      body: { batchId: 'three', files: [file('a.png'), file('b.png'), file('c.png')] },
    });
    const enough = await call('POST', '/v1/batches', { key: client.key, body: { batchId: 'two', files: [file('a.png'), file('b.png')] } });
    const more = await call('POST', '/v1/batches/two/uploads', {
      key: client.key,
      body: { files: [file('c.png'), file('d.png'), file('e.png')] },
    });

    expect(tooMany.status).toBe(429);
    expect(tooMany.body.error.code).toBe('quota_exceeded');
    expect(tooMany.body.error.message).toContain(resetAt());
    expect(Number(tooMany.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call('GET', '/v1/batches/three', { key: client.key })).status).toBe(404);
    expect(enough.status).toBe(201);
    expect(enough.body.uploads).toHaveLength(2);
    expect(more.status).toBe(429);
    expect(more.body.error.code).toBe('quota_exceeded');
  });

  it('keeps the record of a plain-S3 upload beyond the quota, and none of its bytes', async () => {
    const client = await limitedClient({ maxImagesPerDay: 1 }, 'qb');
    const [first, second] = await distinctImages(2, seededRandom(4242));

    await uploadFile(`uploads/${client.clientId}/over/p0.png`, first!, 'image/png');
    await waitForBridgeIdle();
    await uploadFile(`uploads/${client.clientId}/over/p1.png`, second!, 'image/png');
    await waitForBridgeIdle();

    const listed = await call('GET', '/v1/batches/over/images', { key: client.key, query: { limit: 10 } });
    const refused = listed.body.items.find((i: { fileName: string }) => i.fileName === 'p1.png');
    expect(refused).toMatchObject({ status: 'fail', error: { code: 'QuotaExceeded' } });
    expect(await keysUnder(`failed/${client.clientId}/`)).toEqual([]);
    expect(await keysUnder(`uploads/${client.clientId}/`)).toEqual([]);
  }, 60_000);
});

describe('batches created per client per UTC day', () => {
  it('refuses POST /v1/batches beyond the limit with 429 quota_exceeded naming the reset time', async () => {
    const client = await limitedClient({ maxBatchesPerDay: 2 }, 'qn');

    const answers = [];
    for (const batchId of ['n1', 'n2', 'n3']) answers.push(await call('POST', '/v1/batches', { key: client.key, body: { batchId } }));
    const again = await call('POST', '/v1/batches', { key: client.key, body: { batchId: 'n1' } });

    expect(answers.map((a) => a.status)).toEqual([201, 201, 429]);
    expect(answers[2]!.body.error.code).toBe('quota_exceeded');
    expect(answers[2]!.body.error.message).toMatch(/2 batches per UTC day/);
    expect(answers[2]!.body.error.message).toContain(resetAt());
    // A name the client already has is still 409, not a new batch.
    expect(again.status).toBe(409);
  });

  it('refuses a plain-S3 upload into a new batch id beyond the limit: no batch, no bytes kept', async () => {
    const client = await limitedClient({ maxBatchesPerDay: 1 }, 'qs');
    const [first, second, third] = await distinctImages(3, seededRandom(777));

    await uploadFile(`uploads/${client.clientId}/s1/p0.png`, first!, 'image/png');
    await uploadFile(`uploads/${client.clientId}/s1/p1.png`, second!, 'image/png');
    await waitForBridgeIdle();
    await uploadFile(`uploads/${client.clientId}/s2/p0.png`, third!, 'image/png');
    await waitForBridgeIdle();

    expect((await call('GET', '/v1/batches/s1', { key: client.key })).body.counts).toMatchObject({ total: 2, success: 2 });
    expect((await call('GET', '/v1/batches/s2', { key: client.key })).status).toBe(404);
    expect(await keysUnder(`uploads/${client.clientId}/`)).toEqual([]);
    expect(await keysUnder(`failed/${client.clientId}/`)).toEqual([]);
    expect((await call('GET', '/v1/usage', { key: client.key })).body.images).toMatchObject({ accepted: 2, rejected: 1 });
  }, 60_000);
});

describe('the expiry sweep', () => {
  /** One run as the stack runs it (its erasures by the erase job itself), `remaining` telling the time left (ms). */
  async function sweep(now: number, remaining?: () => number) {
    const erased: string[] = [];
    const deps = {
      s3: aws().s3,
      store: new BatchErasure({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }),
      bucketName: stackEnv('BUCKET_NAME'),
    };
    const erasures = {
      send: async (body: string) => {
        const { clientId, batchId } = JSON.parse(body) as { clientId: string; batchId: string };
        erased.push(`${clientId}/${batchId}`);
        await runEraseJob(deps, body);
      },
    };
    const result = await sweepExpiredBatches(
      { expired: new ExpiredBatches({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }), erasures, now: () => now },
      { requeueAfterMs: 3_600_000, pageSize: 2, ...(remaining ? { remainingMs: remaining } : {}) },
    );
    return { result, erased };
  }

  it('stops when the time left runs short, and the next run goes on until nothing due remains', async () => {
    // Five batches that expire 30 s from now (the stack's own sweep leaves them alone until then); the runs look 60 s ahead.
    const client = await newClient('qx');
    const nowS = Math.floor(Date.now() / 1000);
    const mine = ['x1', 'x2', 'x3', 'x4', 'x5'];
    await writeItems(
      mine.map((batchId, i) => batchItem(client.clientId, batchId, { ttl: nowS + 30 + i }) as unknown as Record<string, unknown>),
    );
    const ahead = (nowS + 60) * 1000;
    // Time for three batches, then none: a function whose remaining time ran out.
    let left = 3;
    const remaining = () => (left-- > 0 ? 60_000 : 1_000);

    const first = await sweep(ahead, remaining);
    const second = await sweep(ahead);

    const ofMine = (erased: string[]) => erased.filter((b) => b.startsWith(`${client.clientId}/`));
    expect(first.result.truncated).toBe(true);
    expect(ofMine(first.erased).length).toBeLessThan(mine.length);
    expect(second.result.truncated).toBe(false);
    expect([...ofMine(first.erased), ...ofMine(second.erased)].sort()).toEqual(mine.map((b) => `${client.clientId}/${b}`));
  }, 30_000);
});
