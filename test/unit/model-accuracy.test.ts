// Each model's estimates on the same audit sample (docs/accuracy.md "Each model on the same sample"): the audited
// reviews post-stratified by the model's own verdict, each review weighted by its draw stratum's inverse sampling
// rate, each post-stratum by the batch's count of that verdict. Figures computed by hand below.
import { type AuditedVerdict, estimateModelAccuracy } from '../../lib/review/model-accuracy';

/**
 * Drawn by model A's verdict: 100 machine-cats (4 reviewed: weight 25 each), 900 machine-non-cats (6 reviewed: weight
 * 150 each). `a` and `b` are each model's verdict, `truth` the person's.
 */
const reviews: (Omit<AuditedVerdict, 'verdict'> & { a: boolean; b: boolean })[] = [
  { stratum: 'cat', truth: true, a: true, b: true },
  { stratum: 'cat', truth: true, a: true, b: true },
  { stratum: 'cat', truth: true, a: true, b: false },
  { stratum: 'cat', truth: false, a: true, b: false },
  { stratum: 'notCat', truth: true, a: false, b: true },
  ...Array.from({ length: 5 }, () => ({ stratum: 'notCat' as const, truth: false, a: false, b: false })),
];
const drawn = { cat: 100, notCat: 900 };
const as = (model: 'a' | 'b'): AuditedVerdict[] => reviews.map((r) => ({ stratum: r.stratum, truth: r.truth, verdict: r[model] }));

describe("a model's estimates on the audit sample", () => {
  it('are the stratified estimates for the model whose verdicts drew the sample', () => {
    // Arrange: A's post-strata are the draw strata: 3 of 4 machine-cats are cats, 1 of 6 machine-non-cats is one.
    // Act
    const a = estimateModelAccuracy(as('a'), drawn, { cat: 100, notCat: 900 });

    // Assert: cats 100·¾ + 900·⅙ = 225; recall 75/225; accuracy (75 + 900·⅚)/1000 = 0.825.
    expect(a.precision?.estimate).toBe(0.75);
    expect(a.cats?.estimate).toBe(225);
    expect(a.recall?.estimate).toBe(0.3333);
    expect(a.accuracy?.estimate).toBe(0.825);
  });

  it("weights another model's post-strata by the draw, not by the plain count of their reviews", () => {
    // Arrange: B calls 120 of the batch cats. Its cat post-stratum (reviews 1, 2, 5) are all cats; its non-cat one
    // holds review 3 (a cat, weight 25), 4 (weight 25) and five non-cats of weight 150: 25/800 = 1/32 cats, where the
    // plain count would say 1/7.
    // Act
    const b = estimateModelAccuracy(as('b'), drawn, { cat: 120, notCat: 880 });

    // Assert: cats 120 + 880/32 = 147.5; recall 120/147.5; accuracy (120 + 880·31/32)/1000.
    expect(b.precision?.estimate).toBe(1);
    expect(b.cats?.estimate).toBe(147.5);
    expect(b.recall?.estimate).toBe(0.8136);
    expect(b.accuracy?.estimate).toBe(0.9725);
    for (const e of [b.precision, b.recall, b.accuracy, b.cats]) {
      expect(e!.low).toBeLessThanOrEqual(e!.estimate);
      expect(e!.high).toBeGreaterThanOrEqual(e!.estimate);
    }
  });

  it('is null where no review supports it, as the batch estimate is', () => {
    expect(estimateModelAccuracy([], drawn, { cat: 120, notCat: 880 })).toEqual({
      precision: null,
      recall: null,
      accuracy: null,
      cats: null,
    });
  });
});
