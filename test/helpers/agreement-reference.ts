// The suggested threshold as the agreement first computed it: every candidate threshold, every review counted again at
// each, O(candidates × reviews). The test holds the sweep to its answers; the bench times the two side by side.
import { isCatAt } from '../../lib/domain/image';
import { justAbove, type ReviewedImage, THRESHOLD_STEP } from '../../lib/review/agreement';

export function referenceThreshold(images: readonly ReviewedImage[]): number | null {
  if (images.length === 0) return null;
  const above = images
    .map((i) => (i.catConfidence > 0 ? justAbove(i.catConfidence) : undefined))
    .filter((t): t is number => t !== undefined);
  const candidates = [...new Set([THRESHOLD_STEP, ...above])].sort((a, b) => a - b);
  let best = candidates[0]!;
  let bestAgree = -1;
  for (const t of candidates) {
    const agree = images.reduce((n, i) => n + (isCatAt(i.catConfidence, t) === i.isCat ? 1 : 0), 0);
    if (agree > bestAgree) {
      best = t;
      bestAgree = agree;
    }
  }
  return best;
}
