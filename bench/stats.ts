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

/** `npm run bench -- --smoke` (or BENCH_SMOKE=1): tiny sizes, seconds per bench, no goal checked (bench/run.ts). */
export const isSmoke = (): boolean => process.env.BENCH_SMOKE === '1';

/** The full-size value, or the smoke one in a smoke run. */
export const sized = <T>(full: T, smoke: T): T => (isSmoke() ? smoke : full);

/** One headline figure of a bench beside its goal, as bench/results/summary.md tabulates it. */
export interface Headline {
  metric: string;
  /** null: the result holds no such figure (an older result's shape, or a run that did not measure it). */
  value: number | null;
  /** '<= 1.10', '>= 0.8', or '—' for a figure reported without a goal. */
  goal: string;
  /** null when there is no goal or no value. */
  met: boolean | null;
}

/** A headline figure; `met` is computed from a goal of the form '<= x', '< x', '>= x' or '> x' (then any words). */
export function headline(metric: string, value: unknown, goal = '—'): Headline {
  const v = typeof value === 'number' && Number.isFinite(value) ? value : null;
  const m = /^(<=|>=|<|>)\s*(-?[\d.]+)/.exec(goal);
  if (v === null || !m) return { metric, value: v, goal, met: null };
  const bound = Number(m[2]);
  const met = m[1] === '<=' ? v <= bound : m[1] === '>=' ? v >= bound : m[1] === '<' ? v < bound : v > bound;
  return { metric, value: v, goal, met };
}

/** Reads a nested field of a result that may be of an older shape: undefined when any step is missing. */
export function pick(from: unknown, ...path: (string | number)[]): unknown {
  let at: unknown = from;
  for (const step of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[step];
  }
  return at;
}
