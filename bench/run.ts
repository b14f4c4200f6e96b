// `npm run bench [name ...]`: runs each bench/<name>.bench.ts in its own process (so memory and cold-start numbers
// are its own) and writes bench/results/<name>.json plus bench/results/summary.md.
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync, readFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = __dirname;
const resultsDir = join(dir, 'results');

async function runOne(name: string): Promise<void> {
  const mod = (await import(join(dir, `${name}.bench.ts`))) as { default: () => Promise<Record<string, unknown>> };
  const started = Date.now();
  const results = await mod.default();
  const record = { bench: name, at: new Date(started).toISOString(), seconds: (Date.now() - started) / 1000, results };
  writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  console.log(JSON.stringify(record, null, 2));
}

function main(): void {
  mkdirSync(resultsDir, { recursive: true });
  const all = readdirSync(dir).filter((f) => f.endsWith('.bench.ts')).map((f) => f.replace(/\.bench\.ts$/, ''));
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const names = wanted.length ? wanted : all;
  const failed: string[] = [];
  for (const name of names) {
    if (!all.includes(name)) throw new Error(`no bench named ${name}; have: ${all.join(', ')}`);
    console.log(`\n=== bench ${name}`);
    const child = spawnSync(process.execPath, [...process.execArgv, __filename, '--one', name], { stdio: 'inherit' });
    if (child.status !== 0) failed.push(name);
  }
  writeSummary(all);
  if (failed.length) {
    console.error(`benches failed: ${failed.join(', ')}`);
    process.exit(1);
  }
}

function writeSummary(names: string[]): void {
  const lines = ['# Benchmark results', '', 'Written by `npm run bench`; each section is the latest run of that bench.', ''];
  for (const name of names) {
    const file = join(resultsDir, `${name}.json`);
    if (!existsSync(file)) continue;
    const r = JSON.parse(readFileSync(file, 'utf8')) as { at: string; results: Record<string, unknown> };
    lines.push(`## ${name} (${r.at})`, '', '```json', JSON.stringify(r.results, null, 2), '```', '');
  }
  writeFileSync(join(resultsDir, 'summary.md'), lines.join('\n'));
}

const i = process.argv.indexOf('--one');
if (i > 0) {
  runOne(process.argv[i + 1]!).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
} else {
  main();
}
