// What images cost: the default price, a batch's usage in dollars, and an upload's estimate.
/** Rekognition's first price tier per DetectLabels call, unless ICECAT_PRICE_PER_IMAGE_USD says otherwise. */
export const DEFAULT_PRICE_PER_IMAGE_USD = 0.001;

export interface BatchUsage {
  /** Images classified by a DetectLabels call of their own. */
  detectLabelsCalls: number;
  /** Images classified by copying the client's earlier answer for the same pixels: no call. */
  reused: number;
  /** Uploads of pixels already in the batch: no call. */
  duplicates: number;
  estimatedCostUsd: number;
  /** The calls reuse and duplicates avoided, at the same price. */
  savedUsd: number;
}

/** Dollars without float noise (1e-9 of a dollar is far below any price tier). */
const dollars = (n: number): number => Math.round(n * 1e9) / 1e9;

export function batchUsage(counts: { success: number; reused: number; duplicate: number }, pricePerImage: number): BatchUsage {
  const detectLabelsCalls = Math.max(counts.success - counts.reused, 0);
  return {
    detectLabelsCalls,
    reused: counts.reused,
    duplicates: counts.duplicate,
    estimatedCostUsd: dollars(detectLabelsCalls * pricePerImage),
    savedUsd: dollars((counts.reused + counts.duplicate) * pricePerImage),
  };
}

export interface Estimate {
  /** The files that are images. */
  images: number;
  /** Their distinct fingerprints. */
  distinct: number;
  /** Of those, the ones the client already has answers for (reused, not called). */
  known: number;
  /** distinct − known. */
  newCalls: number;
  estimatedCostUsd: number;
}

export function uploadEstimate(images: number, distinct: number, known: number, pricePerImage: number): Estimate {
  const newCalls = Math.max(distinct - known, 0);
  return { images, distinct, known, newCalls, estimatedCostUsd: dollars(newCalls * pricePerImage) };
}
