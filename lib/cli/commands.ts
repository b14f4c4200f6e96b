// What each sub-command does: API calls, then a table or JSON on stdout. Errors are thrown as CliErrors and become
// a message on stderr and an exit code in main.ts. The upload and its dry run are in upload-command.ts.

import type { BatchSummary, Image } from '../api/client-contract';
import { batchPath } from '../api/client-contract';
import { ApiClient, collect, type ImageFilter } from './api-client';
import { accuracyLines, auditLines } from './audit-output';
import type { CommandContext } from './command-context';
import { resolveConnection } from './config';
import { saveAnswer } from './download';
import { ApiAnswerError, EXIT, RouteMissingError, UsageError } from './errors';
import type { AskKnown } from './estimate';
import { type ImportIo, importCommand, reportCommand, retryCommand } from './import-command';
import { agreementLines, batchTable, imageTable, json, logLines, reviewLine, reviewQueueTable, similarTable, summaryLines } from './output';
import type { GlobalOptions, Handlers, JsonOption } from './program';
import { changesCommand, redetectCommand } from './redetect-command';
import { statusUrlFor } from './service-status';
import { dryRun, upload } from './upload-command';

/** What every command writes with and asks through. */
interface CommandIo {
  ctx: CommandContext;
  out: (text: string) => void;
  err: (text: string) => void;
  clientFor: (o: GlobalOptions) => ApiClient;
  printSummary: (summary: BatchSummary, o: JsonOption) => void;
  /** A list as JSON `{ items }`, or as text: `render`ed, or `none` when empty. */
  printItems: <T>(items: T[], o: JsonOption, render: (items: T[]) => string, none: string) => void;
}

export function commandHandlers(ctx: CommandContext): Handlers {
  const out = (text: string) => ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const err = (text: string) => ctx.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  const clientFor = (o: GlobalOptions) => new ApiClient(resolveConnection(o, ctx.config));
  const io: CommandIo = {
    ctx,
    out,
    err,
    clientFor,
    printSummary: (summary, o) => out(o.json ? json(summary) : summaryLines(summary)),
    printItems: (items, o, render, none) => out(o.json ? json({ items }) : items.length ? render(items) : none),
  };
  return {
    upload: (inputs, o) =>
      o.dryRun
        ? dryRun(inputs, o, askKnownFor(io, o), out, err, ctx.config.pricePerImageUsd)
        : upload(
            inputs,
            o,
            clientFor(o),
            ctx,
            out,
            err,
            statusUrlFor(resolveConnection(o, ctx.config).apiUrl, undefined, ctx.config.bridgeUrl),
          ),
    ...readHandlers(io),
    ...batchHandlers(io),
    redetect: (batch, o) => redetectCommand(clientFor(o), batch, o, out),
    changes: (batch, o) => changesCommand(clientFor(o), batch, o, out),
    ...importHandlers(io),
  };
}

/** import, report, retry (import-command.ts). */
function importHandlers({ ctx, out, err, clientFor }: CommandIo): Pick<Handlers, 'import' | 'report' | 'retry'> {
  const ioFor = (o: GlobalOptions): ImportIo => ({
    ctx,
    out,
    err,
    statusUrl: statusUrlFor(resolveConnection(o, ctx.config).apiUrl, undefined, ctx.config.bridgeUrl),
  });
  return {
    import: (source, o) => importCommand(clientFor(o), source, o, ioFor(o)),
    report: (batch, o) => reportCommand(clientFor(o), batch, o, ioFor(o)),
    retry: (batch, o) => retryCommand(clientFor(o), batch, o, ioFor(o)),
  };
}

/** The service's known fingerprints, when a key is configured; without one a dry run prices every image as new. */
function askKnownFor({ clientFor, err }: CommandIo, o: GlobalOptions): AskKnown | undefined {
  let client: ApiClient;
  try {
    client = clientFor(o);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`${e.message}; without it the estimate counts every image as new`);
    return undefined;
  }
  return (fprints) => client.knownFingerprints(fprints);
}

/** A batch's images by the filters given, or its audit or review queue. */
async function printImages(
  { clientFor, printItems }: CommandIo,
  batch: string,
  o: Parameters<Handlers['images']>[1],
): ReturnType<Handlers['images']> {
  if (o.audit === 'pending') {
    const items = await collect(clientFor(o).pages<Image>(batchPath(batch, '/images'), { audit: 'pending' }));
    printItems(items, o, reviewQueueTable, 'no drawn image waits for a review');
    return EXIT.ok;
  }
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
}

/** The commands that read a batch: its list, summary, images, agreement, logs and near-duplicates. */
function readHandlers(io: CommandIo): Pick<Handlers, 'batches' | 'status' | 'images' | 'agreement' | 'accuracy' | 'logs' | 'similar'> {
  const { out, err, clientFor, printSummary, printItems } = io;
  return {
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

    images: (batch, o) => printImages(io, batch, o),

    async agreement(batch, o) {
      const agreement = await clientFor(o).agreement(batch);
      out(o.json ? json(agreement) : agreementLines(batch, agreement));
      return EXIT.ok;
    },

    async accuracy(batch, o) {
      const accuracy = await clientFor(o).accuracy(batch);
      out(o.json ? json(accuracy) : accuracyLines(batch, accuracy));
      return EXIT.ok;
    },

    async logs(batch, o) {
      const items = await collect(clientFor(o).logs(batch));
      printItems(items, o, logLines, 'no logs (only a batch uploaded with --debug has them)');
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

/** The commands that act on a batch: review an image, export, close, delete. */
function batchHandlers({
  ctx,
  out,
  err,
  clientFor,
  printSummary,
}: CommandIo): Pick<Handlers, 'review' | 'audit' | 'export' | 'close' | 'delete'> {
  return {
    async audit(batch, o) {
      const drawn = await clientFor(o).audit(batch, o.size);
      out(o.json ? json(drawn) : auditLines(drawn));
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

    async export(batch, o) {
      const format = o.format ?? (o.json ? 'jsonl' : 'csv');
      const res = await clientFor(o).fetch('GET', batchPath(batch, '/export'), { query: { format } });
      await saveAnswer(res, format, o.output, ctx.stdout, err);
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
  if (!found)
    throw new UsageError(
      `batch ${batch} has no image named ${name} (give its file name as uploaded, folders included, or its fingerprint)`,
    );
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
