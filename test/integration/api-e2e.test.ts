// The API end to end with real processed images: POST /v1/batches hands out presigned POST forms, the files go
// through those forms to the local S3, the bridge runs the ingest handler with the offline detector, and the API
// answers what was recorded.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { batchSummarySchema, type UploadForm } from '../../lib/api/schemas/batches';
import { type ImageAnswer, imageListSchema } from '../../lib/api/schemas/images';
import { logListSchema } from '../../lib/api/schemas/logs';
import { uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient, postForm, type TestClient } from '../helpers/api';

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'fixtures', name));
const CAT = fixture('chelsea.png');
const NOT_CAT = fixture('coffee.png');

let client: TestClient;
let batchId: string;
let uploadStatuses: number[];

beforeAll(async () => {
  client = await newClient('e2e');
  const files = [
    { name: 'chelsea.png', contentType: 'image/png', size: CAT.length, body: CAT },
    { name: 'coffee.png', contentType: 'image/png', size: NOT_CAT.length, body: NOT_CAT },
    { name: 'chelsea again.png', contentType: 'image/png', size: CAT.length, body: CAT },
  ];
  const created = await call('POST', '/v1/batches', {
    key: client.key,
    body: { debug: true, files: files.map(({ name, contentType, size }) => ({ name, contentType, size })) },
  });
  batchId = created.body.batchId;
  const forms = created.body.uploads as UploadForm[];
  // One after another, so that the duplicate is the later upload.
  uploadStatuses = [];
  for (const [i, file] of files.entries()) {
    uploadStatuses.push(await postForm(forms[i] as UploadForm, file.body, file.contentType));
    await waitForBridgeIdle({ timeoutMs: 60_000 });
  }
}, 120_000);

describe('an upload through the presigned forms', () => {
  it('is accepted by the local S3', () => {
    expect(uploadStatuses.every((s) => s >= 200 && s < 300)).toBe(true);
  });

  it('ends up processed: the summary answers done with exact counters', async () => {
    const res = await call('GET', `/v1/batches/${batchId}`, { key: client.key });

    expect(batchSummarySchema.parse(res.body)).toMatchObject({
      status: 'done',
      counts: { total: 3, success: 2, fail: 0, duplicate: 1, cats: 1 },
      expected: 3,
      debug: true,
    });
  });

  it('1: lists the two distinct images, the cat flagged and labelled', async () => {
    const res = await call('GET', `/v1/batches/${batchId}/images`, { key: client.key });

    const byName = Object.fromEntries(imageListSchema.parse(res.body).items.map((i): [string, ImageAnswer] => [i.fileName ?? '', i]));
    expect(Object.keys(byName).sort()).toEqual(['chelsea.png', 'coffee.png']);
    expect(byName['chelsea.png']).toMatchObject({ status: 'success', isCat: true, duplicates: 1 });
    expect(byName['chelsea.png']?.labels.map((l) => l.name)).toContain('Cat');
    expect(byName['coffee.png']).toMatchObject({ status: 'success', isCat: false });
  });

  it('5: answers one processed image with its classification time', async () => {
    const list = await call('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { status: 'success' } });
    const cat = (list.body.items as ImageAnswer[]).find((i) => i.isCat) as ImageAnswer;

    const res = await call('GET', `/v1/batches/${batchId}/images/${cat.fprint}`, { key: client.key });

    expect(Date.parse(res.body.classifiedAt)).toBeGreaterThanOrEqual(Date.parse(res.body.uploadedAt));
  });

  it('4: has debug logs for the processed images', async () => {
    const res = await call('GET', `/v1/batches/${batchId}/logs`, { key: client.key });

    const entries = logListSchema.parse(res.body).items;
    expect(entries.map((e) => e.fileName).sort()).toEqual(['chelsea.png', 'coffee.png']);
    expect(entries.every((e) => e.lines.length > 0)).toBe(true);
  });

  it('9: lists the cat among the client’s cats', async () => {
    const res = await call('GET', '/v1/images', { key: client.key, query: { cat: true } });

    expect(res.body.items.map((i: ImageAnswer) => i.fileName)).toEqual(['chelsea.png']);
  });

  it('6: reads both images in one batchGet', async () => {
    const list = await call('GET', `/v1/batches/${batchId}/images`, { key: client.key });
    const wanted = (list.body.items as ImageAnswer[]).map((i) => i.fprint);

    const res = await call('POST', `/v1/batches/${batchId}/images:batchGet`, { key: client.key, body: { fprints: wanted } });

    expect([res.body.items.length, res.body.notFound]).toEqual([2, []]);
  });

  it('5b: finds the same cat uploaded to another batch (straight to S3) across batches', async () => {
    const second = await call('POST', '/v1/batches', { key: client.key });
    await uploadFile(`uploads/${client.clientId}/${second.body.batchId}/same cat.png`, CAT, 'image/png');
    await waitForBridgeIdle({ timeoutMs: 60_000 });
    const cat = (await call('GET', '/v1/images', { key: client.key, query: { cat: true } })).body.items[0] as ImageAnswer;

    const res = await call('GET', '/v1/images', { key: client.key, query: { fprint: cat.fprint } });

    expect(res.body.items.map((i: ImageAnswer) => i.batchId).sort()).toEqual([batchId, second.body.batchId].sort());
  });
});
