// Retention end to end on the local stack (docs/design.md §6, "A batch expires whole"): an expired batch is gone for
// every route, an upload into it is discarded, its name is free again once it is erased, and the expiry sweep erases
// what it left (objects under every prefix, every item) exactly as on AWS. A batch is aged by moving its stored expiry
// into the past (the clock of the API's handlers is the real one); the sweep's clock is injected.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import { BatchErasingError } from '../../lib/api/errors';
import { sweepExpiredBatches } from '../../lib/erase/expiry';
import { runEraseJob } from '../../lib/erase/job';
import { BATCH_OBJECT_PREFIXES } from '../../lib/erase/objects';
import { BatchErasure } from '../../lib/store/batch/erasure';
import { BatchStore } from '../../lib/store/batch-store';
import { ExpiredBatches } from '../../lib/store/expiry/expired';
import { batchPartition } from '../../lib/store/table/schema';
import { loadBucketLifecycleRules } from '../../local/s3/lifecycle';
import { startLocalExpiry } from '../../local/stack/expiry';
import { aws, stackEnv, uniqueId, uploadFile, waitFor, waitForBridgeIdle } from '../helpers';
import { call, newClient, postForm, seedBatch, type TestClient } from '../helpers/api';

const bucket = () => stackEnv('BUCKET_NAME');
const table = () => stackEnv('TABLE_NAME');
const nowS = () => Math.floor(Date.now() / 1000);
const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

/** Moves a batch's expiry (its summary's and every record's) into the past, as the passing of its retention would. */
async function age(clientId: string, batchId: string, toS = nowS() - 60): Promise<void> {
  const out = await aws().ddb.send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'batch_id = :pk',
      ExpressionAttributeValues: { ':pk': batchPartition(clientId, batchId) },
    }),
  );
  for (const item of out.Items ?? []) {
    await aws().ddb.send(
      new UpdateCommand({
        TableName: table(),
        Key: { batch_id: item.batch_id, img_fprint: item.img_fprint },
        UpdateExpression: 'SET #ttl = :ttl',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':ttl': toS },
      }),
    );
  }
}

async function objectsOf(clientId: string, batchId: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of BATCH_OBJECT_PREFIXES) {
    const out = await aws().s3.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: `${prefix}/${clientId}/${batchId}/` }));
    keys.push(...(out.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : [])));
  }
  return keys.sort();
}

async function itemsOf(clientId: string, batchId: string): Promise<Record<string, unknown>[]> {
  const out = await aws().ddb.send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'batch_id = :pk',
      ExpressionAttributeValues: { ':pk': batchPartition(clientId, batchId) },
    }),
  );
  return out.Items ?? [];
}

/** Objects under every prefix a batch leaves objects under. */
async function seedObjects(clientId: string, batchId: string): Promise<void> {
  for (const prefix of BATCH_OBJECT_PREFIXES.filter((p) => p !== 'uploads')) {
    await uploadFile(`${prefix}/${clientId}/${batchId}/left by ${prefix}.jpg`, `bytes under ${prefix}`, 'image/jpeg');
  }
}

/** The sweep as the stack runs it, its erasures run by the erase job itself, with an injected clock. */
async function sweep(now: number) {
  const erased: string[] = [];
  const deps = { s3: aws().s3, store: new BatchErasure({ ddb: aws().ddb, tableName: table() }), bucketName: bucket() };
  const result = await sweepExpiredBatches(
    {
      expired: new ExpiredBatches({ ddb: aws().ddb, tableName: table() }),
      erasures: {
        send: async (body) => {
          erased.push(body);
          await runEraseJob(deps, body);
        },
      },
      now: () => now,
    },
    { requeueAfterMs: 3_600_000 },
  );
  return { result, erased: erased.map((b) => JSON.parse(b) as { clientId: string; batchId: string }) };
}

let owner: TestClient;

beforeAll(async () => {
  owner = await newClient('ret');
});

describe('an expired batch is gone for every route', () => {
  it('answers 404 to reads, close, more uploads, export, reclassify and DELETE alike', async () => {
    // Arrange: an open batch and a done one, both past their retention.
    const open = await seedBatch(owner.clientId, [{ fprint: 'f1', uploadTs: Date.now() - 1000 }], { n_total: 1, n_success: 1 });
    const done = await seedBatch(owner.clientId, [{ fprint: 'f1', uploadTs: Date.now() - 1000 }], {
      closed: true,
      n_total: 1,
      n_success: 1,
      done_ts: Date.now(),
    });
    await age(owner.clientId, open);
    await age(owner.clientId, done);
    const key = owner.key;

    // Act
    const answers = {
      get: (await call('GET', `/v1/batches/${open}`, { key })).status,
      images: (await call('GET', `/v1/batches/${open}/images`, { key })).status,
      close: (await call('POST', `/v1/batches/${open}:close`, { key, body: {} })).status,
      uploads: (
        await call('POST', `/v1/batches/${open}/uploads`, { key, body: { files: [{ name: 'a.png', contentType: 'image/png', size: 10 }] } })
      ).status,
      export: (await call('GET', `/v1/batches/${done}/export`, { key })).status,
      reclassify: (await call('POST', `/v1/batches/${done}:reclassify`, { key, body: { catMinConfidence: 50 } })).status,
      delete: (await call('DELETE', `/v1/batches/${done}`, { key })).status,
    };

    // Assert: and nothing was written into either.
    expect(answers).toEqual({ get: 404, images: 404, close: 404, uploads: 404, export: 404, reclassify: 404, delete: 404 });
    const summary = await aws().ddb.send(
      new GetCommand({ TableName: table(), Key: { batch_id: batchPartition(owner.clientId, open), img_fprint: '#BATCH' } }),
    );
    expect([summary.Item?.closed, summary.Item?.expected]).toEqual([false, undefined]);
  });

  it('lets POST /v1/batches reuse the name once the expired batch it named is erased, with nothing of the old one left', async () => {
    // Arrange
    const name = uniqueId('reuse');
    const old = await seedBatch(owner.clientId, [{ fprint: 'old1', uploadTs: Date.now() - 1000 }], {
      batchId: name,
      n_total: 1,
      n_success: 1,
    });
    await seedObjects(owner.clientId, old);
    await age(owner.clientId, old);

    // Act
    const res = await call('POST', '/v1/batches', { key: owner.key, body: { batchId: name } });

    // Assert: the name's old batch was erased first (locally the erasure is done before the answer).
    expect(res.status).toBe(201);
    expect(res.body.batch.counts.total).toBe(0);
    expect(await objectsOf(owner.clientId, name)).toEqual([]);
    expect((await itemsOf(owner.clientId, name)).map((i) => i.img_fprint)).toEqual(['#BATCH']);
    expect((await call('GET', `/v1/batches/${name}/images`, { key: owner.key })).body.items).toEqual([]);
  });

  it('answers 409 batch_erasing while the erasure it queued runs later (SQS on AWS), and queues it only once', async () => {
    // Arrange: the batches function's service with an erase queue that only holds its messages, as SQS does.
    const name = uniqueId('later');
    await seedBatch(owner.clientId, [{ fprint: 'old1', uploadTs: Date.now() - 1000 }], { batchId: name, n_total: 1, n_success: 1 });
    await age(owner.clientId, name);
    const queued: string[] = [];
    const service = new BatchLifecycleService({
      store: new BatchStore({ ddb: aws().ddb, tableName: table(), transactions: process.env.DDB_TRANSACTIONS === 'true' }),
      s3: aws().s3,
      bucketName: bucket(),
      defaultRetentionDays: 30,
      maxUploadBytes: 1_000_000,
      uploadExpiresSeconds: 600,
      pricePerImageUsd: 0.001,
      erasures: { send: async (body) => void queued.push(body) },
    });

    // Act
    const first = await service.createBatch(owner.clientId, { batchId: name }).catch((err: unknown) => err);
    const second = await service.createBatch(owner.clientId, { batchId: name }).catch((err: unknown) => err);
    await runEraseJob({ s3: aws().s3, store: new BatchErasure({ ddb: aws().ddb, tableName: table() }), bucketName: bucket() }, queued[0]!);
    const third = await service.createBatch(owner.clientId, { batchId: name });

    // Assert
    expect([first, second].map((e) => (e as BatchErasingError).code)).toEqual(['batch_erasing', 'batch_erasing']);
    expect(queued.map((b) => JSON.parse(b) as unknown)).toEqual([{ type: 'erase', clientId: owner.clientId, batchId: name }]);
    expect([third.batchId, third.batch.counts.total]).toEqual([name, 0]);
    expect((await itemsOf(owner.clientId, name)).map((i) => i.img_fprint)).toEqual(['#BATCH']);
  });

  it('discards an upload into an expired batch: nothing recorded, its object deleted, not moved', async () => {
    // Arrange
    const created = await call('POST', '/v1/batches', {
      key: owner.key,
      body: { files: [{ name: 'late.png', contentType: 'image/png', size: fixture('coffee.png').length }] },
    });
    const batchId = created.body.batchId as string;
    await age(owner.clientId, batchId);

    // Act
    expect(await postForm(created.body.uploads[0], fixture('coffee.png'), 'image/png')).toBe(204);
    await waitForBridgeIdle();

    // Assert
    expect(await objectsOf(owner.clientId, batchId)).toEqual([]);
    const items = await itemsOf(owner.clientId, batchId);
    expect(items.map((i) => [i.img_fprint, i.n_total])).toEqual([['#BATCH', 0]]);
  });
});

describe('the records of a batch expire with it', () => {
  it('gives an image record the expiry of its batch, not one counted from its own upload', async () => {
    // Arrange
    const created = await call('POST', '/v1/batches', {
      key: owner.key,
      body: { retentionDays: 1, files: [{ name: 'cat.png', contentType: 'image/png', size: fixture('chelsea.png').length }] },
    });
    const batchId = created.body.batchId as string;
    // The upload arrives a little later than the batch was made.
    await new Promise((resolve) => setTimeout(resolve, 1100));

    // Act
    expect(await postForm(created.body.uploads[0], fixture('chelsea.png'), 'image/png')).toBe(204);
    await waitFor(async () => (await call('GET', `/v1/batches/${batchId}`, { key: owner.key })).body.status === 'done', {
      what: 'the batch done',
    });

    // Assert
    const items = await itemsOf(owner.clientId, batchId);
    const summary = items.find((i) => i.img_fprint === '#BATCH')!;
    const records = items.filter((i) => i.img_fprint !== '#BATCH');
    expect(records.length).toBe(1);
    expect(records.map((r) => r.ttl)).toEqual([summary.ttl]);
  });
});

describe('the expiry sweep', () => {
  let owner: TestClient;

  beforeAll(async () => {
    owner = await newClient('sweep');
  });

  it('erases each expired batch, objects and items, and leaves a live one whole', async () => {
    // Arrange: one batch expired, one expiring in 100 s, one with 30 days left.
    const expired = await seedBatch(owner.clientId, [{ fprint: 'e1', uploadTs: Date.now() - 1000, logs: ['a log line'] }], {
      n_total: 1,
      n_success: 1,
    });
    const soon = await seedBatch(owner.clientId, [{ fprint: 's1', uploadTs: Date.now() - 1000 }], { n_total: 1, n_success: 1 });
    const live = await seedBatch(owner.clientId, [{ fprint: 'l1', uploadTs: Date.now() - 1000 }], { n_total: 1, n_success: 1 });
    for (const b of [expired, soon, live]) await seedObjects(owner.clientId, b);
    await age(owner.clientId, expired);
    await age(owner.clientId, soon, nowS() + 100);

    // Act: now, then 200 s later.
    const first = await sweep(Date.now());
    const afterFirst = {
      soonObjects: (await objectsOf(owner.clientId, soon)).length,
      soonItems: (await itemsOf(owner.clientId, soon)).length,
    };
    const second = await sweep(Date.now() + 200_000);

    // Assert
    const mine = (r: { erased: { clientId: string; batchId: string }[] }) =>
      r.erased.filter((e) => e.clientId === owner.clientId).map((e) => e.batchId);
    expect(mine(first)).toEqual([expired]);
    expect(afterFirst).toEqual({ soonObjects: BATCH_OBJECT_PREFIXES.length - 1, soonItems: 2 });
    expect(mine(second)).toEqual([soon]);
    for (const gone of [expired, soon]) {
      expect(await objectsOf(owner.clientId, gone)).toEqual([]);
      expect(await itemsOf(owner.clientId, gone)).toEqual([]);
    }
    expect((await objectsOf(owner.clientId, live)).length).toBe(BATCH_OBJECT_PREFIXES.length - 1);
    expect((await itemsOf(owner.clientId, live)).length).toBe(2);
    expect((await call('GET', `/v1/batches/${live}`, { key: owner.key })).status).toBe(200);
  });

  it('runs in the local stack every interval, by its own clock', async () => {
    // Arrange: a sweep whose clock is two days ahead, started before the batch it erases exists.
    const deps = { s3: aws().s3, store: new BatchErasure({ ddb: aws().ddb, tableName: table() }), bucketName: bucket() };
    const expiry = startLocalExpiry({
      ddb: aws().ddb,
      tableName: table(),
      erasures: { send: async (body) => void (await runEraseJob(deps, body)) },
      intervalMs: 50,
      now: () => Date.now() + 2 * 86_400_000,
      log: () => undefined,
    });
    try {
      // Act: a batch with a day of retention left, for the real clock.
      const batchId = await seedBatch(owner.clientId, [{ fprint: 'd1', uploadTs: Date.now() - 1000 }], { n_total: 1, n_success: 1 });
      await seedObjects(owner.clientId, batchId);
      await age(owner.clientId, batchId, nowS() + 86_400);

      // Assert
      await waitFor(async () => (await itemsOf(owner.clientId, batchId)).length === 0, { what: 'the expired batch erased' });
      expect(await objectsOf(owner.clientId, batchId)).toEqual([]);
    } finally {
      await expiry.stop();
    }
  });

  it("applies the bucket's lifecycle rules to the local S3, which has none: an export goes after a day, a thumbnail stays", async () => {
    // Arrange: and one export kept, as the stack keeps an upload its queue still holds.
    const batchId = uniqueId('life');
    const exportKey = `exports/${owner.clientId}/${batchId}/export.csv`;
    const keptKey = `exports/${owner.clientId}/${batchId}/kept.csv`;
    const thumbnailKey = `thumbnails/${owner.clientId}/${batchId}/f.webp`;
    await uploadFile(exportKey, 'a,b', 'text/csv');
    await uploadFile(keptKey, 'a,b', 'text/csv');
    await uploadFile(thumbnailKey, 'webp', 'image/webp');
    // The stack's sweep, its clock two days ahead.
    const expiry = startLocalExpiry({
      ddb: aws().ddb,
      tableName: table(),
      erasures: { send: async () => undefined },
      lifecycle: {
        s3: aws().s3,
        bucket: bucket(),
        rules: await loadBucketLifecycleRules(path.join(__dirname, '..', '..')),
        keep: (key) => key === keptKey,
      },
      intervalMs: 3_600_000,
      now: () => Date.now() + 2 * 86_400_000,
      log: () => undefined,
    });

    // Act: its first sweep applies the rules.
    try {
      await waitFor(async () => (await objectsOf(owner.clientId, batchId)).length === 2, { what: 'the export expired' });
    } finally {
      await expiry.stop();
    }

    // Assert
    expect(await objectsOf(owner.clientId, batchId)).toEqual([keptKey, thumbnailKey].sort());
  });

  it('counts as overdue a batch still there an hour after its expiry, and not one that expired minutes ago', async () => {
    // Arrange: expiries in 1970, below any other batch in the shared table, so this sweep's clock lists only these two.
    const T0 = 1_000_000;
    const longAgo = await seedBatch(owner.clientId, [], {});
    const lately = await seedBatch(owner.clientId, [], {});
    await age(owner.clientId, longAgo, T0);
    await age(owner.clientId, lately, T0 + 3000);
    const now = (T0 + 3600 + 60) * 1000;

    // Act: a sweep whose erasures do not run (a stuck erase function), then, once they are due again, one that erases
    const stuck = await sweepExpiredBatches(
      { expired: new ExpiredBatches({ ddb: aws().ddb, tableName: table() }), erasures: { send: async () => undefined }, now: () => now },
      { requeueAfterMs: 3_600_000 },
    );
    const erasing = await sweep(now + 3_600_001);
    const after = await sweep(now + 3_600_001);

    // Assert
    expect([stuck.expired, stuck.overdue]).toEqual([2, 1]);
    expect(erasing.erased.map((e) => e.batchId).sort()).toEqual([longAgo, lately].sort());
    expect([after.result.expired, after.result.overdue]).toEqual([0, 0]);
  });

  it('finds nothing more to erase once it has erased what expired', async () => {
    // Arrange
    const expired = await seedBatch(owner.clientId, [], {});
    await age(owner.clientId, expired);
    await sweep(Date.now());

    // Act
    const again = await sweep(Date.now());

    // Assert
    expect(again.erased.filter((e) => e.batchId === expired)).toEqual([]);
  });
});
