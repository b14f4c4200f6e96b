// The local detector's confidence scale. The model's class scores (0..1, heatmap peaks) are not
// Rekognition's percentages: a clear cat photo scores 0.52 where Rekognition says ~99. So each score is
// mapped, monotonically, onto Rekognition's scale before it becomes a Confidence, and the local stack
// uses AWS's thresholds: CAT_MIN_CONFIDENCE 80, REKOGNITION_MIN_CONFIDENCE 20. A threshold a client sets
// with :reclassify means the same on both. The knots were fitted on the fixtures and scikit-image's
// other sample photos (docs/design.md §4, "The offline detector's confidence scale").

/** A knot of the mapping: a model score and the Confidence it becomes. */
export interface ScaleKnot {
  score: number;
  confidence: number;
}

/**
 * The mapping's knots, linear between them:
 * - 0.15 -> 20: the label floor, the one the local stack used (as 15) before this scale, so the same
 *   labels are recorded; REKOGNITION_MIN_CONFIDENCE is 20 on AWS.
 * - 0.20 -> 80: the cat boundary, the local one before (as 20), in the gap between the best Cat on a
 *   non-cat (0.143, on scikit-image's 32 non-cat sample photos) and the weakest cat kept (the cat photo
 *   greyscale, 0.249); Rekognition's cat threshold is 80.
 * - 0.50 -> 97: a clear cat photo (0.50-0.59) lands in the high 90s, where Rekognition puts one.
 */
export const SCALE_KNOTS: readonly ScaleKnot[] = [
  { score: 0, confidence: 0 },
  { score: 0.15, confidence: 20 },
  { score: 0.2, confidence: 80 },
  { score: 0.5, confidence: 97 },
  { score: 1, confidence: 100 },
];

/** A model score (0..1, clamped) on Rekognition's scale (0..100): strictly increasing, 0 -> 0, 1 -> 100. */
export function scoreToConfidence(score: number): number {
  const s = Math.min(1, Math.max(0, Number.isFinite(score) ? score : 0));
  for (let i = 1; i < SCALE_KNOTS.length; i++) {
    const lo = SCALE_KNOTS[i - 1]!;
    const hi = SCALE_KNOTS[i]!;
    if (s <= hi.score) return lo.confidence + ((s - lo.score) / (hi.score - lo.score)) * (hi.confidence - lo.confidence);
  }
  return 100;
}
