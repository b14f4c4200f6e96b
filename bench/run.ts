// `npm run bench [name ...]`: runs each bench/<name>.bench.ts in its own process (so memory and cold-start numbers
// are its own) and writes bench/results/<name>.json plus bench/results/summary.md.
//
// What a bench is (every bench/<name>.bench.ts follows this):
// - `export default async function (): Promise<Record<string, unknown>>` measures and returns its results (JSON). It
//   throws when what it measured went wrong (an upload not recorded, counts off, a server that did not start): that
//   is a failed bench. It never throws because a goal is missed: a missed goal is a result.
// - `export function headline(results): Headline[]` names its headline figures beside their goals (`headline()` in
//   bench/stats.ts: '<= 1.10', '>= 0.8', or '—' for a figure without a goal). It reads only the results object, so
//   summary.md tabulates a result written before the figure was added (missing fields give an empty value).
// - Smoke mode: `npm run bench -- --smoke [name ...]` (or BENCH_SMOKE=1) runs every bench at tiny sizes, seconds
//   each: a bench reads `isSmoke()` or `sized(full, smoke)` from bench/stats.ts for each of its sizes (files, rounds,
//   seconds, table sizes...), and still runs every path it runs at full size. It is what CI runs (.ci/run), so that a
//   bench that no longer works fails there. Smoke benches run one per core at a time, each one's output printed
//   whole when it ends. A smoke run's results go to a temporary folder, never to bench/results/
//   (whose files stay the last full-size runs), and no goal is checked. `--report FILE` writes
//   `{benches: [{name, ok, seconds}]}` to FILE for .ci/run's count.
// - `npm run bench -- --summary` rewrites summary.md from the stored results and runs no bench.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Headline } from './stats';

const dir = __dirname;
const RESULTS_DIR = join(dir, 'results');
/** A smoke bench that runs longer than this has hung: it is killed and counted failed. */
const SMOKE_TIMEOUT_MS = 180_000;

interface BenchModule {
  default: () => Promise<Record<string, unknown>>;
  headline?: (results: Record<string, unknown>) => Headline[];
}

interface BenchRecord {
  bench: string;
  at: string;
  seconds: number;
  smoke?: boolean;
  headline?: Headline[];
  results: Record<string, unknown>;
}

const load = async (name: string): Promise<BenchModule> => (await import(join(dir, `${name}.bench.ts`))) as BenchModule;

async function runOne(name: string, resultsDir: string): Promise<void> {
  const mod = await load(name);
  const smoke = process.env.BENCH_SMOKE === '1';
  const started = Date.now();
  const results = await mod.default();
  const record: BenchRecord = {
    bench: name,
    at: new Date(started).toISOString(),
    seconds: (Date.now() - started) / 1000,
    ...(smoke ? { smoke: true } : {}),
    // A smoke run checks no goal: its figures come from tiny sizes.
    headline: (mod.headline?.(results) ?? []).map((h) => (smoke ? { ...h, met: null } : h)),
    results,
  };
  writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  console.log(JSON.stringify(record, null, 2));
}

function parseArgs(argv: string[]): { names: string[]; smoke: boolean; summaryOnly: boolean; report?: string } {
  const names: string[] = [];
  let smoke = process.env.BENCH_SMOKE === '1';
  let report: string | undefined;
  let summaryOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--smoke') smoke = true;
    else if (a === '--summary') summaryOnly = true;
    else if (a === '--report') report = argv[++i];
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else names.push(a);
  }
  return { names, smoke, summaryOnly, report };
}

async function main(): Promise<void> {
  const all = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .map((f) => f.replace(/\.bench\.ts$/, ''))
    .sort();
  const args = parseArgs(process.argv.slice(2));
  for (const name of args.names) if (!all.includes(name)) throw new Error(`no bench named ${name}; have: ${all.join(', ')}`);
  const names = args.names.length ? args.names : all;
  if (args.summaryOnly) {
    // Rewrites summary.md from the stored results (a bench's headline() may have changed since its run); runs nothing.
    await writeSummary(all);
    return;
  }
  const resultsDir = args.smoke ? mkdtempSync(join(tmpdir(), 'icecat-bench-smoke-')) : RESULTS_DIR;
  mkdirSync(resultsDir, { recursive: true });
  // A smoke run's stacks start one detector worker (each loads the model: about 1.4 s of CPU) unless told otherwise.
  const smokeEnv = args.smoke ? { ICECAT_DETECTOR_WORKERS: '1' } : {};
  const env = { ...smokeEnv, ...process.env, BENCH_SMOKE: args.smoke ? '1' : '0', BENCH_RESULTS_DIR: resultsDir };
  const outcomes = args.smoke ? await runSmoke(names, env) : names.map((name) => runFull(name, env));
  if (args.smoke) {
    console.log(`\nsmoke results (tiny sizes, goals not checked; not kept in bench/results): ${resultsDir}`);
    console.log(headlineTable(await headlines(names, resultsDir, false)).join('\n'));
  } else {
    await writeSummary(all);
  }
  for (const o of outcomes) console.log(`bench ${o.name}: ${o.ok ? 'ok' : 'FAILED'} (${o.seconds.toFixed(1)} s)`);
  if (args.report) writeFileSync(args.report, `${JSON.stringify({ smoke: args.smoke, benches: outcomes }, null, 2)}\n`);
  const failed = outcomes.filter((o) => !o.ok).map((o) => o.name);
  if (failed.length) {
    console.error(`benches failed: ${failed.join(', ')}`);
    process.exit(1);
  }
}

type Outcome = { name: string; ok: boolean; seconds: number };

/** One bench at full size, alone on the machine (its timings are its own), its output as it comes. */
function runFull(name: string, env: NodeJS.ProcessEnv): Outcome {
  console.log(`\n=== bench ${name}`);
  const started = Date.now();
  const child = spawnSync(process.execPath, [...process.execArgv, __filename, '--one', name], { stdio: 'inherit', env });
  if (child.error) console.error(`bench ${name}: ${child.error.message}`);
  return { name, ok: child.status === 0, seconds: (Date.now() - started) / 1000 };
}

/**
 * Every bench at its smoke size, one more at a time than there are cores: a smoke run checks no goal, so benches may
 * share the machine, and each waits on its stack part of the time (on 2 cores, 3 at once took 144 s where 2 took 170). Each one's output is printed whole when it ends; one running past SMOKE_TIMEOUT_MS has hung and is killed.
 */
async function runSmoke(names: string[], env: NodeJS.ProcessEnv): Promise<Outcome[]> {
  const queue = [...names];
  const outcomes = new Map<string, Outcome>();
  const runNext = async (): Promise<void> => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      const started = Date.now();
      const { code, output } = await runCaptured(name, env);
      console.log(`\n=== bench ${name} (smoke)\n${output}`);
      outcomes.set(name, { name, ok: code === 0, seconds: (Date.now() - started) / 1000 });
    }
  };
  await Promise.all(Array.from({ length: availableParallelism() + 1 }, runNext));
  return names.map((name) => outcomes.get(name) as Outcome);
}

function runCaptured(name: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...process.execArgv, __filename, '--one', name], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  const timer = setTimeout(() => {
    chunks.push(Buffer.from(`bench ${name}: killed after ${SMOKE_TIMEOUT_MS / 1000} s\n`));
    child.kill('SIGKILL');
  }, SMOKE_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.once('error', (err) => chunks.push(Buffer.from(`bench ${name}: ${err.message}\n`)));
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

const readRecord = (resultsDir: string, name: string): BenchRecord | undefined => {
  const file = join(resultsDir, `${name}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BenchRecord) : undefined;
};

/**
 * Each bench's headline figures. `fromModule`: computed now by the bench's headline() from its stored results, so an
 * older result gets the current figures; otherwise as the run stored them.
 */
async function headlines(
  names: string[],
  resultsDir: string,
  fromModule: boolean,
): Promise<{ name: string; at: string; rows: Headline[] }[]> {
  const out: { name: string; at: string; rows: Headline[] }[] = [];
  for (const name of names) {
    const record = readRecord(resultsDir, name);
    if (!record) continue;
    const rows = fromModule ? ((await load(name)).headline?.(record.results) ?? record.headline ?? []) : (record.headline ?? []);
    out.push({ name, at: record.at, rows });
  }
  return out;
}

const cell = (v: number | null): string => (v === null ? '—' : String(v));
const metCell = (m: boolean | null): string => (m === null ? '—' : m ? 'yes' : '**no**');

function headlineTable(rows: { name: string; at: string; rows: Headline[] }[]): string[] {
  const lines = ['| bench | metric | value | goal | met |', '|---|---|---|---|---|'];
  for (const { name, at, rows: hs } of rows) {
    if (hs.length === 0) lines.push(`| ${name} (${at.slice(0, 10)}) | (no headline) | — | — | — |`);
    for (const [i, h] of hs.entries()) {
      lines.push(
        `| ${i === 0 ? `${name} (${at.slice(0, 10)})` : ''} | ${h.metric} | ${cell(h.value)} | ${h.goal.replace(/\|/g, '\\|')} | ${metCell(h.met)} |`,
      );
    }
  }
  return lines;
}

async function writeSummary(names: string[]): Promise<void> {
  const table = await headlines(names, RESULTS_DIR, true);
  const lines = [
    '# Benchmark results',
    '',
    'Written by `npm run bench`; each section is the latest full-size run of that bench (its date beside its name).',
    "The table: each bench's headline figures beside their goals (`headline()` in each bench file); the raw results follow.",
    '',
    ...headlineTable(table),
    '',
  ];
  for (const name of names) {
    const r = readRecord(RESULTS_DIR, name);
    if (!r) continue;
    lines.push(`## ${name} (${r.at})`, '', '```json', JSON.stringify(r.results, null, 2), '```', '');
  }
  writeFileSync(join(RESULTS_DIR, 'summary.md'), lines.join('\n'));
}

const i = process.argv.indexOf('--one');
if (i > 0) {
  runOne(process.argv[i + 1]!, process.env.BENCH_RESULTS_DIR || RESULTS_DIR).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
