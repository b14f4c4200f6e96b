// Batch erasure against the local S3 and DynamoDB: every object under every prefix, every item (logs included) and
// the summary go; another batch of the same client and a same-named batch of another client stay whole.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { BatchWriteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type BatchErasureTarget, eraseBatch } from '../../lib/erase/erase-batch';
import { BATCH_OBJECT_PREFIXES } from '../../lib/erase/objects';
import { EraseIncompleteError } from '../../lib/errors';
import { BatchErasure } from '../../lib/store/batch/erasure';
import { aws, stackEnv, uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';

const SUMMARY = '#BATCH';
const bucket = () => stackEnv('BUCKET_NAME');
const table = () => stackEnv('TABLE_NAME');
const partitionOf = (clientId: string, batchId: string) => `${clientId}#${batchId}`;

interface SeededBatch {
  clientId: string;
  batchId: string;
  objects: number;
  items: number;
}

/** Objects under every prefix (some in sub-folders), `images` items (every third with logs) and a summary. */
async function seed(clientId: string, batchId: string, images: number): Promise<SeededBatch> {
  const keys = BATCH_OBJECT_PREFIXES.flatMap((prefix) =>
    Array.from({ length: 4 }, (_, i) => `${prefix}/${clientId}/${batchId}/${i % 2 ? 'sub/' : ''}${prefix} file ${i}.jpg`),
  );
  await Promise.all(keys.map((key) => uploadFile(key, `bytes of ${key}`, 'image/jpeg')));
  // The stack's ingest moves what lands under uploads/ (to failed/: the client is unknown); let it settle first.
  await waitForBridgeIdle();
  const pk = partitionOf(clientId, batchId);
  const items = Array.from({ length: images }, (_, i) => ({
    batch_id: pk,
    img_fprint: `fp${String(i).padStart(4, '0')}`,
    client_id: clientId,
    op_status: 'success',
    ...(i % 3 === 0 ? { logs: [`line of ${i}`], log_ts: 1000 + i } : {}),
  }));
  for (let i = 0; i < items.length; i += 25) {
    await aws().ddb.send(
      new BatchWriteCommand({ RequestItems: { [table()]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
  await aws().ddb.send(
    new PutCommand({ TableName: table(), Item: { batch_id: pk, img_fprint: SUMMARY, owner_id: clientId, deleting: true } }),
  );
  // Counted, not assumed: the ingest records what it refused from uploads/ in the batch's partition too.
  return { clientId, batchId, objects: keys.length, items: await itemsLeft(clientId, batchId) };
}

async function objectsLeft(clientId: string, batchId: string): Promise<number> {
  let n = 0;
  for (const prefix of BATCH_OBJECT_PREFIXES) {
    const out = await aws().s3.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: `${prefix}/${clientId}/${batchId}/` }));
    n += out.KeyCount ?? 0;
  }
  return n;
}

async function itemsLeft(clientId: string, batchId: string): Promise<number> {
  const out = await aws().ddb.send(
    new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'batch_id = :pk',
      ExpressionAttributeValues: { ':pk': partitionOf(clientId, batchId) },
      Select: 'COUNT',
    }),
  );
  return out.Count ?? 0;
}

async function logsLeft(clientId: string, batchId: string): Promise<number> {
  const out = await aws().ddb.send(
    new QueryCommand({
      TableName: table(),
      IndexName: 'batch-logs',
      KeyConditionExpression: 'batch_id = :pk',
      ExpressionAttributeValues: { ':pk': partitionOf(clientId, batchId) },
      Select: 'COUNT',
    }),
  );
  return out.Count ?? 0;
}

const target = (clientId: string, batchId: string): BatchErasureTarget => ({ clientId, batchId, bucket: bucket() });

/** The stack's S3 and the store's erasure on its table, through this document client. */
const onStack = (ddb = aws().ddb) => ({ s3: aws().s3, store: new BatchErasure({ ddb, tableName: table() }) });

// Small pages so that a few dozen objects and items take many List/DeleteObjects and Query/BatchWriteItem calls.
const SMALL_PAGES = { objects: { pageSize: 5 }, items: { pageSize: 7 } };

describe('eraseBatch', () => {
  const batchId = uniqueId('holiday');
  const client = uniqueId('erase');
  const otherClient = uniqueId('erase-other');
  let erased: SeededBatch;
  let sibling: SeededBatch;
  let sameNameElsewhere: SeededBatch;
  /** A batch whose id extends the erased one's: a prefix without its trailing '/' would reach it. */
  let longerName: SeededBatch;

  beforeAll(async () => {
    erased = await seed(client, batchId, 60);
    sibling = await seed(client, uniqueId('other'), 5);
    sameNameElsewhere = await seed(otherClient, batchId, 5);
    longerName = await seed(client, `${batchId}x`, 3);
  });

  it('leaves no object, item, log or summary of the batch behind', async () => {
    expect(await logsLeft(client, batchId)).toBeGreaterThan(0);

    const report = await eraseBatch(onStack(), target(client, batchId), SMALL_PAGES);

    expect(report).toMatchObject({ objects: erased.objects, items: erased.items - 1 });
    expect(await objectsLeft(client, batchId)).toBe(0);
    expect(await itemsLeft(client, batchId)).toBe(0);
    expect(await logsLeft(client, batchId)).toBe(0);
  });

  it("touches no other batch: the client's other batches and another client's batch of the same name stay whole", async () => {
    for (const b of [sibling, sameNameElsewhere, longerName]) {
      expect(await objectsLeft(b.clientId, b.batchId)).toBe(b.objects);
      expect(await itemsLeft(b.clientId, b.batchId)).toBe(b.items);
    }
  });

  it('is idempotent: erasing an erased batch deletes nothing and succeeds', async () => {
    await expect(eraseBatch(onStack(), target(client, batchId))).resolves.toEqual({ objects: 0, items: 0, passes: 1 });
  });
});

describe('eraseBatch interrupted', () => {
  it('keeps the summary until the end, and a second run finishes the erasure', async () => {
    const client = uniqueId('erase-resume');
    const batch = await seed(client, uniqueId('b'), 40);
    const crash = new Error('process killed');
    let pages = 0;
    const interrupt = () => {
      if (++pages === 3) throw crash;
    };

    await expect(eraseBatch(onStack(), target(client, batch.batchId), { items: { pageSize: 7, onDeleted: interrupt } })).rejects.toBe(
      crash,
    );
    expect(await objectsLeft(client, batch.batchId)).toBe(0);
    const left = await itemsLeft(client, batch.batchId);
    expect(left).toBeGreaterThan(1); // the summary and the items not reached yet

    const report = await eraseBatch(onStack(), target(client, batch.batchId), SMALL_PAGES);

    expect(report.items).toBe(left - 1);
    expect(await itemsLeft(client, batch.batchId)).toBe(0);
  });

  it('reports items DynamoDB leaves unprocessed past the attempts, keeping the summary (fault injected)', async () => {
    const client = uniqueId('erase-throttled');
    const batch = await seed(client, uniqueId('b'), 3);
    const ddb = aws().ddb;
    // dynalite never answers UnprocessedItems: the fault is injected by answering every BatchWriteItem with all of them.
    const throttled = {
      send: (command: unknown) =>
        command instanceof BatchWriteCommand
          ? Promise.resolve({ UnprocessedItems: command.input.RequestItems })
          : ddb.send(command as QueryCommand),
    } as unknown as typeof ddb;

    const run = eraseBatch(onStack(throttled), target(client, batch.batchId), { items: { attempts: 3, retryBaseMs: 1 } });

    await expect(run).rejects.toBeInstanceOf(EraseIncompleteError);
    expect(await itemsLeft(client, batch.batchId)).toBe(batch.items);
  });
});
