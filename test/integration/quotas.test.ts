// Quotas, rate limits and fair share against the local stack (docs/design.md §11): per-client limits set as
// client:limits sets them, uploads beyond the day's quota, a quota changed while uploads wait in the queue, a burst of
// API requests, the CLI at its quota, and a small client's uploads served before a big client's backlog.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { defaultClientLimits } from '../../functions/config';
import { utcDay } from '../../lib/quota/limits';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { controlHeaders } from '../../local/bridge/control-token';
import { aws, stackEnv, uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';
import { icecat } from '../helpers/cli';
import { distinctImages, seededRandom } from '../helpers/stack-process';

jest.setTimeout(180_000);

const quotaStore = () =>
  new ClientQuotaStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME'), defaults: defaultClientLimits(), cacheMs: 0 });

async function limitedClient(limits: { ratePerSecond?: number; maxImagesPerDay?: number }, prefix = 'q'): Promise<TestClient> {
  const client = await newClient(prefix);
  await quotaStore().setLimits(client.clientId, limits);
  return client;
}

interface ListedImage {
  fileName: string;
  status: string;
  classifiedAt?: string;
  error?: { code: string; message: string };
}

async function imagesOf(client: TestClient, batchId: string): Promise<ListedImage[]> {
  const res = await call<{ items: ListedImage[] }>('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { limit: 100 } });
  expect(res.status).toBe(200);
  return res.body.items;
}

async function keysUnder(prefix: string): Promise<string[]> {
  const out = await aws().s3.send(new ListObjectsV2Command({ Bucket: stackEnv('BUCKET_NAME'), Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key as string);
}

const bridge = (action: 'pause' | 'resume') =>
  fetch(`${stackEnv('ICECAT_BRIDGE_URL')}/${action}`, { method: 'POST', headers: controlHeaders(stackEnv('ICECAT_DATA_DIR')) });

let seed = 1;
const photos = async (n: number) => distinctImages(n, seededRandom(seed++ * 7919 + (Date.now() % 1000)));

describe('the daily images quota', () => {
  it('ends uploads beyond it as QuotaExceeded fail records, their files not kept, never classified, counted in GET /v1/usage', async () => {
    // Arrange
    const client = await limitedClient({ maxImagesPerDay: 2 });
    const images = await photos(4);

    // Act
    for (const [i, image] of images.entries()) await uploadFile(`uploads/${client.clientId}/q1/p${i}.png`, image, 'image/png');
    await waitForBridgeIdle({ timeoutMs: 120_000 });

    // Assert
    const listed = await imagesOf(client, 'q1');
    expect(listed.map((i) => i.status).sort()).toEqual(['fail', 'fail', 'success', 'success']);
    const refused = listed.filter((i) => i.status === 'fail');
    expect(refused.map((i) => i.error?.code)).toEqual(['QuotaExceeded', 'QuotaExceeded']);
    expect(refused[0]?.error?.message).toMatch(/quota of 2 images per UTC day is used up/);
    expect(await keysUnder(`failed/${client.clientId}/q1/`)).toEqual([]);
    expect(await keysUnder(`uploads/${client.clientId}/`)).toEqual([]);
    const batch = await call('GET', '/v1/batches/q1', { key: client.key });
    expect(batch.body.counts).toMatchObject({ total: 4, success: 2, fail: 2 });
    const usage = await call('GET', '/v1/usage', { key: client.key });
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({
      clientId: client.clientId,
      day: utcDay(Date.now()),
      limits: { imagesPerDay: 2 },
      images: { accepted: 2, rejected: 2, remaining: 0 },
    });
  });

  it('applies a quota raised while the uploads wait in the queue', async () => {
    // Arrange: no image allowed, and the queue held while three uploads arrive
    const client = await limitedClient({ maxImagesPerDay: 0 });
    const images = await photos(3);
    await bridge('pause');
    try {
      for (const [i, image] of images.entries()) await uploadFile(`uploads/${client.clientId}/raised/p${i}.png`, image, 'image/png');

      // Act
      await quotaStore().setLimits(client.clientId, { maxImagesPerDay: 3 });
    } finally {
      await bridge('resume');
    }
    await waitForBridgeIdle({ timeoutMs: 120_000 });

    // Assert
    const listed = await imagesOf(client, 'raised');
    expect(listed.map((i) => i.status)).toEqual(['success', 'success', 'success']);
    expect((await call('GET', '/v1/usage', { key: client.key })).body.images).toEqual({ accepted: 3, rejected: 0, remaining: 0 });
  });

  it('applies a quota lowered while the uploads wait in the queue', async () => {
    // Arrange
    const client = await limitedClient({ maxImagesPerDay: 10 });
    const images = await photos(3);
    await bridge('pause');
    try {
      for (const [i, image] of images.entries()) await uploadFile(`uploads/${client.clientId}/lowered/p${i}.png`, image, 'image/png');

      // Act
      await quotaStore().setLimits(client.clientId, { maxImagesPerDay: 1 });
    } finally {
      await bridge('resume');
    }
    await waitForBridgeIdle({ timeoutMs: 120_000 });

    // Assert
    const listed = await imagesOf(client, 'lowered');
    expect(listed.map((i) => i.error?.code ?? i.status).sort()).toEqual(['QuotaExceeded', 'QuotaExceeded', 'success']);
  });

  it('refuses the CLI of a client at its quota before any byte is sent: the reset time named, exit 2, the files untouched', async () => {
    // Arrange
    const client = await limitedClient({ maxImagesPerDay: 0 });
    const folder = mkdtempSync(path.join(tmpdir(), 'icecat-quota-'));
    const images = await photos(3);
    images.forEach((image, i) => writeFileSync(path.join(folder, `cat-${i}.png`), image));
    const batchId = uniqueId('cli');

    // Act
    const run = await icecat(['upload', folder, '--batch', batchId, '--wait', '--concurrency', '2'], client.key);

    // Assert
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /3 upload forms asked, but 0 of the client's quota of 0 images per UTC day are left .* the quota starts afresh at \d{4}-\d\d-\d\dT00:00:00\.000Z/,
    );
    expect(await keysUnder(`uploads/${client.clientId}/${batchId}/`)).toEqual([]);
    expect(await keysUnder(`failed/${client.clientId}/${batchId}/`)).toEqual([]);
    expect((await call('GET', `/v1/batches/${batchId}`, { key: client.key })).status).toBe(404);
  });
});

describe('the API rate limit', () => {
  it("answers a burst beyond a client's rate 429 rate_limited with Retry-After, while another client's requests go on", async () => {
    // Arrange: 5 requests/s, bursts of 10
    const noisy = await limitedClient({ ratePerSecond: 5 });
    const quiet = await newClient('quiet');

    // Act: 60 requests at once from one client, and 10 from the other meanwhile
    const [burst, others] = await Promise.all([
      Promise.all(Array.from({ length: 60 }, () => call('GET', '/v1/batches', { key: noisy.key }))),
      Promise.all(Array.from({ length: 10 }, () => call('GET', '/v1/batches', { key: quiet.key }))),
    ]);

    // Assert
    const limited = burst.filter((r) => r.status === 429);
    expect(burst.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(10);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited.every((r) => r.body.error.code === 'rate_limited' && Number(r.headers.get('retry-after')) >= 1)).toBe(true);
    expect(limited[0]?.body.error.message).toMatch(/5 requests per second \(bursts of 10\)/);
    expect(others.map((r) => r.status)).toEqual(Array(10).fill(200));
  });

  it('shows the limits in force in GET /v1/usage', async () => {
    // Arrange
    const client = await limitedClient({ ratePerSecond: 7, maxImagesPerDay: 123 });

    // Act
    const usage = await call('GET', '/v1/usage', { key: client.key });

    // Assert
    expect(usage.body.limits).toEqual({ requestsPerSecond: 7, burst: 14, imagesPerDay: 123 });
    expect(usage.body.images).toEqual({ accepted: 0, rejected: 0, remaining: 123 });
    expect(Date.parse(usage.body.resetsAt) % 86_400_000).toBe(0);
    expect(usage.body.pricePerImageUsd).toBe(0.001);
  });
});

describe('fair share of the local queue', () => {
  it("classifies a small client's uploads before a big client's backlog that arrived first", async () => {
    // Arrange: the queue held while A's 20 uploads and then B's 3 arrive
    const big = await newClient('bigA');
    const small = await newClient('smallB');
    const [bigImages, smallImages] = [await photos(20), await photos(3)];
    await bridge('pause');
    try {
      for (const [i, image] of bigImages.entries())
        await uploadFile(`uploads/${big.clientId}/backlog/a${String(i).padStart(2, '0')}.png`, image, 'image/png');
      for (const [i, image] of smallImages.entries()) await uploadFile(`uploads/${small.clientId}/few/b${i}.png`, image, 'image/png');
    } finally {
      // Act
      await bridge('resume');
    }
    await waitForBridgeIdle({ timeoutMs: 170_000 });

    // Assert: in arrival order none of A's would be classified after B's last; B goes with A's first batch
    const [bigListed, smallListed] = [await imagesOf(big, 'backlog'), await imagesOf(small, 'few')];
    expect([...bigListed, ...smallListed].every((i) => i.status === 'success')).toBe(true);
    const smallDone = Math.max(...smallListed.map((i) => Date.parse(i.classifiedAt as string)));
    const bigAfter = bigListed.filter((i) => Date.parse(i.classifiedAt as string) > smallDone).length;
    expect(bigAfter).toBeGreaterThanOrEqual(8);
  });
});
