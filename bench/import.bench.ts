// Imports, classified where they are (docs/imports.md), on a local stack started in this process (local/stack/stack.ts,
// the reconciliation and expiry sweeps off, so that nothing but the work measured sends requests):
// - requests per image: the same number of new, distinct images (96 px PNGs) classified once uploaded (POST
//   /v1/batches declaring them, one presigned POST form each) and once imported in place (POST /v1/batches with a
//   source), each batch to `done`. Every S3 and DynamoDB request the stand-ins receive is counted
//   (bench/request-tally.ts), by operation and by the function whose key signed it: the batch's creation, the form
//   uploads, the lister, the ingest, whatever its end sends; the API's answers to this bench's polling of the summary
//   are left out. An in-place image needs no copy to processed/ and no delete of its upload.
// - DetectLabels calls ÷ distinct fingerprints on an import of a prefix where 30 % of the keys repeat an earlier key's
//   bytes, counted at the detector (GET /__stats): 1.00 where AWS's bulk analysis and a per-object pipeline pay 1.43.
// - listing: a 20,000-key prefix listed and enqueued (keys/s), from POST /v1/batches to the import's `listed`, with
//   the uploads queue's deliveries paused (the lister alone: its ListObjectsV2 pages, each object's send marks and
//   quota count, each send journaled on the queue); the lister's requests per key beside it.
// The source bucket is filled before the stack starts through s3rver's own store (test/helpers/s3-seed.ts: the
// files, ETags and metadata a PUT writes): 20,000 PUTs over HTTP took longer than the listing measured. Keys are sharded in folders of
// 1,000, as a camera or a library writes them (s3rver walks the folders before a page's start only to skip them).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UploadForm } from '../lib/api/schemas/batches';
import { createClients } from '../lib/aws/clients';
import { loadAwsClientSettings } from '../lib/config';
import { ClientSourcesStore } from '../lib/store/client/sources';
import { startStack } from '../local/stack/stack';
import type { Stack } from '../local/stack/types';
import { seedBucket } from '../test/helpers/s3-seed';
import { distinctImages, seededRandom } from '../test/helpers/stack-process';
import { postForm } from '../test/helpers/upload-form';
import { type Api, call, machineFacts } from './on-stack';
import { perImage, type Tally, tallyBetween, tallyRequests } from './request-tally';
import { headline as figure, type Headline, pick, round, sized } from './stats';

/** BENCH_IMPORT_KEYS: another size for the listing (a machine too busy for 20,000 in a few minutes). */
const KEYS = Number(process.env.BENCH_IMPORT_KEYS) || sized(20_000, 100);
const PER_PATH = sized(40, 3);
const REPEAT_KEYS = sized(100, 10);
const REPEAT_SHARE = 0.3;
const LIBRARY = 'bench-library';
const SHARD = 1000;
const API_SENDERS = new Set(['api', 'batches']);

interface Summary {
  status: string;
  counts: Record<string, number>;
  import?: { state: string; listed: number; enqueued: number; skipped: number };
}

async function settle(api: Api, batchId: string, until: (s: Summary) => boolean, everyMs = 200): Promise<Summary> {
  const t0 = performance.now();
  for (;;) {
    const summary = await call<Summary>(api, 'GET', `/v1/batches/${batchId}`);
    if (until(summary)) return summary;
    if (performance.now() - t0 > 30 * 60_000) throw new Error(`batch ${batchId} not settled in 30 minutes: ${JSON.stringify(summary)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** A request tally of the window beside the batch's creation: everything but the API's answers to the polling. */
const pathTally = (created: Tally, window: Tally): Tally => {
  const out = new Map(created);
  for (const [k, n] of window) if (!API_SENDERS.has(k.split(' ')[2]!)) out.set(k, (out.get(k) ?? 0) + n);
  return out;
};

const expectCounts = (what: string, s: Summary, want: Record<string, number>) => {
  for (const [k, v] of Object.entries(want))
    if (s.counts[k] !== v) throw new Error(`${what}: counts ${JSON.stringify(s.counts)}, expected ${JSON.stringify(want)}`);
};

/** PER_PATH new images uploaded through their forms, to done: the requests it took. */
async function uploadPath(api: Api, tally: () => Tally, images: Buffer[]): Promise<Tally> {
  const batchId = 'uploaded';
  const files = images.map((b, i) => ({ name: `img-${i}.png`, contentType: 'image/png', size: b.length }));
  const t0 = tally();
  const created = await call<{ uploads: UploadForm[] }>(api, 'POST', '/v1/batches', { batchId, files });
  const t1 = tally();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < images.length; i = next++) {
        const form = created.uploads.find((u) => u.file === `img-${i}.png`)!;
        const status = await postForm(form, images[i]!, 'image/png');
        if (status < 200 || status > 299) throw new Error(`the form upload of img-${i}.png answered ${status}`);
      }
    }),
  );
  const s = await settle(api, batchId, (b) => b.status === 'done');
  expectCounts('uploaded', s, { total: images.length, success: images.length, duplicate: 0, fail: 0, reused: 0 });
  return pathTally(tallyBetween(t0, t1), tallyBetween(t1, tally()));
}

/** A prefix imported in place to done: the requests it took and its summary. */
async function importPath(api: Api, tally: () => Tally, batchId: string, prefix: string): Promise<{ requests: Tally; summary: Summary }> {
  const t0 = tally();
  await call(api, 'POST', '/v1/batches', { batchId, source: { bucket: LIBRARY, prefix } });
  const t1 = tally();
  const summary = await settle(api, batchId, (b) => b.status === 'done');
  return { requests: pathTally(tallyBetween(t0, t1), tallyBetween(t1, tally())), summary };
}

const detectorCalls = async (stack: Stack): Promise<number> =>
  ((await (await fetch(`${stack.endpoints.rekognition}/__stats`)).json()) as { detectLabels: number }).detectLabels;

/** The 30 %-repeat prefix imported: DetectLabels calls against its distinct fingerprints. */
async function repeats(api: Api, stack: Stack, tally: () => Tally, distinct: number): Promise<Record<string, unknown>> {
  const before = await detectorCalls(stack);
  const { summary } = await importPath(api, tally, 'repeats', 'repeats/');
  const calls = (await detectorCalls(stack)) - before;
  expectCounts('repeats', summary, { total: REPEAT_KEYS, success: distinct, duplicate: REPEAT_KEYS - distinct, fail: 0 });
  if (calls < distinct) throw new Error(`${calls} DetectLabels calls for ${distinct} distinct images: some were not classified`);
  return {
    keys: REPEAT_KEYS,
    distinctFingerprints: distinct,
    repeatShare: REPEAT_SHARE,
    detectLabelsCalls: calls,
    callsOverDistinct: round(calls / distinct, 2),
    perObjectPipelineCallsOverDistinct: round(REPEAT_KEYS / distinct, 2),
    goal: 'callsOverDistinct <= 1.00',
    goalMet: calls <= distinct,
  };
}

/** KEYS keys listed and enqueued with the queue's deliveries paused: keys/s and the lister's requests per key. */
async function listing(api: Api, stack: Stack, tally: () => Tally): Promise<Record<string, unknown>> {
  stack.bridge.pause();
  const queuedBefore = stack.bridge.stats().queued;
  const t0 = tally();
  const started = performance.now();
  await call(api, 'POST', '/v1/batches', { batchId: 'bulk', source: { bucket: LIBRARY, prefix: 'bulk/' } });
  const s = await settle(api, 'bulk', (b) => b.import?.state === 'listed', 250);
  const seconds = (performance.now() - started) / 1000;
  const queued = stack.bridge.stats().queued - queuedBefore;
  if (s.import?.listed !== KEYS || s.import.enqueued !== KEYS || queued !== KEYS)
    throw new Error(`bulk: ${JSON.stringify(s.import)}, ${queued} messages queued, expected ${KEYS} listed and enqueued`);
  const requests = tallyBetween(t0, tally(), (_service, _op, sender) => !API_SENDERS.has(sender));
  return {
    keys: KEYS,
    pages: Math.ceil(KEYS / 1000),
    sizeFrom: process.env.BENCH_IMPORT_KEYS ? 'BENCH_IMPORT_KEYS' : 'the default',
    secondsCreateToListed: round(seconds, 2),
    keysPerSecond: round(KEYS / seconds, 1),
    listerRequestsPerKey: perImage(requests, KEYS, (n) => round(n, 4)),
    ingest: 'paused (the uploads queue delivers nothing meanwhile): the lister alone',
  };
}

const copiesAndDeletes = (t: Tally): number =>
  [...t].filter(([k]) => / (CopyObject|DeleteObject|DeleteObjects) /.test(k)).reduce((n, [, c]) => n + c, 0);

export default async function run(): Promise<Record<string, unknown>> {
  const random = seededRandom(39);
  const images = await distinctImages(2 * PER_PATH, random);
  const distinct = Math.round(REPEAT_KEYS * (1 - REPEAT_SHARE));
  const repeatImages = await distinctImages(distinct, random);
  const bulkBody = images[0]!;
  const dataDir = mkdtempSync(join(tmpdir(), 'icecat-bench-import-'));
  const objects = [
    ...images.slice(PER_PATH).map((body, i) => ({ key: `inplace/img-${i}.png`, body })),
    // Every key after the first `distinct` repeats an earlier one's bytes.
    ...Array.from({ length: REPEAT_KEYS }, (_, i) => ({
      key: `repeats/r-${String(i).padStart(4, '0')}.png`,
      body: repeatImages[i % distinct]!,
    })),
    ...Array.from({ length: KEYS }, (_, i) => ({
      key: `bulk/${String(Math.floor(i / SHARD)).padStart(3, '0')}/IMG_${String(i).padStart(6, '0')}.png`,
      body: bulkBody,
    })),
  ];
  const seedStarted = performance.now();
  await seedBucket(
    dataDir,
    LIBRARY,
    objects.map((o) => ({ ...o, contentType: 'image/png' })),
  );
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const loadBefore = loadavg()[0]!;
  const stack = await startStack({
    dataDir,
    quiet: true,
    reconcile: false,
    expiry: false,
    // One detector worker: the figures here are counts and the lister's speed, not the detector's; a second model
    // loaded is a second's CPU of a shared machine.
    detector: { workers: 1 },
    ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 },
  });
  const counter = tallyRequests({ s3: stack.endpoints.s3, dynamodb: stack.endpoints.dynamodb, rekognition: stack.endpoints.rekognition });
  try {
    const api: Api = { url: stack.endpoints.api!, key: stack.demoApiKey! };
    await new ClientSourcesStore({ ddb: createClients(loadAwsClientSettings()).ddb, tableName: stack.table }).change(
      'demo',
      [`s3://${LIBRARY}/`],
      [],
    );
    const phases: Record<string, number> = {};
    let at = performance.now();
    const lap = (name: string) => {
      phases[name] = round((performance.now() - at) / 1000, 1);
      console.error(`[bench import] ${name}: ${phases[name]} s`);
      at = performance.now();
    };
    const uploaded = await uploadPath(api, counter.snapshot, images.slice(0, PER_PATH));
    lap('uploaded');
    const inPlace = await importPath(api, counter.snapshot, 'in-place', 'inplace/');
    lap('inPlace');
    expectCounts('in-place', inPlace.summary, { total: PER_PATH, success: PER_PATH, duplicate: 0, fail: 0, reused: 0 });
    const up = perImage(uploaded, PER_PATH, (n) => round(n, 2));
    const ip = perImage(inPlace.requests, PER_PATH, (n) => round(n, 2));
    const repeated = await repeats(api, stack, counter.snapshot, distinct);
    lap('repeats');
    const listed = await listing(api, stack, counter.snapshot);
    lap('listing');
    if (counter.snapshot().size === 0) throw new Error('no request was counted at the stand-ins');
    return {
      requestsPerImage: {
        images: PER_PATH,
        uploaded: up,
        inPlace: ip,
        inPlaceOverUploaded: round((ip.total as number) / (up.total as number), 3),
        inPlaceCopiesAndDeletesPerImage: round(copiesAndDeletes(inPlace.requests) / PER_PATH, 2),
        uploadedCopiesAndDeletesPerImage: round(copiesAndDeletes(uploaded) / PER_PATH, 2),
        counted:
          'every S3 and DynamoDB request the stand-ins received, by operation and signer, from the batch creation to done; ' +
          "the API's answers to the bench's polling left out",
      },
      repeats: repeated,
      listing: listed,
      seeding: { objects: objects.length, seconds: round(seedSeconds, 1), by: "s3rver's own store, before the stack started" },
      secondsByPhase: phases,
      machine: machineFacts(loadBefore),
    };
  } finally {
    counter.stop();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure(
      `keys listed and enqueued per second (${String(pick(r, 'listing', 'keys'))} keys, ingest paused)`,
      pick(r, 'listing', 'keysPerSecond'),
    ),
    figure('S3 + DynamoDB requests per in-place image ÷ per uploaded image', pick(r, 'requestsPerImage', 'inPlaceOverUploaded'), '< 1'),
    figure('S3 + DynamoDB requests per in-place image', pick(r, 'requestsPerImage', 'inPlace', 'total')),
    figure('S3 + DynamoDB requests per uploaded image', pick(r, 'requestsPerImage', 'uploaded', 'total')),
    figure('copies and deletes per in-place image', pick(r, 'requestsPerImage', 'inPlaceCopiesAndDeletesPerImage'), '<= 0'),
    figure('DetectLabels calls ÷ distinct fingerprints, 30 % repeats', pick(r, 'repeats', 'callsOverDistinct'), '<= 1.00'),
  ];
}
