// Export, erasure and completion callbacks over HTTP against the local stack: batches the stack's ingest really
// processed (cats, non-cats, duplicates, a file that is not an image), a seeded batch large enough to be stored and
// redirected to, erasure leaving nothing behind and touching no other batch, and a receiver on 127.0.0.1 that fails
// first and then gets a correctly signed retry.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { BATCH_OBJECT_PREFIXES } from '../../lib/erase/objects';
import { verifySignature } from '../../lib/notify/signature';
import { BatchStore } from '../../lib/store/batch-store';
import { batchPartition } from '../../lib/store/table/schema';
import { aws, stackEnv, uniqueId, uploadFile, waitFor, waitForBridgeIdle } from '../helpers';
import { call, fprints, newClient, seedBatch, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));

const FILES: [string, Buffer][] = [
  ['chelsea.png', fixture('chelsea.png')],
  ['copies/chelsea again.png', fixture('chelsea.png')],
  ['coffee.png', fixture('coffee.png')],
  ['rocket.jpg', fixture('rocket.jpg')],
  ['notes.png', Buffer.from('not an image at all')],
];

/** A batch made through the API, its files uploaded (the original first, so the duplicate is known), closed and done. */
async function doneBatch(client: TestClient, batchId: string, extra: Record<string, unknown> = {}) {
  const created = await call('POST', '/v1/batches', { key: client.key, body: { batchId, ...extra } });
  expect(created.status).toBe(201);
  await uploadFile(`uploads/${client.clientId}/${batchId}/${FILES[0]![0]}`, FILES[0]![1], 'image/png');
  await waitForBridgeIdle();
  for (const [name, bytes] of FILES.slice(1)) await uploadFile(`uploads/${client.clientId}/${batchId}/${name}`, bytes, 'image/png');
  await waitForBridgeIdle();
  const closed = await call('POST', `/v1/batches/${batchId}:close`, { key: client.key, body: {} });
  expect(closed.body.status).toBe('done');
  return { created: created.body, summary: closed.body };
}

/** A raw request: exports are not JSON, and redirects are looked at, not followed. */
async function raw(method: string, path: string, key: string): Promise<Response> {
  return fetch(new URL(path, stackEnv('ICECAT_API_URL')), { method, headers: { authorization: `Bearer ${key}` }, redirect: 'manual' });
}

describe('GET /v1/batches/{batchId}/export', () => {
  let client: TestClient;
  const batchId = uniqueId('exp');
  let total = 0;

  beforeAll(async () => {
    client = await newClient('exp');
    total = (await doneBatch(client, batchId)).summary.counts.total;
  }, 120_000);

  it('answers a CSV attachment with one row per uploaded file (counts.total), duplicates and failures included', async () => {
    const res = await raw('GET', `/v1/batches/${batchId}/export?format=csv`, client.key);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${batchId}.csv"`);
    const lines = (await res.text()).split('\r\n').filter(Boolean);
    expect(total).toBe(FILES.length);
    expect(lines[0]).toBe(
      'file_name,status,is_cat,cat_confidence,labels,fprint,duplicate_of,error_code,uploaded_at,classified_at,machine_is_cat,reviewed,review_note,captured_at,camera,lat,lon,model',
    );
    expect(lines).toHaveLength(total + 1);
    expect(Number(res.headers.get('x-export-rows'))).toBe(total);
    expect(lines.filter((l) => /^[^,]*,duplicate,/.test(l))).toEqual([
      expect.stringMatching(/^copies\/chelsea again\.png,duplicate,.*,chelsea\.png,,/),
    ]);
    expect(lines.find((l) => l.startsWith('notes.png,'))).toMatch(/^notes\.png,fail,.*,NotAnImage,/);
  });

  it('answers JSON Lines with the same rows', async () => {
    const res = await raw('GET', `/v1/batches/${batchId}/export?format=jsonl`, client.key);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const rows = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file_name: string; status: string });
    expect(rows.map((r) => r.status).sort()).toEqual(['duplicate', 'fail', 'success', 'success', 'success']);
  });

  it('redirects (303) to a presigned GET of the stored export when it outgrows the inline bound', async () => {
    const images = fprints(60, 'exp').map((fprint, i) => ({
      fprint,
      uploadTs: Date.now() - i,
      fileName: `${'long folder name/'.repeat(4)}${i}.jpg`,
      dupCount: i % 2,
    }));
    const big = await seedBatch(client.clientId, images);

    const res = await raw('GET', `/v1/batches/${big}/export?format=csv`, client.key);

    expect(res.status).toBe(303);
    const location = res.headers.get('location') ?? '';
    expect(location).toContain(`/exports/${client.clientId}/${big}/`);
    const stored = await fetch(location);
    expect(stored.status).toBe(200);
    const lines = (await stored.text()).split('\r\n').filter(Boolean);
    expect(lines).toHaveLength(60 + 30 + 1); // each record, each counted duplicate, the header
  });

  it("answers 404 for another client's batch and 400 for an unknown format", async () => {
    const other = await newClient('exp-other');
    expect((await raw('GET', `/v1/batches/${batchId}/export`, other.key)).status).toBe(404);
    const bad = await call('GET', `/v1/batches/${batchId}/export`, { key: client.key, query: { format: 'xlsx' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_parameter');
  });
});

async function objectsLeft(clientId: string, batchId: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of BATCH_OBJECT_PREFIXES) {
    const out = await aws().s3.send(
      new ListObjectsV2Command({ Bucket: stackEnv('BUCKET_NAME'), Prefix: `${prefix}/${clientId}/${batchId}/` }),
    );
    keys.push(...(out.Contents ?? []).map((o) => o.Key ?? ''));
  }
  return keys;
}

async function itemsLeft(clientId: string, batchId: string, index?: string): Promise<number> {
  const out = await aws().ddb.send(
    new QueryCommand({
      TableName: stackEnv('TABLE_NAME'),
      ...(index ? { IndexName: index } : {}),
      KeyConditionExpression: 'batch_id = :pk',
      ExpressionAttributeValues: { ':pk': batchPartition(clientId, batchId) },
      Select: 'COUNT',
    }),
  );
  return out.Count ?? 0;
}

describe('DELETE /v1/batches/{batchId}', () => {
  let client: TestClient;
  let otherClient: TestClient;
  const batchId = uniqueId('del');
  const siblingId = uniqueId('del-sibling');

  beforeAll(async () => {
    [client, otherClient] = await Promise.all([newClient('del'), newClient('del-other')]);
    await doneBatch(client, batchId, { debug: true });
    await doneBatch(client, siblingId);
    await doneBatch(otherClient, batchId); // the same name, another client
  }, 240_000);

  it('marks the batch first: it answers 404 and an upload into it is deleted, unrecorded (nothing for the erasure to miss)', async () => {
    const store = new BatchStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME'), transactions: false });
    const before = await itemsLeft(client.clientId, batchId);
    // Read first, so that no container could have remembered the batch as existing.
    expect((await call('GET', `/v1/batches/${batchId}/images`, { key: client.key })).status).toBe(200);
    expect(await store.markDeleting(client.clientId, batchId)).toMatchObject({ deleting: true });

    expect((await call('GET', `/v1/batches/${batchId}`, { key: client.key })).status).toBe(404);
    expect((await call('GET', `/v1/batches/${batchId}/images`, { key: client.key })).status).toBe(404);
    await uploadFile(`uploads/${client.clientId}/${batchId}/late.png`, fixture('coffee.png'), 'image/png');
    await waitForBridgeIdle();

    const left = await objectsLeft(client.clientId, batchId);
    expect(left.filter((key) => key.endsWith('/late.png'))).toEqual([]);
    expect(await itemsLeft(client.clientId, batchId)).toBe(before);
  }, 60_000);

  it('answers 202, then leaves no object, item or log of the batch, and 404 from then on', async () => {
    expect(await itemsLeft(client.clientId, batchId, 'batch-logs')).toBeGreaterThan(0);

    const res = await call('DELETE', `/v1/batches/${batchId}`, { key: client.key });

    expect(res.status).toBe(202);
    expect(res.body).toEqual({ batchId, status: 'deleting' });
    await waitFor(async () => (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).status === 404, { what: 'the erasure' });
    await waitFor(async () => (await itemsLeft(client.clientId, batchId)) === 0, { what: 'the items to go' });
    expect(await objectsLeft(client.clientId, batchId)).toEqual([]);
    expect(await itemsLeft(client.clientId, batchId, 'batch-logs')).toBe(0);
    expect((await call('DELETE', `/v1/batches/${batchId}`, { key: client.key })).status).toBe(404);
    const listed = await call('GET', '/v1/batches', { key: client.key });
    expect(listed.body.items.map((b: { batchId: string }) => b.batchId)).toEqual([siblingId]);
  }, 60_000);

  it("touches no other batch: the client's other batch and another client's batch of the same name stay whole", async () => {
    for (const [who, id] of [
      [client, siblingId],
      [otherClient, batchId],
    ] as const) {
      const summary = await call('GET', `/v1/batches/${id}`, { key: who.key });
      expect(summary.body.counts.total).toBe(FILES.length);
      expect(await itemsLeft(who.clientId, id)).toBe(FILES.length); // 4 image records + the summary (one duplicate)
      // Each file where it rests, and a thumbnail of each of the three distinct images decoded.
      const objects = await objectsLeft(who.clientId, id);
      expect([
        objects.filter((k) => !k.startsWith('thumbnails/')).length,
        objects.filter((k) => k.startsWith('thumbnails/')).length,
      ]).toEqual([FILES.length, 3]);
    }
  });

  it("answers 404 for another client's batch and erases nothing of it", async () => {
    expect((await call('DELETE', `/v1/batches/${siblingId}`, { key: otherClient.key })).status).toBe(404);
    expect((await call('GET', `/v1/batches/${siblingId}`, { key: client.key })).status).toBe(200);
  });
});

interface Received {
  signature: string;
  body: string;
}

/** A receiver on a free loopback port answering the given statuses in turn (the last one from then on). */
async function receiver(statuses: number[]) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      received.push({ signature: String(req.headers['icecat-signature']), body: Buffer.concat(parts).toString() });
      res.statusCode = statuses[Math.min(received.length - 1, statuses.length - 1)] ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/icecat`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('completion callbacks', () => {
  it('POSTs the done summary, retries a 500 with a correctly signed request, and shows the delivery on the batch', async () => {
    const client = await newClient('cb');
    const hook = await receiver([500, 200]);
    try {
      const batchId = uniqueId('cb');
      const created = await call('POST', '/v1/batches', {
        key: client.key,
        body: { batchId, callbackUrl: hook.url, files: [{ name: 'chelsea.png', contentType: 'image/png', size: 1_000_000 }] },
      });
      expect(created.status).toBe(201);
      expect(created.body.callbackSecret).toMatch(/^whsec_/);
      expect(created.body.batch).toMatchObject({ callbackUrl: hook.url, callback: null });
      expect((await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body).not.toHaveProperty('callbackSecret');

      await uploadFile(`uploads/${client.clientId}/${batchId}/chelsea.png`, fixture('chelsea.png'), 'image/png');
      await waitFor(() => hook.received.length >= 2, { timeoutMs: 60_000, what: 'the retry' });

      const secret = created.body.callbackSecret as string;
      for (const request of hook.received) expect(verifySignature(request.signature, secret, request.body)).toBe(true);
      expect(verifySignature(hook.received[1]!.signature, 'whsec_other', hook.received[1]!.body)).toBe(false);
      expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
      expect(JSON.parse(hook.received[1]!.body)).toMatchObject({ batchId, status: 'done', counts: { total: 1, success: 1 } });
      const shown = await waitFor(
        async () => {
          const batch = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body;
          return batch.callback?.deliveredAt ? batch : undefined;
        },
        { what: 'the delivery state' },
      );
      expect(shown.callback).toMatchObject({ url: hook.url, attempts: 2, lastStatus: 200, lastError: null, gaveUpAt: null });
      expect(hook.received).toHaveLength(2);
    } finally {
      await hook.close();
    }
  }, 90_000);

  it.each([
    ['http://10.0.0.1/hook', 'must point at a public address'],
    ['http://169.254.169.254/latest/meta-data', 'must point at a public address'],
    ['ftp://127.0.0.1/hook', 'must use http or https'],
    ['https://user:pw@example.com/hook', 'must not carry a user name or password'],
  ])('refuses callbackUrl %s with 400', async (callbackUrl, message) => {
    const client = await newClient('cb-bad');
    const res = await call('POST', '/v1/batches', { key: client.key, body: { callbackUrl } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', message: expect.stringContaining(message) });
  });
});
