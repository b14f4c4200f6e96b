// An imported batch is a batch like any other (docs/imports.md; design §16 "Finish and retry"), on the shared local
// stack: `fingerprints:known` knows its images, its exports name the source objects, a person's review and the audit
// sample work on its records, and a re-detection reads the images again where they are (GetObject on the source,
// If-Match its ETag) at one DetectLabels call per distinct image.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ClientSourcesStore } from '../../lib/store/client/sources';
import { aws, detectCalls, stackEnv, uniqueId, waitFor } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const LIBRARY: Record<string, Buffer> = {
  'cam/chelsea.png': fixture('chelsea.png'),
  'cam/again/chelsea.png': fixture('chelsea.png'),
  'cam/coffee.png': fixture('coffee.png'),
  'cam/rocket.jpg': fixture('rocket.jpg'),
  'cam/astronaut.png': fixture('astronaut.png'),
};
const DISTINCT = 4;

interface Image {
  fprint: string;
  fileName: string;
  status: string;
  isCat: boolean;
  machineIsCat: boolean;
  previous: unknown;
  audit: unknown;
}

const done = (client: TestClient, batchId: string) =>
  waitFor(
    async () => {
      const b = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body;
      return b?.status === 'done' ? b : undefined;
    },
    { timeoutMs: 60_000, what: `batch ${batchId} done` },
  );

const images = async (client: TestClient, batchId: string, query: Record<string, string | number> = {}) =>
  (await call('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { limit: 100, ...query } })).body.items as Image[];

describe('an imported batch, as any other: known fingerprints, exports, review, audit, re-detection', () => {
  const bucket = uniqueId('cams').toLowerCase().replace(/_/g, '-');
  const batchId = 'imported';
  let client: TestClient;
  let byName: Map<string, Image>;

  beforeAll(async () => {
    await aws().s3.send(new CreateBucketCommand({ Bucket: bucket }));
    for (const [key, body] of Object.entries(LIBRARY)) await aws().s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    client = await newClient('impt');
    await new ClientSourcesStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME') }).change(
      client.clientId,
      [`s3://${bucket}/cam/`],
      [],
    );
    const created = await call('POST', '/v1/batches', { key: client.key, body: { batchId, source: { bucket, prefix: 'cam/' } } });
    expect(created.status).toBe(201);
    const summary = await done(client, batchId);
    expect(summary.counts).toMatchObject({ total: 5, success: DISTINCT, duplicate: 1, fail: 0 });
    byName = new Map((await images(client, batchId)).map((i) => [i.fileName.replace(/^cam\/(again\/)?/, ''), i]));
  }, 90_000);

  it('knows its fingerprints (fingerprints:known), another client none of them', async () => {
    const fprints = [...byName.values()].map((i) => i.fprint);
    const unknown = 'f'.repeat(fprints[0]!.length);
    const known = await call('POST', '/v1/fingerprints:known', { key: client.key, body: { fprints: [...fprints, unknown] } });
    expect(known.status).toBe(200);
    expect([...known.body.known].sort()).toEqual([...fprints].sort());
    const other = await newClient('impt');
    expect((await call('POST', '/v1/fingerprints:known', { key: other.key, body: { fprints } })).body.known).toEqual([]);
  });

  it('exports one row per source object, named by its key, in CSV, JSON lines and a MegaDetector file', async () => {
    const get = async (format: string) => {
      const res = await fetch(new URL(`/v1/batches/${batchId}/export?format=${format}`, stackEnv('ICECAT_API_URL')), {
        headers: { authorization: `Bearer ${client.key}` },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const rows = (await get('jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { file_name: string; status: string });
    expect(rows.map((r) => r.file_name).sort()).toEqual(Object.keys(LIBRARY).sort());
    expect(rows.map((r) => r.status).sort()).toEqual(['duplicate', 'success', 'success', 'success', 'success']);
    const csv = (await get('csv')).trim().split('\n');
    expect(csv).toHaveLength(1 + rows.length);
    expect(csv.filter((l) => l.startsWith('cam/again/chelsea.png,') || l.startsWith('cam/chelsea.png,'))).toHaveLength(2);
    const megadetector = JSON.parse(await get('megadetector')) as { images: { file: string }[] };
    expect(megadetector.images.map((i) => i.file).sort()).toEqual(Object.keys(LIBRARY).sort());
  });

  it('takes a person’s review: the verdict, the counts and the review queue', async () => {
    const chelsea = byName.get('chelsea.png')!;
    const reviewed = await call('PUT', `/v1/batches/${batchId}/images/${chelsea.fprint}/review`, {
      key: client.key,
      body: { isCat: !chelsea.machineIsCat, note: 'checked at the source' },
    });
    expect(reviewed.status).toBe(200);
    expect(reviewed.body).toMatchObject({ isCat: !chelsea.machineIsCat, machineIsCat: chelsea.machineIsCat });
    const summary = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body;
    expect(summary.counts).toMatchObject({ reviewed: 1, corrected: 1 });
    const queue = await images(client, batchId, { review: 'pending', order: 'uncertain' });
    expect(queue.map((i) => i.fprint).sort()).toEqual(
      [...byName.values()]
        .filter((i) => i.fprint !== chelsea.fprint)
        .map((i) => i.fprint)
        .sort(),
    );
  });

  it('draws its distinct images into an audit sample and estimates from the audited reviews', async () => {
    const drawn = await call('POST', `/v1/batches/${batchId}/audit`, { key: client.key, body: { size: 10 } });
    expect(drawn.status).toBe(200);
    expect(drawn.body).toMatchObject({ drawn: DISTINCT, sampled: DISTINCT });
    // The one reviewed already counts; the other three wait in the audit queue.
    expect((await images(client, batchId, { audit: 'pending' })).map((i) => i.fprint)).toHaveLength(DISTINCT - 1);
    const accuracy = (await call('GET', `/v1/batches/${batchId}/accuracy`, { key: client.key })).body;
    expect(accuracy).toMatchObject({ sampled: DISTINCT, reviewed: 1 });
  });

  it('re-detects every image where it is: one DetectLabels call per distinct image, the review kept', async () => {
    const calls = await detectCalls();
    const dry = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { dryRun: true, all: true } });
    expect(dry.body).toMatchObject({ dryRun: true, images: 5, newCalls: DISTINCT });
    const started = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { all: true } });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ dryRun: false, images: 5, newCalls: DISTINCT });
    const summary = await done(client, batchId);
    expect((await detectCalls()) - calls).toBe(DISTINCT);
    expect(summary.counts).toMatchObject({ total: 5, success: DISTINCT, duplicate: 1, fail: 0, pending: 0, reviewed: 1 });
    const after = await images(client, batchId);
    expect(after.every((i) => i.status === 'success' && i.previous !== null)).toBe(true);
    const chelsea = after.find((i) => i.fprint === byName.get('chelsea.png')!.fprint)!;
    expect(chelsea.isCat).toBe(!byName.get('chelsea.png')!.machineIsCat);
  }, 90_000);
});
