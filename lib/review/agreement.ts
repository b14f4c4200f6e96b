// How far the machine agrees with the people who reviewed a batch, and the threshold that would have agreed with them
// most (docs/design.md §10). Pure: the reviewed images in, the figures out.
import { isCatAt } from '../domain';

export interface ReviewedImage {
  /** The image's best Cat confidence (0 when none). */
  catConfidence: number;
  /** The person's verdict. */
  isCat: boolean;
  /** The machine's verdict at the batch's threshold. */
  machineIsCat: boolean;
}

export interface Agreement {
  reviewed: number;
  /** Reviews that say what the machine said. */
  agree: number;
  /** Of the machine's cats, the share a person called a cat; null when the machine called none. */
  precision: number | null;
  /** Of the people's cats, the share the machine called a cat; null when no person called one. */
  recall: number | null;
  /**
   * The threshold at which the machine's verdicts would have agreed with the most reviews (ties: the lowest), in
   * hundredths of a percent, ready for POST …:reclassify; null without reviews.
   */
  suggestedCatMinConfidence: number | null;
}

const ratio = (n: number, of: number): number | null => (of === 0 ? null : Math.round((n / of) * 10_000) / 10_000);

/** How many reviews the machine's verdicts at `threshold` agree with. */
export const agreementAt = (images: readonly ReviewedImage[], threshold: number): number =>
  images.reduce((n, i) => n + (isCatAt(i.catConfidence, threshold) === i.isCat ? 1 : 0), 0);

/** Thresholds are suggested in hundredths of a percent: the finest step a person reads and types. */
export const THRESHOLD_STEP = 0.01;
const onGrid = (t: number): number => Math.round(t / THRESHOLD_STEP) * THRESHOLD_STEP;
const toHundredths = (t: number): number => Math.round(t * 100) / 100;

/** The lowest threshold on the grid that no longer calls an image of this confidence a cat (none above 100). */
export function justAbove(confidence: number): number | undefined {
  let t = toHundredths(onGrid(confidence));
  while (t <= confidence) t = toHundredths(t + THRESHOLD_STEP);
  return t <= 100 ? t : undefined;
}

/**
 * The threshold (0.01–100, in hundredths) with the most agreement, the lowest of equals; null without reviews.
 * Agreement changes only where the threshold passes a reviewed confidence, so each stretch of equal agreement begins
 * at the lowest threshold (0.01) or just above a reviewed confidence: those are the candidates, and the lowest of
 * equals is always one of them.
 */
export function suggestThreshold(images: readonly ReviewedImage[]): number | null {
  if (images.length === 0) return null;
  const above = images.map((i) => (i.catConfidence > 0 ? justAbove(i.catConfidence) : undefined)).filter((t): t is number => t !== undefined);
  const candidates = [...new Set([THRESHOLD_STEP, ...above])].sort((a, b) => a - b);
  let best = candidates[0]!;
  let bestAgree = -1;
  for (const t of candidates) {
    const agree = agreementAt(images, t);
    if (agree > bestAgree) {
      best = t;
      bestAgree = agree;
    }
  }
  return best;
}

export function agreementOf(images: readonly ReviewedImage[]): Agreement {
  const agree = images.filter((i) => i.isCat === i.machineIsCat).length;
  const bothCats = images.filter((i) => i.isCat && i.machineIsCat).length;
  return {
    reviewed: images.length,
    agree,
    precision: ratio(bothCats, images.filter((i) => i.machineIsCat).length),
    recall: ratio(bothCats, images.filter((i) => i.isCat).length),
    suggestedCatMinConfidence: suggestThreshold(images),
  };
}
