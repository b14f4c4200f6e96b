// The audit sample's estimates in words (DESIGN §13), kept pure so they are unit-tested without a browser: a share as
// "92% (85–96%)", a count as "≈ 140 (120–160)", "exact" where the interval has no width (every image of the strata it
// rests on reviewed), and "not enough reviews yet" where the API has no estimate.
import type { IntervalEstimate } from './api';

/** Where the API gives no estimate (nothing reviewed on that side yet). */
export const NOT_ENOUGH = 'not enough reviews yet';

const pct = (ratio: number): number => Math.round(ratio * 100);

/**
 * A share (0..1) with its 95 % interval, in whole percentages: "92% (85–96%)". The bounds are rounded outwards so the
 * interval shown always holds the one computed (and the estimate).
 */
export function shareText(e: IntervalEstimate | null): string {
  if (!e) return NOT_ENOUGH;
  if (e.low === e.high) return `${pct(e.estimate)}% (exact)`;
  const low = Math.min(Math.floor(e.low * 100), pct(e.estimate));
  const high = Math.max(Math.ceil(e.high * 100), pct(e.estimate));
  return `${pct(e.estimate)}% (${low}–${high}%)`;
}

/** A count with its 95 % interval, in whole images: "≈ 140 (120–160)". */
export function countText(e: IntervalEstimate | null): string {
  if (!e) return NOT_ENOUGH;
  const n = Math.round(e.estimate);
  if (e.low === e.high) return `${n} (exact)`;
  return `≈ ${n} (${Math.min(Math.floor(e.low), n)}–${Math.max(Math.ceil(e.high), n)})`;
}

/** The draw's size as typed: a whole number 1–500, or why not. */
export function drawSize(text: string): { size: number } | { error: string } {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return { error: 'Enter a whole number of images, 1 to 500.' };
  const size = Number(trimmed);
  if (size < 1 || size > 500) return { error: 'Enter a whole number of images, 1 to 500.' };
  return { size };
}
