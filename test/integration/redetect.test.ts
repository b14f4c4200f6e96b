// POST …:redetect and GET …/changes on the shared local stack (docs/api.md "Re-detect"): a done batch of three distinct
// images and one duplicate, two of whose records are made to read as answered by an older model (their model
// rewritten, one of them a non-cat then), priced by a dry run that changes nothing, re-detected at one
// DetectLabels call per distinct image, `processing` then `done` again with its callback sent again, its flip listed;
// `all` prices every distinct image; bad input, an open or erasing batch and another client's batch refused.

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { accuracySchema } from '../../lib/api/schemas/audit';
import { imageSchema } from '../../lib/api/schemas/images';
import { changeListSchema, redetectResultSchema } from '../../lib/api/schemas/redetect';
import { BatchStore } from '../../lib/store/batch-store';
import { batchPartition } from '../../lib/store/table/schema';
import { aws, detectCalls, stackEnv, uniqueId, uploadFile, waitFor } from '../helpers';
import { call, newClient, type TestClient } from '../helpers/api';
import { icecat } from '../helpers/cli';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const OLDER = { name: 'an-older-model', version: '1' };

/** A receiver of completion callbacks on a free loopback port: the bodies it got. */
async function receiver(): Promise<{ url: string; bodies: string[]; close: () => Promise<void> }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(parts).toString());
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Makes a record read as answered by the older model: its model, and (asCat false) a non-cat then. */
async function answeredByOlderModel(client: TestClient, batchId: string, fprint: string, asCat?: false): Promise<void> {
  const table = stackEnv('TABLE_NAME');
  const Key = { batch_id: batchPartition(client.clientId, batchId), img_fprint: fprint };
  await aws().ddb.send(
    new UpdateCommand({
      TableName: table,
      Key,
      UpdateExpression: asCat === false ? 'SET rek_model = :m, rek_iscat = :f, cat_conf = :c REMOVE cat_ts' : 'SET rek_model = :m',
      ExpressionAttributeValues: { ':m': OLDER, ...(asCat === false ? { ':f': false, ':c': 10 } : {}) },
    }),
  );
  if (asCat === false)
    await aws().ddb.send(
      new UpdateCommand({
        TableName: table,
        Key: { batch_id: Key.batch_id, img_fprint: '#BATCH' },
        UpdateExpression: 'ADD n_cats :minus',
        ExpressionAttributeValues: { ':minus': -1 },
      }),
    );
}

const doneBatch = (client: TestClient, batchId: string) =>
  waitFor(
    async () => {
      const b = (await call('GET', `/v1/batches/${batchId}`, { key: client.key })).body;
      return b?.status === 'done' ? b : undefined;
    },
    { timeoutMs: 60_000, what: `batch ${batchId} done` },
  );

const images = async (client: TestClient, batchId: string) =>
  (await call('GET', `/v1/batches/${batchId}/images`, { key: client.key, query: { limit: 100 } })).body.items as {
    fprint: string;
    fileName: string;
    isCat: boolean;
  }[];

describe('POST …:redetect and GET …/changes', () => {
  let client: TestClient;
  let hook: Awaited<ReturnType<typeof receiver>>;
  const batchId = uniqueId('rd');
  let byName: Map<string, string>;

  beforeAll(async () => {
    client = await newClient('rd');
    hook = await receiver();
    const files = ['chelsea.png', 'coffee.png', 'astronaut.png', 'chelsea-again.png'];
    const created = await call('POST', '/v1/batches', {
      key: client.key,
      body: { batchId, callbackUrl: hook.url, files: files.map((name) => ({ name, contentType: 'image/png', size: 1_000_000 })) },
    });
    expect(created.status).toBe(201);
    const upload = (name: string) =>
      uploadFile(`uploads/${client.clientId}/${batchId}/${name}`, fixture(name.replace('-again', '')), 'image/png');
    // The duplicate goes last, once the three are recorded: the record of chelsea's pixels is chelsea.png's, whichever
    // upload the ingest would otherwise have taken first.
    for (const name of files.slice(0, 3)) await upload(name);
    await waitFor(async () => (await images(client, batchId)).length === 3, { timeoutMs: 60_000, what: 'three records' });
    await upload('chelsea-again.png');
    await doneBatch(client, batchId);
    await waitFor(() => hook.bodies.length >= 1, { what: 'the first callback' });
    byName = new Map((await images(client, batchId)).map((i) => [i.fileName, i.fprint]));
    await answeredByOlderModel(client, batchId, byName.get('chelsea.png') as string, false);
    await answeredByOlderModel(client, batchId, byName.get('coffee.png') as string);
  }, 90_000);

  afterAll(() => hook.close());

  it('prices the images of another model in a dry run and changes nothing; `all` prices every distinct image', async () => {
    // Act
    const dry = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { dryRun: true } });
    const all = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { dryRun: true, all: true } });

    // Assert: chelsea (and its duplicate) and coffee; then all three distinct images and the duplicate.
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, images: 3, newCalls: 2, estimatedCostUsd: 0.002, batch: { status: 'done' } });
    expect(all.body).toMatchObject({ dryRun: true, images: 4, newCalls: 3, estimatedCostUsd: 0.003 });
    const chelsea = await call('GET', `/v1/batches/${batchId}/images/${byName.get('chelsea.png')}`, { key: client.key });
    expect(chelsea.body.isCat).toBe(false);
    expect((await call('GET', `/v1/batches/${batchId}/changes`, { key: client.key })).body.items).toEqual([]);
  });

  it('classifies them again at one DetectLabels call per distinct image, processing then done, and lists the flip', async () => {
    // Arrange: the dry run above learnt the current model already.
    const calls = await detectCalls();
    const usage = (await call('GET', '/v1/usage', { key: client.key })).body;

    // Act
    const started = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: {} });
    const done = await doneBatch(client, batchId);
    await waitFor(() => hook.bodies.length >= 2, { what: 'the callback sent again' });

    // Assert
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ dryRun: false, images: 3, newCalls: 2, batch: { status: 'processing' } });
    expect((await detectCalls()) - calls).toBe(2);
    expect((await call('GET', '/v1/usage', { key: client.key })).body.images.accepted - usage.images.accepted).toBe(2);
    const listed = await images(client, batchId);
    expect(done.counts).toMatchObject({ total: 4, success: 3, duplicate: 1, pending: 0, cats: listed.filter((i) => i.isCat).length });
    expect(JSON.parse(hook.bodies[1] as string)).toMatchObject({ batchId, status: 'done' });
    const chelsea = (await call('GET', `/v1/batches/${batchId}/images/${byName.get('chelsea.png')}`, { key: client.key })).body;
    expect(chelsea).toMatchObject({ isCat: true, previous: { model: OLDER, isCat: false, catConfidence: 10 } });
    const astronaut = (await call('GET', `/v1/batches/${batchId}/images/${byName.get('astronaut.png')}`, { key: client.key })).body;
    expect(astronaut.previous).toBeNull();
    // The answers hold to the OpenAPI document's schemas.
    expect(() => [redetectResultSchema.parse(started.body), imageSchema.parse(chelsea), imageSchema.parse(astronaut)]).not.toThrow();
    const changes = await call('GET', `/v1/batches/${batchId}/changes`, { key: client.key });
    expect(() => changeListSchema.parse(changes.body)).not.toThrow();
    expect(changes.body.items).toEqual([
      expect.objectContaining({
        fprint: byName.get('chelsea.png'),
        fileName: 'chelsea.png',
        change: 'not cat → cat',
        previous: { model: OLDER, isCat: false, catConfidence: 10 },
        current: expect.objectContaining({ isCat: true }),
      }),
    ]);
    // Every record now answered by the current model: nothing is left to re-detect.
    const again = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { dryRun: true } });
    expect(again.body).toMatchObject({ images: 0, newCalls: 0 });
  }, 90_000);

  it('is priced by icecat redetect --dry-run and its flips listed by icecat changes (table and --json)', async () => {
    // Act
    const dry = await icecat(['redetect', batchId, '--dry-run', '--all'], client.key);
    const table = await icecat(['changes', batchId], client.key);
    const asJson = await icecat(['changes', batchId, '--json'], client.key);

    // Assert
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('would classify again 4 images, 3 DetectLabels calls: $0.003 (dry run: nothing changed)');
    expect(table.stdout).toMatch(/chelsea\.png\s+not cat → cat\s+10 \(an-older-model@1\)/);
    expect(JSON.parse(asJson.stdout).items).toEqual([expect.objectContaining({ fileName: 'chelsea.png', change: 'not cat → cat' })]);
  }, 60_000);

  it("classifies every distinct image again with `all`, and a person's verdict stays the image's isCat", async () => {
    // Arrange: a person says the astronaut is a cat; the machine does not.
    const astronautId = byName.get('astronaut.png') as string;
    const reviewed = await call('PUT', `/v1/batches/${batchId}/images/${astronautId}/review`, { key: client.key, body: { isCat: true } });
    expect(reviewed.body).toMatchObject({ isCat: true, machineIsCat: false });
    const calls = await detectCalls();

    // Act
    const started = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { all: true } });
    const done = await doneBatch(client, batchId);

    // Assert
    expect(started.body).toMatchObject({ images: 4, newCalls: 3, batch: { status: 'processing' } });
    expect((await detectCalls()) - calls).toBe(3);
    const astronaut = (await call('GET', `/v1/batches/${batchId}/images/${astronautId}`, { key: client.key })).body;
    expect(astronaut).toMatchObject({ isCat: true, machineIsCat: false, review: { isCat: true }, previous: { isCat: false } });
    const listed = await images(client, batchId);
    expect(done.counts).toMatchObject({ success: 3, reviewed: 1, corrected: 1, cats: listed.filter((i) => i.isCat).length });
    // The same model answered twice: no verdict changed since the last answers.
    expect((await call('GET', `/v1/batches/${batchId}/changes`, { key: client.key })).body.items).toEqual([]);
  }, 90_000);

  it('answers 409 for an open batch and one being erased, 404 for another client, 400 for a bad body', async () => {
    // Arrange
    const open = uniqueId('rd-open');
    await call('POST', '/v1/batches', { key: client.key, body: { batchId: open } });
    const erasing = uniqueId('rd-erasing');
    await call('POST', '/v1/batches', { key: client.key, body: { batchId: erasing } });
    const store = new BatchStore({ ddb: aws().ddb, tableName: stackEnv('TABLE_NAME'), transactions: false });
    await store.markDeleting(client.clientId, erasing);
    const other = await newClient('rd-other');

    // Act
    const onOpen = await call('POST', `/v1/batches/${open}:redetect`, { key: client.key, body: {} });
    const onErasing = await call('POST', `/v1/batches/${erasing}:redetect`, { key: client.key, body: {} });
    const foreign = await call('POST', `/v1/batches/${batchId}:redetect`, { key: other.key, body: { dryRun: true } });
    const foreignChanges = await call('GET', `/v1/batches/${batchId}/changes`, { key: other.key });
    const badBody = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { dryRun: 'yes' } });
    const unknownField = await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { everything: true } });
    const badLimit = await call('GET', `/v1/batches/${batchId}/changes`, { key: client.key, query: { limit: 0 } });

    // Assert
    expect([onOpen.status, onOpen.body.error.code]).toEqual([409, 'batch_not_done']);
    expect([onErasing.status, onErasing.body.error.code]).toEqual([409, 'batch_erasing']);
    expect(foreign.status).toBe(404);
    expect(foreignChanges.status).toBe(404);
    expect([badBody.status, unknownField.status, badLimit.status]).toEqual([400, 400, 400]);
  });
});

describe('GET …/accuracy after a re-detection', () => {
  it("gives each model's estimates on the same audited reviews", async () => {
    // Arrange: three images answered by the older model, which missed the cat; all three drawn, two reviewed.
    const client = await newClient('rd-acc');
    const batchId = uniqueId('rd-acc');
    const files = ['chelsea.png', 'coffee.png', 'astronaut.png'];
    await call('POST', '/v1/batches', {
      key: client.key,
      body: { batchId, files: files.map((name) => ({ name, contentType: 'image/png', size: 1_000_000 })) },
    });
    for (const name of files) await uploadFile(`uploads/${client.clientId}/${batchId}/${name}`, fixture(name), 'image/png');
    await doneBatch(client, batchId);
    const ids = new Map((await images(client, batchId)).map((i) => [i.fileName, i.fprint]));
    await answeredByOlderModel(client, batchId, ids.get('chelsea.png') as string, false);
    for (const name of ['coffee.png', 'astronaut.png']) await answeredByOlderModel(client, batchId, ids.get(name) as string);
    expect((await call('POST', `/v1/batches/${batchId}/audit`, { key: client.key, body: { size: 3 } })).body.drawn).toBe(3);
    for (const [name, isCat] of [
      ['chelsea.png', true],
      ['coffee.png', false],
    ] as const)
      await call('PUT', `/v1/batches/${batchId}/images/${ids.get(name)}/review`, { key: client.key, body: { isCat } });
    const before = (await call('GET', `/v1/batches/${batchId}/accuracy`, { key: client.key })).body;

    // Act
    await call('POST', `/v1/batches/${batchId}:redetect`, { key: client.key, body: { all: true } });
    await doneBatch(client, batchId);
    const res = await call('GET', `/v1/batches/${batchId}/accuracy`, { key: client.key });

    // Assert: no model row before; after, the current model (it finds the cat) first, then the older one, whose
    // figures are the batch's own (the sample was drawn by its verdicts): no machine-cat, so no precision, recall 0.
    expect(before.models).toBeUndefined();
    const body = accuracySchema.parse(res.body);
    const [now, older] = body.models ?? [];
    expect(body.models).toHaveLength(2);
    expect(now).toMatchObject({
      sampled: 3,
      reviewed: 2,
      precision: { estimate: 1, low: 1, high: 1 },
      recall: { estimate: 1 },
      accuracy: { estimate: 1 },
      cats: { estimate: 1 },
    });
    expect(now!.model).not.toEqual(OLDER);
    expect(older).toMatchObject({ model: OLDER, sampled: 3, reviewed: 2, precision: null, recall: { estimate: 0 } });
    expect([older!.accuracy, older!.cats]).toEqual([body.accuracy, body.cats]);
  }, 90_000);
});
