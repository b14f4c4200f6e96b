// A sweep the local stack runs at start and then every interval, one run at a time: a run asked for while another
// is going waits for it, and stop() lets the one running finish. The reconciliation and expiry sweeps share it.

export interface PeriodicSweep<T> {
  /** Runs a sweep now (after the one running, if any) and resolves with its result. */
  sweep(): Promise<T>;
  stop(): Promise<void>;
}

export function startPeriodicSweep<T>(
  runOnce: () => Promise<T>,
  opts: { intervalMs: number; log: (line: string) => void; name: string; initial: T },
): PeriodicSweep<T> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<T> = Promise.resolve(opts.initial);

  const sweep = (): Promise<T> => {
    running = running.catch(() => opts.initial).then(runOnce);
    return running;
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      sweep()
        .catch((err: unknown) => opts.log(`[${opts.name}] sweep failed: ${String(err)}`))
        .finally(schedule);
    }, opts.intervalMs);
  };

  sweep()
    // E.g. a data dir whose table predates an index the sweep reads (the stack warned at start).
    .catch((err: unknown) => opts.log(`[${opts.name}] sweep at start failed: ${String(err)}`))
    .finally(schedule);

  return {
    sweep,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}
