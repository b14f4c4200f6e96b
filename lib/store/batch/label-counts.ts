// The summary's `labels` (docs/design.md §12): the batch's most frequent labels with how many distinct images carry
// each at the batch's cat threshold, counted from its records. A record is one distinct image (duplicates are counted
// on it, not recorded), a reused image is a record with its labels, a re-threshold changes the threshold the count is
// made at, and an erased batch has no records: so the count is exact under each of them by construction.
import type { LabelCount, ModelCount } from '../../domain/detection';
import { modelOfRecord, modelText } from '../../model-version';
import { type BatchPagesOptions, batchImagePages } from './pages';

/** Labels a summary names. */
export const TOP_LABELS = 20;

/** Of each record only its key, status and labels, 2,000 items a Query (~300 bytes each: far below 1 MB a page). */
export const LABEL_COUNT_READ: BatchPagesOptions = {
  // The model too (a record written before records kept it: its boxes' model string and its time).
  attributes: ['fprint', 'status', 'labels', 'model', 'detections', 'classifiedAt'],
  pageSize: 2000,
};

/** Ranks counts: most images first, then by name. */
export function topLabelCounts(counts: ReadonlyMap<string, number>, top = TOP_LABELS): LabelCount[] {
  return [...counts]
    .map(([name, images]) => ({ name, images }))
    .sort((a, b) => b.images - a.images || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, top);
}

/** Adds one classified image's labels at or above the threshold to the counts (each name once per image). */
export function countLabels(counts: Map<string, number>, labels: readonly { name: string; confidence: number }[], threshold: number): void {
  const seen = new Set<string>();
  for (const l of labels) {
    if (l.confidence < threshold || seen.has(l.name)) continue;
    seen.add(l.name);
    counts.set(l.name, (counts.get(l.name) ?? 0) + 1);
  }
}

/** The batch's top labels at `threshold` and the models that answered its images, from its records a page at a time. */
export async function batchLabelCounts(
  ctx: Parameters<typeof batchImagePages>[0],
  clientId: string,
  batchId: string,
  threshold: number,
): Promise<{ labels: LabelCount[]; models: ModelCount[] }> {
  const counts = new Map<string, number>();
  const models = new Map<string, ModelCount>();
  for await (const page of batchImagePages(ctx, clientId, batchId, LABEL_COUNT_READ)) {
    for (const image of page) {
      if (image.status !== 'success') continue;
      countLabels(counts, image.labels ?? [], threshold);
      const model = modelOfRecord(image);
      const key = modelText(model);
      const seen = models.get(key) ?? { name: model.name, version: model.version, images: 0 };
      seen.images += 1;
      models.set(key, seen);
    }
  }
  return {
    labels: topLabelCounts(counts),
    models: [...models.values()].sort((a, b) => b.images - a.images || (modelText(a) < modelText(b) ? -1 : 1)),
  };
}
