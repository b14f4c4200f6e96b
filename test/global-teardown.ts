// Stops the stacks the global setup started (each removes its own data dir).
import type { ChildProcess } from 'node:child_process';

export default async function globalTeardown(): Promise<void> {
  const stacks: ChildProcess[] = globalThis.__ICECAT_STACKS__ ?? [];
  globalThis.__ICECAT_STACKS__ = undefined;
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
