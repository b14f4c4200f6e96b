// Bounded parallelism for the ingest's records: Powertools' BatchProcessor starts every record of a batch at once.
/** Runs at most `limit` of the functions given to it at once, the others waiting their turn in order. */
export function boundedBy(limit: number): <T>(run: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (run) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await run();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
