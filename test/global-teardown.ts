// Stops the stacks the global setup started (each removes its own data dir).
import type { ChildProcess } from 'node:child_process';
import { stopStackServers } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const stacks: ChildProcess[] = globalThis.__ICECAT_STACKS__ ?? [];
  globalThis.__ICECAT_STACKS__ = undefined;
  await stopStackServers(stacks);
}
