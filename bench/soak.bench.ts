// The soak: 30,000 uploads through the whole local stack (S3 → bridge → ingest → DynamoDB), mostly duplicates as a
// re-synced library is: a few distinct photos, uploaded again and again under new names in batches of 3,000. Goals:
// the stack's resident memory (every process of it together) grows by at most 5 % from 10,000 to 30,000 uploads,
// and the last 1,000 uploads go through as fast as the first 1,000 (within 10 %).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import sharp from 'sharp';
import { registerClient } from '../lib/auth/register';
import { Registrations } from '../lib/store/client/registrations';
import { type BatchItem, batchKey } from '../lib/store/table/schema';
import { startStack } from '../local/stack/stack';
import { treeRssBytes } from './process-tree';
import { headline as figure, type Headline, pick, round } from './stats';

const SMOKE = process.env.BENCH_SMOKE === '1';
/** SOAK_UPLOADS overrides the count (e.g. a longer run); the checkpoints stay at a third and at the end. */
const UPLOADS = Number(process.env.SOAK_UPLOADS) || (SMOKE ? 60 : 30_000);
const DISTINCT = SMOKE ? 10 : 100;
const PER_BATCH = SMOKE ? 60 : 3_000;
const WINDOW = SMOKE ? 20 : 1_000;
const CONCURRENCY = 16;
const CLIENT = 'soak';
const MB = 1024 * 1024;

/** Distinct small photos: noise, so every one has its own fingerprint. */
async function distinctImages(n: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      await sharp({
        create: {
          width: 160,
          height: 120,
          channels: 3,
          background: { r: (i * 37) % 256, g: 90, b: 140 },
          noise: { type: 'gaussian', mean: 128, sigma: 40 },
        },
      })
        .jpeg({ quality: 80 })
        .toBuffer(),
    );
  }
  return out;
}

/** A full garbage collection, so that memory figures are what is kept rather than what waits to be collected. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export default async function run(): Promise<Record<string, unknown>> {
  const gc = collector();
  const dataDir = mkdtempSync(join(tmpdir(), 'icecat-soak-'));
  const heapDir = process.env.SOAK_HEAP_DIR;
  const stack = await startStack({
    dataDir,
    quiet: true,
    reconcile: false,
    ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 },
  });
  try {
    const { createClients } = await import('../lib/aws/clients');
    const { loadAwsClientSettings } = await import('../lib/config');
    const aws = createClients(loadAwsClientSettings());
    await registerClient(new Registrations({ ddb: aws.ddb, tableName: stack.table }), CLIENT);
    const images = await distinctImages(DISTINCT);
    const put = (batchId: string, name: string, body: Buffer) =>
      aws.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: `uploads/${CLIENT}/${batchId}/${name}`, Body: body }));
    const upload = async (from: number, to: number, batchOf: (i: number) => string) => {
      let next = from;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < to) {
            const i = next++;
            await put(batchOf(i), `img-${i}.jpg`, images[i % DISTINCT] as Buffer);
          }
        }),
      );
      await stack.whenIdle(15 * 60_000);
    };

    // Warm-up, not counted: every distinct photo is classified once (the detector's work); from then on each batch
    // reuses those labels (docs/design.md §8), as a re-synced library does.
    const warmStarted = performance.now();
    await upload(0, DISTINCT, () => 'warm');
    const warmSeconds = (performance.now() - warmStarted) / 1000;

    const measure = async (uploads: number) => {
      await sleep(2000);
      gc();
      await sleep(3000);
      const { heapUsed, external, arrayBuffers } = process.memoryUsage();
      const tree = treeRssBytes();
      if (heapDir) writeHeapSnapshot(join(heapDir, `soak-${uploads}.heapsnapshot`));
      return {
        uploads,
        rssMB: round(tree.bytes / MB, 1),
        processes: tree.processes,
        heapUsedMB: round(heapUsed / MB, 1),
        externalMB: round(external / MB, 1),
        arrayBuffersMB: round(arrayBuffers / MB, 1),
      };
    };

    const checkpoints = new Set([WINDOW, Math.round(UPLOADS / 3 / WINDOW) * WINDOW, UPLOADS]);
    const memory: Awaited<ReturnType<typeof measure>>[] = [await measure(0)];
    const windows: { upTo: number; perSecond: number }[] = [];
    const batchOf = (i: number) => `b${String(Math.floor(i / PER_BATCH)).padStart(3, '0')}`;
    for (let done = 0; done < UPLOADS; ) {
      const to = Math.min(UPLOADS, done + WINDOW);
      const started = performance.now();
      await upload(done, to, batchOf);
      windows.push({ upTo: to, perSecond: round((to - done) / ((performance.now() - started) / 1000), 1) });
      done = to;
      if (!SMOKE || process.env.SOAK_VERBOSE) {
        const { heapUsed, external } = process.memoryUsage();
        console.log(
          `[soak] ${done} uploads, ${windows.at(-1)?.perSecond}/s, rss ${round(treeRssBytes().bytes / MB, 1)} MB` +
            ` (heap ${round(heapUsed / MB, 1)} MB, external ${round(external / MB, 1)} MB)`,
        );
      }
      if (checkpoints.has(done)) memory.push(await measure(done));
    }

    // Every upload ended in a record: each batch counts all its uploads, none pending.
    const batches = new Set(Array.from({ length: UPLOADS }, (_, i) => batchOf(i)));
    let recorded = 0;
    for (const batchId of batches) {
      const out = await aws.ddb.send(new GetCommand({ TableName: stack.table, Key: batchKey(CLIENT, batchId), ConsistentRead: true }));
      const item = out.Item as BatchItem | undefined;
      if (!item || (item.n_pending ?? 0) !== 0) throw new Error(`batch ${batchId} not settled: ${JSON.stringify(item)}`);
      recorded += item.n_success + item.n_fail + item.n_duplicate;
    }
    if (recorded !== UPLOADS) throw new Error(`${recorded} of ${UPLOADS} uploads have a record`);

    const third = memory.find((m) => m.uploads === Math.round(UPLOADS / 3 / WINDOW) * WINDOW);
    const last = memory.at(-1);
    const growth = third && last ? (last.rssMB - third.rssMB) / third.rssMB : Number.NaN;
    const firstRate = windows[0]?.perSecond ?? Number.NaN;
    const lastRate = windows.at(-1)?.perSecond ?? Number.NaN;
    const stats = stack.bridge.stats();
    return {
      uploads: UPLOADS,
      distinctImages: DISTINCT,
      uploadsPerBatch: PER_BATCH,
      concurrency: CONCURRENCY,
      warmUp: { uploads: DISTINCT, seconds: round(warmSeconds, 1) },
      memory,
      rssGrowth: {
        from: third?.uploads,
        to: last?.uploads,
        growth: round(growth, 4),
        goal: 'growth <= 0.05',
        ...(SMOKE ? {} : { met: growth <= 0.05 }),
      },
      uploadsPerSecond: {
        windows,
        first: firstRate,
        last: lastRate,
        lastOverFirst: round(lastRate / firstRate, 3),
        goal: 'lastOverFirst >= 0.9',
        ...(SMOKE ? {} : { met: lastRate / firstRate >= 0.9 }),
      },
      queue: {
        sent: stats.sent,
        succeeded: stats.succeeded,
        deadLettered: stats.deadLettered,
        journalLines: stats.journal?.lines,
        retained: stack.bridge.retained(),
      },
      smoke: SMOKE,
      note: 'memory is measured 5 s after the queue is idle, after a full garbage collection of the stack process; rssMB sums the stack process and its children',
    };
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The soak's goals: resident memory from 10,000 to 30,000 uploads, and the last 1,000 uploads' rate beside the first's. */
export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure('resident memory growth, 10,000 → 30,000 uploads', pick(r, 'rssGrowth', 'growth'), '<= 0.05'),
    figure('uploads/s, the last 1,000 ÷ the first 1,000', pick(r, 'uploadsPerSecond', 'lastOverFirst'), '>= 0.9'),
  ];
}
