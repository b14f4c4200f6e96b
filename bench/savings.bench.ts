// What a client saves: DetectLabels calls on a realistic re-upload mix through the real local pipeline (S3 → bridge →
// ingest → local detector → DynamoDB, and the HTTP API for close and re-threshold), counted at the detector
// (GET /__stats), beside what a naive service that calls Rekognition once per uploaded file would make.
//
//   batch A: DISTINCT photos, a tenth of them uploaded twice (the same file under another name);
//   batch B: 60 % of A's photos again (the same bytes), NEW photos, and RE-ENCODED copies of A's photos (other
//            JPEG quality: other pixels, so a new exact fingerprint, and a call);
//   then both batches are re-thresholded (POST …:reclassify) to a lower and back to a higher cat confidence.
// The naive service pays every uploaded file once, and a re-threshold by classifying the batch's files again.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { createClients } from '../lib/aws/clients';
import { loadAwsClientSettings } from '../lib/config';
import type { MetricTotalsSnapshot } from '../local/bridge/metric-totals';
import { startStack } from '../local/stack/stack';
import { headline as figure, type Headline, pick, sized } from './stats';

const FIXTURES = [
  'chelsea.png',
  'coffee.png',
  'astronaut.png',
  'rocket.jpg',
  'camera.png',
  'brick.png',
  'grass.png',
  'gravel.png',
  'clock_motion.png',
];
const DISTINCT = sized(40, 5);
const REPEATED_IN_A = sized(4, 1);
const REUPLOADED_SHARE = 0.6;
const NEW_IN_B = sized(16, 2);
const REENCODED_IN_B = sized(8, 1);
/** Rekognition DetectLabels list price, first million images a month (us-east-1). */
const PRICE_PER_IMAGE = 0.001;

interface Photo {
  name: string;
  body: Buffer;
  /** The crop it was made from, to re-encode it. */
  source: { fixture: Buffer; left: number; top: number; width: number; height: number };
}

/** `n` distinct photos, numbered from `from`: crops of the fixtures at different offsets and sizes, as JPEG. */
async function photos(from: number, n: number): Promise<Photo[]> {
  const out: Photo[] = [];
  for (let i = from; i < from + n; i++) {
    const fixture = readFileSync(join(__dirname, '..', 'test', 'fixtures', FIXTURES[i % FIXTURES.length] as string));
    const { width = 400, height = 300 } = await sharp(fixture).metadata();
    const scale = 0.6 + 0.05 * (Math.floor(i / FIXTURES.length) % 7);
    const w = Math.floor(width * scale);
    const h = Math.floor(height * scale);
    const left = Math.floor(((width - w) * ((i * 7) % 11)) / 10);
    const top = Math.floor(((height - h) * ((i * 3) % 7)) / 6);
    const source = { fixture, left, top, width: w, height: h };
    const body = await sharp(fixture).extract({ left, top, width: w, height: h }).jpeg({ quality: 90 }).toBuffer();
    out.push({ name: `IMG_${String(i).padStart(4, '0')}.jpg`, body, source });
  }
  return out;
}

/** The same photo saved again at another quality, as an editor or a phone's "share" does. */
const reencoded = async (p: Photo): Promise<Buffer> =>
  sharp(p.source.fixture)
    .extract({ left: p.source.left, top: p.source.top, width: p.source.width, height: p.source.height })
    .jpeg({ quality: 75 })
    .toBuffer();

interface DetectorStats {
  detectLabels: number;
  succeeded: number;
  throttled: number;
}

export default async function run(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'icecat-savings-bench-'));
  const stack = await startStack({
    dataDir,
    quiet: true,
    reconcile: false,
    ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 },
  });
  try {
    const aws = createClients(loadAwsClientSettings());
    const detector = stack.endpoints.rekognition as string;
    const api = stack.endpoints.api as string;
    const key = stack.demoApiKey as string;
    const stats = async (): Promise<DetectorStats> => (await (await fetch(`${detector}/__stats`)).json()) as DetectorStats;
    const call = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const upload = async (batchId: string, files: { name: string; body: Buffer }[]) => {
      for (const f of files) {
        await aws.s3.send(
          new PutObjectCommand({ Bucket: stack.bucket, Key: `uploads/demo/${batchId}/${f.name}`, Body: f.body, ContentType: 'image/jpeg' }),
        );
      }
      await stack.whenIdle(600_000);
    };
    const closeAndSettle = async (batchId: string) => {
      await call('POST', `/v1/batches/${batchId}:close`, {});
      for (let i = 0; ; i++) {
        const summary = await call('GET', `/v1/batches/${batchId}`);
        if (summary.status === 'done') return summary;
        if (i > 600) throw new Error(`batch ${batchId} not done: ${JSON.stringify(summary)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    const all = await photos(0, DISTINCT + NEW_IN_B);
    const a = all.slice(0, DISTINCT);
    const fresh = all.slice(DISTINCT);
    const batchA = [...a, ...a.slice(0, REPEATED_IN_A).map((p) => ({ name: p.name.replace('.jpg', '-copy.jpg'), body: p.body }))];
    const reuploaded = a.slice(0, Math.round(a.length * REUPLOADED_SHARE));
    const reencodes = await Promise.all(
      a.slice(a.length - REENCODED_IN_B).map(async (p) => ({ name: p.name.replace('.jpg', '-edited.jpg'), body: await reencoded(p) })),
    );
    const batchB = [...reuploaded, ...fresh, ...reencodes];

    await fetch(`${detector}/__stats`, { method: 'DELETE' });
    const ids = { a: `savings-a-${Date.now().toString(36)}`, b: `savings-b-${Date.now().toString(36)}` };
    const calls: Record<string, number> = {};
    let before = (await stats()).succeeded;
    const phase = async (name: string, work: () => Promise<unknown>) => {
      await work();
      const now = (await stats()).succeeded;
      calls[name] = now - before;
      before = now;
    };

    let summaries: Record<string, Record<string, unknown>> = {};
    await phase('batchA', () => upload(ids.a, batchA));
    await phase('batchB', () => upload(ids.b, batchB));
    summaries = { a: await closeAndSettle(ids.a), b: await closeAndSettle(ids.b) };
    const rethresholds = [50, 90];
    await phase('rethreshold', async () => {
      for (const threshold of rethresholds) {
        for (const batchId of [ids.a, ids.b]) await call('POST', `/v1/batches/${batchId}:reclassify`, { catMinConfidence: threshold });
      }
    });
    const after = { a: await call('GET', `/v1/batches/${ids.a}`), b: await call('GET', `/v1/batches/${ids.b}`) };

    const naive = {
      batchA: batchA.length,
      batchB: batchB.length,
      // A service that keeps only the verdict classifies every file again for each new threshold.
      rethreshold: rethresholds.length * (batchA.length + batchB.length),
    };
    const made = Object.values(calls).reduce((x, y) => x + y, 0);
    const naiveTotal = Object.values(naive).reduce((x, y) => x + y, 0);
    const expected = { batchA: DISTINCT, batchB: NEW_IN_B + REENCODED_IN_B, rethreshold: 0 };
    for (const [k, v] of Object.entries(expected)) {
      if (calls[k] !== v) throw new Error(`${k}: ${calls[k]} DetectLabels calls, expected ${v} (${JSON.stringify(calls)})`);
    }
    const metrics = ((await (await fetch(`${stack.endpoints.bridge}/status`)).json()) as { metrics: MetricTotalsSnapshot }).metrics;
    const metricSum = (name: string) => metrics.totals.filter((t) => t.metric === name).reduce((x, t) => x + t.sum, 0);
    if (metricSum('DetectLabelsCalls') !== made)
      throw new Error(`the ingest counted ${metricSum('DetectLabelsCalls')} DetectLabels calls, the detector ${made}`);
    const dollars = (n: number) => Math.round(n * PRICE_PER_IMAGE * 1000) / 1000;
    const uploads = batchA.length + batchB.length;
    return {
      mix: {
        batchA: { uploads: batchA.length, distinct: DISTINCT, repeatedInBatch: REPEATED_IN_A },
        batchB: { uploads: batchB.length, reuploadedFromA: reuploaded.length, new: NEW_IN_B, reencodedFromA: REENCODED_IN_B },
        rethresholds: `each batch to catMinConfidence ${rethresholds.join(', then ')}`,
      },
      detectLabelsCalls: { made: calls, naive, totalMade: made, totalNaive: naiveTotal },
      savedCalls: naiveTotal - made,
      savedShare: Math.round(((naiveTotal - made) / naiveTotal) * 1000) / 1000,
      uploadsOnly: {
        note: 'without the re-thresholds: what deduplication and reuse alone save',
        made: calls.batchA! + calls.batchB!,
        naive: uploads,
        savedShare: Math.round(((uploads - calls.batchA! - calls.batchB!) / uploads) * 1000) / 1000,
      },
      dollars: {
        pricePerImage: PRICE_PER_IMAGE,
        made: dollars(made),
        naive: dollars(naiveTotal),
        saved: dollars(naiveTotal - made),
        savedPer1000Uploads: Math.round(((naiveTotal - made) / uploads) * 1000 * PRICE_PER_IMAGE * 100) / 100,
      },
      ingestMetrics: {
        note: "the ingest's own EMF totals (bridge /status); DetectLabelsCalls is checked against the detector's count",
        DetectLabelsCalls: metricSum('DetectLabelsCalls'),
        CallsSavedByDuplicates: metricSum('CallsSavedByDuplicates'),
        CallsSavedByReuse: metricSum('CallsSavedByReuse'),
      },
      counts: { a: summaries.a?.counts, b: summaries.b?.counts, afterRethreshold: { a: after.a.counts, b: after.b.counts } },
    };
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure('DetectLabels calls saved, share of one call per file (with re-thresholds)', pick(r, 'savedShare')),
    figure('saved share, uploads only', pick(r, 'uploadsOnly', 'savedShare')),
  ];
}
