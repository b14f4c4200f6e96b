// GET …/agreement's computation (lib/review/agreement.ts, docs/design.md §10) on 10,000 and 50,000 reviews, in
// process: the sort-and-sweep that answers it, beside the recount it replaced (every candidate threshold counting every
// review again, kept here as the reference), timed in the same run. Each run also checks that both suggest the same
// threshold. Goal: 50,000 reviews in at most 100 ms (the recount took ~4 s there, blocking the API's thread).
// Confidences have four decimals, so nearly every review is a candidate threshold of its own: the recount's worst case.
import { isCatAt } from '../lib/domain/image';
import { agreementOf, type ReviewedImage } from '../lib/review/agreement';
import { referenceThreshold } from '../test/helpers/agreement-reference';
import { headline as figure, type Headline, median, pick, round, sized } from './stats';

const SIZES = sized([10_000, 50_000], [500, 2_000]);
const RUNS = sized(7, 2);
const THRESHOLD = 80;

/** Reviews whose people mostly agree with a machine at 80, with a band of doubt around it; a tenth without a Cat label. */
function reviews(n: number): ReviewedImage[] {
  let a = 29;
  const r = (): number => {
    // mulberry32: exact in 32-bit integers, so the same reviews every run
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return Array.from({ length: n }, () => {
    const catConfidence = r() < 0.1 ? 0 : Math.round(r() * 1_000_000) / 10_000;
    const isCat = Math.abs(catConfidence - THRESHOLD) < 10 ? r() < 0.5 : catConfidence >= THRESHOLD;
    return { catConfidence, isCat, machineIsCat: isCatAt(catConfidence, THRESHOLD) };
  });
}

const ms = (fn: () => unknown): number => {
  const t = performance.now();
  fn();
  return performance.now() - t;
};

export default async function (): Promise<Record<string, unknown>> {
  const rows: Record<string, unknown>[] = [];
  for (const n of SIZES) {
    const images = reviews(n);
    const sweep = agreementOf(images).suggestedCatMinConfidence;
    const recount = referenceThreshold(images);
    if (sweep !== recount) throw new Error(`at ${n} reviews the sweep suggests ${sweep}, the recount ${recount}`);
    const sweepMs = median(Array.from({ length: RUNS }, () => ms(() => agreementOf(images))));
    // The recount once per size: seconds at 50,000.
    const recountMs = ms(() => referenceThreshold(images));
    rows.push({
      reviews: n,
      suggested: sweep,
      agreementMs: round(sweepMs, 2),
      recountMs: round(recountMs, 1),
      recountOverSweep: round(recountMs / sweepMs, 1),
    });
  }
  return { runs: RUNS, rows };
}

export function headline(results: Record<string, unknown>): Headline[] {
  const rows = (pick(results, 'rows') as Record<string, unknown>[] | undefined) ?? [];
  const at = (n: number) => rows.find((r) => r.reviews === n);
  return [
    figure('agreement at 50,000 reviews (ms)', at(50_000)?.agreementMs, '<= 100'),
    figure('recount / sweep at 50,000 reviews (×)', at(50_000)?.recountOverSweep),
    figure('agreement at 10,000 reviews (ms)', at(10_000)?.agreementMs),
  ];
}
