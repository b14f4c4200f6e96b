// Imports on the shared local stack (docs/design.md §16): a prefix of a second bucket holding real photos, a repeat
// and a file that is no image classified where it is, to done; the source untouched and nothing under processed/,
// duplicates/ or failed/; DetectLabels once per distinct fingerprint, none on a second import; a manifest imports
// exactly its keys; a source outside the client's is 403; the report has a row per object; :retry sends only the failed.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { defaultClientLimits } from '../../functions/config';
import { batchSummarySchema } from '../../lib/api/schemas/batches';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ClientSourcesStore } from '../../lib/store/client/sources';
import { aws, detectCalls, stackEnv, uniqueId, waitFor } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

const LIBRARY: Record<string, Buffer> = {
  'photos/chelsea.png': fixture('chelsea.png'),
  'photos/again/chelsea copy.png': fixture('chelsea.png'),
  'photos/coffee.png': fixture('coffee.png'),
  'photos/rocket.jpg': fixture('rocket.jpg'),
  'photos/space/astronaut.png': fixture('astronaut.png'),
  'photos/notes.txt': Buffer.from('not an image'),
  'photos/broken.jpg': Buffer.from('this is not a jpeg'),
};

const done = async (client: TestClient, batchId: string) => {
  let last: unknown;
  return waitFor(
    async () => {
      const b = (last = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body);
      return b?.status === 'done' ? b : undefined;
    },
    { timeoutMs: 60_000, what: `batch ${batchId} done` },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; it is ${JSON.stringify(last)}`);
  });
};

const allImages = async (client: TestClient, batchId: string) =>
  (await call('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { limit: 100 } })).body.items as {
    fprint: string;
    fileName: string;
    status: string;
    duplicates: number;
    reused: boolean;
    error: { code: string } | null;
  }[];

async function keysUnder(bucket: string, prefix: string): Promise<string[]> {
  const out = await aws().s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

describe('imports: classifying what is already in S3, in place', () => {
  const library = uniqueId('library').toLowerCase().replace(/_/g, '-');
  let client: TestClient;

  beforeAll(async () => {
    await aws().s3.send(new CreateBucketCommand({ Bucket: library }));
    for (const [key, body] of Object.entries(LIBRARY)) await aws().s3.send(new PutObjectCommand({ Bucket: library, Key: key, Body: body }));
    client = await newClient('imp');
    const sources = new ClientSourcesStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') });
    expect(await sources.change(client.clientId, [`s3://${library}/photos/`, `s3://${library}/manifests/`], [])).toHaveLength(2);
  }, 60_000);

  it('refuses a source outside the client’s with 403, before anything is listed', async () => {
    const outside = await call('POST', '/v1/batches', {
      key: client.key,
      body: { batchId: 'outside', source: { bucket: library, prefix: 'private/' } },
    });
    expect(outside.status).toBe(403);
    expect(outside.body.error.code).toBe('source_not_allowed');
    const other = await newClient('imp');
    const theirs = await call('POST', '/v1/batches', { key: other.key, body: { source: { bucket: library, prefix: 'photos/' } } });
    expect(theirs.status).toBe(403);
    expect((await call('GET', '/v1/batches/outside', { key: client.key })).status).toBe(404);
  });

  it('imports a prefix to done where it is: one DetectLabels call per distinct image, the source untouched', async () => {
    const before = await detectCalls();
    const created = await call('POST', '/v1/batches', {
      key: client.key,
      body: { batchId: 'first', source: { bucket: library, prefix: 'photos/' } },
    });
    expect(created.status).toBe(201);
    expect(created.body.batch.import).toMatchObject({ state: 'listing', source: { bucket: library, prefix: 'photos/' } });
    const summary = await done(client, 'first');
    expect(() => batchSummarySchema.parse(summary)).not.toThrow();
    expect(summary.import).toMatchObject({ state: 'listed', listed: 7, enqueued: 6, skipped: 1, resumesAt: null });
    expect(summary.expected).toBe(6);
    expect(summary.counts).toMatchObject({ total: 6, success: 4, duplicate: 1, fail: 1, pending: 0 });
    expect((await detectCalls()) - before).toBe(4);

    // The same pixels twice are one record, named for whichever copy came first (the other counted a duplicate).
    const images = await allImages(client, 'first');
    const names = images.map((i) => i.fileName).filter((n) => !n.includes('chelsea'));
    expect(names.sort()).toEqual(['photos/broken.jpg', 'photos/coffee.png', 'photos/rocket.jpg', 'photos/space/astronaut.png']);
    expect(images.filter((i) => i.fileName.includes('chelsea')).map((i) => i.duplicates)).toEqual([1]);
    expect(images.find((i) => i.fileName === 'photos/broken.jpg')?.error?.code).toBe('NotAnImage');
    for (const image of images) {
      const one = (await call('GET', `/v1/batches/first/images/${image.fprint}`, { key: client.key })).body;
      expect(one.status).toBe(image.status);
    }
    // Untouched at the source, byte for byte; nothing rests in the stack's bucket but the thumbnails.
    for (const [key, body] of Object.entries(LIBRARY)) {
      const got = await aws().s3.send(new GetObjectCommand({ Bucket: library, Key: key }));
      expect(md5(Buffer.from(await got.Body!.transformToByteArray()))).toBe(md5(body));
    }
    expect(await keysUnder(library, '')).toHaveLength(Object.keys(LIBRARY).length);
    const bucket = stackEnv('BUCKET_NAME');
    for (const place of ['processed', 'duplicates', 'failed', 'uploads'])
      expect(await keysUnder(bucket, `${place}/${client.clientId}/first/`)).toEqual([]);
    expect(await keysUnder(bucket, `thumbnails/${client.clientId}/first/`)).toHaveLength(4);
  }, 120_000);

  it('names each source object on its record and reports one row per object in Batch Operations’ columns', async () => {
    const report = await fetch(new URL('/v1/batches/first/report?format=s3-batch-operations', stackEnv('ICECAT_API_URL')), {
      headers: { authorization: `Bearer ${client.key}` },
    });
    expect(report.status).toBe(200);
    const rows = (await report.text()).trim().split('\n');
    expect(rows).toHaveLength(6);
    const byKey = new Map(rows.map((r) => [r.split(',')[1], r.split(',')]));
    expect(byKey.get('photos/broken.jpg')).toEqual([library, 'photos/broken.jpg', '', 'failed', 'NotAnImage', '400', expect.any(String)]);
    // The same pixels twice: one row is the record's own verdict, the other a duplicate naming it.
    const copies = [byKey.get('photos/again/chelsea%20copy.png')!, byKey.get('photos/chelsea.png')!];
    expect(copies.map((c) => c[3])).toEqual(['succeeded', 'succeeded']);
    expect(
      copies.map((c) => c[6]).filter((m) => /^duplicate of photos\/.*chelsea.*: (cat|not cat) \(confidence [\d.]+\)$/.test(m ?? '')),
    ).toHaveLength(1);
    expect(copies.map((c) => c[6]).filter((m) => /^(cat|not cat) \(confidence [\d.]+\)(, reused)?$/.test(m ?? ''))).toHaveLength(1);
    for (const row of rows) expect(row.split(',').length).toBeGreaterThanOrEqual(7);
  });

  it('pays nothing for a second import of the same prefix', async () => {
    const before = await detectCalls();
    expect(
      (await call('POST', '/v1/batches', { key: client.key, body: { batchId: 'second', source: { bucket: library, prefix: 'photos/' } } }))
        .status,
    ).toBe(201);
    const summary = await done(client, 'second');
    expect(summary.counts).toMatchObject({ total: 6, success: 4, reused: 4, duplicate: 1, fail: 1 });
    expect((await detectCalls()) - before).toBe(0);
  }, 120_000);

  it('imports exactly the keys of a manifest (URL-encoded, as Batch Operations reads them)', async () => {
    const csv = `${library},photos/again/chelsea%20copy.png\n${library},photos/coffee.png\n`;
    await aws().s3.send(new PutObjectCommand({ Bucket: library, Key: 'manifests/two.csv', Body: csv }));
    const created = await call('POST', '/v1/batches', {
      key: client.key,
      body: { batchId: 'manifest', source: { manifest: `s3://${library}/manifests/two.csv` } },
    });
    expect(created.status).toBe(201);
    const summary = await done(client, 'manifest');
    expect(summary.import).toMatchObject({ state: 'listed', listed: 2, enqueued: 2, skipped: 0 });
    expect((await allImages(client, 'manifest')).map((i) => i.fileName).sort()).toEqual([
      'photos/again/chelsea copy.png',
      'photos/coffee.png',
    ]);
  }, 120_000);

  it(':retry sends again exactly the failed imported images', async () => {
    const before = await detectCalls();
    const retried = await call('POST', '/v1/batches/first:retry', { key: client.key });
    expect(retried.status).toBe(200);
    expect(retried.body.resubmitted).toBe(1);
    const summary = await done(client, 'first');
    expect(summary.counts).toMatchObject({ total: 6, success: 4, duplicate: 1, fail: 1 });
    expect((await detectCalls()) - before).toBe(0);
    expect((await call('POST', '/v1/batches/second:retry', { key: client.key })).body.resubmitted).toBe(1);
  }, 120_000);

  it('waits for the quota’s reset beyond today’s images, says so, and loses nothing', async () => {
    const capped = await newClient('imp');
    await new ClientSourcesStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }).change(
      capped.clientId,
      [`s3://${library}/photos/`],
      [],
    );
    await new ClientQuotaStore({
      ddb: aws().ddb,
      tableName: stackEnv('TABLE_NAME'),
      defaults: defaultClientLimits(),
      cacheMs: 0,
    }).setLimits(capped.clientId, { maxImagesPerDay: 3 });
    const created = await call('POST', '/v1/batches', {
      key: capped.key,
      body: { batchId: 'capped', source: { bucket: library, prefix: 'photos/' } },
    });
    expect(created.status).toBe(201);
    const waiting = await waitFor(
      async () => {
        const b = (await call('GET', '/v1/batches/capped', { key: capped.key })).body;
        return b?.import?.state === 'waiting-for-quota' && b.counts.total === 3 && b.counts.pending === 0 ? b : undefined;
      },
      { timeoutMs: 60_000, what: 'the import waiting for the quota' },
    );
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    expect(waiting.import).toMatchObject({ resumesAt: midnight.toISOString() });
    // The lister sends 16 at once, so the quota may refuse an object listed before one it let through: the checkpoint
    // holds the refused ones (sent first after the reset) and counts exactly the three sent, whatever order they landed in.
    expect(waiting.import.enqueued).toBe(3);
    expect(waiting.status).toBe('open');
    expect((await call('GET', '/v1/usage', { key: capped.key })).body).toMatchObject({
      images: { accepted: 3, rejected: 0, remaining: 0 },
    });
  }, 90_000);
});
