import type { Image, Query } from '../../api';

export interface Filter {
  label: string;
  /** What the API filters by. */
  query: Query;
  /** What the page filters by on top, where the API has no such filter. */
  keep?: (image: Image) => boolean;
  /** Used when the API refuses `query` (an API without the `cat` filter on batch images). */
  fallback?: { query: Query; keep: (image: Image) => boolean };
}

export const FILTERS: Record<string, Filter> = {
  all: { label: 'All', query: {} },
  cats: { label: 'Cats', query: { cat: 'true' }, fallback: { query: { status: 'success' }, keep: (i) => i.isCat === true } },
  'not-cats': { label: 'Not cats', query: { cat: 'false' }, fallback: { query: { status: 'success' }, keep: (i) => i.isCat === false } },
  failed: { label: 'Failed', query: { status: 'fail' } },
  duplicates: { label: 'Duplicates', query: {}, keep: (i) => i.duplicates > 0 },
  // The images with a capture time, oldest first (the API's batch-captured index).
  captured: { label: 'By capture time', query: { order: 'captured' } },
};

/** A label filter's name in the route: `label:<threshold>:<label>`, the threshold the batch's label counts use. */
export const labelFilterName = (label: string, minConfidence: number | null | undefined): string => `label:${minConfidence ?? 0}:${label}`;

/** The filter a route names: one of FILTERS, or a label at a threshold (`label:80:Dog`); undefined for any other name. */
export function filterOf(name: string): Filter | undefined {
  if (FILTERS[name]) return FILTERS[name];
  const m = /^label:(\d{1,3}(?:\.\d+)?):(.{1,100})$/.exec(name);
  if (!m) return undefined;
  return { label: m[2]!, query: { label: m[2]!, minConfidence: m[1]! } };
}

/** The images by capture time (`?filter=captured`): shown after the filters and the near-duplicates. */
export const CAPTURED = 'captured';

/** The view of near-duplicate groups, beside the filters (`?filter=near-duplicates`). */
export const NEAR = 'near-duplicates';
