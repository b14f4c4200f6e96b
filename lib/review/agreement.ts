// How far the machine agrees with the people who reviewed a batch, and the threshold that would have agreed with them
// most (docs/design.md §10). Pure: the reviewed images in, the figures out.
import { isCatAt } from '../domain/image';

export interface ReviewedImage {
  /** The image's best Cat confidence (0 when none). */
  catConfidence: number;
  /** The person's verdict. */
  isCat: boolean;
  /** The machine's verdict at the batch's threshold. */
  machineIsCat: boolean;
}

interface Agreement {
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
 *
 * One sort and one sweep, O(n log n): at the lowest candidate every review with a confidence above 0 is a machine
 * cat; going up the candidates, the reviews whose confidence falls below the threshold (a prefix of them sorted)
 * turn into machine non-cats, each changing the agreement by one, and each is passed once (`isCatAt` is the rule).
 */
export function suggestThreshold(images: readonly ReviewedImage[]): number | null {
  if (images.length === 0) return null;
  // Each review read once: the confidences a machine could call a cat, the people's cats and non-cats apart, sorted.
  const cats: number[] = [];
  const others: number[] = [];
  let nonCats = 0;
  for (const i of images) {
    const confidence = i.catConfidence;
    if (!i.isCat) nonCats++;
    if (confidence > 0) (i.isCat ? cats : others).push(confidence);
  }
  const catsUp = Float64Array.from(cats).sort();
  const othersUp = Float64Array.from(others).sort();
  // Below every positive confidence all of them are machine cats: the people's cats agree, their non-cats do not.
  let agree = nonCats + catsUp.length - othersUp.length;
  let best = THRESHOLD_STEP;
  let bestAgree = -1;
  let c = 0;
  let o = 0;
  // The candidates in order: 0.01, then just above each confidence (justAbove never goes down as confidence goes up).
  let t: number | undefined = THRESHOLD_STEP;
  while (t !== undefined) {
    for (; c < catsUp.length && !isCatAt(catsUp[c], t); c++) agree--;
    for (; o < othersUp.length && !isCatAt(othersUp[o], t); o++) agree++;
    if (agree > bestAgree) {
      best = t;
      bestAgree = agree;
    }
    // The next candidate: just above the lowest confidence the machine still calls a cat at t.
    const next: number | undefined = Math.min(catsUp[c] ?? Infinity, othersUp[o] ?? Infinity);
    t = next === Infinity ? undefined : justAbove(next);
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
