// `icecat import s3://bucket/prefix | --manifest s3://bucket/key [--batch id] [--wait]`, `icecat report <batch>` and
// `icecat retry <batch>` (docs/usage.md "Classify images already in a bucket"): a batch that classifies a source where
// it is, its completion report in S3 Batch Operations' CSV columns, and its failed images sent again.
import { type BatchSummary, batchPath, type ImportSourceAddress } from '../api/client-contract';
import type { ApiClient } from './api-client';
import type { CommandContext } from './command-context';
import { saveAnswer } from './download';
import { ApiAnswerError, EXIT, RouteMissingError, UsageError, WaitTimeoutError } from './errors';
import { importFooter, sameSource, sourceAddress } from './import-output';
import { waitUntilListed } from './import-wait';
import { json, summaryLines } from './output';
import type { ImportCommandOptions, WaitOptions } from './program';
import { type ProgressReporter, plainProgress, silentProgress, terminalProgress } from './progress';
import { readServiceStatus } from './service-status';
import { usageLine } from './upload-command';
import { WAIT_OUTAGE_MS, waitUntilDone } from './wait';

/** What the three commands write with. */
export interface ImportIo {
  ctx: CommandContext;
  out: (text: string) => void;
  err: (text: string) => void;
  /** The local stack's status, asked why a --wait does not move. */
  statusUrl?: string | undefined;
}

const progressFor = (o: WaitOptions, { ctx, err }: ImportIo): ProgressReporter =>
  o.quiet ? silentProgress : ctx.stderr.isTTY ? terminalProgress(ctx.stderr as NodeJS.WriteStream) : plainProgress({ write: err });

/** POST /v1/batches with the source; a 409 on a batch already importing the same source follows that batch instead. */
async function openImport(client: ApiClient, source: ImportSourceAddress, batchId: string | undefined, progress: ProgressReporter) {
  try {
    return (await client.createImport(batchId, source)).batch;
  } catch (e) {
    if (!(e instanceof ApiAnswerError)) throw e;
    if (e.code === 'source_not_allowed')
      throw new ApiAnswerError(
        `${sourceAddress(source)} is not among the sources this key may import from (403 source_not_allowed): nothing was ` +
          'listed. The operator allows a source with `npm run client:sources -- <clientId> --allow s3://bucket/prefix/`',
        { status: e.status, code: e.code },
      );
    if (e.code !== 'batch_exists' || batchId === undefined) throw e;
    const existing = await client.getBatch(batchId);
    if (!existing.import || !sameSource(existing.import.source, source))
      throw new UsageError(
        `you already have a batch ${batchId} (${existing.import ? `importing ${sourceAddress(existing.import.source)}` : 'not an import'}): ` +
          'choose another --batch',
      );
    progress.note(`batch ${batchId} already imports ${sourceAddress(source)}: following it`);
    return existing;
  }
}

export async function importCommand(
  client: ApiClient,
  source: ImportSourceAddress,
  o: ImportCommandOptions,
  io: ImportIo,
): Promise<number> {
  const progress = progressFor(o, io);
  const opened = await openImport(client, source, o.batch, progress);
  progress.note(`batch ${opened.batchId}: importing ${sourceAddress(source)}`);
  return followImport(client, opened, o, io, progress);
}

/** Without --wait, the summary as it is (exit 0); with it, the summary once done and the exit code of its images. */
async function followImport(
  client: ApiClient,
  summary: BatchSummary,
  o: WaitOptions,
  io: ImportIo,
  progress: ProgressReporter,
): Promise<number> {
  if (!o.wait) {
    io.out(o.json ? json(summary) : `${summaryLines(summary)}\n(icecat status ${summary.batchId} follows it; --wait waits for it)`);
    return EXIT.ok;
  }
  const batchId = summary.batchId;
  const deadline = o.waitTimeout !== undefined ? Date.now() + o.waitTimeout * 1000 : undefined;
  const pollMs = io.ctx.pollMs ?? 1_000;
  let done: BatchSummary;
  try {
    const listed = await waitUntilListed(client, batchId, progress, {
      pollMs,
      outageMs: WAIT_OUTAGE_MS,
      deadline,
      timeoutSeconds: o.waitTimeout,
    });
    const sent = listed.import?.enqueued ?? listed.expected ?? listed.counts.total;
    const statusUrl = io.statusUrl;
    done = await waitUntilDone(client, batchId, sent, true, progress, pollMs, WAIT_OUTAGE_MS, {
      stallMs: io.ctx.config.waitStallMs,
      ...(deadline !== undefined ? { timeoutMs: Math.max(0, deadline - Date.now()) } : {}),
      ...(statusUrl ? { status: () => readServiceStatus(statusUrl) } : {}),
    });
  } catch (e) {
    if (!(e instanceof WaitTimeoutError)) throw e;
    io.out(o.json ? json(e.last) : summaryLines(e.last));
    io.err(e.message.replace(/^gave up waiting after \d+ s/, `gave up waiting after ${o.waitTimeout} s`));
    return EXIT.failure;
  }
  io.out(o.json ? json(done) : `${summaryLines(done)}\n${importFooter(done)}`);
  if (!o.json && done.usage) io.out(usageLine(done.usage));
  if (done.counts.fail === 0) return EXIT.ok;
  io.err(
    `${done.counts.fail} ${done.counts.fail === 1 ? 'image' : 'images'} failed: icecat report ${batchId} names them ` +
      `(TaskStatus failed, ErrorCode), icecat retry ${batchId} sends them again`,
  );
  return EXIT.someFailed;
}

/** A 404 on an import's own route of a batch that is there but is no import, said as such. */
function notAnImport(e: unknown, batchId: string, what: string): unknown {
  if (e instanceof ApiAnswerError && !(e instanceof RouteMissingError) && e.status === 404 && /not an import/.test(e.message))
    return new ApiAnswerError(`batch ${batchId} is not an import: ${what}`, { status: 404, code: e.code });
  return e;
}

/** `icecat report <batch> [-o file]`: the completion report's CSV, streamed. */
export async function reportCommand(client: ApiClient, batchId: string, o: { output?: string }, io: ImportIo): Promise<number> {
  let res: Response;
  try {
    res = await client.fetch('GET', batchPath(batchId, '/report'), { query: { format: 's3-batch-operations' } });
  } catch (e) {
    throw notAnImport(e, batchId, `it has no completion report (icecat export ${batchId} has a row per uploaded file)`);
  }
  await saveAnswer(res, 'the completion report', o.output, io.ctx.stdout, io.err, { rows: true });
  return EXIT.ok;
}

/** `icecat retry <batch> [--wait]`: the import's failed images sent again, then as `icecat import --wait` follows it. */
export async function retryCommand(client: ApiClient, batchId: string, o: WaitOptions, io: ImportIo): Promise<number> {
  let answer;
  try {
    answer = await client.retryImport(batchId);
  } catch (e) {
    throw notAnImport(e, batchId, 'only an import’s failed images can be sent again (upload the files again instead)');
  }
  const n = answer.resubmitted;
  const line =
    n === 0
      ? `nothing to send again: batch ${batchId} has no failed imported image`
      : `sent again ${n} failed ${n === 1 ? 'image' : 'images'} of batch ${batchId}, read where ${n === 1 ? 'it is' : 'they are'}`;
  if (!o.wait) {
    io.out(o.json ? json(answer) : `${line}\n${summaryLines(answer.batch)}`);
    return EXIT.ok;
  }
  const progress = progressFor(o, io);
  progress.note(line);
  return followImport(client, answer.batch, o, io, progress);
}
