// Export of a large batch as CSV and as a MegaDetector results file (docs/design.md §12): each export in a process of
// its own (bench/export-run.ts, bundled as a function is shipped: scripts/bundle.ts) reading a seeded batch from a local
// DynamoDB (dynalite) a page at a time and streaming past the inline bound into a file, as the API streams into S3.
// Goals: peak resident memory flat (at most +10 % from 2,000 to 20,000 images) and the MegaDetector export within 1.5x
// the CSV's time. A 100,000-image export beside the 20,000 one (no goal) shows what a batch's size adds beyond that.
// The goal's rounds run with V8's young generation at the size a warm process has grown it to (WARM_HEAP): a fresh
// process doubles it once bytes surviving its collections add up, at a moment set by its age, not by the batch
// (docs/design.md, "Export memory"). One round each with V8's defaults shows that warm-up; one with a full collection
// at every page boundary shows what the export retains.

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { build } from 'esbuild';
import { EXPORT_PAGE_ITEMS } from '../lib/store/batch/pages';
import { encodeDetections } from '../lib/store/table/detections';
import { batchPartition, type ImageItem, statusTs } from '../lib/store/table/schema';
import { LOCAL_NAMES } from '../local/contract';
import { localDynamoClient, startLocalDynamoDB } from '../local/dynamodb/dynamodb';
import { functionBuildOptions } from '../scripts/bundle';
import { headline as figure, type Headline, median, pick, round, sized } from './stats';

const SMALL = sized(2_000, 100);
const LARGE = sized(20_000, 1_000);
/** The size the API promises in flat memory (a 100,000-image batch): beyond the goal's two sizes, how flat it stays. */
const HUGE = sized(100_000, 2_000);
const ROUNDS = sized(3, 1);
const FORMATS = ['csv', 'megadetector'] as const;
const CLIENT = 'bench';
/**
 * The inline bound the exports run with: below every size's export (~0.5 MB, ~5 MB, ~25 MB), so that each streams past it as
 * a large export does, and the sizes compare one path (at the API's 1 MiB the 2,000-image export is answered
 * inline and never streams).
 */
const INLINE_MAX_BYTES = sized(256 * 1024, 16 * 1024);
/**
 * V8's young generation in the goal's rounds: each semi-space pinned at 16 MB, Node's default maximum on a 64-bit
 * machine with memory to spare, which a long-running process (the local stack) has grown to long before anyone
 * exports; a warm Lambda function grows toward its runtime's own maximum (a twentieth of its memory) instead. A fresh process starts at 1 MB and doubles as bytes survive its scavenges; whether a
 * 2,000-image export ends before or after the last doubling moved its peak by ~16 MB run to run.
 */
const WARM_HEAP = ['--min-semi-space-size=16', '--max-semi-space-size=16'];
/** As serverless.yml's NODE_OPTIONS runs every function: stack traces through the bundle's linked source map. */
const FUNCTION_FLAGS = ['--enable-source-maps'];
const ROOT = path.resolve(__dirname, '..');
const LABELS = ['Cat', 'Pet', 'Animal', 'Mammal', 'Dog', 'Person', 'Indoors', 'Furniture', 'Plant', 'Couch'];

/** A classified camera-trap-like record of ~1.5 KB: labels, a trimmed answer, two other boxes, a cat box on a third. */
export function item(batchId: string, i: number, now: number): ImageItem {
  const fprint = i.toString(16).padStart(32, '0');
  const fail = i % 50 === 49;
  const box = { left: 0.1 + (i % 7) / 20, top: 0.2, width: 0.3, height: 0.25 };
  return {
    batch_id: batchPartition(CLIENT, batchId),
    img_fprint: fail ? `fail-${fprint}` : fprint,
    client_id: CLIENT,
    s3img_key: `uploads/${CLIENT}/${batchId}/cam${i % 12}/IMG_${String(i).padStart(6, '0')}.JPG`,
    file_name: `cam${i % 12}/IMG_${String(i).padStart(6, '0')}.JPG`,
    op_status: fail ? 'fail' : 'success',
    status_ts: statusTs(fail ? 'fail' : 'success', now + i),
    upload_ts: now + i,
    rek_ts: now + i + 500,
    ttl: Math.floor(now / 1000) + 86400,
    ...(fail
      ? { err_code: 'CorruptImage', err_msg: 'the image is truncated or corrupt' }
      : {
          rek_iscat: i % 3 === 0,
          cat_conf: i % 3 === 0 ? 93.5 : 0,
          rek_cats: i % 3 === 0 ? [{ confidence: 93.5, box }] : [],
          labels: LABELS.map((name, k) => ({ name, confidence: 99 - k * 7 })),
          rek_resp: {
            model: '3.0',
            labels: LABELS.map((name, k) => ({
              name,
              confidence: 99 - k * 7,
              parents: k < 4 ? ['Animal', 'Mammal'] : ['Indoors'],
              instances: k === 4 || k === 5 ? 1 : 0,
            })),
          },
          // A dog and a person boxed, as the ingest keeps them (lib/store/table/detections.ts).
          rek_dets: encodeDetections({ model: '3.0', boxes: [4, 5].map((k) => ({ name: LABELS[k]!, confidence: 99 - k * 7, box })) }),
          width: 4000,
          height: 3000,
          ...(i % 10 === 0 ? { dup_count: 1, dup_files: [`copies/IMG_${String(i).padStart(6, '0')}.JPG`] } : {}),
        }),
  } as ImageItem;
}

export async function seed(ddb: DynamoDBDocumentClient, table: string, batchId: string, count: number): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < count; i += 25) {
    let requests: Record<string, unknown>[] = Array.from({ length: Math.min(25, count - i) }, (_, k) => ({
      PutRequest: { Item: item(batchId, i + k, now) },
    }));
    while (requests.length) {
      const out = await ddb.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
      requests = (out.UnprocessedItems?.[table] ?? []) as Record<string, unknown>[];
    }
  }
}

interface Run {
  ms: number;
  rows: number;
  bytes: number;
  kind: string;
  maxRssMB: number;
  heapUsedMB: number;
  heapUsedFirstHalfMB: number;
}

/** export-run.ts bundled with the functions' esbuild options, for the Node running the bench. */
async function bundleExportRun(): Promise<{ file: string; dir: string }> {
  // Inside the project, so that a package the bundle keeps external would resolve from its node_modules.
  mkdirSync(path.join(ROOT, '.build'), { recursive: true });
  const dir = mkdtempSync(path.join(ROOT, '.build', 'bench-export-'));
  const file = path.join(dir, 'export-run.js');
  const target = `node${process.versions.node.split('.')[0]}`;
  await build({ ...functionBuildOptions(ROOT, path.join(__dirname, 'export-run.ts'), file, target), write: true });
  return { file, dir };
}

interface Child {
  /** The bundled export-run.js. */
  script: string;
  /** dynalite's URL. */
  url: string;
  table: string;
}

/** Asynchronous: dynalite answers from this very process, so its event loop must stay free while the child reads. */
function exportOnce(child: Child, batchId: string, format: string, outFile: string, nodeFlags: string[]): Promise<Run> {
  const args = [...FUNCTION_FLAGS, ...nodeFlags, child.script, child.table, CLIENT, batchId, format, outFile, String(INLINE_MAX_BYTES)];
  // Found as the functions find the local stack's services (lib/aws/clients.ts).
  const env = {
    ...process.env,
    AWS_ENDPOINT_URL_DYNAMODB: child.url,
    AWS_REGION: LOCAL_NAMES.region,
    AWS_ACCESS_KEY_ID: LOCAL_NAMES.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_NAMES.secretAccessKey,
  };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20, env }, (err, stdout, stderr) => {
      if (err) reject(new Error(`export of ${batchId} as ${format} failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as Run);
    });
  });
}

export default async function run(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'icecat-export-bench-'));
  const bundled = await bundleExportRun();
  const db = await startLocalDynamoDB({ host: '127.0.0.1', port: 0, dataDir: dir, quiet: true });
  const ddb = DynamoDBDocumentClient.from(localDynamoClient(db.url));
  const child: Child = { script: bundled.file, url: db.url, table: db.table.name };
  try {
    const sizes = { small: SMALL, large: LARGE, huge: HUGE };
    for (const [name, count] of Object.entries(sizes)) await seed(ddb, db.table.name, name, count);
    const results: Record<string, Record<string, unknown>> = {};
    for (const format of FORMATS) {
      for (const [name, count] of Object.entries(sizes)) {
        const file = path.join(dir, `${name}.${format}`);
        const runs: Run[] = [];
        for (let r = 0; r < ROUNDS; r++) runs.push(await exportOnce(child, name, format, file, WARM_HEAP));
        // A fresh process with V8's defaults: its young generation starts small and grows as the export goes on.
        const fresh = await exportOnce(child, name, format, file, []);
        // What the export retains: heap in use after a full collection at each page boundary.
        const retained = await exportOnce(child, name, format, file, [...WARM_HEAP, '--expose-gc']);
        // Every tenth record carries one duplicate upload: a row (an entry) of its own.
        const entries = count + Math.ceil(count / 10);
        for (const x of [...runs, fresh, retained]) {
          if (x.rows !== entries) throw new Error(`export of ${count} images answered ${x.rows} rows, not ${entries}`);
        }
        results[`${format}_${name}`] = {
          images: count,
          rows: runs[0]!.rows,
          bytes: runs[0]!.bytes,
          kind: runs[0]!.kind,
          ms: round(median(runs.map((x) => x.ms)), 1),
          maxRssMB: round(median(runs.map((x) => x.maxRssMB)), 1),
          heapUsedMB: round(median(runs.map((x) => x.heapUsedMB)), 1),
          freshMaxRssMB: round(fresh.maxRssMB, 1),
          retainedHeapMB: round(retained.heapUsedMB, 1),
          retainedHeapFirstHalfMB: round(retained.heapUsedFirstHalfMB, 1),
          runs: runs.map((x) => ({ ms: round(x.ms, 1), maxRssMB: round(x.maxRssMB, 1), heapUsedMB: round(x.heapUsedMB, 1) })),
        };
      }
    }
    const growthOf =
      (field: string, from = 'small', to = 'large') =>
      (format: string) =>
        round((results[`${format}_${to}`]![field] as number) / (results[`${format}_${from}`]![field] as number) - 1, 3);
    const byFormat = (of: (format: string) => number) => ({ csv: of('csv'), megadetector: of('megadetector') });
    return {
      method:
        `each export in its own process, bench/export-run.ts bundled as the functions are (scripts/bundle.ts) and run with ${FUNCTION_FLAGS.join(' ')}: ` +
        `the batch read ${EXPORT_PAGE_ITEMS} items a Query from dynalite (the API read path, exportImages, on the functions' document client), ` +
        `encoded, streamed past a ${INLINE_MAX_BYTES / 1024} KiB inline bound into a file (every size streams); peak RSS (maxRSS) and time, median of rounds ` +
        `run with V8's young generation at a warm process's size (${WARM_HEAP.join(' ')}); freshMaxRssMB: one run with V8's defaults; ` +
        'heapUsedMB: most V8 heap in use at a page boundary; retainedHeapMB: the same after a full collection at every page boundary (one --expose-gc run), ' +
        'retainedHeapFirstHalfMB: the same over the first half of the pages',
      rounds: ROUNDS,
      warmHeapFlags: WARM_HEAP,
      ...results,
      memoryGrowth: byFormat(growthOf('maxRssMB')),
      memoryGrowthToHuge: byFormat(growthOf('maxRssMB', 'large', 'huge')),
      // The same sizes in fresh processes: the young generation's warm-up included.
      freshMemoryGrowth: byFormat(growthOf('freshMaxRssMB')),
      freshMemoryGrowthToHuge: byFormat(growthOf('freshMaxRssMB', 'large', 'huge')),
      heapUsedGrowth: byFormat(growthOf('heapUsedMB')),
      retainedHeapGrowth: byFormat(growthOf('retainedHeapMB')),
      // Within the 20,000-image export: its second 10,000 images against its first (past the warm-up).
      retainedHeapSecondHalfGrowth: byFormat((format) => {
        const large = results[`${format}_large`]!;
        return round((large.retainedHeapMB as number) / (large.retainedHeapFirstHalfMB as number) - 1, 3);
      }),
      mdOverCsvTime: round((results.megadetector_large!.ms as number) / (results.csv_large!.ms as number), 3),
    };
  } finally {
    ddb.destroy();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(bundled.dir, { recursive: true, force: true });
  }
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure('MegaDetector export peak RSS growth, 2,000 → 20,000 images', pick(r, 'memoryGrowth', 'megadetector'), '<= 0.10'),
    figure('CSV export peak RSS growth, 2,000 → 20,000 images', pick(r, 'memoryGrowth', 'csv'), '<= 0.10'),
    figure('MegaDetector export peak RSS growth, 20,000 → 100,000 images', pick(r, 'memoryGrowthToHuge', 'megadetector')),
    figure('CSV export peak RSS growth, 20,000 → 100,000 images', pick(r, 'memoryGrowthToHuge', 'csv')),
    figure('MegaDetector / CSV export time at 20,000 images', pick(r, 'mdOverCsvTime'), '<= 1.5'),
    figure(
      "MegaDetector export peak RSS growth in fresh processes (V8's young generation warming up), 2,000 → 20,000 images",
      pick(r, 'freshMemoryGrowth', 'megadetector'),
    ),
    figure(
      "CSV export peak RSS growth in fresh processes (V8's young generation warming up), 2,000 → 20,000 images",
      pick(r, 'freshMemoryGrowth', 'csv'),
    ),
    figure(
      'MegaDetector export peak RSS growth in fresh processes, 20,000 → 100,000 images',
      pick(r, 'freshMemoryGrowthToHuge', 'megadetector'),
    ),
    figure('CSV export peak RSS growth in fresh processes, 20,000 → 100,000 images', pick(r, 'freshMemoryGrowthToHuge', 'csv')),
    figure(
      'MegaDetector export retained heap growth (after full GC), 2,000 → 20,000 images',
      pick(r, 'retainedHeapGrowth', 'megadetector'),
    ),
    figure('CSV export retained heap growth (after full GC), 2,000 → 20,000 images', pick(r, 'retainedHeapGrowth', 'csv')),
    figure(
      'MegaDetector export retained heap growth (after full GC), first → second 10,000 of 20,000',
      pick(r, 'retainedHeapSecondHalfGrowth', 'megadetector'),
    ),
    figure(
      'CSV export retained heap growth (after full GC), first → second 10,000 of 20,000',
      pick(r, 'retainedHeapSecondHalfGrowth', 'csv'),
    ),
  ];
}
