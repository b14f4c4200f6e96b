// `icecat upload`: the dry run (what would go and what it would cost), and the upload itself: send the files,
// close the batch, wait for it with --wait, then the table of files and the exit code.

import type { BatchSummary, BatchUsage, Image } from '../api/client-contract';
import { ApiClient, collect } from './api-client';
import type { CommandContext } from './command-context';
import { ApiAnswerError, EXIT, RouteMissingError, WaitTimeoutError } from './errors';
import { type AskKnown, estimateLine, estimateUpload, localFingerprints } from './estimate';
import { type CandidateFile, checkFile, countFiles, type FileProblem, isProblem, skipProblem } from './file-checks';
import { fileRows, fileTable, formatBytes, json, table } from './output';
import type { UploadCommandOptions } from './program';
import { type ProgressReporter, plainProgress, silentProgress, terminalProgress } from './progress';
import { readServiceStatus } from './service-status';
import { type UploadResult, uploadFolder } from './uploader';
import { WAIT_OUTAGE_MS, waitUntilDone } from './wait';
import { checkInputs, type SkippedEntry, walkFiles } from './walker';

export async function dryRun(
  inputs: string[],
  o: UploadCommandOptions,
  ask: AskKnown | undefined,
  out: (t: string) => void,
  err: (t: string) => void,
  pricePerImageUsd: number,
): Promise<number> {
  const files: CandidateFile[] = [];
  const problems: FileProblem[] = [];
  const seen = new Set<string>();
  const onSkip = (entry: SkippedEntry) => {
    const lost = skipProblem(entry);
    if (lost) problems.push(lost);
  };
  for await (const f of walkFiles(inputs, { includeHidden: o.hidden, onSkip })) {
    const verdict = await checkFile(f, seen);
    seen.add(f.name);
    if (isProblem(verdict)) problems.push(verdict);
    else files.push(verdict);
  }
  const bytes = files.reduce((n, f) => n + f.size, 0);
  if (!o.json && !o.quiet && files.length) err(`fingerprinting ${files.length} files as the service would…`);
  let estimate;
  try {
    estimate = await estimateUpload(await localFingerprints(files.map((f) => f.path)), ask, pricePerImageUsd);
  } catch (e) {
    // A service that does not know the route yet: the estimate counts every image as new.
    if (!(e instanceof RouteMissingError)) throw e;
    err('this API cannot tell known fingerprints yet: the estimate counts every image as new');
    estimate = await estimateUpload(await localFingerprints(files.map((f) => f.path)), undefined, pricePerImageUsd);
  }
  if (o.json) {
    out(
      json({
        dryRun: true,
        files: files.map(({ name, size, contentType }) => ({ file: name, size, contentType })),
        notUploaded: problems.map(problemJson),
        estimate,
      }),
    );
  } else {
    const rows = [
      ...files.map((f) => [f.name, 'would upload', formatBytes(f.size), f.contentType, '']),
      ...problems.map((p) => [p.file, 'would not', '', '', `${p.code}: ${p.message}`]),
    ].sort((a, b) => ((a[0] ?? '') < (b[0] ?? '') ? -1 : 1));
    if (rows.length) out(table(['FILE', 'PLAN', 'SIZE', 'TYPE', 'REASON'], rows));
    out(`dry run: would upload ${files.length} files (${formatBytes(bytes)}); ${problems.length} would not be uploaded; nothing was sent`);
    out(estimateLine(estimate));
  }
  return EXIT.ok;
}

const problemJson = (p: FileProblem) => ({ file: p.file, error: { code: p.code, message: p.message } });

/** Where an upload tells what happens: the command's context, its two writers and the progress display. */
interface UploadIo {
  ctx: CommandContext;
  out: (t: string) => void;
  err: (t: string) => void;
  progress: ProgressReporter;
}

export async function upload(
  inputs: string[],
  o: UploadCommandOptions,
  client: ApiClient,
  ctx: CommandContext,
  out: (t: string) => void,
  err: (t: string) => void,
  statusUrl?: string,
): Promise<number> {
  const progress: ProgressReporter = o.quiet
    ? silentProgress
    : ctx.stderr.isTTY
      ? terminalProgress(ctx.stderr as NodeJS.WriteStream)
      : plainProgress({ write: err });
  const io: UploadIo = { ctx, out, err, progress };
  const result = await sendFiles(inputs, o, client, progress);
  const batchId = result.batchId;
  const problems = [...result.rejected, ...result.unsent.map((p) => ({ ...p, unsent: true }))].sort((a, b) => (a.file < b.file ? -1 : 1));
  if (batchId === undefined) return noBatch(result, problems, o, io);

  // In the batch now: what this run sent, plus, when it resumed a batch, what was there when it began.
  const sentSoFar = (result.resumed ? (result.created?.counts.total ?? 0) : 0) + result.uploadedFiles;
  const closeSupported = result.abortedBy ? true : await closeSent(client, batchId, sentSoFar, result, progress);
  const { summary, settled, timedOut } = await waitOrRead(
    client,
    batchId,
    sentSoFar,
    closeSupported,
    o,
    io,
    statusUrl,
    Boolean(result.abortedBy),
  );
  const images = await collect(client.images(batchId));

  if (o.json) {
    out(json({ batch: summary, images, notUploaded: problems.map(problemJson) }));
  } else {
    out(fileTable(fileRows(result.sent, images, problems, settled)));
    out(uploadFooter(summary, result, settled));
    if (settled && summary.usage) out(usageLine(summary.usage));
  }
  return uploadExit(result, summary, images, settled, timedOut, err);
}

/** Counts what is to go (unless quiet), then uploads it, the progress display open meanwhile. */
async function sendFiles(inputs: string[], o: UploadCommandOptions, client: ApiClient, progress: ProgressReporter): Promise<UploadResult> {
  if (o.quiet) {
    // No totals to show, so no counting walk; a missing input still fails before any request.
    await checkInputs(inputs);
  } else {
    const totals = await countFiles(inputs, o.hidden);
    progress.uploadStarted(totals.files, totals.bytes);
  }
  try {
    return await uploadFolder({
      client,
      inputs,
      batchId: o.batch,
      debug: o.debug,
      concurrency: o.concurrency,
      includeHidden: o.hidden,
      events: {
        batchCreated: (id) => progress.note(`batch ${id}`),
        uploaded: (f) => progress.fileUploaded(f.size),
        failed: (p) => progress.note(`not uploaded: ${p.file}: ${p.code}: ${p.message}`),
        retrying: (message, waitMs) => progress.note(`retrying in ${waitMs} ms: ${message}`),
        skipped: (s) =>
          s.reason === 'hidden' ? undefined : progress.note(`skipped ${s.path}: ${s.reason}${s.detail ? ` (${s.detail})` : ''}`),
      },
    });
  } finally {
    progress.uploadEnded();
  }
}

/** The end of a run that made no batch: nothing to send, nothing sendable, or no room at the service. */
function noBatch(result: UploadResult, problems: FileProblem[], o: UploadCommandOptions, { out, err }: UploadIo): number {
  if (o.json) out(json({ batch: null, images: [], notUploaded: problems.map(problemJson) }));
  else if (problems.length) out(fileTable(fileRows([], [], problems, false)));
  if (result.outOfSpace) {
    err(outOfSpaceLine(result, 'run the same command again'));
    return EXIT.someFailed;
  }
  err(problems.length ? 'no batch was made: none of the files can be uploaded' : 'nothing to upload');
  return problems.length ? EXIT.someFailed : EXIT.failure;
}

/** Closes the batch on what was sent; false when the API cannot close batches. */
async function closeSent(
  client: ApiClient,
  batchId: string,
  sentSoFar: number,
  result: UploadResult,
  progress: ProgressReporter,
): Promise<boolean> {
  try {
    await client.closeBatch(batchId, sentSoFar);
  } catch (e) {
    if (e instanceof RouteMissingError) {
      progress.note('this API cannot close batches yet: the batch is done once every declared file arrived');
      return false;
    } else if (e instanceof ApiAnswerError && e.status === 409 && result.resumed) {
      // More arrived than the resumed batch showed when this run began (the earlier run's last uploads were
      // still being recorded): close on what the service counts.
      await client.closeBatch(batchId);
    } else {
      throw e;
    }
  }
  return true;
}

/** With --wait, the summary once the batch is done (or --wait-timeout ends it); without, the summary as it is. */
async function waitOrRead(
  client: ApiClient,
  batchId: string,
  sentSoFar: number,
  closeSupported: boolean,
  o: UploadCommandOptions,
  { ctx, progress }: UploadIo,
  statusUrl: string | undefined,
  aborted: boolean,
): Promise<{ summary: BatchSummary; settled: boolean; timedOut?: WaitTimeoutError }> {
  if (!o.wait || aborted) {
    const summary = await client.getBatch(batchId);
    return { summary, settled: summary.status === 'done' };
  }
  try {
    const summary = await waitUntilDone(client, batchId, sentSoFar, closeSupported, progress, ctx.pollMs ?? 1_000, WAIT_OUTAGE_MS, {
      stallMs: ctx.config.waitStallMs,
      ...(o.waitTimeout !== undefined ? { timeoutMs: o.waitTimeout * 1000 } : {}),
      ...(statusUrl ? { status: () => readServiceStatus(statusUrl) } : {}),
    });
    return { summary, settled: true };
  } catch (e) {
    if (!(e instanceof WaitTimeoutError)) throw e;
    return { summary: e.last, settled: false, timedOut: e };
  }
}

/** The exit code of an upload that made a batch, with the lines on stderr that explain it. */
function uploadExit(
  result: UploadResult,
  summary: BatchSummary,
  images: Image[],
  settled: boolean,
  timedOut: WaitTimeoutError | undefined,
  err: (t: string) => void,
): number {
  const batchId = summary.batchId;
  const overQuota = images.filter((i) => i.error?.code === 'QuotaExceeded').length;
  if (overQuota > 0) {
    err(
      `${overQuota} file${overQuota === 1 ? ' was' : 's were'} beyond this client's images quota for today (QuotaExceeded): ` +
        'kept by the service under failed/, not classified; the quota starts afresh at 00:00 UTC (GET /v1/usage shows it)',
    );
  }
  if (timedOut) {
    err(timedOut.message);
    return EXIT.failure;
  }
  if (result.outOfSpace) {
    err(outOfSpaceLine(result, `run the same command with --batch ${batchId}`));
    return EXIT.someFailed;
  }
  if (result.abortedBy || result.unsent.length > 0) {
    err(
      `${result.unsent.length} files were not uploaded (${result.abortedBy ?? 'network errors'}): run the same command with --batch ${batchId} to send them`,
    );
    return EXIT.failure;
  }
  const failedHere = images.some((i) => i.status === 'fail') || (settled && summary.counts.fail > 0);
  return result.rejected.length > 0 || failedHere ? EXIT.someFailed : EXIT.ok;
}

/** How many file names the out-of-space line lists before "and N more". */
const OUT_OF_SPACE_NAMES = 20;

/** The one line an upload the service had no room for ends with: that it is out of space, and which files did not go. */
export function outOfSpaceLine(r: UploadResult, rerun: string): string {
  const names = r.unsent.map((p) => p.file).sort();
  const listed =
    names.slice(0, OUT_OF_SPACE_NAMES).join(', ') +
    (names.length > OUT_OF_SPACE_NAMES ? `, and ${names.length - OUT_OF_SPACE_NAMES} more` : '');
  return (
    `the service is out of disk space (${r.outOfSpace}): ${names.length} ${names.length === 1 ? 'file' : 'files'} did not go` +
    `${names.length ? `: ${listed}` : ''}; once it has room, ${rerun} to send them`
  );
}

function uploadFooter(s: BatchSummary, r: UploadResult, settled: boolean): string {
  const c = s.counts;
  const parts = [
    `batch ${s.batchId}: ${s.status}`,
    `${r.uploadedFiles} files uploaded (${formatBytes(r.uploadedBytes)})${r.alreadyThere ? `, ${r.alreadyThere} already there` : ''}`,
    `${c.success} success, ${c.duplicate} duplicate, ${c.fail} fail, ${c.cats} ${c.cats === 1 ? 'cat' : 'cats'}${settled ? '' : ` (${c.total} recorded so far: icecat status ${s.batchId})`}`,
  ];
  const notUploaded = r.rejected.length + r.unsent.length;
  if (notUploaded) parts.push(`${notUploaded} not uploaded`);
  return parts.join('; ');
}

/** What the batch cost and what reuse and duplicates saved: the last line of a settled upload. */
export function usageLine(u: BatchUsage): string {
  const calls = `${u.detectLabelsCalls} DetectLabels ${u.detectLabelsCalls === 1 ? 'call' : 'calls'}`;
  return `cost: ${calls}, $${u.estimatedCostUsd}; ${u.reused} reused and ${u.duplicates} ${u.duplicates === 1 ? 'duplicate' : 'duplicates'} saved $${u.savedUsd}`;
}
