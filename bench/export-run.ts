// One export of bench/export.bench.ts in a process of its own, so that its peak resident memory is the export's alone:
// the batch read a page at a time from the local DynamoDB the bench started (named by AWS_ENDPOINT_URL_DYNAMODB, as the
// functions find it), encoded as the API encodes it, and streamed past the inline bound into a file (as the API streams
// it into S3). The bench runs it bundled as a function is shipped (scripts/bundle.ts), not through a TypeScript loader. Prints {ms, bytes, rows, kind, maxRssMB,
// heapUsedMB, heapUsedFirstHalfMB}: heapUsedMB is the most V8 heap in use at a page boundary (FirstHalf: over the first
// half of the pages). With --expose-gc (the bench's retention
// round) a full collection runs at every page boundary first, so heapUsedMB is then what the export retains, garbage
// left out; the collections change its resident memory and time, so that round's maxRssMB and ms are not the goal's.
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { exportImages } from '../lib/api/export-batch';
import { createDocumentClient } from '../lib/aws/clients';
import type { ExportFormat } from '../lib/export/encode';
import { mapPages } from '../lib/export/pages';
import type { ExportImage } from '../lib/export/rows';
import { exportChunks, writeExport } from '../lib/export/writer';
import { BatchImagePages } from '../lib/store/batch/pages';

const collect = (globalThis as { gc?: () => void }).gc;

async function main(): Promise<void> {
  const [tableName, clientId, batchId, format, outFile, inline] = process.argv.slice(2) as [
    string,
    string,
    string,
    ExportFormat,
    string,
    string,
  ];
  // The functions' own document client (lib/aws/clients.ts), configured from the environment as on Lambda.
  const ddb = createDocumentClient();
  /** Heap in use at each page boundary (one number a page). */
  const atPage: number[] = [];
  // Measured as each page arrives, handed on as the export hands its pages (a `for await` here would hold each page
  // while the next is read, and so measure the bench's own retention).
  const watched = (pages: AsyncIterable<ExportImage[]>): AsyncGenerator<ExportImage[]> =>
    mapPages(pages, (page) => {
      collect?.();
      atPage.push(process.memoryUsage().heapUsed);
      return page;
    });
  const started = performance.now();
  const pages = watched(exportImages(new BatchImagePages({ ddb, tableName }), clientId, batchId, format));
  const out = await writeExport(exportChunks(pages, format, { catMinConfidence: 80, doneAt: Date.now() }), {
    inlineMaxBytes: Number(inline),
    spill: (body) => pipeline(body, createWriteStream(outFile)),
  });
  const ms = performance.now() - started;
  const MB = 1024 * 1024;
  const most = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0) / MB;
  process.stdout.write(
    JSON.stringify({
      ms,
      rows: out.rows,
      bytes: out.bytes,
      kind: out.kind,
      maxRssMB: process.resourceUsage().maxRSS / 1024,
      heapUsedMB: most(atPage),
      // The most in the first half of the pages: against heapUsedMB, whether the second half added any.
      heapUsedFirstHalfMB: most(atPage.slice(0, Math.ceil(atPage.length / 2))),
    }),
  );
  ddb.destroy();
}

void main();
