// Streams an export page by page: the rows of one page of image records at a time, never the whole batch.
// A small export is answered inline; once it outgrows the inline bound, what was buffered and everything after it
// go to a sink (S3 on AWS and locally), so memory stays within the bound plus one page: the stream a sink reads asks
// for the next page only once the sink has taken the last (Readable.from reads one chunk ahead, not its object-mode
// high-water mark of 16; test/unit/export.test.ts pins it with a stalling sink).
import { Readable } from 'node:stream';
import { encoderFor, type ExportFormat } from './encode';
import type { MegaDetectorContext } from './megadetector';
import type { ExportImage } from './rows';

export interface ExportChunk {
  text: string;
  rows: number;
}

/** The header (CSV's, the MegaDetector file's start), then one chunk per page of image records, then the end. */
export async function* exportChunks(
  pages: AsyncIterable<readonly ExportImage[]>,
  format: ExportFormat,
  context?: MegaDetectorContext,
): AsyncGenerator<ExportChunk> {
  const encoder = encoderFor(format, context);
  if (encoder.header) yield { text: encoder.header, rows: 0 };
  for await (const page of pages) {
    let text = '';
    let rows = 0;
    for (const image of page) {
      const out = encoder.image(image);
      text += out.text;
      rows += out.rows;
    }
    if (rows) yield { text, rows };
  }
  const footer = encoder.footer();
  if (footer) yield { text: footer, rows: 0 };
}

export type ExportOutcome<S> =
  | { kind: 'inline'; body: string; rows: number; bytes: number }
  | { kind: 'stored'; stored: S; rows: number; bytes: number };

export interface ExportCounts {
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
    const next = await source.next();
    if (next.done) {
      return { kind: 'inline', body: buffered.join(''), ...counts };
    }
    buffered.push(next.value.text);
    counts.rows += next.value.rows;
    counts.bytes += Buffer.byteLength(next.value.text);
    if (counts.bytes > opts.inlineMaxBytes) break;
  }
  async function* rest(): AsyncGenerator<Buffer> {
    for (const text of buffered.splice(0)) yield Buffer.from(text);
    for (;;) {
      const next = await source.next();
      if (next.done) return;
      counts.rows += next.value.rows;
      counts.bytes += Buffer.byteLength(next.value.text);
      yield Buffer.from(next.value.text);
    }
  }
  const stored = await opts.spill(Readable.from(rest()));
  return { kind: 'stored', stored, ...counts };
}
