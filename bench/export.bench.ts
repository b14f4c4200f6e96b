// Export of a large batch as CSV and as a MegaDetector results file (docs/design.md §12): each export in a process of
// its own (bench/export-run.ts) reading a seeded batch from a local DynamoDB (dynalite) a page at a time and streaming
// past the inline bound into a file, as the API streams into S3. Goals: peak resident memory flat (at most +10 %
// from 2,000 to 20,000 images) and the MegaDetector export within 1.5x the CSV's time. A 100,000-image export beside the
// 20,000 one (no goal) shows what the export's size adds once both are past V8's warm-up.
// Beside the goal's peak RSS, two rounds tell retention from a heap V8 lets grow (docs/design.md, "Export memory"):
// one with a full collection at every page boundary (what the export retains, garbage left out), and one with the old
// space capped (the export still completes at any size, and its peak RSS is then flat).
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { encodeDetections } from '../lib/store/detections';
import { EXPORT_PAGE_ITEMS } from '../lib/store/export-pages';
import { batchPartition, statusTs, type ImageItem } from '../lib/store/schema';
import { localDynamoClient, startLocalDynamoDB } from '../local/dynamodb';
import { headline as figure, median, pick, round, sized, type Headline } from './stats';

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
/** The old space of the capped round, in MB: above what an export retains (~17 MB), far below what V8 lets it grow to. */
const CAPPED_OLD_SPACE_MB = 48;
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
          // A dog and a person boxed, as the ingest keeps them (lib/store/detections.ts).
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
    let requests: Record<string, unknown>[] = Array.from({ length: Math.min(25, count - i) }, (_, k) => ({ PutRequest: { Item: item(batchId, i + k, now) } }));
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

/** Asynchronous: dynalite answers from this very process, so its event loop must stay free while the child reads. */
function exportOnce(url: string, table: string, batchId: string, format: string, outFile: string, nodeFlags: string[] = []): Promise<Run> {
  const args = [...nodeFlags, '--import', 'tsx', path.join(__dirname, 'export-run.ts'), url, table, CLIENT, batchId, format, outFile, String(INLINE_MAX_BYTES)];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`export of ${batchId} as ${format} failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as Run);
    });
  });
}

export default async function run(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'icecat-export-bench-'));
  const db = await startLocalDynamoDB({ host: '127.0.0.1', port: 0, dataDir: dir, quiet: true });
  const ddb = DynamoDBDocumentClient.from(localDynamoClient(db.url));
  try {
    const sizes = { small: SMALL, large: LARGE, huge: HUGE };
    for (const [name, count] of Object.entries(sizes)) await seed(ddb, db.table.name, name, count);
    const results: Record<string, Record<string, unknown>> = {};
    for (const format of FORMATS) {
      for (const [name, count] of Object.entries(sizes)) {
        const runs: Run[] = [];
        for (let r = 0; r < ROUNDS; r++) runs.push(await exportOnce(db.url, db.table.name, name, format, path.join(dir, `${name}.${format}`)));
        // Every tenth record carries one duplicate upload: a row (an entry) of its own.
        const entries = count + Math.ceil(count / 10);
        const file = path.join(dir, `${name}.${format}`);
        // What the export retains: heap in use after a full collection at each page boundary.
        const retained = await exportOnce(db.url, db.table.name, name, format, file, ['--expose-gc']);
        // The same export with V8's old space capped: it completes, so what V8 grows past the cap is garbage.
        const capped = await exportOnce(db.url, db.table.name, name, format, file, [`--max-old-space-size=${CAPPED_OLD_SPACE_MB}`]);
        for (const x of [...runs, retained, capped]) {
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
          retainedHeapMB: round(retained.heapUsedMB, 1),
          retainedHeapFirstHalfMB: round(retained.heapUsedFirstHalfMB, 1),
          cappedMaxRssMB: round(capped.maxRssMB, 1),
          runs: runs.map((x) => ({ ms: round(x.ms, 1), maxRssMB: round(x.maxRssMB, 1), heapUsedMB: round(x.heapUsedMB, 1) })),
        };
      }
    }
    const growthOf =
      (field: string, from = 'small', to = 'large') =>
      (format: string) =>
        round((results[`${format}_${to}`]![field] as number) / (results[`${format}_${from}`]![field] as number) - 1, 3);
    const growth = growthOf('maxRssMB');
    const byFormat = (of: (format: string) => number) => ({ csv: of('csv'), megadetector: of('megadetector') });
    return {
      method:
        `each export in its own process: the batch read ${EXPORT_PAGE_ITEMS} items a Query from dynalite (the API read path, exportImages, on the functions' document client), ` +
        `encoded, streamed past a ${INLINE_MAX_BYTES / 1024} KiB inline bound into a file (both sizes stream); peak RSS (maxRSS) and time, median of rounds; ` +
        'heapUsedMB: most V8 heap in use at a page boundary; retainedHeapMB: the same after a full collection at every page boundary (one --expose-gc run), ' +
        'retainedHeapFirstHalfMB: the same over the first half of the pages; ' +
        `cappedMaxRssMB: peak RSS of one run with --max-old-space-size=${CAPPED_OLD_SPACE_MB}`,
      rounds: ROUNDS,
      cappedOldSpaceMB: CAPPED_OLD_SPACE_MB,
      ...results,
      memoryGrowth: byFormat(growth),
      // 20,000 → 100,000 images: both past the young generation's growth, what the export's own size adds.
      memoryGrowthToHuge: byFormat(growthOf('maxRssMB', 'large', 'huge')),
      heapUsedGrowth: byFormat(growthOf('heapUsedMB')),
      retainedHeapGrowth: byFormat(growthOf('retainedHeapMB')),
      // Within the 20,000-image export: its second 10,000 images against its first (past the warm-up).
      retainedHeapSecondHalfGrowth: byFormat((format) => {
        const large = results[`${format}_large`]!;
        return round((large.retainedHeapMB as number) / (large.retainedHeapFirstHalfMB as number) - 1, 3);
      }),
      cappedMemoryGrowth: byFormat(growthOf('cappedMaxRssMB')),
      mdOverCsvTime: round((results.megadetector_large!.ms as number) / (results.csv_large!.ms as number), 3),
    };
  } finally {
    ddb.destroy();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure('MegaDetector export peak RSS growth, 2,000 → 20,000 images', pick(r, 'memoryGrowth', 'megadetector'), '<= 0.10'),
    figure('CSV export peak RSS growth, 2,000 → 20,000 images', pick(r, 'memoryGrowth', 'csv'), '<= 0.10'),
    figure('MegaDetector export peak RSS growth, 20,000 → 100,000 images', pick(r, 'memoryGrowthToHuge', 'megadetector')),
    figure('CSV export peak RSS growth, 20,000 → 100,000 images', pick(r, 'memoryGrowthToHuge', 'csv')),
    figure('MegaDetector / CSV export time at 20,000 images', pick(r, 'mdOverCsvTime'), '<= 1.5'),
    figure('MegaDetector export retained heap growth (after full GC), 2,000 → 20,000 images', pick(r, 'retainedHeapGrowth', 'megadetector')),
    figure('CSV export retained heap growth (after full GC), 2,000 → 20,000 images', pick(r, 'retainedHeapGrowth', 'csv')),
    figure('MegaDetector export retained heap growth (after full GC), first → second 10,000 of 20,000', pick(r, 'retainedHeapSecondHalfGrowth', 'megadetector')),
    figure('CSV export retained heap growth (after full GC), first → second 10,000 of 20,000', pick(r, 'retainedHeapSecondHalfGrowth', 'csv')),
    figure(`MegaDetector export peak RSS growth, old space capped at ${CAPPED_OLD_SPACE_MB} MB`, pick(r, 'cappedMemoryGrowth', 'megadetector')),
    figure(`CSV export peak RSS growth, old space capped at ${CAPPED_OLD_SPACE_MB} MB`, pick(r, 'cappedMemoryGrowth', 'csv')),
  ];
}
