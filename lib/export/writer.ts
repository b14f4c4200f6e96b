// Streams an export page by page: the rows of one page of image records at a time, never the whole batch.
// A small export is answered inline; once it outgrows the inline bound, what was buffered and everything after it
// go to a sink (S3 on AWS and locally), so memory stays within the bound plus one page: the stream a sink reads asks
// for the next page only once the sink has taken the last (Readable.from reads one chunk ahead, not its object-mode
// high-water mark of 16; test/unit/export.test.ts pins it with a stalling sink).
import { Readable } from 'node:stream';
import { type ExportEncoder, type ExportFormat, encoderFor } from './encode';
import type { MegaDetectorContext } from './megadetector';
import { mapPages } from './pages';
import type { ExportImage } from './rows';

/** The export's bounds (functions/config.ts reads them: EXPORT_INLINE_MAX_BYTES, EXPORT_URL_SECONDS). */
export interface ExportConfig {
  /**
   * Largest export answered in the response body. Lambda answers at most 6 MB, JSON-escaped body included; 1 MiB
   * leaves room for escaping and keeps the function's memory small. Anything larger goes to S3 and a redirect.
   */
  inlineMaxBytes: number;
  /** Lifetime of the presigned GET of a stored export. */
  urlSeconds: number;
}

export interface ExportChunk {
  text: string;
  rows: number;
}

/** The chunk of one page of image records: their text, one string, and how many entries they made. */
function encodePage(encoder: ExportEncoder, page: readonly ExportImage[]): ExportChunk {
  const texts: string[] = new Array<string>(page.length);
  let rows = 0;
  for (let i = 0; i < page.length; i++) {
    const out = encoder.image(page[i]!);
    texts[i] = out.text;
    rows += out.rows;
  }
  return { text: texts.join(''), rows };
}

/**
 * The header (CSV's, the MegaDetector file's start), then one chunk per page of image records, then the end. A page
 * is dropped once encoded (mapPages), before the next is read.
 */
export function exportChunks(
  pages: AsyncIterable<readonly ExportImage[]>,
  format: ExportFormat,
  context?: MegaDetectorContext,
): AsyncGenerator<ExportChunk> {
  const encoder = encoderFor(format, context);
  const text = (t: string): ExportChunk | undefined => (t ? { text: t, rows: 0 } : undefined);
  return mapPages(
    pages,
    (page) => {
      const chunk = encodePage(encoder, page);
      return chunk.rows ? chunk : undefined;
    },
    { first: () => text(encoder.header), last: () => text(encoder.footer()) },
  );
}

type ExportOutcome<S> =
  | { kind: 'inline'; body: string; rows: number; bytes: number }
  | { kind: 'stored'; stored: S; rows: number; bytes: number };

interface ExportCounts {
  rows: number;
  bytes: number;
}

/**
 * Inline when the whole export is at most `inlineMaxBytes` (UTF-8); otherwise hands `spill` a stream of the whole
 * export (the buffered start, then the rest as it is produced) and answers what it stored.
 */
export async function writeExport<S>(
  chunks: AsyncIterable<ExportChunk>,
  opts: { inlineMaxBytes: number; spill: (body: Readable) => Promise<S> },
): Promise<ExportOutcome<S>> {
  const source = chunks[Symbol.asyncIterator]();
  const buffered: string[] = [];
  const counts: ExportCounts = { rows: 0, bytes: 0 };
  for (;;) {
    let next: IteratorResult<ExportChunk> | undefined = await source.next();
    if (next.done) {
      return { kind: 'inline', body: buffered.join(''), ...counts };
    }
    buffered.push(next.value.text);
    counts.rows += next.value.rows;
    counts.bytes += Buffer.byteLength(next.value.text);
    // eslint-disable-next-line no-useless-assignment -- dropped before the next page is awaited (lib/export/pages.ts)
    next = undefined;
    if (counts.bytes > opts.inlineMaxBytes) break;
  }
  // The chunk just sent is dropped before the next is awaited (lib/export/pages.ts says why).
  async function* rest(): AsyncGenerator<Buffer> {
    while (buffered.length) {
      let body: Buffer | undefined = Buffer.from(buffered.shift()!);
      yield body;
      // eslint-disable-next-line no-useless-assignment -- dropped before the next page is awaited (lib/export/pages.ts)
      body = undefined;
    }
    for (;;) {
      let next: IteratorResult<ExportChunk> | undefined = await source.next();
      if (next.done) return;
      counts.rows += next.value.rows;
      let body: Buffer | undefined = Buffer.from(next.value.text);
      // eslint-disable-next-line no-useless-assignment -- dropped before the next page is awaited (lib/export/pages.ts)
      next = undefined;
      counts.bytes += body.length;
      yield body;
      // eslint-disable-next-line no-useless-assignment -- dropped before the next page is awaited (lib/export/pages.ts)
      body = undefined;
    }
  }
  const stored = await opts.spill(Readable.from(rest()));
  return { kind: 'stored', stored, ...counts };
}
