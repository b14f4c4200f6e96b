// The whole local stack classifying photos, beside the detector alone:
// - pipeline: 100 distinct photos (640–800 px JPEGs, half of them cats) through `npm start`'s command, run in its own
//   process as a user runs it, uploaded as the CLI uploads them (POST /v1/batches declares them and answers one
//   presigned POST form each; each file goes to the local S3 through its form, 8 at a time), timed from the first
//   upload to the batch's `done` (GET /v1/batches/{id}, polled). S3's own notifications, ETags included, reach the
//   bridge and the ingest: nothing here builds an event.
// - single worker: the same photos answered one at a time by the detector in this process (loadDetector(), one
//   model, one serial queue), before the stack starts, so nothing else of this bench runs beside it.
//   Goal: pipeline images/s >= 0.8 x workers x single-worker images/s, where workers is ICECAT_DETECTOR_WORKERS or
//   the machine's cores (os.availableParallelism()).
// - every worker alone: the same photos given all at once to the detector's pool of `workers` (the stack's own pool,
//   local/detector/pool.ts) in this process, with nothing else running: no HTTP, no S3, no DynamoDB, no ingest. Its
//   images/s over workers x single-worker images/s is the most the goal's ratio can reach on this machine (the cores
//   are shared with the decoders' threads, and inference slows a little when every core runs it), and the pipeline
//   over it is the share of the detector's own throughput the rest of the stack leaves.
// - the request floor: each request a new image makes (as counted at the stand-ins: 7 UpdateItem, a GetItem, the
//   reuse Query, 5 S3 requests), sent alone in a loop by the functions' own client configuration to the same stand-ins
//   (dynalite, the local S3) in this process, 4 at a time: the CPU they cost at the least, before the rest of an
//   image's work (the queue, the ingest's code, the API) and before they share a heap with it; beside them the ingest's
//   fingerprint and thumbnail of the photo. With the pool alone's CPU per image, it bounds the ratio the stack could
//   reach here.
// - the API while the stack works: GET /v1/batches/{id}/images at a steady rate (autocannon, a few connections: people
//   watching the batch, not a load test), from a second batch's first upload until it is done, beside the same load
//   on the same batch once the stack is idle (then every page is full: the heavier answer). Goal: p99 busy <= 2x idle.
//   The second batch has 100 other distinct photos: the same ones again would be reused from the first (no detection).
// - a duplicate's handling time beside a first upload's (goal <= 0.5): ten photos sent one at a time into a batch,
//   then each again under another name, timed by the ingest's own step latencies (the bridge's metric totals).
// On a machine busy with other work every wall-clock figure here waits for cores: `machine` has the load average, and
// the CPU figures (per image, the detector alone's and the whole stack's) are what the work itself cost.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import sharp from 'sharp';
import type { UploadForm } from '../lib/api/schemas/batches';
import { documentClientOf, s3ClientOf } from '../lib/aws/clients';
import { fingerprint } from '../lib/ingest/fingerprint';
import { reusableResultRequest } from '../lib/store/image/reuse';
import type { MetricTotal, MetricTotalsSnapshot } from '../local/bridge/metric-totals';
import { LOCAL_CAT_MIN_CONFIDENCE, LOCAL_NAMES } from '../local/contract';
import { toConfidence } from '../local/detector/labels';
import { localDynamoClient, startLocalDynamoDB } from '../local/dynamodb/dynamodb';
import { startLocalS3 } from '../local/s3/s3';
import { waitForBridgeIdle } from '../test/helpers';
import { postForm } from '../test/helpers/upload-form';
import { type Api, call, machineFacts, onStack } from './on-stack';
import { headline as figure, type Headline, median, percentile, pick, round, sized } from './stats';

const ROOT = join(__dirname, '..');
const FIXTURES = join(ROOT, 'test', 'fixtures');
const PHOTOS = sized(100, 4);
const PAIRS = sized(10, 2);
/** The CLI's default concurrency (lib/cli/program.ts). */
const UPLOAD_CONCURRENCY = 8;
const API_CONNECTIONS = 4;
const API_RATE = 40; // requests per second, all connections together
const IDLE_SECONDS = sized(30, 2);
const CAT = 'chelsea.png';
const NOT_CATS = ['coffee.png', 'astronaut.png', 'rocket.jpg', 'camera.png', 'clock_motion.png', 'brick.png', 'grass.png', 'gravel.png'];

interface Photo {
  name: string;
  body: Buffer;
  cat: boolean;
}

/**
 * Photos numbered from..from+n-1, even ones from the cat photo, odd ones from the others in turn: each a different
 * crop (70–95 % of the source, at a different offset), resized to 640–800 px wide, a little lighter or darker and
 * more or less saturated, saved as JPEG. Distinct pixels, so distinct fingerprints (checked by the caller).
 */
async function photos(from: number, n: number): Promise<Photo[]> {
  const out: Photo[] = [];
  for (let i = from; i < from + n; i++) {
    const cat = i % 2 === 0;
    const file = cat ? CAT : NOT_CATS[Math.floor(i / 2) % NOT_CATS.length]!;
    const source = readFileSync(join(FIXTURES, file));
    const { width = 400, height = 300 } = await sharp(source).metadata();
    const share = 0.7 + 0.05 * (i % 6);
    const w = Math.floor(width * share);
    const h = Math.floor(height * share);
    const left = Math.floor(((width - w) * ((i * 7) % 11)) / 10);
    const top = Math.floor(((height - h) * ((i * 3) % 7)) / 6);
    const body = await sharp(source)
      .extract({ left, top, width: w, height: h })
      .resize({ width: 640 + ((i * 37) % 161) })
      .modulate({ brightness: 0.9 + 0.02 * (i % 11), saturation: 0.85 + 0.03 * (i % 10) })
      .jpeg({ quality: 88 })
      .toBuffer();
    out.push({ name: `IMG_${String(i).padStart(4, '0')}.jpg`, body, cat });
  }
  return out;
}

async function distinct(all: Photo[]): Promise<void> {
  const seen = new Set<string>();
  for (const p of all) seen.add((await fingerprint(p.body, { maxInputPixels: 100_000_000 })).fprint);
  if (seen.size !== all.length) throw new Error(`${all.length} photos made but only ${seen.size} distinct fingerprints`);
}

/** The detector alone, one photo at a time, in this process: wall time, and the CPU it took (all threads). */
async function singleWorker(all: Photo[]): Promise<Record<string, number>> {
  const { loadDetector } = await import('../local/detector/object-detector');
  const { detectorSettingsFromEnvironment } = await import('../local/detector/from-environment');
  const { model, modelCache } = detectorSettingsFromEnvironment();
  const detector = await loadDetector(model, modelCache);
  await detector.detect(all[0]!.body); // the first inference compiles and allocates: not a steady one
  const each: number[] = [];
  let cats = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const p of all) {
    const t = performance.now();
    const found = await detector.detect(p.body);
    each.push(performance.now() - t);
    if (found.some((d) => d.classIndex === 15 && toConfidence(d.score) >= LOCAL_CAT_MIN_CONFIDENCE)) cats++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    images: all.length,
    seconds: round(seconds),
    imagesPerSecond: round(all.length / seconds),
    medianMs: round(median(each), 1),
    p95Ms: round(percentile(each, 95), 1),
    // The cores it kept busy on average: above 1, the one worker used more than one core (sharp's decode threads, or
    // the model's own); well below 1, it waited for a core (other work on the machine), and its wall time shows that.
    cpuCoresUsed: round((cpu.user + cpu.system) / 1e6 / seconds, 2),
    cpuMsPerImage: round((cpu.user + cpu.system) / 1e3 / all.length, 1),
    catsAtLocalThreshold: cats,
  };
}

/**
 * The detector's pool alone (the stack's DetectorPool, `workers` threads) given every photo at once: wall time and CPU
 * (all threads), after each worker's model is loaded and has answered twice.
 */
async function allWorkers(all: Photo[], workers: number, single: number): Promise<Record<string, number>> {
  const { DetectorPool } = await import('../local/detector/pool');
  const { detectorSettingsFromEnvironment } = await import('../local/detector/from-environment');
  const { model, modelCache, taskTimeoutMs } = detectorSettingsFromEnvironment();
  const pool = await DetectorPool.start({ model, modelCache, taskTimeoutMs, workers });
  try {
    await Promise.all(all.slice(0, 2 * workers).map((p) => pool.detect(p.body)));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(all.map((p) => pool.detect(p.body)));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      workers,
      images: all.length,
      seconds: round(seconds),
      imagesPerSecond: round(all.length / seconds),
      cpuCoresUsed: round((cpu.user + cpu.system) / 1e6 / seconds, 2),
      cpuMsPerImage: round((cpu.user + cpu.system) / 1e3 / all.length, 1),
      overWorkersTimesSingle: round(all.length / seconds / (workers * single)),
    };
  } finally {
    await pool.close();
  }
}

/** The requests a new image makes, by kind, as the stand-ins count them on the default (dynalite) stack. */
const REQUESTS_PER_IMAGE = {
  updateItem: 7,
  getItem: 1,
  reuseQuery: 1,
  putObject: 1,
  getObject: 1,
  putThumbnail: 1,
  copyObject: 1,
  deleteObject: 1,
} as const;

/** CPU ms (client and stand-in, all threads) of each kind of request alone, and their sum for one image's requests. */
async function requestFloor(photo: Buffer): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'icecat-bench-floor-'));
  const db = await startLocalDynamoDB({ host: '127.0.0.1', port: 0, dataDir: dir, quiet: true });
  const s3server = await startLocalS3({ host: '127.0.0.1', port: 0, dataDir: dir });
  // The functions' own clients (lib/aws/clients.ts), over the stand-ins.
  const ddb = documentClientOf(localDynamoClient(db.url));
  const s3 = s3ClientOf({
    endpoint: s3server.url,
    region: LOCAL_NAMES.region,
    credentials: { accessKeyId: LOCAL_NAMES.accessKeyId, secretAccessKey: LOCAL_NAMES.secretAccessKey },
    forcePathStyle: true,
  });
  const table = db.table.name;
  const bucket = s3server.bucket;
  const thumbnail = await (await fingerprint(photo, { maxInputPixels: 100_000_000 })).thumbnail();
  const kinds: Record<keyof typeof REQUESTS_PER_IMAGE, (i: number) => Promise<unknown>> = {
    updateItem: (i) =>
      ddb.send(
        new UpdateCommand({
          TableName: table,
          Key: { batch_id: `floor#${i % 50}`, img_fprint: 'f' },
          UpdateExpression: 'ADD #n :one SET #t = :t',
          ConditionExpression: 'attribute_not_exists(#gone)',
          ExpressionAttributeNames: { '#n': 'n', '#t': 't', '#gone': 'gone' },
          ExpressionAttributeValues: { ':one': 1, ':t': i },
        }),
      ),
    getItem: (i) =>
      ddb.send(new GetCommand({ TableName: table, Key: { batch_id: `floor#${i % 50}`, img_fprint: 'f' }, ConsistentRead: true })),
    reuseQuery: (i) => ddb.send(new QueryCommand(reusableResultRequest(table, 'floor', `fp${i % 50}`, Math.floor(Date.now() / 1000)))),
    putObject: (i) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: `uploads/floor/b/${i % 50}.jpg`, Body: photo })),
    getObject: async (i) => {
      const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `uploads/floor/b/${i % 50}.jpg` }));
      await out.Body!.transformToByteArray();
    },
    putThumbnail: (i) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: `thumbnails/floor/${i % 50}.webp`, Body: thumbnail })),
    copyObject: (i) =>
      s3.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: `processed/floor/b/${i % 50}.jpg`,
          CopySource: `${bucket}/uploads/floor/b/${i % 50}.jpg`,
        }),
      ),
    deleteObject: (i) => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `processed/floor/b/${i % 50}.jpg` })),
  };
  const n = sized(1000, 40);
  const perRequestMs: Record<string, number> = {};
  try {
    for (const [kind, request] of Object.entries(kinds)) {
      for (let i = 0; i < n / 4; i++) await request(i); // warm: compiled, connections open
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < n; i += 4) await Promise.all([0, 1, 2, 3].map((k) => request(i + k)));
      const cpu = process.cpuUsage(cpu0);
      perRequestMs[kind] = round((cpu.user + cpu.system) / 1e3 / n, 2);
    }
  } finally {
    ddb.destroy();
    s3.destroy();
    await s3server.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // The ingest's own work on the image besides its requests: the fingerprint (decode, hashes, preview) and the thumbnail.
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n / 4; i++) await (await fingerprint(photo, { maxInputPixels: 100_000_000 })).thumbnail();
  const cpu = process.cpuUsage(cpu0);
  const fingerprintAndThumbnailMs = round((cpu.user + cpu.system) / 1e3 / (n / 4), 2);
  const requestsMs = Object.entries(REQUESTS_PER_IMAGE).reduce((ms, [kind, count]) => ms + count * perRequestMs[kind]!, 0);
  return {
    requestsPerImage: REQUESTS_PER_IMAGE,
    perRequestMs,
    requestsCpuMsPerImage: round(requestsMs, 1),
    fingerprintAndThumbnailMs,
    cpuMsPerImage: round(requestsMs + fingerprintAndThumbnailMs, 1),
    photoBytes: photo.length,
    note: "the form POST's write measured as a PutObject (its multipart parse left out); the queue, the bridge, the ingest's own code and the API's polling left out: a lower bound",
  };
}

interface Summary {
  status: string;
  counts: Record<string, number>;
}

/** Declares the files as a batch: one presigned POST form each, by file name. */
async function declare(api: Api, batchId: string, files: Photo[]): Promise<Map<string, UploadForm>> {
  const created = await call<{ uploads: UploadForm[] }>(api, 'POST', '/v1/batches', {
    batchId,
    files: files.map((p) => ({ name: p.name, contentType: 'image/jpeg', size: p.body.length })),
  });
  return new Map(created.uploads.map((u) => [u.file, u]));
}

let uploadRetries = 0;

/** Sends each file through its form, `concurrency` at a time, as the CLI does. */
async function send(forms: Map<string, UploadForm>, files: Photo[], concurrency = UPLOAD_CONCURRENCY): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < files.length; i = next++) {
        const p = files[i]!;
        const form = forms.get(p.name);
        if (!form) throw new Error(`no upload form for ${p.name}`);
        // As the CLI does, a 5xx is sent again (a few times); each such retry is counted in the results.
        for (let attempt = 1; ; attempt++) {
          const status = await postForm(form, p.body, 'image/jpeg');
          if (status >= 200 && status <= 299) break;
          if (status < 500 || attempt === 3) throw new Error(`S3 answered ${status} to the form upload of ${p.name}`);
          uploadRetries++;
        }
      }
    }),
  );
}

/** Polls the batch's summary until `until` holds. */
async function settle(api: Api, batchId: string, until: (s: Summary) => boolean): Promise<Summary> {
  const t0 = performance.now();
  for (;;) {
    const summary = await call<Summary>(api, 'GET', `/v1/batches/${batchId}`);
    if (until(summary)) return summary;
    if (performance.now() - t0 > 20 * 60_000) throw new Error(`batch ${batchId} not settled after 20 minutes: ${JSON.stringify(summary)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Declares the photos as a batch, sends them, and polls the batch until it is done (it closes by itself once every
 * declared file arrived): seconds from the first upload. `onFirstUpload` runs just before the first file is sent.
 */
async function classify(
  api: Api,
  batchId: string,
  all: Photo[],
  onFirstUpload?: () => void,
): Promise<{ seconds: number; summary: Summary }> {
  const forms = await declare(api, batchId, all);
  onFirstUpload?.();
  const t0 = performance.now();
  await send(forms, all);
  const summary = await settle(api, batchId, (s) => s.status === 'done');
  return { seconds: (performance.now() - t0) / 1000, summary };
}

/**
 * Milliseconds the ingest's steps took so far (the sum of its *Latency metrics, from the bridge's status), once the
 * bridge is idle: an invocation's step latencies are published when it returns, after its records are written.
 */
async function stepMs(bridgeUrl: string): Promise<number> {
  await waitForBridgeIdle({ bridgeUrl, timeoutMs: 120_000 });
  const { metrics } = (await (await fetch(`${bridgeUrl}/status`)).json()) as { metrics?: MetricTotalsSnapshot };
  if (!metrics) throw new Error('the bridge reports no ingest metrics');
  // Each metric once: under its invocation's own dimension set (the fewest dimensions), not once per set.
  const fewest = new Map<string, MetricTotal>();
  for (const t of metrics.totals) {
    if (!t.metric.endsWith('Latency')) continue;
    const had = fewest.get(t.metric);
    if (!had || Object.keys(t.dimensions).length < Object.keys(had.dimensions).length) fewest.set(t.metric, t);
  }
  return [...fewest.values()].reduce((n, t) => n + t.sum, 0);
}

/**
 * A duplicate's handling time beside a first upload's, by the ingest's own step timings: PAIRS photos sent one at a
 * time into a batch, then each again under another name in the same batch.
 */
async function duplicates(api: Api, bridgeUrl: string, batchId: string, firsts: Photo[]): Promise<Record<string, unknown>> {
  const copies = firsts.map((p) => ({ ...p, name: p.name.replace('.jpg', '-copy.jpg') }));
  const forms = await declare(api, batchId, [...firsts, ...copies]);
  const s0 = await stepMs(bridgeUrl);
  await send(forms, firsts, 1);
  await settle(api, batchId, (s) => s.counts.success === firsts.length && s.counts.pending === 0);
  const s1 = await stepMs(bridgeUrl);
  await send(forms, copies, 1);
  const summary = await settle(api, batchId, (s) => s.status === 'done');
  const s2 = await stepMs(bridgeUrl);
  if (summary.counts.success !== firsts.length || summary.counts.duplicate !== copies.length) {
    throw new Error(`batch ${batchId}: ${JSON.stringify(summary.counts)}, expected ${firsts.length} photos and as many duplicates`);
  }
  const firstMs = (s1 - s0) / firsts.length;
  const duplicateMs = (s2 - s1) / copies.length;
  return {
    pairs: firsts.length,
    firstUploadMeanStepMs: round(firstMs, 1),
    duplicateMeanStepMs: round(duplicateMs, 1),
    duplicateOverFirst: round(duplicateMs / firstMs),
    goal: 'duplicateOverFirst <= 0.5',
    goalMet: duplicateMs / firstMs <= 0.5,
    measuredBy: "the ingest's step latencies (Read, Fingerprint, Claim, Thumbnail, Detect, Record, Move), summed per upload",
  };
}

/** Every photo classified once: no failure, no duplicate, none reused from another batch. */
function checkCounts(batchId: string, n: number, summary: Summary): void {
  const c = summary.counts;
  if (c.total !== n || c.success !== n || c.fail !== 0 || c.duplicate !== 0 || c.reused !== 0 || c.pending !== 0) {
    throw new Error(`batch ${batchId}: ${JSON.stringify(c)}, expected ${n} classified photos`);
  }
}

interface ApiLoad {
  stop(): Promise<Record<string, number>>;
}

/** GET …/images at API_RATE per second over API_CONNECTIONS until stopped (or for `seconds`). */
function apiLoad(api: Api, batchId: string, seconds?: number): ApiLoad {
  const latencies: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  let done!: Promise<autocannon.Result>;
  const instance = (() => {
    let settle!: (r: autocannon.Result) => void;
    let fail!: (err: Error) => void;
    done = new Promise<autocannon.Result>((resolve, reject) => ((settle = resolve), (fail = reject)));
    return autocannon(
      {
        url: `${api.url}/v1/batches/${batchId}/images`,
        connections: API_CONNECTIONS,
        overallRate: API_RATE,
        duration: seconds ?? 24 * 3600,
        headers: { authorization: `Bearer ${api.key}` },
      },
      (err, result) => (err ? fail(err as Error) : settle(result)),
    );
  })();
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode === 200) latencies.push(responseTime);
    else errors++;
  });
  return {
    stop: async () => {
      if (seconds === undefined) instance.stop();
      const result = await done;
      const wall = (performance.now() - t0) / 1000;
      if (latencies.length === 0) throw new Error(`no successful GET …/images in ${round(wall)} s (${errors} errors)`);
      return {
        seconds: round(wall),
        requests: latencies.length,
        errors: errors + result.errors + result.timeouts,
        p50Ms: round(percentile(latencies, 50), 1),
        p99Ms: round(percentile(latencies, 99), 1),
        maxMs: round(Math.max(...latencies), 1),
      };
    },
  };
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU seconds spent so far by every process of a process group (threads included, and children that already
 * exited), from /proc; undefined where there is no /proc.
 */
function groupCpuSeconds(pgid: number): number | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // After "pid (comm) ": state, ppid, pgrp, ... utime (14th field), stime, cutime, cstime.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[2]) !== pgid) continue;
    ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return ticks / CLOCK_TICKS;
}

/** CPU ms so far of each thread of one process, by thread id, from /proc; empty where there is no /proc. */
function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * The stack process's CPU per image by thread between two threadCpuMs readings: the serving thread (the process's
 * main thread: the API, S3, DynamoDB, the queue and the ingest), the detector's workers (the `workers` busiest other
 * threads: Node does not name its threads), and the rest (V8's garbage collection helpers, libuv's pool, libvips).
 */
function cpuByThread(
  pid: number,
  before: Map<string, number>,
  after: Map<string, number>,
  images: number,
  workers: number,
): Record<string, number> | undefined {
  if (after.size === 0) return undefined;
  const spent = [...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)] as const);
  const serving = spent.find(([tid]) => tid === String(pid))?.[1] ?? 0;
  const others = spent
    .filter(([tid]) => tid !== String(pid))
    .map(([, ms]) => ms)
    .sort((a, b) => b - a);
  const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);
  return {
    servingThreadMs: round(serving / images, 1),
    detectorWorkersMs: round(sum(others.slice(0, workers)) / images, 1),
    otherThreadsMs: round(sum(others.slice(workers)) / images, 1),
  };
}

export default async function run(): Promise<Record<string, unknown>> {
  const fromEnv = Number(process.env.ICECAT_DETECTOR_WORKERS);
  const workers = fromEnv || availableParallelism();
  const warm = await photos(0, sized(2 * workers, 2));
  const batchA = await photos(1000, PHOTOS);
  const batchB = await photos(2000, PHOTOS);
  const pairs = await photos(3000, PAIRS);
  await distinct([...warm, ...batchA, ...batchB, ...pairs]);

  const loadBefore = loadavg()[0]!;
  const single = await singleWorker(batchA);
  const every = await allWorkers(batchA, workers, single.imagesPerSecond!);
  const floor = await requestFloor(batchA[1]!.body);
  // At most: the pool alone's cores kept as busy, each image costing the pool's CPU plus its requests' floor.
  const floorRatio =
    (every.imagesPerSecond! * every.cpuMsPerImage!) /
    (every.cpuMsPerImage! + (floor.cpuMsPerImage as number)) /
    (workers * single.imagesPerSecond!);

  return onStack('pipeline', {}, async (stack, dataDir) => {
    const api: Api = { url: stack.apiUrl, key: readFileSync(join(dataDir, 'demo-api-key'), 'utf8').trim() };
    const tag = Date.now().toString(36);
    // Every worker's model loaded and warm, as in a stack that has been running.
    await classify(api, `warm-${tag}`, warm);
    const duplicate = await duplicates(api, stack.bridgeUrl, `duplicates-${tag}`, pairs);

    const cpu0 = groupCpuSeconds(stack.child.pid!);
    const threads0 = threadCpuMs(stack.child.pid!);
    const a = await classify(api, `pipeline-a-${tag}`, batchA);
    const cpu1 = groupCpuSeconds(stack.child.pid!);
    const byThread = cpuByThread(stack.child.pid!, threads0, threadCpuMs(stack.child.pid!), PHOTOS, workers);
    checkCounts('a', PHOTOS, a.summary);
    const stackCpuMsPerImage = cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1000) / PHOTOS;

    let busyLoad: ApiLoad | undefined;
    const b = await classify(api, `pipeline-b-${tag}`, batchB, () => (busyLoad = apiLoad(api, `pipeline-b-${tag}`)));
    const busy = await busyLoad!.stop();
    checkCounts('b', PHOTOS, b.summary);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idle = await apiLoad(api, `pipeline-b-${tag}`, IDLE_SECONDS).stop();

    const pipelinePerSecond = PHOTOS / a.seconds;
    const ratio = pipelinePerSecond / (workers * single.imagesPerSecond!);
    return {
      photos: {
        perBatch: PHOTOS,
        cats: batchA.filter((p) => p.cat).length,
        widthPx: '640–800',
        bytesMedian: median(batchA.map((p) => p.body.length)),
        made: 'crops of the test photos (chelsea.png for the cats), resized, lightened or darkened, re-saturated; JPEG q88',
      },
      workers,
      workersFrom: fromEnv ? 'ICECAT_DETECTOR_WORKERS' : 'os.availableParallelism()',
      singleWorker: single,
      everyWorkerAlone: every,
      requestFloor: { ...floor, ratioAtMost: round(floorRatio) },
      pipeline: {
        images: PHOTOS,
        secondsFirstUploadToDone: round(a.seconds),
        imagesPerSecond: round(pipelinePerSecond),
        counts: a.summary.counts,
        // CPU of the whole stack (every process of `npm start`'s group): per image, and beside the detector alone's.
        ...(stackCpuMsPerImage === undefined
          ? {}
          : {
              cpuMsPerImage: round(stackCpuMsPerImage, 1),
              cpuPerImageOverDetectorAlone: round(stackCpuMsPerImage / single.cpuMsPerImage!, 2),
              cpuCoresUsed: round((stackCpuMsPerImage / 1000) * pipelinePerSecond, 2),
            }),
        ...(byThread ? { cpuMsPerImageByThread: byThread } : {}),
      },
      pipelineOverWorkersTimesSingle: round(ratio),
      // The goal's ratio at most (every worker alone), and how much of it the rest of the stack leaves.
      ceilingOfRatio: every.overWorkersTimesSingle,
      pipelineOverEveryWorkerAlone: round(pipelinePerSecond / every.imagesPerSecond!),
      goal: 'pipelineOverWorkersTimesSingle >= 0.8',
      goalMet: ratio >= 0.8,
      api: {
        request: 'GET /v1/batches/{id}/images (default page of 50)',
        load: `autocannon, ${API_CONNECTIONS} connections, ${API_RATE} requests/s in all`,
        busy: { ...busy, while: `batch b classified: ${PHOTOS} photos, first upload to done in ${round(b.seconds)} s` },
        idle: { ...idle, while: 'the same batch, done, nothing else running in the stack' },
        p99BusyOverIdle: round(busy.p99Ms! / idle.p99Ms!),
        goal: 'p99BusyOverIdle <= 2',
        goalMet: busy.p99Ms! / idle.p99Ms! <= 2,
      },
      duplicate,
      uploadRetries,
      machine: machineFacts(loadBefore),
    };
  });
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure(
      `pipeline images/s ÷ (workers × one worker's), workers = ${String(pick(r, 'workers'))}`,
      pick(r, 'pipelineOverWorkersTimesSingle'),
      '>= 0.8',
    ),
    figure('pipeline images/s, first upload to done', pick(r, 'pipeline', 'imagesPerSecond')),
    figure('one detector worker alone, images/s', pick(r, 'singleWorker', 'imagesPerSecond')),
    figure(
      "every worker alone (the detector's pool, nothing else) ÷ (workers × one worker's): the ratio's ceiling here",
      pick(r, 'ceilingOfRatio'),
    ),
    figure('pipeline images/s ÷ every worker alone', pick(r, 'pipelineOverEveryWorkerAlone')),
    figure(
      "an image's requests alone (client and stand-in) with its fingerprint and thumbnail, CPU ms: the floor",
      pick(r, 'requestFloor', 'cpuMsPerImage'),
    ),
    figure('the ratio at most, with the pool alone plus that floor per image', pick(r, 'requestFloor', 'ratioAtMost')),
    figure("the whole stack's CPU per image ÷ the detector alone's", pick(r, 'pipeline', 'cpuPerImageOverDetectorAlone')),
    figure("the serving thread's CPU per image, ms", pick(r, 'pipeline', 'cpuMsPerImageByThread', 'servingThreadMs')),
    figure('API p99 of GET …/images while classifying ÷ idle', pick(r, 'api', 'p99BusyOverIdle'), '<= 2'),
    figure("a duplicate's handling time ÷ a first upload's (ingest steps)", pick(r, 'duplicate', 'duplicateOverFirst'), '<= 0.5'),
  ];
}
