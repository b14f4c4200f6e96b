// The suggested threshold of GET …/agreement found by one sort and a sweep (issue 29, item 9): the same answer as
// counting every review at every candidate threshold, without the quadratic work. Its speed at 50,000 reviews is a
// figure of bench/agreement.bench.ts.
import { isCatAt } from '../../lib/domain';
import { justAbove, suggestThreshold, THRESHOLD_STEP, type ReviewedImage } from '../../lib/review/agreement';

/** The straightforward reference: every candidate threshold, every review counted again at each. */
function referenceThreshold(images: readonly ReviewedImage[]): number | null {
  if (images.length === 0) return null;
  const above = images.map((i) => (i.catConfidence > 0 ? justAbove(i.catConfidence) : undefined)).filter((t): t is number => t !== undefined);
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

/** A small deterministic generator (mulberry32), so a failure names its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Reviews drawn from a few confidences (many ties), grid points, zeros, 100 and values between hundredths. */
function reviews(seed: number, n: number): ReviewedImage[] {
  const r = random(seed);
  const pool = Array.from({ length: 1 + Math.floor(r() * 12) }, () => {
    const kind = r();
    if (kind < 0.15) return 0;
    if (kind < 0.25) return 100;
    if (kind < 0.55) return Math.round(r() * 10_000) / 100; // on the grid
    return Math.round(r() * 1_000_000) / 10_000; // between hundredths
  });
  return Array.from({ length: n }, () => {
    const catConfidence = pool[Math.floor(r() * pool.length)]!;
    return { catConfidence, isCat: r() < 0.5, machineIsCat: catConfidence >= 80 };
  });
}

describe('the suggested threshold by sort and sweep', () => {
  test('answers what counting every review at every candidate answers, on 2,000 random review sets with ties', () => {
    const differ: number[] = [];
    for (let seed = 1; seed <= 2_000; seed++) {
      const images = reviews(seed, Math.floor(random(seed * 7)() * 60));
      if (suggestThreshold(images) !== referenceThreshold(images)) differ.push(seed);
    }
    expect(differ).toEqual([]);
  });

  test('answers the reference on large sets of distinct and of tied confidences', () => {
    const r = random(29);
    const distinct = Array.from({ length: 3_000 }, () => ({ catConfidence: r() * 100, isCat: r() < 0.3, machineIsCat: false }));
    const tied = reviews(2_029, 3_000);
    expect([suggestThreshold(distinct), suggestThreshold(tied)]).toEqual([referenceThreshold(distinct), referenceThreshold(tied)]);
  });

  test('reads each review a bounded number of times, not once per candidate threshold', () => {
    // Counting the reads of each review's confidence measures the work without a clock: the old recount read every
    // review at every candidate (n² reads for n distinct confidences).
    const n = 2_000;
    let reads = 0;
    const images = Array.from({ length: n }, (_, i): ReviewedImage => {
      const catConfidence = 0.5 + (i * 99) / n;
      return {
        get catConfidence() {
          reads++;
          return catConfidence;
        },
        isCat: i % 3 === 0,
        machineIsCat: false,
      };
    });

    suggestThreshold(images);

    expect(reads).toBeLessThanOrEqual(2 * n);
  });
});
