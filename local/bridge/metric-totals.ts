// Totals of the CloudWatch EMF documents the in-process ingest writes (lib/ingest/metrics.ts), for the bridge's status
// page: what CloudWatch would sum per metric and dimension set, counted since the stack started.

/** One metric under one set of dimension values. */
export interface MetricTotal {
  metric: string;
  unit: string;
  dimensions: Record<string, string>;
  /** How many values were recorded. */
  count: number;
  sum: number;
  /** For timings (any unit but Count): over the latest PERCENTILE_WINDOW values for p50/p95. */
  avg?: number;
  p50?: number;
  p95?: number;
  max?: number;
}

export interface MetricTotalsSnapshot {
  /** EMF documents seen. */
  documents: number;
  totals: MetricTotal[];
}

/** Percentiles come from the latest values only: a long-running stack keeps bounded memory. */
export const PERCENTILE_WINDOW = 10_000;

interface Accumulator {
  metric: string;
  unit: string;
  dimensions: Record<string, string>;
  count: number;
  sum: number;
  max: number;
  recent: number[];
}

interface EmfDirective {
  Dimensions?: string[][];
  Metrics?: { Name: string; Unit?: string }[];
}

const round = (x: number) => Math.round(x * 100) / 100;

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export class MetricTotals {
  private documents = 0;
  private readonly byKey = new Map<string, Accumulator>();

  /** Adds one EMF document: each metric of each directive, under each of its dimension sets, as CloudWatch reads it. */
  add(document: unknown): void {
    if (typeof document !== 'object' || document === null) return;
    const doc = document as Record<string, unknown>;
    const directives = (doc._aws as { CloudWatchMetrics?: EmfDirective[] } | undefined)?.CloudWatchMetrics;
    if (!Array.isArray(directives)) return;
    this.documents += 1;
    for (const directive of directives) {
      const dimensionSets = directive.Dimensions?.length ? directive.Dimensions : [[]];
      for (const { Name: metric, Unit: unit = 'None' } of directive.Metrics ?? []) {
        const raw = doc[metric];
        const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is number => typeof v === 'number');
        for (const names of dimensionSets) {
          const dimensions = Object.fromEntries(names.map((name) => [name, String(doc[name])]));
          this.record(metric, unit, dimensions, values);
        }
      }
    }
  }

  private record(metric: string, unit: string, dimensions: Record<string, string>, values: number[]): void {
    const key = JSON.stringify([metric, unit, Object.entries(dimensions).sort(([a], [b]) => a.localeCompare(b))]);
    let acc = this.byKey.get(key);
    if (!acc) {
      acc = { metric, unit, dimensions, count: 0, sum: 0, max: -Infinity, recent: [] };
      this.byKey.set(key, acc);
    }
    for (const value of values) {
      acc.count += 1;
      acc.sum += value;
      acc.max = Math.max(acc.max, value);
      acc.recent.push(value);
    }
    if (acc.recent.length > PERCENTILE_WINDOW) acc.recent.splice(0, acc.recent.length - PERCENTILE_WINDOW);
  }

  snapshot(): MetricTotalsSnapshot {
    const totals = [...this.byKey.values()]
      .map((acc): MetricTotal => {
        const total: MetricTotal = {
          metric: acc.metric,
          unit: acc.unit,
          dimensions: acc.dimensions,
          count: acc.count,
          sum: round(acc.sum),
        };
        if (acc.unit === 'Count' || acc.count === 0) return total;
        const sorted = [...acc.recent].sort((a, b) => a - b);
        return { ...total, avg: round(acc.sum / acc.count), p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), max: acc.max };
      })
      .sort((a, b) => a.metric.localeCompare(b.metric) || dimensionLabel(a).localeCompare(dimensionLabel(b)));
    return { documents: this.documents, totals };
  }
}

/** `Outcome=fail ErrorCode=UNSUPPORTED_FORMAT`, without the service dimension every document carries. */
export const dimensionLabel = (total: MetricTotal): string =>
  Object.entries(total.dimensions)
    .filter(([name]) => name !== 'service')
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
