// The statistics every bench reports, computed one way.

/** Nearest-rank percentile (p in 0..100) of samples in any order. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

export const round = (n: number, digits = 3): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** Wall-clock milliseconds of one call. */
export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}
