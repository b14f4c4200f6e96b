// A file the API answers (an export, an import's completion report), streamed to a file or to stdout as it arrives:
// a 10,000-row answer is never held in memory whole.
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import { ApiAnswerError } from './errors';
import { formatBytes } from './output';

/**
 * Writes the answer's body to `output` (then says how much on stderr, with `rows` the rows the API counted), or to
 * `stdout`, left open.
 */
export async function saveAnswer(
  res: Response,
  what: string,
  output: string | undefined,
  stdout: Writable,
  err: (text: string) => void,
  { rows: sayRows = false }: { rows?: boolean } = {},
): Promise<void> {
  if (!res.body) throw new ApiAnswerError(`the ${what} answered no body`, { status: res.status, code: 'empty_export' });
  const source = Readable.fromWeb(res.body as ReadableStream);
  if (!output) {
    await pipeline(source, stdout, { end: false });
    return;
  }
  let bytes = 0;
  source.on('data', (chunk: Buffer) => (bytes += chunk.length));
  await pipeline(source, createWriteStream(output));
  const rows = sayRows ? res.headers.get('x-export-rows') : null;
  err(`wrote ${rows !== null ? `${rows} ${rows === '1' ? 'row' : 'rows'}, ` : ''}${formatBytes(bytes)} of ${what} to ${output}`);
}
