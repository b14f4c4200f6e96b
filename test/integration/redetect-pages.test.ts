// A large re-detection (issue 37 item 6): POST …:redetect on 5,000 images answers within the batches function's 10 s
// timeout, having started the pages its time budget allows; the rest is paged on by the reconcile sweep. A run of 600
// (24 pages of 25) with `npm start` killed with SIGKILL right after the answer, and again while the sweep pages, ends with
// the batch done, every image handled once by the run, nothing left marked, and the day's quota moved by exactly the
// images. The records are seeded
// directly (a done batch, as the ingest leaves one) without their resting objects: each image's job finds its object
// gone and keeps its answer (no DetectLabels call, which the local model could not make 5,000 times in a test's time),
// so what is tried here is the run's paging, charging, marking, queueing, claiming and counting.

import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BatchWriteCommand, DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchPartition } from '../../lib/store/table/schema';
import { LOCAL_NAMES } from '../../local/contract';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { tempDataDir, waitFor } from '../helpers';
import { batchItem, imageItem } from '../helpers/api';
import { api, doneWithin, endStackTrial, type StackProcess, startStackProcess, withStackLog } from '../helpers/stack-process';

/**
 * The paged run's images, 60 pages of 10 (REDETECT_PAGE_SIZE): more than a call starts in its 5 s budget (10 to 25
 * pages, by how busy the machine is: at 24 pages of 25 a quiet machine started them all), so the sweep pages on after
 * it; the 5,000 keep the pages of 100 a deployment runs.
 */
const PAGED_ENV = { REDETECT_PAGE_SIZE: '10' };
const IMAGES = 600;
/** The batches function's timeout (serverless.yml): the call must answer within it. */
const FUNCTION_TIMEOUT_MS = 10_000;
const STACK_ENV = {
  CLAIM_LEASE_SECONDS: '5',
  ICECAT_RECONCILE_INTERVAL_SECONDS: '1',
  ICECAT_RECONCILE_GRACE_SECONDS: '5',
  CLIENT_DEFAULT_RATE: '1000',
};

async function withTable<T>(stack: StackProcess, f: (ddb: DynamoDBDocumentClient) => Promise<T>): Promise<T> {
  const ddb = DynamoDBDocumentClient.from(localDynamoClient(stack.dynamodbUrl));
  try {
    return await f(ddb);
  } finally {
    ddb.destroy();
  }
}

/** A done batch of `n` classified images of the demo client, written as the ingest leaves them. */
async function seedDoneBatch(stack: StackProcess, batchId: string, n: number): Promise<void> {
  const now = Date.now();
  await withTable(stack, async (ddb) => {
    const summary = batchItem('demo', batchId, {
      closed: true,
      closed_ts: now - 2_000,
      done_ts: now - 1_000,
      n_total: n,
      n_pending: 0,
      n_success: n,
    });
    await ddb.send(new PutCommand({ TableName: LOCAL_NAMES.table, Item: summary }));
    const items = Array.from({ length: n }, (_, i) =>
      imageItem('demo', batchId, { fprint: `p${String(i).padStart(5, '0')}`, uploadTs: now - 60_000 }),
    );
    for (let i = 0; i < items.length; i += 25) {
      let pending: unknown[] | undefined = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      while (pending && pending.length > 0) {
        const out: { UnprocessedItems?: Record<string, unknown[]> } = await ddb.send(
          new BatchWriteCommand({ RequestItems: { [LOCAL_NAMES.table]: pending as never } }),
        );
        pending = out.UnprocessedItems?.[LOCAL_NAMES.table];
      }
    }
  });
}

async function records(stack: StackProcess, batchId: string): Promise<Record<string, unknown>[]> {
  return withTable(stack, async (ddb) => {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await ddb.send(
        new QueryCommand({
          TableName: LOCAL_NAMES.table,
          KeyConditionExpression: 'batch_id = :p',
          ExpressionAttributeValues: { ':p': batchPartition('demo', batchId) },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  });
}

const accepted = async (stack: StackProcess, key: string): Promise<number> =>
  ((await api(stack, key, 'GET', '/v1/usage')).body.images as { accepted: number }).accepted;

/** A trial on its own stack process, its log shown when it fails. */
async function trial(
  name: string,
  run: (ctx: { dataDir: string; logFile: string; stack: StackProcess; restart(): Promise<StackProcess> }) => Promise<void>,
  extraEnv: Record<string, string> = {},
) {
  const dir = tempDataDir(`icecat-${name}-`);
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'stack.log');
  mkdirSync(dataDir);
  const env = { ...STACK_ENV, ...extraEnv };
  let stack = await startStackProcess(dataDir, logFile, env);
  const restart = async () => {
    stack.signal('SIGKILL');
    await stack.exited;
    return (stack = await startStackProcess(dataDir, logFile, env));
  };
  try {
    await run({ dataDir, logFile, stack, restart });
  } catch (err) {
    throw withStackLog(err, logFile);
  } finally {
    await endStackTrial(stack, dir);
  }
}

const demoKey = (dataDir: string) => readFileSync(path.join(dataDir, 'demo-api-key'), 'utf8').trim();

describe('a large re-detection', () => {
  it('of 5,000 images answers within the function timeout, having charged exactly what it started', async () => {
    await trial(
      'redetect-5000',
      async ({ dataDir, stack }) => {
        // Arrange
        const key = demoKey(dataDir);
        const batchId = 'redetect-5000';
        await seedDoneBatch(stack, batchId, 5_000);
        const before = await accepted(stack, key);

        // Act
        const t0 = Date.now();
        const started = await api(stack, key, 'POST', `/v1/batches/${batchId}:redetect`, { all: true });
        const answeredInMs = Date.now() - t0;

        // Assert: what it answers it started (charged, and marked); the rest is the sweep's.
        expect(started.status).toBe(200);
        expect(answeredInMs).toBeLessThan(FUNCTION_TIMEOUT_MS);
        expect(started.body).toMatchObject({ batch: { status: 'processing' } });
        const newCalls = started.body.newCalls as number;
        expect(newCalls).toBeGreaterThan(0);
        expect((await accepted(stack, key)) - before).toBeGreaterThanOrEqual(newCalls);
        // Its own dynalite whatever the run uses: its run, left going, must not share a table with the next trial's.
      },
      { ICECAT_DYNAMODB_ENDPOINT: '' },
    );
  }, 120_000);

  it(`of ${IMAGES} images survives SIGKILL after the call and during the sweep's paging, counts and charges exact`, async () => {
    await trial(
      'redetect-pages',
      async ({ dataDir, stack: first, restart }) => {
        // Arrange
        let stack = first;
        const key = demoKey(dataDir);
        const batchId = 'redetect-pages';
        await seedDoneBatch(stack, batchId, IMAGES);
        const before = await accepted(stack, key);

        // Act: SIGKILL once the call answered, and again once the sweep pages on after the restart.
        const started = await api(stack, key, 'POST', `/v1/batches/${batchId}:redetect`, { all: true });
        // A busy machine's call leaves pages to the sweep (10 to 25 of 60 started in its 5 s): the second kill then lands
        // during the sweep's paging. A quiet one may start all 60 within the budget; the first kill is still after it.
        const chargedByTheCall = (await accepted(stack, key)) - before;
        expect(chargedByTheCall).toBeGreaterThan(0);
        stack = await restart();
        if (chargedByTheCall < IMAGES)
          await waitFor(async () => (await accepted(stack, key)) - before > chargedByTheCall || undefined, {
            timeoutMs: 60_000,
            intervalMs: 50,
            what: 'the sweep paging on',
          });
        stack = await restart();
        const done = await doneWithin(stack, key, batchId, 180_000);

        // Assert
        expect(started.status).toBe(200);
        const items = await records(stack, batchId);
        const summary = items.find((i) => i.img_fprint === '#BATCH') as Record<string, unknown>;
        const images = items.filter((i) => i.img_fprint !== '#BATCH');
        const runs = new Set(images.map((i) => i.rd_last));
        expect({
          images: images.length,
          handledByOneRun: runs.size === 1 && !runs.has(undefined),
          leftMarked: images.filter((i) => i.rd_run !== undefined || i.rd_claim !== undefined).length,
          runOnSummary: Object.keys(summary).filter((name) => name.startsWith('rd_')),
          charged: (await accepted(stack, key)) - before,
        }).toEqual({ images: IMAGES, handledByOneRun: true, leftMarked: 0, runOnSummary: [], charged: IMAGES });
        expect(done.counts).toMatchObject({ total: IMAGES, success: IMAGES, pending: 0, fail: 0 });
      },
      PAGED_ENV,
    );
  }, 300_000);
});
