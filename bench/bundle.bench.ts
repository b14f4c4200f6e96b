// Bundle size and cold import time of each function, built as `npm run package` builds it (scripts/bundle.ts), for
// both Lambda architectures (the JavaScript is the same; the zips differ by their native binaries): the artifact for
// this machine's architecture is unzipped alone and its handler module required by a fresh `node` process, several
// times (an arm64 binary cannot load on x86-64, and the other way round).
// Goal for each API function (lib/api/functions.ts): ≤ 500 KB of JavaScript and ≤ 150 ms to import.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { API_FUNCTIONS } from '../lib/api/functions';
import { bundleFunction, handlerPaths, type LambdaArchitecture } from '../scripts/bundle';
import { nodeTargetFor } from '../scripts/bundle-plugin';
import { extractZip } from '../scripts/zip';
import { headline as figure, type Headline, isSmoke, median, pick, round as roundTo, sized } from './stats';

const ROOT = path.resolve(__dirname, '..');
const RUNS = sized(7, 1);
const GOAL = { apiBundleKB: 500, apiColdImportMs: 150 };

/** Functions, runtime and architecture as serverless.yml declares them. */
function serviceFunctions(): { runtime: string; architecture: LambdaArchitecture; handlers: Record<string, string> } {
  const yml = readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8');
  const runtime = /^ {2}runtime: (\S+)/m.exec(yml)?.[1];
  const architecture = /^ {2}architecture: (\S+)/m.exec(yml)?.[1] as LambdaArchitecture | undefined;
  const functions = yml.slice(yml.indexOf('\nfunctions:'));
  const handlers = Object.fromEntries([...functions.matchAll(/^ {2}(\w+):\n {4}handler: (\S+)/gm)].map((m) => [m[1], m[2]]));
  if (!runtime || !architecture || Object.keys(handlers).length === 0) throw new Error('cannot read serverless.yml');
  return { runtime, architecture, handlers: handlers as Record<string, string> };
}

// What the handlers need at import (configuration fails fast), with values that reach no service.
const IMPORT_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  TABLE_NAME: 'IceCatWrangler-bench',
  BUCKET_NAME: 'icecat-bench',
  CURSOR_SECRET: 'b'.repeat(64),
  CALLBACK_SIGNING_KEY: 'c'.repeat(64),
  INGEST_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/icecat-bench-ingest',
  ERASE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/icecat-bench-erase',
  CALLBACK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/icecat-bench-callbacks',
  EVENT_BUS_NAME: 'default',
};

/** NODE_OPTIONS as serverless.yml gives every function (e.g. --enable-source-maps, which loads the bundle's map). */
function lambdaNodeOptions(): string {
  const yml = readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8');
  return /^ {4}NODE_OPTIONS: (.+)$/m.exec(yml)?.[1]?.trim() ?? '';
}

/** Milliseconds a fresh node process, started as Lambda starts it, spends in require() of the handler module. */
function coldImportMs(dir: string, modulePath: string): number {
  const script =
    `const t=process.hrtime.bigint();require(${JSON.stringify(modulePath)});` +
    'process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6))';
  const out = execFileSync(process.execPath, ['-e', script], {
    cwd: dir,
    env: { ...IMPORT_ENV, PATH: process.env.PATH ?? '', NODE_OPTIONS: lambdaNodeOptions() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return Number(out.toString());
}

const round = (x: number, digits = 1) => roundTo(x, digits);

export default async function run(): Promise<Record<string, unknown>> {
  const { runtime, architecture, handlers } = serviceFunctions();
  const outDir = mkdtempSync(path.join(tmpdir(), 'icecat-bundle-bench-'));
  const host: LambdaArchitecture = process.arch === 'arm64' ? 'arm64' : 'x86_64';
  const other: LambdaArchitecture = host === 'arm64' ? 'x86_64' : 'arm64';
  const results: Record<string, unknown> = { runtime, architecture, coldImportArchitecture: host, runs: RUNS };
  const apiGoal: Record<string, { bundleRatio: number; coldImportRatio: number; met: boolean }> = {};
  try {
    for (const [i, [name, handler]] of Object.entries(handlers).entries()) {
      const nodeTarget = nodeTargetFor(runtime);
      const built = await bundleFunction({
        name,
        handler,
        architecture: host,
        nodeTarget,
        projectDir: ROOT,
        outDir: path.join(outDir, host),
      });
      // A smoke run builds the other architecture's zip for the first function only (the same build, another binary).
      const twin =
        isSmoke() && i > 0
          ? undefined
          : await bundleFunction({ name, handler, architecture: other, nodeTarget, projectDir: ROOT, outDir: path.join(outDir, other) });
      const dir = path.join(outDir, `${name}-unzipped`);
      await extractZip(built.artifact, dir);
      const modulePath = `./${handlerPaths(handler).output}`;
      if (!isSmoke()) coldImportMs(dir, modulePath); // the first run also warms the OS file cache
      const times = Array.from({ length: RUNS }, () => coldImportMs(dir, modulePath));
      if (twin && twin.bundleBytes !== built.bundleBytes) throw new Error(`${name}: the ${host} and ${other} bundles differ in size`);
      const artifactMB = {
        [host]: round(built.artifactBytes / 1024 / 1024, 2),
        ...(twin ? { [other]: round(twin.artifactBytes / 1024 / 1024, 2) } : {}),
      };
      results[name] = {
        bundleKB: round(built.bundleBytes / 1024),
        // The zip as deployed (serverless.yml's architecture), and both.
        artifactMB: artifactMB[architecture],
        artifactMBByArchitecture: artifactMB,
        nativePackages: built.nativePackages,
        coldImportMs: { median: round(median(times)), min: round(Math.min(...times)), max: round(Math.max(...times)) },
      };
      if ((API_FUNCTIONS as readonly string[]).includes(name)) {
        apiGoal[name] = {
          bundleRatio: round(built.bundleBytes / 1024 / GOAL.apiBundleKB, 2),
          coldImportRatio: round(median(times) / GOAL.apiColdImportMs, 2),
          met: built.bundleBytes / 1024 <= GOAL.apiBundleKB && median(times) <= GOAL.apiColdImportMs,
        };
      }
    }
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
  results.apiGoal = { ...GOAL, ...apiGoal, met: Object.values(apiGoal).every((g) => g.met) };
  return results;
}

export function headline(r: Record<string, unknown>): Headline[] {
  const apiGoal = (pick(r, 'apiGoal') ?? {}) as Record<string, unknown>;
  const api = Object.keys(apiGoal).filter((k) => typeof apiGoal[k] === 'object');
  const most = (of: (name: string) => unknown) => {
    const values = api.map(of).filter((v): v is number => typeof v === 'number');
    return values.length ? Math.max(...values) : undefined;
  };
  return [
    figure(
      'largest API function bundle, KB',
      most((n) => pick(r, n, 'bundleKB')),
      '<= 500',
    ),
    figure(
      'slowest API function cold import, median ms',
      most((n) => pick(r, n, 'coldImportMs', 'median')),
      '<= 150',
    ),
  ];
}
