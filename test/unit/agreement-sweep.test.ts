// The suggested threshold of GET …/agreement found by one sort and a sweep (issue 29, item 9): the same answer as
// counting every review at every candidate threshold, without the quadratic work. Its speed at 50,000 reviews is a
// figure of bench/agreement.bench.ts.
import { type ReviewedImage, suggestThreshold } from '../../lib/review/agreement';
import { referenceThreshold } from '../helpers/agreement-reference';
import { seededRandom as random } from '../helpers/stack-process';

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
