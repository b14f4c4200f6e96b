// The packaged service for the deploy tests: `osls package` runs once (with no AWS credentials at all) and its output
// is reused while it is newer than every input, so the suites share one build.

import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Metafile } from 'esbuild';
import { ARTIFACT_DIR, metafilePath } from '../../scripts/bundle';

export const ROOT = path.resolve(__dirname, '..', '..');
const TEMPLATE = path.join(ROOT, '.serverless', 'cloudformation-template-update-stack.json');
const STATE = path.join(ROOT, '.serverless', 'serverless-state.json');
const INPUTS = ['serverless.yml', 'resources', 'scripts', 'functions', 'lib', 'package-lock.json'];
const LOCK = path.join(ROOT, '.build', 'package.lock');

export interface CfnResource {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string | string[];
}

export interface Template {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, unknown>;
  Parameters?: Record<string, Record<string, unknown>>;
  Conditions?: Record<string, unknown>;
}

export interface Packaged {
  template: Template;
  /** The service configuration as osls resolved it (custom settings included). */
  service: { custom: Record<string, unknown>; provider: Record<string, unknown> };
  artifact(functionName: string): string;
  metafile(functionName: string): Metafile;
}

function newestMtime(target: string): number {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(target).map((entry) => newestMtime(path.join(target, entry))));
}

const artifactPath = (name: string) => path.join(ROOT, ARTIFACT_DIR, `${name}.zip`);

function isFresh(functionNames: string[]): boolean {
  if (!existsSync(TEMPLATE)) return false;
  const built = Math.min(
    statSync(TEMPLATE).mtimeMs,
    ...functionNames.map((n) => (existsSync(artifactPath(n)) ? statSync(artifactPath(n)).mtimeMs : 0)),
  );
  return built > Math.max(...INPUTS.map((i) => newestMtime(path.join(ROOT, i))));
}

/** The environment minus anything that could give osls AWS credentials. */
export function credentialFreeEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('AWS_')) clean[k] = v;
  const nowhere = path.join(os.tmpdir(), 'icecat-no-aws-config');
  return { ...clean, AWS_SHARED_CREDENTIALS_FILE: nowhere, AWS_CONFIG_FILE: nowhere };
}

async function withLock<T>(fn: () => T): Promise<T> {
  mkdirSync(path.dirname(LOCK), { recursive: true });
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // A lock older than any packaging run was left by a killed process.
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > 5 * 60_000) rmdirSync(LOCK);
      if (Date.now() > deadline) throw new Error(`waited 5 minutes for ${LOCK}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return fn();
  } finally {
    rmdirSync(LOCK);
  }
}

/** Runs `osls package` exactly as `npm run package` does, offline and without credentials. */
export function runPackage(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js'), 'package'], {
    cwd: ROOT,
    env: credentialFreeEnv(),
    stdio: 'pipe',
  });
}

export async function ensurePackaged(functionNames: string[] = ['ingest', 'api', 'batches']): Promise<Packaged> {
  await withLock(() => {
    if (!isFresh(functionNames)) runPackage();
  });
  const state = JSON.parse(readFileSync(STATE, 'utf8')) as { service: Packaged['service'] };
  return {
    template: JSON.parse(readFileSync(TEMPLATE, 'utf8')) as Template,
    service: state.service,
    artifact: artifactPath,
    metafile: (name) => JSON.parse(readFileSync(metafilePath(path.join(ROOT, ARTIFACT_DIR), name), 'utf8')) as Metafile,
  };
}

/** Runs in an unzipped artifact: its handler on the event from stdin; reports the answer and the native modules loaded. */
const RUNNER = (handlerFile: string) => `
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', async () => {
  const { handler } = require(${JSON.stringify(handlerFile)});
  const response = await handler(JSON.parse(input));
  const nativeFiles = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
  process.stdout.write(JSON.stringify({ response, nativeFiles }));
});
`;

export interface ArtifactRun<R> {
  response: R;
  /** Native modules the handler loaded (sharp's binary, for the ingest). */
  nativeFiles: string[];
}

/**
 * A function's handler, from the folder its artifact was unzipped into, run on `event` with plain `node`. Only the
 * given environment and a PATH reach it: nothing of the test process (NODE_PATH, NODE_OPTIONS) leaks in.
 */
export async function runUnzippedHandler<R>(
  dir: string,
  handlerFile: string,
  event: unknown,
  env: Record<string, string>,
): Promise<ArtifactRun<R>> {
  const child = execFile(process.execPath, ['-e', RUNNER(handlerFile)], {
    cwd: dir,
    env: { ...env, PATH: process.env.PATH ?? '', POWERTOOLS_LOG_LEVEL: 'ERROR' },
    maxBuffer: 16 * 1024 * 1024,
  });
  child.stdin?.end(JSON.stringify(event));
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${handlerFile} in ${dir} exited with ${code}:\n${stderr}`);
  // The handler's metrics (EMF lines) share stdout: the run's answer is its last line.
  return JSON.parse(stdout.trim().split('\n').pop() ?? '') as ArtifactRun<R>;
}

/**
 * The queues and bus a deployed function is given (each required at its cold start), for a packaged handler run
 * against the local stack. Nothing these tests run sends to them; an SQS call would stay on loopback, on a closed port.
 */
export const DEPLOYED_WIRING: Readonly<Record<string, string>> = {
  AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:9',
  INGEST_QUEUE_URL: 'http://127.0.0.1:9/000000000000/icecat-ingest',
  CALLBACK_QUEUE_URL: 'http://127.0.0.1:9/000000000000/icecat-callbacks',
  ERASE_QUEUE_URL: 'http://127.0.0.1:9/000000000000/icecat-erase',
  EVENT_BUS_NAME: 'default',
};
