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
// - the API while the stack works: GET /v1/batches/{id}/images at a steady rate (autocannon, a few connections: people
//   watching the batch, not a load test), from a second batch's first upload until it is done, beside the same load
//   on the same batch once the stack is idle (then every page is full: the heavier answer). Goal: p99 busy <= 2x idle.
// The second batch has 100 other distinct photos: the same ones again would be reused from the first (no detection).
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { fingerprint } from '../lib/ingest/fingerprint';
import { startStackProcess, type StackProcess } from '../test/helpers/stack-process';
import { postForm } from '../test/helpers/upload-form';
import type { UploadForm } from '../lib/api/schemas';
import { headline as figure, median, percentile, pick, round, sized, type Headline } from './stats';

const ROOT = join(__dirname, '..');
const FIXTURES = join(ROOT, 'test', 'fixtures');
const PHOTOS = sized(100, 4);
/** The CLI's default concurrency (lib/cli/program.ts). */
const UPLOAD_CONCURRENCY = 8;
const API_CONNECTIONS = 4;
const API_RATE = 40; // requests per second, all connections together
const IDLE_SECONDS = sized(15, 2);
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
  const { loadDetector } = await import('../local/detector/model');
  const detector = await loadDetector();
  await detector.detect(all[0]!.body); // the first inference compiles and allocates: not a steady one
  const each: number[] = [];
  let cats = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const p of all) {
    const t = performance.now();
    const found = await detector.detect(p.body);
    each.push(performance.now() - t);
    if (found.some((d) => d.classIndex === 15 && d.score >= 0.5)) cats++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    images: all.length,
    seconds: round(seconds),
    imagesPerSecond: round(all.length / seconds),
    medianMs: round(median(each), 1),
    p95Ms: round(percentile(each, 95), 1),
    // Above 1: the one worker used more than one core (sharp's decode threads, or the model's own).
    cpuCoresUsed: round((cpu.user + cpu.system) / 1e6 / seconds, 2),
    catsAtHalfConfidence: cats,
  };
}

interface Api {
  url: string;
  key: string;
}

async function call<T>(api: Api, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

interface Summary {
  status: string;
  counts: Record<string, number>;
}

/**
 * Declares the photos as a batch (one form each), then sends them through their forms UPLOAD_CONCURRENCY at a time
 * and polls the batch until it is done (it closes by itself once every declared file arrived). `onFirstUpload` runs
 * just before the first file is sent.
 */
async function classify(api: Api, batchId: string, all: Photo[], onFirstUpload?: () => void): Promise<{ seconds: number; summary: Summary }> {
  const created = await call<{ uploads: UploadForm[] }>(api, 'POST', '/v1/batches', {
    batchId,
    files: all.map((p) => ({ name: p.name, contentType: 'image/jpeg', size: p.body.length })),
  });
  const forms = new Map(created.uploads.map((u) => [u.file, u]));
  onFirstUpload?.();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: UPLOAD_CONCURRENCY }, async () => {
      for (let i = next++; i < all.length; i = next++) {
        const p = all[i]!;
        const form = forms.get(p.name);
        if (!form) throw new Error(`no upload form for ${p.name}`);
        const status = await postForm(form, p.body, 'image/jpeg');
        if (status < 200 || status > 299) throw new Error(`S3 answered ${status} to the form upload of ${p.name}`);
      }
    }),
  );
  for (;;) {
    const summary = await call<Summary>(api, 'GET', `/v1/batches/${batchId}`);
    if (summary.status === 'done') return { seconds: (performance.now() - t0) / 1000, summary };
    if (performance.now() - t0 > 20 * 60_000) throw new Error(`batch ${batchId} not done after 20 minutes: ${JSON.stringify(summary)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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

async function stopStack(stack: StackProcess): Promise<void> {
  stack.signal('SIGTERM');
  const killed = setTimeout(() => stack.signal('SIGKILL'), 20_000);
  await stack.exited;
  clearTimeout(killed);
  stack.s3.destroy();
}

export default async function run(): Promise<Record<string, unknown>> {
  const fromEnv = Number(process.env.ICECAT_DETECTOR_WORKERS);
  const workers = fromEnv || availableParallelism();
  const warm = await photos(0, sized(2 * workers, 2));
  const batchA = await photos(1000, PHOTOS);
  const batchB = await photos(2000, PHOTOS);
  await distinct([...warm, ...batchA, ...batchB]);

  const loadBefore = loadavg()[0]!;
  const single = await singleWorker(batchA);

  const work = mkdtempSync(join(tmpdir(), 'icecat-bench-pipeline-'));
  const dataDir = join(work, 'data');
  const stack = await startStackProcess(dataDir, join(work, 'stack.log'));
  try {
    const api: Api = { url: stack.apiUrl, key: readFileSync(join(dataDir, 'demo-api-key'), 'utf8').trim() };
    const tag = Date.now().toString(36);
    // Every worker's model loaded and warm, as in a stack that has been running.
    await classify(api, `warm-${tag}`, warm);

    const a = await classify(api, `pipeline-a-${tag}`, batchA);
    checkCounts('a', PHOTOS, a.summary);

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
      pipeline: {
        images: PHOTOS,
        secondsFirstUploadToDone: round(a.seconds),
        imagesPerSecond: round(pipelinePerSecond),
        counts: a.summary.counts,
      },
      pipelineOverWorkersTimesSingle: round(ratio),
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
      machine: { cores: availableParallelism(), loadAverage1mBefore: round(loadBefore, 2), loadAverage1mAfter: round(loadavg()[0]!, 2) },
    };
  } catch (err) {
    console.error(stack.log().slice(-3000));
    throw err;
  } finally {
    await stopStack(stack);
    rmSync(work, { recursive: true, force: true });
  }
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure(`pipeline images/s ÷ (workers × one worker's), workers = ${String(pick(r, 'workers'))}`, pick(r, 'pipelineOverWorkersTimesSingle'), '>= 0.8'),
    figure('pipeline images/s, first upload to done', pick(r, 'pipeline', 'imagesPerSecond')),
    figure('one detector worker alone, images/s', pick(r, 'singleWorker', 'imagesPerSecond')),
    figure('API p99 of GET …/images while classifying ÷ idle', pick(r, 'api', 'p99BusyOverIdle'), '<= 2'),
  ];
}
