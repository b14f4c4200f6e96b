// The stack the pipeline and fairness benches measure: a local stack in a process of its own on a fresh data dir,
// stopped (SIGTERM, then SIGKILL after 20 s) and removed afterwards, its log's tail printed when the bench fails; and
// the machine's facts a wall-clock figure is read beside.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type StackProcess, startStackProcess } from '../test/helpers/stack-process';
import { round } from './stats';

/**
 * The detector workers a bench's stack starts: ICECAT_DETECTOR_WORKERS as the bench was run with (a smoke run sets 1),
 * else one per core, as `npm start` would. Said explicitly, since the trials' process helper starts one unless told.
 */
export const benchStackEnv = (env: Record<string, string> = {}): Record<string, string> => ({
  ICECAT_DETECTOR_WORKERS: process.env.ICECAT_DETECTOR_WORKERS ?? String(availableParallelism()),
  ...env,
});

async function stopStack(stack: StackProcess): Promise<void> {
  stack.signal('SIGTERM');
  const killed = setTimeout(() => stack.signal('SIGKILL'), 20_000);
  await stack.exited;
  clearTimeout(killed);
  stack.s3.destroy();
}

/** Runs `measure` against a stack started for it (with `env` added to the stack's environment). */
export async function onStack<T>(
  name: string,
  env: Record<string, string>,
  measure: (stack: StackProcess, dataDir: string) => Promise<T>,
): Promise<T> {
  const work = mkdtempSync(join(tmpdir(), `icecat-bench-${name}-`));
  const dataDir = join(work, 'data');
  const stack = await startStackProcess(dataDir, join(work, 'stack.log'), benchStackEnv(env));
  try {
    return await measure(stack, dataDir);
  } catch (err) {
    console.error(stack.log().slice(-3000));
    throw err;
  } finally {
    await stopStack(stack);
    rmSync(work, { recursive: true, force: true });
  }
}

/** The cores and the load average before (given) and now. */
export const machineFacts = (loadBefore: number) => ({
  cores: availableParallelism(),
  loadAverage1mBefore: round(loadBefore, 2),
  loadAverage1mAfter: round(loadavg()[0]!, 2),
});

/** The local API as a bench calls it: its URL and a client's key. */
export interface Api {
  url: string;
  key: string;
}

/** One JSON call of the local API; anything but a 2xx throws (a bench that measured nothing went wrong). */
export async function call<T>(api: Api, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}
