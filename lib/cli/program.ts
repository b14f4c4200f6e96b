// The command line: sub-commands, their options and `--help` (commander). Parsing only: each command hands its
// parsed arguments to a handler (commands.ts), so the parsing is tested without any network.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { ImportSourceAddress } from '../api/client-contract';
import { BATCH_STATUSES, OP_STATUSES } from '../api/client-contract';
import { ID_PATTERN, ID_RULE } from '../ids';
import { AUDIT_SIZE_MAX } from '../review/audit-sample';
import { MAX_DISTANCE_LIMIT } from '../similar/groups';
import { DEFAULT_API_URL } from './config';
import { UsageError } from './errors';
import { importSourceOf } from './import-output';

const MAX_CONCURRENCY = 64;
const DEFAULT_CONCURRENCY = 8;

export interface GlobalOptions {
  apiUrl?: string;
  apiKey?: string;
}

export interface UploadCommandOptions extends GlobalOptions {
  batch?: string;
  debug?: boolean;
  wait?: boolean;
  /** Seconds --wait waits at most before it ends with exit 1. */
  waitTimeout?: number;
  json?: boolean;
  concurrency: number;
  dryRun?: boolean;
  quiet?: boolean;
  hidden?: boolean;
}

export interface JsonOption extends GlobalOptions {
  json?: boolean;
}

export interface WaitOptions extends JsonOption {
  wait?: boolean;
  /** Seconds --wait waits at most before it ends with exit 1. */
  waitTimeout?: number;
  quiet?: boolean;
}

export interface ImportCommandOptions extends WaitOptions {
  batch?: string;
}

export interface ReviewOptions {
  cat?: boolean;
  notCat?: boolean;
  note?: string;
  withdraw?: boolean;
}

/** Longest review note the API keeps. */
const REVIEW_NOTE_MAX = 500;

export interface Handlers {
  upload(inputs: string[], opts: UploadCommandOptions): Promise<number>;
  batches(opts: JsonOption & { status?: string; limit: number }): Promise<number>;
  status(batch: string, opts: JsonOption): Promise<number>;
  images(
    batch: string,
    opts: JsonOption & {
      cats?: boolean;
      status?: string;
      review?: 'pending';
      audit?: 'pending';
      label?: string[];
      minConfidence?: number;
      capturedFrom?: string;
      capturedTo?: string;
      byCaptureTime?: boolean;
    },
  ): Promise<number>;
  review(batch: string, image: string, opts: JsonOption & ReviewOptions): Promise<number>;
  agreement(batch: string, opts: JsonOption): Promise<number>;
  audit(batch: string, opts: JsonOption & { size: number }): Promise<number>;
  accuracy(batch: string, opts: JsonOption): Promise<number>;
  export(batch: string, opts: JsonOption & { format?: 'csv' | 'jsonl' | 'megadetector'; output?: string }): Promise<number>;
  logs(batch: string, opts: JsonOption): Promise<number>;
  close(batch: string, opts: JsonOption): Promise<number>;
  delete(batch: string, opts: JsonOption): Promise<number>;
  similar(batch: string, opts: JsonOption & { maxDistance?: number }): Promise<number>;
  redetect(batch: string, opts: JsonOption & { dryRun?: boolean; all?: boolean }): Promise<number>;
  changes(batch: string, opts: JsonOption): Promise<number>;
  import(source: ImportSourceAddress, opts: ImportCommandOptions): Promise<number>;
  report(batch: string, opts: GlobalOptions & { output?: string }): Promise<number>;
  retry(batch: string, opts: WaitOptions): Promise<number>;
}

interface ProgramIo {
  writeOut(text: string): void;
  writeErr(text: string): void;
}

function batchName(value: string): string {
  if (!ID_PATTERN.test(value)) throw new InvalidArgumentError(`a batch id is ${ID_RULE}`);
  return value;
}

const integerIn =
  (min: number, max: number) =>
  (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return Number(value);
  };

const EXIT_CODES = `
Exit codes:
  0  every file ended success or duplicate (or the command succeeded)
  2  some file failed (refused before upload, skipped by the walk: unreadable, a broken link, a name not UTF-8;
     or classified as fail)
  1  usage, authentication or network error, or --wait-timeout reached`;

const IMPORT_EXIT_CODES = `
Exit codes:
  0  every image ended success or duplicate (without --wait: the import started)
  2  some image failed (icecat report names them, icecat retry sends them again)
  1  usage, authentication or network error, a source you may not import from (403), or --wait-timeout reached`;

const CONFIG_HELP = `
Configuration:
  ICECAT_API_URL   the API (default ${DEFAULT_API_URL}); or --api-url
  ICECAT_API_KEY   your API key; or --api-key
  ICECAT_BRIDGE_URL          the local stack's bridge, asked why a --wait does not move (default: port 4570 beside a loopback API)
  ICECAT_WAIT_STALL_SECONDS  how long --wait sees nothing move before it says why (default 30)`;

/** The program; `run` resolves to the handler's exit code. */
export function buildProgram(handlers: Handlers, io: ProgramIo): { program: Command; run(argv: string[]): Promise<number> } {
  let exitCode = 0;
  const program = new Command('icecat')
    .description('Upload folders of images to IceCatWrangler and read which ones show a cat.')
    .option('--api-url <url>', `API base URL (env ICECAT_API_URL, default ${DEFAULT_API_URL})`)
    .option('--api-key <key>', 'API key (env ICECAT_API_KEY)')
    .addHelpText('after', `${CONFIG_HELP}\n${EXIT_CODES}`)
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: io.writeOut, writeErr: io.writeErr })
    .exitOverride();
  const sub = (name: string, description: string) =>
    program.command(name).description(description).configureOutput({ writeOut: io.writeOut, writeErr: io.writeErr }).exitOverride();
  const done = (code: number) => {
    exitCode = code;
  };
  const jsonOption = new Option('--json', 'print JSON on stdout');
  /** A command whose only argument is a batch id and whose only option is --json. */
  const batchCommand = (name: string, description: string, handler: (batch: string, opts: JsonOption) => Promise<number>) =>
    sub(name, description)
      .argument('<batch>', 'batch id', batchName)
      .addOption(jsonOption)
      .action(async (batch: string, _o, cmd: Command) => done(await handler(batch, cmd.optsWithGlobals())));
  const kit: CommandKit = { handlers, sub, done, jsonOption, batchCommand };
  addUploadCommands(kit);
  addImageCommands(kit);
  addBatchCommands(kit);
  addImportCommands(kit);

  return {
    program,
    async run(argv: string[]): Promise<number> {
      exitCode = 0;
      try {
        if (argv.length === 0) {
          program.outputHelp({ error: true });
          return 1;
        }
        await program.parseAsync(argv, { from: 'user' });
        return exitCode;
      } catch (err) {
        if (err instanceof CommanderError) {
          return err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version' ? 0 : 1;
        }
        throw err;
      }
    },
  };
}

/** What each group of sub-commands is declared with. */
interface CommandKit {
  handlers: Handlers;
  sub(name: string, description: string): Command;
  done(code: number): void;
  jsonOption: Option;
  batchCommand(name: string, description: string, handler: (batch: string, opts: JsonOption) => Promise<number>): Command;
}

/** upload, batches, status. */
function addUploadCommands({ handlers, sub, done, jsonOption, batchCommand }: CommandKit): void {
  sub('upload', 'Upload files and folders (walked recursively) as one batch, then close it')
    .argument(
      '<paths...>',
      'files and folders; a folder keeps its name and sub-folders in the file names (trip/day1/a.jpg), unless given with a trailing slash (trip/ names day1/a.jpg)',
    )
    .option('-b, --batch <name>', 'name the batch (default: the API makes an id); an existing open batch is resumed', batchName)
    .option('--debug', "record per-image processing logs (read them with 'icecat logs')")
    .option(
      '-w, --wait',
      'wait until every file is classified, then print the results; when nothing moves for 30 s, says why where the service knows',
    )
    .option('--wait-timeout <s>', 'with --wait: give up after this many seconds (exit 1)', integerIn(1, 7 * 86_400))
    .addOption(jsonOption)
    .option('-c, --concurrency <n>', 'files uploaded at once', integerIn(1, MAX_CONCURRENCY), DEFAULT_CONCURRENCY)
    .option('-n, --dry-run', 'list what would be uploaded, upload nothing')
    .option('-q, --quiet', 'no progress on stderr')
    .option('--hidden', 'include dot-files and dot-folders')
    .addHelpText('after', EXIT_CODES)
    .action(async (paths: string[], _o, cmd: Command) => done(await handlers.upload(paths, cmd.optsWithGlobals())));

  sub('batches', 'List your batches, newest first')
    .option('--status <status>', 'only batches in this status', choice(BATCH_STATUSES))
    .option('--limit <n>', 'most batches to list', integerIn(1, 10_000), 20)
    .addOption(jsonOption)
    .action(async (_o, cmd: Command) => done(await handlers.batches(cmd.optsWithGlobals())));

  batchCommand('status', "A batch's summary: status and counters", (batch, o) => handlers.status(batch, o));
}

/** images, review, agreement. */
function addImageCommands({ handlers, sub, done, jsonOption, batchCommand }: CommandKit): void {
  sub('images', "A batch's images with their labels")
    .argument('<batch>', 'batch id', batchName)
    .option('--cats', 'only cats')
    .option('--status <status>', 'only images in this status', choice(OP_STATUSES))
    .option(
      '--label <name>',
      'only images with this label (case-insensitive); repeat it for any of several',
      (v: string, all: string[] = []) => [...all, v],
    )
    .option('--min-confidence <n>', 'with --label: the least confidence, 0-100', Number)
    .option('--captured-from <time>', 'captured at or after this wall-clock time (2024-06-01 or 2024-06-01T06:30:00)')
    .option('--captured-to <time>', 'captured at or before this wall-clock time (inclusive)')
    .option('--by-capture-time', 'the images with a capture time, oldest first')
    .addOption(
      new Option('--review <state>', 'pending: the review queue, images no person has reviewed, least certain first')
        .choices(['pending'])
        .conflicts(['cats', 'status']),
    )
    .addOption(
      new Option('--audit <state>', 'pending: the audit queue, drawn images no person has reviewed, in random order')
        .choices(['pending'])
        .conflicts(['cats', 'status', 'review']),
    )
    .addOption(jsonOption)
    .action(async (batch: string, _o, cmd: Command) => done(await handlers.images(batch, cmd.optsWithGlobals())));

  sub('review', "Give your verdict on an image, which wins over the machine's (or withdraw it)")
    .argument('<batch>', 'batch id', batchName)
    .argument('<image>', "the image's file name in the batch (a duplicate's too) or its fingerprint")
    .addOption(new Option('--cat', 'it shows a cat').conflicts(['notCat', 'withdraw']))
    .addOption(new Option('--not-cat', 'it does not show a cat').conflicts(['withdraw']))
    .addOption(
      new Option('--note <text>', `why, for whoever reads it later (at most ${REVIEW_NOTE_MAX} characters)`)
        .argParser(noteText)
        .conflicts(['withdraw']),
    )
    .option('--withdraw', "withdraw your verdict: the machine's counts again")
    .addOption(jsonOption)
    .action(async (batch: string, image: string, _o, cmd: Command) => {
      const o = cmd.optsWithGlobals<JsonOption & ReviewOptions>();
      if (!o.cat && !o.notCat && !o.withdraw)
        throw cmd.error('error: say --cat or --not-cat (or --withdraw)', { exitCode: 1, code: 'icecat.review.verdict' });
      done(await handlers.review(batch, image, o));
    });

  batchCommand('agreement', "How far the machine agrees with the batch's reviews, and the threshold that would agree most", (batch, o) =>
    handlers.agreement(batch, o),
  );

  sub('audit', "Draw a random audit sample of a batch's classified images (added to any earlier one), to review")
    .argument('<batch>', 'batch id', batchName)
    .requiredOption('--size <n>', `images to draw, 1-${AUDIT_SIZE_MAX}`, integerIn(1, AUDIT_SIZE_MAX))
    .addOption(jsonOption)
    .action(async (batch: string, _o, cmd: Command) => done(await handlers.audit(batch, cmd.optsWithGlobals())));

  batchCommand(
    'accuracy',
    "The machine's precision, recall, accuracy and the batch's cats, estimated from the audited reviews",
    (batch, o) => handlers.accuracy(batch, o),
  );

  sub('redetect', 'Classify a done batch again: its images answered by another model than the current one (or all)')
    .argument('<batch>', 'batch id', batchName)
    .option('--dry-run', 'only count and price the images: nothing changes')
    .option('--all', 'every image, not only those answered by another model')
    .addOption(jsonOption)
    .action(async (batch: string, _o, cmd: Command) => done(await handlers.redetect(batch, cmd.optsWithGlobals())));
  batchCommand('changes', 'The images whose machine verdict a re-detection changed, with both confidences', (batch, o) =>
    handlers.changes(batch, o),
  );
}

/** export, logs, close, delete, similar. */
function addBatchCommands({ handlers, sub, done, jsonOption, batchCommand }: CommandKit): void {
  sub('export', 'Download one row per uploaded file, duplicates included (CSV, JSON lines, or a MegaDetector results file)')
    .argument('<batch>', 'batch id', batchName)
    .addOption(
      new Option(
        '--format <format>',
        'csv, jsonl, or megadetector (a MegaDetector 1.6 results file for Timelapse or AddaxAI); default csv, jsonl with --json',
      ).choices(['csv', 'jsonl', 'megadetector']),
    )
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .addOption(new Option('--json', 'same as --format jsonl'))
    .action(async (batch: string, _o, cmd: Command) => done(await handlers.export(batch, cmd.optsWithGlobals())));

  batchCommand('logs', "A debug batch's per-image processing logs", (batch, o) => handlers.logs(batch, o));
  batchCommand('close', 'Close a batch: no more uploads; it is done once every file is classified', (batch, o) => handlers.close(batch, o));
  batchCommand('delete', 'Erase a batch: its images, records and logs', (batch, o) => handlers.delete(batch, o));

  sub('similar', "Groups of a batch's near-duplicate images")
    .argument('<batch>', 'batch id', batchName)
    .option(
      '--max-distance <bits>',
      `most differing bits of the 64-bit perceptual hash, 0-${MAX_DISTANCE_LIMIT} (API default 10)`,
      integerIn(0, MAX_DISTANCE_LIMIT),
    )
    .addOption(jsonOption)
    .action(async (batch: string, _o, cmd: Command) => done(await handlers.similar(batch, cmd.optsWithGlobals())));
}

/** import, report, retry: batches that classify images where they already are (docs/design.md §16). */
function addImportCommands({ handlers, sub, done, jsonOption }: CommandKit): void {
  const waitOption = new Option(
    '-w, --wait',
    'wait until every image is classified (a progress line while listing or waiting for the quota)',
  );
  const waitTimeout = new Option('--wait-timeout <s>', 'with --wait: give up after this many seconds (exit 1)').argParser(
    integerIn(1, 7 * 86_400),
  );
  const quiet = new Option('-q, --quiet', 'no progress on stderr');
  sub('import', 'Classify images already in S3 where they are (nothing copied, moved or deleted): a prefix, or a manifest')
    .argument('[source]', 's3://bucket/prefix: every key under it (keys that are not images by name are skipped)')
    .option(
      '-m, --manifest <s3uri>',
      "s3://bucket/key of a CSV of bucket,key[,versionId] (S3 Batch Operations') or an S3 Inventory manifest.json",
    )
    .option(
      '-b, --batch <name>',
      'name the batch (default: the API makes an id); a batch already importing this source is followed',
      batchName,
    )
    .addOption(waitOption)
    .addOption(waitTimeout)
    .addOption(jsonOption)
    .addOption(quiet)
    .addHelpText('after', IMPORT_EXIT_CODES)
    .action(async (uri: string | undefined, _o, cmd: Command) => {
      const o = cmd.optsWithGlobals<ImportCommandOptions & { manifest?: string }>();
      let source: ImportSourceAddress;
      try {
        source = importSourceOf(uri, o.manifest);
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        throw cmd.error(`error: ${e.message}`, { exitCode: 1, code: 'icecat.import.source' });
      }
      done(await handlers.import(source, o));
    });

  sub('report', "An import's completion report: one CSV row per object, in S3 Batch Operations' columns")
    .argument('<batch>', 'batch id', batchName)
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .addOption(new Option('--out <file>').hideHelp())
    .action(async (batch: string, _o, cmd: Command) => {
      const o = cmd.optsWithGlobals<GlobalOptions & { output?: string; out?: string }>();
      done(await handlers.report(batch, { ...o, output: o.output ?? o.out }));
    });

  sub('retry', "Send an import's failed images again (SourceChanged, SourceMissing, …), read where they are")
    .argument('<batch>', 'batch id', batchName)
    .addOption(waitOption)
    .addOption(waitTimeout)
    .addOption(jsonOption)
    .addOption(quiet)
    .addHelpText('after', IMPORT_EXIT_CODES)
    .action(async (batch: string, _o, cmd: Command) => done(await handlers.retry(batch, cmd.optsWithGlobals())));
}

function noteText(value: string): string {
  if (value.length > REVIEW_NOTE_MAX)
    throw new InvalidArgumentError(`must be at most ${REVIEW_NOTE_MAX} characters (this one has ${value.length})`);
  return value;
}

function choice(values: readonly string[]) {
  return (value: string): string => {
    if (!values.includes(value)) throw new InvalidArgumentError(`must be one of ${values.join(', ')}`);
    return value;
  };
}
