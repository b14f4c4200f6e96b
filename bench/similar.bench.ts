// Near-duplicate groups (lib/similar/groups.ts), two measurements:
// 1. accuracy per maxDistance on the fixture study set (test/helpers/near-duplicates.ts: each photo's re-encodings,
//    resizes, crops and mirrored copies, plus flat images): pairwise precision and recall of "in one group", which
//    chose the default threshold (docs/similarity.md);
// 2. speed: grouping a 10,000-image batch beside reading that batch's items from the local DynamoDB (dynalite)
//    (goal: grouping <= 10 % of the read);
// 3. bounds: grouping 20,000 images at the largest maxDistance the API takes, as the API runs it (in slices), on spread-out
//    hashes and on one scene (every pair close): time, peak memory, the event loop's longest wait, pairs found and kept.

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { BatchWriteCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { SIMILAR_READ } from '../lib/api/service';
import { fingerprint } from '../lib/ingest/fingerprint';
import { closePairs, indexPlan } from '../lib/similar/close-pairs';
import {
  DEFAULT_MAX_DISTANCE,
  type HashedImage,
  MAX_DISTANCE_LIMIT,
  nearDuplicateGroups,
  nearDuplicateGroupsAsync,
  spanningPairs,
} from '../lib/similar/groups';
import { INFORMATIVE_BITS, parsePhash, popcount32 } from '../lib/similar/phash';
import { batchImagePages } from '../lib/store/batch/pages';
import { batchPartition, type ImageItem, statusTs } from '../lib/store/table/schema';
import { localDynamoClient, startLocalDynamoDB } from '../local/dynamodb/dynamodb';
import { type StudyImage, studySet } from '../test/helpers/near-duplicates';
import { headline as figure, type Headline, median, pick, round, sized, timeMs as time } from './stats';

const BATCH_SIZE = sized(10_000, 500);
/** A classified photo's labels, so that items have the size of real ones (~1 KB). */
const LABELS = ['Cat', 'Pet', 'Animal', 'Mammal', 'Indoors', 'Furniture', 'Plant', 'Window', 'Couch', 'Living Room'];
const ROUNDS = sized(15, 2);
const THRESHOLDS = Array.from({ length: 25 }, (_, i) => i);

type Hashed = StudyImage & { fprint: string; phash: string };

const setBits = (phash: string): number => {
  const b = parsePhash(phash)!;
  return popcount32(b.hi) + popcount32(b.lo);
};

async function accuracy(): Promise<Record<string, unknown>> {
  const set = await studySet();
  const hashed: Hashed[] = [];
  for (const s of set) {
    const fp = await fingerprint(s.bytes, { maxInputPixels: 100_000_000 });
    // Distinct images only, as a batch has them: the greyscale PNG of a grey photo is that photo's very pixels.
    if (!hashed.some((h) => h.fprint === fp.fprint)) hashed.push({ ...s, fprint: fp.fprint, phash: fp.phash });
  }
  const photos = hashed.filter((h) => h.kind !== 'flat');
  const kept = photos.filter((h) => h.kind !== 'mirror');

  const setBitsByKind: Record<string, { min: number; max: number }> = {};
  for (const h of hashed) {
    const bits = setBits(h.phash);
    const k = (setBitsByKind[h.kind] ??= { min: 64, max: 0 });
    k.min = Math.min(k.min, bits);
    k.max = Math.max(k.max, bits);
  }

  const rows = THRESHOLDS.map((maxDistance) => {
    const { groups } = nearDuplicateGroups(hashed, { maxDistance });
    const groupOf = new Map<string, number>();
    groups.forEach((g, i) => g.fprints.forEach((f) => groupOf.set(f, i)));
    const together = (a: Hashed, b: Hashed): boolean => groupOf.has(a.fprint) && groupOf.get(a.fprint) === groupOf.get(b.fprint);
    let tp = 0;
    let fp = 0;
    let fn = 0;
    const recall: Record<string, [number, number]> = { reencode: [0, 0], resize: [0, 0], crop: [0, 0] };
    for (let i = 0; i < kept.length; i++) {
      for (let j = i + 1; j < kept.length; j++) {
        const a = kept[i]!;
        const b = kept[j]!;
        const same = a.photo === b.photo;
        const grouped = together(a, b);
        if (same && grouped) tp++;
        else if (!same && grouped) fp++;
        else if (same) fn++;
        // Per kind: each variant against its own photo's original.
        if (same && a.kind === 'original' && recall[b.kind]) {
          recall[b.kind]![1]++;
          if (grouped) recall[b.kind]![0]++;
        }
      }
    }
    const mirrors = photos.filter((h) => h.kind === 'mirror');
    const original = (photo: string): Hashed => photos.find((h) => h.photo === photo && h.kind === 'original')!;
    return {
      maxDistance,
      precision: tp + fp ? round(tp / (tp + fp)) : 1,
      recall: round(tp / (tp + fn)),
      recallReencode: round(recall.reencode![0] / recall.reencode![1]),
      recallResize: round(recall.resize![0] / recall.resize![1]),
      recallCrop: round(recall.crop![0] / recall.crop![1]),
      mirrorsWithTheirPhoto: `${mirrors.filter((m) => together(m, original(m.photo))).length}/${mirrors.length}`,
      flatGrouped: hashed.filter((h) => h.kind === 'flat' && groupOf.has(h.fprint)).length,
      groups: groups.length,
      largestGroup: Math.max(0, ...groups.map((g) => g.fprints.length)),
    };
  });

  // Distances to each photo's original, by variant, and the closest pair of different photos.
  const byVariant: Record<string, number[]> = {};
  for (const h of photos) {
    const o = photos.find((x) => x.photo === h.photo && x.kind === 'original')!;
    const d = distance(h.phash, o.phash);
    (byVariant[h.name.split('/')[1]!] ??= []).push(d);
  }
  let closestDifferent = 64;
  for (let i = 0; i < photos.length; i++) {
    for (let j = i + 1; j < photos.length; j++) {
      if (photos[i]!.photo !== photos[j]!.photo)
        closestDifferent = Math.min(closestDifferent, distance(photos[i]!.phash, photos[j]!.phash));
    }
  }
  // Beyond the fixtures: two unrelated photos whose hashes were independent, each with 32 of 64 bits set, differ in
  // 2k bits where k, the set bits of one that the other lacks, is hypergeometric: P(k) = C(32,k)² / C(64,32).
  // Exact, so the expected chance pairs in a 10,000-image batch (49,995,000 pairs) at each threshold.
  const choose = (n: number, k: number): bigint => {
    let r = 1n;
    for (let i = 0; i < k; i++) r = (r * BigInt(n - i)) / BigInt(i + 1);
    return r;
  };
  let cumulative = 0n;
  const unrelatedPairsWithin = THRESHOLDS.filter((t) => t % 2 === 0).map((t) => {
    cumulative += choose(32, t / 2) ** 2n;
    const share = Number((cumulative * 10n ** 18n) / choose(64, 32)) / 1e18;
    return { maxDistance: t, share: Number(share.toExponential(2)), chancePairsPer10000Images: round(share * 49_995_000, 2) };
  });
  return {
    images: hashed.length,
    photos: new Set(photos.map((p) => p.photo)).size,
    setBitsByKind,
    informativeBits: INFORMATIVE_BITS,
    distanceToOriginalByVariant: Object.fromEntries(
      Object.entries(byVariant).map(([k, v]) => [k, { max: Math.max(...v), all: v.join(' ') }]),
    ),
    closestDifferentPhotos: closestDifferent,
    defaultMaxDistance: DEFAULT_MAX_DISTANCE,
    perThreshold: rows,
    unrelatedIndependentHashes: unrelatedPairsWithin,
  };
}

const distance = (a: string, b: string): number => {
  const x = parsePhash(a)!;
  const y = parsePhash(b)!;
  return popcount32(x.hi ^ y.hi) + popcount32(x.lo ^ y.lo);
};

/** A deterministic generator of spread-out pHashes: 64 bits, 32 of them set at random places, as photos' are. */
function photoHashes(seed: number): { next: () => number; hash: () => bigint } {
  let s = seed;
  const next = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
  const hash = (): bigint => {
    const bits: number[] = Array.from({ length: 64 }, (_, i) => (i < 32 ? 1 : 0));
    for (let i = 63; i > 0; i--) {
      const j = next() % (i + 1);
      [bits[i], bits[j]] = [bits[j]!, bits[i]!];
    }
    return BigInt(`0b${bits.join('')}`);
  };
  return { next, hash };
}

const hex = (x: bigint): string => x.toString(16).padStart(16, '0');

/**
 * A 10,000-image batch's hashes: spread-out photo hashes, a fifth of them with 1–4 near copies (1–8 bits flipped),
 * and 2 % flat. Deterministic.
 */
function syntheticBatch(count: number): HashedImage[] {
  const { next, hash } = photoHashes(2024);
  const out: HashedImage[] = [];
  while (out.length < count) {
    const n = out.length;
    if (n % 50 === 0) {
      out.push({ fprint: `f${n}`, phash: hex(1n << 63n) });
      continue;
    }
    const base = hash();
    out.push({ fprint: `f${n}`, phash: hex(base) });
    if (next() % 5 === 0) {
      for (let c = 1 + (next() % 4); c > 0 && out.length < count; c--) {
        let x = base;
        for (let f = 1 + (next() % 8); f > 0; f--) x ^= 1n << BigInt(next() % 64);
        out.push({ fprint: `f${out.length}`, phash: hex(x) });
      }
    }
  }
  return out;
}

async function speed(): Promise<Record<string, unknown>> {
  const batch = syntheticBatch(BATCH_SIZE);
  const dir = mkdtempSync(path.join(tmpdir(), 'icecat-similar-bench-'));
  const db = await startLocalDynamoDB({ host: '127.0.0.1', port: 0, dataDir: dir, quiet: true });
  const ddb = DynamoDBDocumentClient.from(localDynamoClient(db.url));
  try {
    const batchId = batchPartition('bench', 'similar');
    const now = Date.now();
    const items: ImageItem[] = batch.map((b, i) => ({
      batch_id: batchId,
      img_fprint: b.fprint.padStart(32, '0'),
      client_id: 'bench',
      s3img_key: `processed/bench/similar/${b.fprint}.jpg`,
      file_name: `IMG_${String(i).padStart(5, '0')}.jpg`,
      op_status: 'success',
      status_ts: statusTs('success', now + i),
      upload_ts: now + i,
      received_ts: now + i,
      rek_ts: now + i,
      ttl: Math.floor(now / 1000) + 86400,
      rek_iscat: i % 3 === 0,
      labels: LABELS.map((name, k) => ({ name, confidence: 99 - k * 7 })),
      rek_resp: {
        model: '3.0',
        labels: LABELS.map((name, k) => ({
          name,
          confidence: 99 - k * 7,
          parents: k < 4 ? ['Animal', 'Mammal'] : ['Indoors'],
          instances: k === 0 ? 1 : 0,
        })),
      },
      phash: b.phash ?? undefined,
      width: 4000,
      height: 3000,
      format: 'jpeg',
      processed_key: `processed/bench/similar/${b.fprint}.jpg`,
    }));
    for (let i = 0; i < items.length; i += 25) {
      let requests: Record<string, unknown>[] = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length) {
        const out = await ddb.send(new BatchWriteCommand({ RequestItems: { [db.table.name]: requests } }));
        requests = (out.UnprocessedItems?.[db.table.name] ?? []) as Record<string, unknown>[];
      }
    }

    /** Every page of the batch's items: as GET …/similar reads them (projected, lib/api/service.ts), or whole. */
    const readBatch = async (projected: boolean): Promise<HashedImage[]> => {
      const read: HashedImage[] = [];
      if (projected) {
        for await (const page of batchImagePages({ ddb, tableName: db.table.name }, 'bench', 'similar', SIMILAR_READ)) {
          for (const image of page) read.push({ fprint: image.fprint, phash: image.phash ?? null });
        }
        return read;
      }
      let start: Record<string, unknown> | undefined;
      do {
        const page = await ddb.send(
          new QueryCommand({
            TableName: db.table.name,
            KeyConditionExpression: 'batch_id = :b',
            ExpressionAttributeValues: { ':b': batchId },
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) read.push({ fprint: item.img_fprint as string, phash: item.phash as string });
        start = page.LastEvaluatedKey;
      } while (start);
      return read;
    };
    const warm = await readBatch(true);
    if (warm.length !== BATCH_SIZE) throw new Error(`read ${warm.length} items, wrote ${BATCH_SIZE}`);
    nearDuplicateGroups(warm);

    const readProjected: number[] = [];
    const readFull: number[] = [];
    const group: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Interleaved, so all see the same machine load.
      let read: HashedImage[] = [];
      readProjected.push(await time(async () => (read = await readBatch(true))));
      readFull.push(await time(() => readBatch(false)));
      group.push(await time(async () => nearDuplicateGroups(read)));
    }
    const parsed = batch.map((b) => parsePhash(b.phash!)!);
    const hashes = { hi: Uint32Array.from(parsed.map((p) => p.hi)), lo: Uint32Array.from(parsed.map((p) => p.lo)) };
    const everyPair = median(
      await Promise.all(Array.from({ length: 3 }, () => time(async () => closePairs(hashes, DEFAULT_MAX_DISTANCE, true)))),
    );
    const result = nearDuplicateGroups(warm);
    const groupMs = median(group);
    const readMs = median(readProjected);
    const paired = median(group.map((g, i) => g / readProjected[i]!));
    return {
      images: BATCH_SIZE,
      maxDistance: DEFAULT_MAX_DISTANCE,
      indexPlan: indexPlan(BATCH_SIZE - BATCH_SIZE / 50, DEFAULT_MAX_DISTANCE) ?? 'every pair',
      groupsFound: result.groups.length,
      groupingMedianMs: round(groupMs),
      readProjectedMedianMs: round(readMs),
      readFullItemsMedianMs: round(median(readFull)),
      groupingOverReadPairedMedian: round(paired),
      groupingOverFullItemsReadPairedMedian: round(median(group.map((g, i) => g / readFull[i]!))),
      goal: 'groupingOverReadPairedMedian <= 0.10',
      goalMet: paired <= 0.1,
      everyPairComparisonMs: round(everyPair),
      machineLoadAverage1m: round(loadavg()[0]!, 2),
    };
  } finally {
    ddb.destroy();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const SMOKE = process.env.BENCH_SMOKE === '1';
const BOUNDED_SIZE = SMOKE ? 1_000 : 20_000;

/**
 * `count` distinct hashes of one scene: each 1–6 bits from one photo's, so every pair is within 12 bits and every pair
 * is close (the worst case: no repeated hash to skip). Deterministic.
 */
function oneScene(count: number): HashedImage[] {
  const { next, hash } = photoHashes(77);
  const base = hash();
  const seen = new Set<string>();
  const out: HashedImage[] = [];
  while (out.length < count) {
    let x = base;
    // The generator's high bits: its low bits repeat with a short period.
    for (let f = 1 + ((next() >>> 16) % 6); f > 0; f--) x ^= 1n << BigInt((next() >>> 16) % 64);
    const phash = hex(x);
    if (seen.has(phash)) continue;
    seen.add(phash);
    out.push({ fprint: `s${out.length}`, phash });
  }
  return out;
}

/**
 * One grouping as GET …/similar runs it (nearDuplicateGroupsAsync, 20 ms slices), with memory sampled every 5 ms:
 * the peak of heap plus array buffers over what it was before, and the longest the event loop waited for a turn.
 */
/** Every pair of the batch within maxDistance bits, counted (comparing every pair, keeping none). */
function closePairCount(h: { hi: Uint32Array; lo: Uint32Array }, maxDistance: number): number {
  let count = 0;
  for (let i = 0; i < h.hi.length; i++) {
    for (let j = i + 1; j < h.hi.length; j++) if (popcount32(h.hi[i]! ^ h.hi[j]!) + popcount32(h.lo[i]! ^ h.lo[j]!) <= maxDistance) count++;
  }
  return count;
}

async function measured(batch: HashedImage[], maxDistance: number): Promise<Record<string, unknown>> {
  const parsed = batch.map((b) => parsePhash(b.phash!)!);
  const hashes = { hi: Uint32Array.from(parsed.map((p) => p.hi)), lo: Uint32Array.from(parsed.map((p) => p.lo)) };
  const kept = spanningPairs(hashes, maxDistance);
  const closeInBatch = closePairCount(hashes, maxDistance);
  const used = () => {
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.arrayBuffers, rss: m.rss };
  };
  const before = used();
  let peak = before;
  let last = performance.now();
  let longestWaitMs = 0;
  const sampler = setInterval(() => {
    const now = performance.now();
    longestWaitMs = Math.max(longestWaitMs, now - last);
    last = now;
    const m = used();
    peak = { heap: Math.max(peak.heap, m.heap), rss: Math.max(peak.rss, m.rss) };
  }, 5);
  const started = performance.now();
  const result = await nearDuplicateGroupsAsync(batch, { maxDistance });
  const ms = performance.now() - started;
  clearInterval(sampler);
  // The stretch since the last turn the sampler got (the whole grouping when it never got one).
  longestWaitMs = Math.max(longestWaitMs, performance.now() - last);
  const mb = (bytes: number) => round(bytes / 1024 / 1024, 1);
  return {
    images: batch.length,
    maxDistance,
    groupingMs: round(ms),
    peakHeapGrowthMB: mb(peak.heap - before.heap),
    peakRssGrowthMB: mb(peak.rss - before.rss),
    longestEventLoopWaitMs: round(longestWaitMs),
    distinctHashes: new Set(batch.map((b) => b.phash)).size,
    closePairsMet: kept.found,
    pairsKept: kept.a.length,
    pairsKeptBound: (maxDistance + 1) * (batch.length - 1),
    closePairsInBatch: closeInBatch,
    // What keeping every close pair cost before (three JS number arrays: at least 24 bytes a pair).
    everyPairKeptWouldNeedMB: mb(closeInBatch * 24),
    groupsFound: result.groups.length,
    largestGroup: Math.max(0, ...result.groups.map((g) => g.fprints.length)),
  };
}

export async function bounds(): Promise<Record<string, unknown>> {
  return {
    spreadOut: await measured(syntheticBatch(BOUNDED_SIZE), MAX_DISTANCE_LIMIT),
    oneScene: await measured(oneScene(BOUNDED_SIZE), MAX_DISTANCE_LIMIT),
    machineLoadAverage1m: round(loadavg()[0]!, 2),
  };
}

export default async function run(): Promise<Record<string, unknown>> {
  return { accuracy: await accuracy(), speed: await speed(), bounds: await bounds() };
}

export function headline(r: Record<string, unknown>): Headline[] {
  const rows = (pick(r, 'accuracy', 'perThreshold') ?? []) as { maxDistance: number; precision: number; recall: number }[];
  const chosen = rows.find((x) => x.maxDistance === pick(r, 'accuracy', 'defaultMaxDistance'));
  return [
    figure(
      `grouping ÷ reading the batch, ${String(pick(r, 'speed', 'images'))} images (paired median)`,
      pick(r, 'speed', 'groupingOverReadPairedMedian'),
      '<= 0.10',
    ),
    figure(`precision at the default threshold (${String(chosen?.maxDistance)} bits)`, chosen?.precision),
    figure(`recall at the default threshold (${String(chosen?.maxDistance)} bits)`, chosen?.recall),
  ];
}
