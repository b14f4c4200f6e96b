// The command `npm start` runs (package.json's start script, without npm, which exits at once on SIGTERM instead of
// waiting for the stack), in a process group of its own, for tests that kill it: started on free ports and a given
// data dir, reached over loopback, stopped with any signal.

import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { LOCAL_NAMES } from '../../local/contract';
import { localS3Client } from '../../local/s3/s3';
import { waitFor } from './index';

const ROOT = path.join(__dirname, '..', '..');

export interface StackProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  s3: S3Client;
  apiUrl: string;
  bridgeUrl: string;
  s3Url: string;
  dynamodbUrl: string;
  /** The local detector (DetectLabels, and its call counters at GET /__stats). */
  rekognitionUrl: string;
  bucket: string;
  /** Sends the signal to the whole process group. */
  signal(signal: NodeJS.Signals): void;
  log(): string;
}

/**
 * `n` distinct free ports. Each is held until all are chosen: a port closed at once is often handed out again by the
 * next listen on port 0, and two of the stack's servers on one port fail its start.
 */
async function freePorts(n: number): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  try {
    for (const server of servers) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return servers.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** package.json's start script as argv, its `node` being this very node. */
function startCommand(): string[] {
  const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const argv = (scripts.start as string).split(/\s+/);
  if (argv[0] !== 'node') throw new Error(`the start script no longer starts with node: ${scripts.start}`);
  return [process.execPath, ...argv.slice(1)];
}

/**
 * Starts `npm start`'s command on `dataDir` and resolves once the stack says it is up. Its detector runs one worker
 * unless `env` says otherwise: each worker loads the model at the start (about 1.4 s of CPU), and a trial's subject is
 * the stack's recovery, not the detector's throughput.
 */
export async function startStackProcess(dataDir: string, logFile: string, env: Record<string, string> = {}): Promise<StackProcess> {
  const [API, S3, DYNAMODB, REKOGNITION, BRIDGE] = (await freePorts(5)) as [number, number, number, number, number];
  const ports = { API, S3, DYNAMODB, REKOGNITION, BRIDGE };
  const out = openSync(logFile, 'a');
  const logStart = readFileSync(logFile, 'utf8').length;
  const [command, ...args] = startCommand();
  const child = spawn(command as string, args, {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', out, out],
    env: {
      ...process.env,
      ICECAT_DATA_DIR: dataDir,
      ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [`ICECAT_${name}_PORT`, String(port)])),
      POWERTOOLS_LOG_LEVEL: 'WARN',
      ICECAT_DETECTOR_WORKERS: '1',
      ...env,
    },
  });
  closeSync(out);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const log = () => readFileSync(logFile, 'utf8').slice(logStart);
  const until = Date.now() + 90_000;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!log().includes('local stack is up')) {
    if (gone || Date.now() > until) throw new Error(`the stack did not start:\n${log().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const s3 = localS3Client(`http://127.0.0.1:${ports.S3}`, { maxAttempts: 1 });
  return {
    child,
    exited,
    s3,
    apiUrl: `http://127.0.0.1:${ports.API}`,
    bridgeUrl: `http://127.0.0.1:${ports.BRIDGE}`,
    s3Url: `http://127.0.0.1:${ports.S3}`,
    rekognitionUrl: `http://127.0.0.1:${ports.REKOGNITION}`,
    // An external DynamoDB (DynamoDB Local, ICECAT_DYNAMODB_ENDPOINT) stands in for dynalite there too.
    // An empty ICECAT_DYNAMODB_ENDPOINT in `env` runs the stack on its own dynalite whatever the test run uses.
    dynamodbUrl:
      ('ICECAT_DYNAMODB_ENDPOINT' in env ? env.ICECAT_DYNAMODB_ENDPOINT : process.env.ICECAT_DYNAMODB_ENDPOINT) ||
      `http://127.0.0.1:${ports.DYNAMODB}`,
    bucket: LOCAL_NAMES.bucket,
    signal: (signal) => {
      try {
        process.kill(-(child.pid as number), signal);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    },
    log,
  };
}

/** A seeded PRNG (mulberry32), so that a failing trial can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` distinct small PNGs: seeded noise over a seeded colour, 96×96 (above Rekognition's 80 px minimum). */
export async function distinctImages(n: number, random: () => number): Promise<Buffer[]> {
  const side = 96;
  const images: Buffer[] = [];
  for (let i = 0; i < n; i += 1) {
    const pixels = Buffer.alloc(side * side * 3);
    const base = [random(), random(), random()].map((c) => Math.floor(c * 200));
    for (let p = 0; p < pixels.length; p += 1) pixels[p] = (base[p % 3] as number) + Math.floor(random() * 56);
    images.push(
      await sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
        .png()
        .toBuffer(),
    );
  }
  return images;
}

/** Puts each image under uploads/demo/{batchId}/, `concurrency` at a time; resolves with the keys whose PUT failed. */
export async function uploadImages(stack: StackProcess, batchId: string, images: Buffer[], concurrency = 4): Promise<string[]> {
  const failed: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < images.length; i = next++) {
      const key = uploadKey(batchId, i);
      try {
        await stack.s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: images[i], ContentType: 'image/png' }));
      } catch {
        failed.push(key);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failed;
}

export const uploadKey = (batchId: string, i: number): string => `uploads/demo/${batchId}/img-${String(i).padStart(2, '0')}.png`;

export async function keysUnder(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key as string));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

export interface BatchState {
  counts: Record<string, number>;
  images: { fileName: string | null; status: string; duplicates: number }[];
}

/** A batch's summary and every image record, over the HTTP API with the demo client's key. */
export async function readBatch(stack: StackProcess, apiKey: string, batchId: string): Promise<BatchState | undefined> {
  const get = async (pathAndQuery: string) => {
    const res = await fetch(`${stack.apiUrl}${pathAndQuery}`, { headers: { Authorization: `Bearer ${apiKey}` } });
    if (res.status === 404) return undefined;
    if (!res.ok) throw new Error(`GET ${pathAndQuery} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const summary = await get(`/v1/batches/${batchId}`);
  if (!summary) return undefined;
  const images: BatchState['images'] = [];
  let cursor: string | undefined;
  do {
    const page = await get(`/v1/batches/${batchId}/images?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    images.push(...((page?.items ?? []) as BatchState['images']));
    cursor = page?.cursor as string | undefined;
  } while (cursor);
  return { counts: summary.counts as Record<string, number>, images };
}

/** One API call to a stack process with the client's key: the status and the JSON answer. */
export const api = async (stack: StackProcess, key: string, method: string, pathName: string, body?: unknown) => {
  const res = await fetch(`${stack.apiUrl}${pathName}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** The batch's summary once it is done, within `timeoutMs`. */
export const doneWithin = (stack: StackProcess, key: string, batchId: string, timeoutMs: number) =>
  waitFor(
    async () => {
      const b = await api(stack, key, 'GET', `/v1/batches/${batchId}`);
      return b.body.status === 'done' ? b.body : undefined;
    },
    { timeoutMs, what: `batch ${batchId} done` },
  );

/** A failed trial's error with the tail of its stack's log, the rest of what it shows given in `extra`. */
export function withStackLog(err: unknown, logFile: string, extra = ''): Error {
  const log = readFileSync(logFile, 'utf8');
  return new Error(`${String(err)}${extra}\n--- stack log (tail) ---\n${log.slice(-4000)}`, { cause: err });
}

/** Kills the trial's stack and removes its data dir (kept with ICECAT_KEEP_TEST_DATA). */
export async function endStackTrial(stack: StackProcess, dir: string): Promise<void> {
  stack.signal('SIGKILL');
  await stack.exited;
  stack.s3.destroy();
  if (!process.env.ICECAT_KEEP_TEST_DATA) rmSync(dir, { recursive: true, force: true });
}
