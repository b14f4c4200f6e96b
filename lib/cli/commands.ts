// What each sub-command does: API calls, then a table or JSON on stdout. Errors are thrown as CliErrors and become
// a message on stderr and an exit code in main.ts.
import { createWriteStream } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { batchPath } from '../api/client-contract';
import { ApiClient, collect, type ImageFilter } from './api-client';
import { resolveConnection } from './config';
import { ApiAnswerError, EXIT, NetworkError, RouteMissingError, UsageError, WaitTimeoutError } from './errors';
import { estimateLine, estimateUpload, localFingerprints, type AskKnown } from './estimate';
import { envNumber, pricePerImageUsd } from '../config';
import { readServiceStatus, stallCause, statusUrlFor, type ServiceStatus } from './service-status';
import {
  batchTable,
  fileRows,
  fileTable,
  formatBytes,
  imageTable,
  json,
  agreementLines,
  logLines,
  reviewLine,
  reviewQueueTable,
  similarTable,
  summaryLines,
  table,
} from './output';
import { plainProgress, silentProgress, terminalProgress, type ProgressReporter } from './progress';
import type { GlobalOptions, Handlers, JsonOption, UploadCommandOptions } from './program';
import type { BatchSummary, BatchUsage, Image } from '../api/client-contract';
import { checkFile, countFiles, isProblem, skipProblem, uploadFolder, type CandidateFile, type FileProblem, type UploadResult } from './uploader';
import { checkInputs, walkFiles, type SkippedEntry } from './walker';

export interface CommandContext {
  env: NodeJS.ProcessEnv;
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  /** Pause between two reads of a batch being classified. */
  pollMs?: number;
  /** How long --wait sees nothing move before it says why (default ICECAT_WAIT_STALL_SECONDS, 30 s). */
  stallMs?: number;
}

export function commandHandlers(ctx: CommandContext): Handlers {
  const out = (text: string) => ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const err = (text: string) => ctx.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  const clientFor = (o: GlobalOptions) => new ApiClient(resolveConnection(o, ctx.env));
  /** The service's known fingerprints, when a key is configured; without one a dry run prices every image as new. */
  const askKnownFor = (o: GlobalOptions): AskKnown | undefined => {
    let client: ApiClient;
    try {
      client = clientFor(o);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      err(`${e.message}; without it the estimate counts every image as new`);
      return undefined;
    }
    return (fprints) => client.knownFingerprints(fprints);
  };
  const printSummary = (summary: BatchSummary, o: JsonOption) => out(o.json ? json(summary) : summaryLines(summary));
  /** A list as JSON `{ items }`, or as text: `render`ed, or `none` when empty. */
  const printItems = <T>(items: T[], o: JsonOption, render: (items: T[]) => string, none: string) =>
    out(o.json ? json({ items }) : items.length ? render(items) : none);

  return {
    upload: (inputs, o) => (o.dryRun ? dryRun(inputs, o, askKnownFor(o), out, err) : upload(inputs, o, clientFor(o), ctx, out, err, statusUrlFor(resolveConnection(o, ctx.env).apiUrl, undefined, ctx.env))),

    async batches(o) {
      const client = clientFor(o);
      const items: BatchSummary[] = [];
      for await (const b of client.pages<BatchSummary>('/v1/batches', { status: o.status })) {
        items.push(b);
        if (items.length >= o.limit) break;
      }
      out(o.json ? json({ items }) : items.length ? batchTable(items) : 'no batches');
      return EXIT.ok;
    },

    async status(batch, o) {
      printSummary(await clientFor(o).getBatch(batch), o);
      return EXIT.ok;
    },

    async images(batch, o) {
      if (o.review === 'pending') {
        const items = await collect(clientFor(o).reviewQueue(batch));
        printItems(items, o, reviewQueueTable, 'no image waits for a review');
        return EXIT.ok;
      }
      const items = await batchImages(clientFor(o), batch, {
        status: o.status,
        cats: o.cats,
        label: o.label,
        minConfidence: o.minConfidence,
        capturedFrom: o.capturedFrom,
        capturedTo: o.capturedTo,
        ...(o.byCaptureTime ? { order: 'captured' as const } : {}),
      });
      printItems(items, o, imageTable, 'no images');
      return EXIT.ok;
    },

    async review(batch, name, o) {
      const client = clientFor(o);
      const fprint = await imageOf(client, batch, name);
      const image = o.withdraw
        ? await client.withdrawReview(batch, fprint)
        : await client.review(batch, fprint, { isCat: o.cat === true, ...(o.note ? { note: o.note } : {}) });
      out(o.json ? json(image) : reviewLine(image));
      return EXIT.ok;
    },

    async agreement(batch, o) {
      const agreement = await clientFor(o).agreement(batch);
      out(o.json ? json(agreement) : agreementLines(batch, agreement));
      return EXIT.ok;
    },

    async export(batch, o) {
      const format = o.format ?? (o.json ? 'jsonl' : 'csv');
      const res = await clientFor(o).fetch('GET', batchPath(batch, '/export'), { query: { format } });
      if (!res.body) throw new ApiAnswerError('the export answered no body', { status: res.status, code: 'empty_export' });
      const source = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
      if (o.output) {
        let bytes = 0;
        source.on('data', (chunk: Buffer) => (bytes += chunk.length));
        await pipeline(source, createWriteStream(o.output));
        err(`wrote ${formatBytes(bytes)} of ${format} to ${o.output}`);
      } else {
        await pipeline(source, ctx.stdout, { end: false });
      }
      return EXIT.ok;
    },

    async logs(batch, o) {
      const items = await collect(clientFor(o).logs(batch));
      printItems(items, o, logLines, 'no logs (only a batch uploaded with --debug has them)');
      return EXIT.ok;
    },

    async close(batch, o) {
      printSummary(await clientFor(o).closeBatch(batch), o);
      return EXIT.ok;
    },

    async delete(batch, o) {
      await clientFor(o).deleteBatch(batch);
      out(o.json ? json({ batchId: batch, deleted: true }) : `batch ${batch} is being erased: its images, records and logs`);
      return EXIT.ok;
    },

    async similar(batch, o) {
      const client = clientFor(o);
      const [{ groups }, summary] = await Promise.all([client.similar(batch, o.maxDistance), client.getBatch(batch)]);
      if (summary.status !== 'done') err(`batch ${batch} is ${summary.status}: these are the groups of the images recorded so far`);
      if (o.json) {
        out(json({ groups }));
        return EXIT.ok;
      }
      if (groups.length === 0) {
        out('no near-duplicate groups');
        return EXIT.ok;
      }
      out(similarTable(groups));
      return EXIT.ok;
    },
  };
}

/**
 * The fingerprint of the image a person names: its fingerprint, or the file name it (or one of its duplicates) was
 * uploaded under. A name that is both is taken as the fingerprint.
 */
async function imageOf(client: ApiClient, batch: string, name: string): Promise<string> {
  try {
    return (await client.getImage(batch, name)).fprint;
  } catch (err) {
    // 404: no image of that fingerprint; 400: not even shaped like one. Either way, try it as a file name.
    if (!(err instanceof ApiAnswerError) || (err.status !== 404 && err.status !== 400) || err instanceof RouteMissingError) throw err;
    if (err.status === 404 && /^batch /.test(err.message)) throw err;
  }
  const [found] = await collect(client.pages<Image>(batchPath(batch, '/images'), { fileName: name }));
  if (!found) throw new UsageError(`batch ${batch} has no image named ${name} (give its file name as uploaded, folders included, or its fingerprint)`);
  return found.fprint;
}

/** A batch's images; `cats` asks the API (`cat=true`) and, where a server does not filter by it yet, filters here. */
async function batchImages(client: ApiClient, batch: string, filter: Omit<ImageFilter, 'cat'> & { cats?: boolean }): Promise<Image[]> {
  const { cats, ...rest } = filter;
  if (!cats) return collect(client.images(batch, rest));
  try {
    return await collect(client.images(batch, { ...rest, cat: true }));
  } catch (e) {
    if (!(e instanceof ApiAnswerError && e.status === 400 && /\bcat\b/.test(e.message))) throw e;
    return (await collect(client.images(batch, rest))).filter((i) => i.isCat === true);
  }
}

async function dryRun(
  inputs: string[],
  o: UploadCommandOptions,
  ask: AskKnown | undefined,
  out: (t: string) => void,
  err: (t: string) => void,
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
    estimate = await estimateUpload(await localFingerprints(files.map((f) => f.path)), ask, pricePerImageUsd());
  } catch (e) {
    // A service that does not know the route yet: the estimate counts every image as new.
    if (!(e instanceof RouteMissingError)) throw e;
    err('this API cannot tell known fingerprints yet: the estimate counts every image as new');
    estimate = await estimateUpload(await localFingerprints(files.map((f) => f.path)), undefined, pricePerImageUsd());
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

async function upload(
  inputs: string[],
  o: UploadCommandOptions,
  client: ApiClient,
  ctx: CommandContext,
  out: (t: string) => void,
  err: (t: string) => void,
  statusUrl?: string,
): Promise<number> {
  const progress: ProgressReporter = o.quiet ? silentProgress : ctx.stderr.isTTY ? terminalProgress(ctx.stderr as NodeJS.WriteStream) : plainProgress({ write: err });
  if (o.quiet) {
    // No totals to show, so no counting walk; a missing input still fails before any request.
    await checkInputs(inputs);
  } else {
    const totals = await countFiles(inputs, o.hidden);
    progress.uploadStarted(totals.files, totals.bytes);
  }
  let result: UploadResult;
  try {
    result = await uploadFolder({
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
        skipped: (s) => (s.reason === 'hidden' ? undefined : progress.note(`skipped ${s.path}: ${s.reason}${s.detail ? ` (${s.detail})` : ''}`)),
      },
    });
  } finally {
    progress.uploadEnded();
  }
  const batchId = result.batchId;
  const problems = [...result.rejected, ...result.unsent.map((p) => ({ ...p, unsent: true }))].sort((a, b) => (a.file < b.file ? -1 : 1));
  if (batchId === undefined) {
    if (o.json) out(json({ batch: null, images: [], notUploaded: problems.map(problemJson) }));
    else if (problems.length) out(fileTable(fileRows([], [], problems, false)));
    if (result.outOfSpace) {
      err(outOfSpaceLine(result, 'run the same command again'));
      return EXIT.someFailed;
    }
    err(problems.length ? 'no batch was made: none of the files can be uploaded' : 'nothing to upload');
    return problems.length ? EXIT.someFailed : EXIT.failure;
  }

  // In the batch now: what this run sent, plus, when it resumed a batch, what was there when it began.
  const sentSoFar = (result.resumed ? (result.created?.counts.total ?? 0) : 0) + result.uploadedFiles;
  let closeSupported = true;
  if (!result.abortedBy) {
    try {
      await client.closeBatch(batchId, sentSoFar);
    } catch (e) {
      if (e instanceof RouteMissingError) {
        closeSupported = false;
        progress.note('this API cannot close batches yet: the batch is done once every declared file arrived');
      } else if (e instanceof ApiAnswerError && e.status === 409 && result.resumed) {
        // More arrived than the resumed batch showed when this run began (the earlier run's last uploads were
        // still being recorded): close on what the service counts.
        await client.closeBatch(batchId);
      } else {
        throw e;
      }
    }
  }

  let summary: BatchSummary;
  let settled: boolean;
  let timedOut: WaitTimeoutError | undefined;
  if (o.wait && !result.abortedBy) {
    try {
      summary = await waitUntilDone(client, batchId, sentSoFar, closeSupported, progress, ctx.pollMs ?? 1_000, WAIT_OUTAGE_MS, {
        stallMs: ctx.stallMs ?? envNumber('ICECAT_WAIT_STALL_SECONDS', 30, { min: 0.01, max: 86_400 }) * 1000,
        ...(o.waitTimeout !== undefined ? { timeoutMs: o.waitTimeout * 1000 } : {}),
        ...(statusUrl ? { status: () => readServiceStatus(statusUrl) } : {}),
      });
      settled = true;
    } catch (e) {
      if (!(e instanceof WaitTimeoutError)) throw e;
      timedOut = e;
      summary = e.last;
      settled = false;
    }
  } else {
    summary = await client.getBatch(batchId);
    settled = summary.status === 'done';
  }
  const images = await collect(client.images(batchId));

  if (o.json) {
    out(json({ batch: summary, images, notUploaded: problems.map(problemJson) }));
  } else {
    out(fileTable(fileRows(result.sent, images, problems, settled)));
    out(uploadFooter(summary, result, settled));
    if (settled && summary.usage) out(usageLine(summary.usage));
  }
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
    err(`${result.unsent.length} files were not uploaded (${result.abortedBy ?? 'network errors'}): run the same command with --batch ${batchId} to send them`);
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
  const listed = names.slice(0, OUT_OF_SPACE_NAMES).join(', ') + (names.length > OUT_OF_SPACE_NAMES ? `, and ${names.length - OUT_OF_SPACE_NAMES} more` : '');
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

/** How long --wait keeps asking an API that does not answer (a restarting stack, a network blip) before it gives up. */
export const WAIT_OUTAGE_MS = 120_000;

/** What --wait watches besides the batch: when to say why nothing moves, and when to give up. */
export interface WaitWatch {
  /** Nothing moved for this long: one line saying why (again each such while). Default 30 s. */
  stallMs?: number;
  /** Gives up (WaitTimeoutError) after this long. */
  timeoutMs?: number;
  /** Why the service does not progress, where it knows (lib/cli/service-status.ts). */
  status?: () => Promise<ServiceStatus | undefined>;
}

/**
 * Reads the summary until the batch is done. A server without the :close route never closes a batch whose declared
 * files did not all arrive, so there the batch counts as done once the `sent` files are all classified. The files
 * are uploaded by then, so an API that stops answering for a while is waited for, up to `outageMs` in a row. When
 * nothing moves for `watch.stallMs` it says why, where the service knows, and waits on; `watch.timeoutMs` ends it.
 */
export async function waitUntilDone(
  client: ApiClient,
  batchId: string,
  sent: number,
  closeSupported: boolean,
  progress: ProgressReporter,
  pollMs: number,
  outageMs: number = WAIT_OUTAGE_MS,
  watch: WaitWatch = {},
): Promise<BatchSummary> {
  progress.classifyStarted(sent);
  let unansweredSince: number | undefined;
  const startedAt = Date.now();
  const stallMs = watch.stallMs ?? 30_000;
  let last: BatchSummary | undefined;
  let lastMove = '';
  let movedAt = startedAt;
  let notedAt = startedAt;
  let cause: string | undefined;
  try {
    for (;;) {
      if (watch.timeoutMs !== undefined && Date.now() - startedAt >= watch.timeoutMs) {
        last ??= await client.getBatch(batchId);
        const finished = last.counts.success + last.counts.fail + last.counts.duplicate;
        throw new WaitTimeoutError(
          `gave up waiting after ${Math.round(watch.timeoutMs / 1000)} s (--wait-timeout): batch ${batchId} is ${last.status}, ` +
            `${finished} of ${Math.max(last.expected ?? last.counts.total, finished)} classified${cause ? `; ${cause}` : ''}; ` +
            `the service goes on with it: icecat status ${batchId}`,
          { last },
        );
      }
      let s: BatchSummary;
      try {
        s = await client.getBatch(batchId);
        unansweredSince = undefined;
      } catch (err) {
        if (!(err instanceof NetworkError)) throw err;
        if (unansweredSince === undefined) {
          unansweredSince = Date.now();
          progress.note(`${err.message}; asking again for up to ${Math.round(outageMs / 1000)} s`);
        }
        if (Date.now() - unansweredSince >= outageMs) throw err;
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        continue;
      }
      last = s;
      const finished = s.counts.success + s.counts.fail + s.counts.duplicate;
      const of = Math.max(s.expected ?? s.counts.total, finished, closeSupported ? 0 : sent);
      progress.classified(finished, of);
      if (s.status === 'done' || (!closeSupported && s.counts.total >= sent && finished >= s.counts.total)) return s;
      const move = `${s.status} ${s.counts.total} ${finished}`;
      if (move !== lastMove) {
        lastMove = move;
        movedAt = notedAt = Date.now();
      } else if (Date.now() - notedAt >= stallMs) {
        notedAt = Date.now();
        cause = stallCause(await watch.status?.());
        const why = cause ?? (watch.status ? 'the service reports no fault (a long queue, or a slow detector)' : 'the service cannot be asked why');
        progress.note(`nothing has moved for ${Math.round((notedAt - movedAt) / 1000)} s (${finished} of ${of} classified): ${why}; still waiting`);
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  } finally {
    progress.classifyEnded();
  }
}
