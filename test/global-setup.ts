// Starts the local stacks for the integration and browser tests: one per jest worker, each in a process of its own
// (test/stack-server.ts) on free ports and a fresh data dir, so that two test files never share a stack. A test
// that counts DetectLabels calls or injects a detector fault has its worker's stack to itself.
// Each stack's environment is handed to the workers in ICECAT_TEST_STACKS; test/stack-env.ts applies the one of
// the worker a test file runs in.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** Starts the line on which a stack server gives its environment (anything else it prints is passed on). */
export const READY = 'icecat-test-stack-up';

declare global {
  var __ICECAT_STACKS__: ChildProcess[] | undefined;
}

/**
 * Test-run settings the handlers read at import: a 10 MiB upload cap keeps the too-large case cheap, and three
 * DetectLabels attempts keep the throttling-outlasts-retries case short.
 */
const TEST_SETTINGS: Record<string, string> = {
  MAX_UPLOAD_BYTES: String(10 * 1024 * 1024),
  REKOGNITION_MAX_ATTEMPTS: '3',
  // Small enough that a seeded batch of a few dozen images is stored in S3 and answered with a redirect.
  EXPORT_INLINE_MAX_BYTES: '4096',
  // Tests of other behaviours share the demo client across files: not throttled by the default 50 requests/s. The
  // rate limit's and quota's own tests make clients with limits of their own, read afresh (no cache) each time.
  CLIENT_DEFAULT_RATE: '1000',
  CLIENT_LIMITS_CACHE_MS: '0',
  // Tests' callback receivers listen on ports the system hands out; the stack takes its own ports out of the list.
  CALLBACK_LOOPBACK_PORTS: '1024-65535',
};

const ROOT = path.join(__dirname, '..');

/** Starts test/stack-server.ts (`env` beside this process's) and resolves to it and its environment once it is up. */
function startStackServer(env: Record<string, string> = {}): Promise<{ child: ChildProcess; env: Record<string, string> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'stack-server.ts')], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    child.once('exit', (code) => reject(new Error(`the test stack exited with ${code} before it was up`)));
    lines.on('line', (line) => {
      if (!line.startsWith(`${READY} `)) return void process.stdout.write(`${line}\n`);
      child.removeAllListeners('exit');
      resolve({ child, env: (JSON.parse(line.slice(READY.length + 1)) as { env: Record<string, string> }).env });
    });
  });
}

/**
 * One stack server per worker, each with `env`; `keep` holds them (stopped by the teardown). Resolves to their
 * environments once all are up; fails (leaving the started ones in `keep`) if one does not start.
 */
export async function startStackServers(
  count: number,
  keep: ChildProcess[],
  env: Record<string, string> = {},
): Promise<Record<string, string>[]> {
  for (const [name, value] of Object.entries(TEST_SETTINGS)) process.env[name] ??= value;
  const started = await Promise.allSettled(Array.from({ length: Math.max(1, count) }, () => startStackServer(env)));
  for (const result of started) if (result.status === 'fulfilled') keep.push(result.value.child);
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return started.map((result) => (result as PromiseFulfilledResult<{ env: Record<string, string> }>).value.env);
}

/** Stops the stack servers in `stacks` (each removes its own data dir). */
export async function stopStackServers(stacks: ChildProcess[]): Promise<void> {
  await Promise.all(
    stacks.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  // The integration and browser projects both name this setup: the stacks are started once per run.
  if (globalThis.__ICECAT_STACKS__) return;
  globalThis.__ICECAT_STACKS__ = [];
  const envs = await startStackServers(globalConfig.maxWorkers, globalThis.__ICECAT_STACKS__);
  process.env.ICECAT_TEST_STACKS = JSON.stringify(envs);
  // A run in band (one file) uses the first stack from the process itself.
  Object.assign(process.env, envs[0]);
}
