// The audit sample's draw and the accuracy estimator (docs/accuracy.md): the allocation, the seeded draw, the edge
// cases, and 1,000 simulated audits of batches of known truth whose 95 % intervals must hold the truth in ≥ 93 % of them.

import { estimateAccuracy, type IntervalEstimate, type StratumTally } from '../../lib/review/accuracy';
import { type AuditCandidate, allocate, type ByStratum, drawSample, type Stratum, seededRandom } from '../../lib/review/audit-sample';

const candidates = (cats: number, notCats: number): AuditCandidate[] => [
  ...Array.from({ length: cats }, (_, i) => ({ fprint: `c${String(i).padStart(6, '0')}`, stratum: 'cat' as Stratum })),
  ...Array.from({ length: notCats }, (_, i) => ({ fprint: `n${String(i).padStart(6, '0')}`, stratum: 'notCat' as Stratum })),
];

describe('allocate', () => {
  it('is proportional to the strata shares, with at least a quarter of the draw for each stratum with images left', () => {
    expect(allocate(100, { cat: 500, notCat: 500 }, { cat: 500, notCat: 500 })).toEqual({ cat: 50, notCat: 50 });
    expect(allocate(100, { cat: 100, notCat: 900 }, { cat: 100, notCat: 900 })).toEqual({ cat: 25, notCat: 75 });
    expect(allocate(100, { cat: 600, notCat: 400 }, { cat: 600, notCat: 400 })).toEqual({ cat: 60, notCat: 40 });
  });

  it('gives what one stratum cannot to the other, and never more than is left', () => {
    expect(allocate(100, { cat: 10, notCat: 990 }, { cat: 10, notCat: 990 })).toEqual({ cat: 10, notCat: 90 });
    expect(allocate(100, { cat: 10, notCat: 40 }, { cat: 10, notCat: 40 })).toEqual({ cat: 10, notCat: 40 });
    expect(allocate(5, { cat: 0, notCat: 40 }, { cat: 0, notCat: 40 })).toEqual({ cat: 0, notCat: 5 });
    // One image between equal strata: the tie takes it back from the first.
    expect(allocate(1, { cat: 5, notCat: 5 }, { cat: 5, notCat: 5 })).toEqual({ cat: 0, notCat: 1 });
  });
});

describe('drawSample', () => {
  it('draws without replacement, stratified, the same for the same seed whatever the read order', () => {
    const pool = candidates(40, 160);
    const a = drawSample(pool, 50, { cat: 40, notCat: 160 }, 7);
    const b = drawSample([...pool].reverse(), 50, { cat: 40, notCat: 160 }, 7);
    expect(a).toEqual(b);
    expect(new Set(a.map((d) => d.fprint)).size).toBe(50);
    expect(a.filter((d) => d.stratum === 'cat')).toHaveLength(12);
    expect(a.every((d) => /^[0-9a-f]{12}$/.test(d.order))).toBe(true);
    expect(drawSample(pool, 50, { cat: 40, notCat: 160 }, 8)).not.toEqual(a);
  });

  it('draws what is left when the sample is larger than the batch', () => {
    const drawn = drawSample(candidates(3, 4), 500, { cat: 3, notCat: 4 }, 1);
    expect(drawn.map((d) => d.fprint).sort()).toEqual(candidates(3, 4).map((c) => c.fprint));
  });
});

const tally = (stratum: Stratum, images: number, reviewed: number, agree: number): StratumTally => ({
  stratum,
  images,
  sampled: reviewed,
  reviewed,
  agree,
});

describe('estimateAccuracy', () => {
  it('answers null for every estimate before any audited review', () => {
    expect(estimateAccuracy([tally('cat', 10, 0, 0), tally('notCat', 90, 0, 0)])).toEqual({
      precision: null,
      recall: null,
      accuracy: null,
      cats: null,
    });
  });

  it('weights each stratum by its share of the batch (hand-computed point estimates)', () => {
    // Machine-cats 100, 20 reviewed, 15 cats: precision 0.75, 75 cats. Machine-non-cats 900, 30 reviewed, 27 agree:
    // 3 cats of 30 → 90 cats. Cats 165; recall 75 / 165 = 0.4545; accuracy (75 + 810) / 1000 = 0.885.
    const out = estimateAccuracy([tally('cat', 100, 20, 15), tally('notCat', 900, 30, 27)]);
    expect(out.precision?.estimate).toBe(0.75);
    expect(out.cats?.estimate).toBe(165);
    expect(out.recall?.estimate).toBe(0.4545);
    expect(out.accuracy?.estimate).toBe(0.885);
    for (const e of Object.values(out) as IntervalEstimate[]) expect(e.low <= e.estimate && e.estimate <= e.high).toBe(true);
  });

  it('gives precision alone while the machine-non-cats have no review; recall null with no cat reviewed', () => {
    const out = estimateAccuracy([tally('cat', 100, 10, 8), tally('notCat', 900, 0, 0)]);
    expect(out.precision?.estimate).toBe(0.8);
    expect([out.recall, out.accuracy, out.cats]).toEqual([null, null, null]);
    const none = estimateAccuracy([tally('cat', 100, 10, 0), tally('notCat', 900, 10, 10)]);
    expect(none.recall).toBeNull();
    expect(none.cats).toEqual({ estimate: 0, low: 0, high: expect.any(Number) });
  });

  it('an empty stratum: no machine-non-cat means nothing missed (recall 1), no machine-cat means no precision', () => {
    const allCats = estimateAccuracy([tally('cat', 50, 10, 9), tally('notCat', 0, 0, 0)]);
    expect(allCats.recall).toEqual({ estimate: 1, low: 1, high: 1 });
    expect(allCats.precision?.estimate).toBe(0.9);
    const noCats = estimateAccuracy([tally('cat', 0, 0, 0), tally('notCat', 50, 10, 8)]);
    expect(noCats.precision).toBeNull();
    expect(noCats.recall).toEqual({ estimate: 0, low: 0, high: 0 });
    expect(noCats.cats?.estimate).toBe(10);
  });

  it('every review agreeing: the estimates are 1, the intervals still open below', () => {
    const out = estimateAccuracy([tally('cat', 200, 40, 40), tally('notCat', 800, 60, 60)]);
    expect(out.precision).toMatchObject({ estimate: 1, high: 1 });
    expect(out.precision!.low).toBeLessThan(1);
    expect(out.recall).toMatchObject({ estimate: 1, high: 1 });
    expect(out.recall!.low).toBeLessThan(1);
    expect(out.cats!.high).toBeGreaterThan(200);
  });

  it('a census (every image reviewed) has zero-width intervals at the truth', () => {
    const out = estimateAccuracy([tally('cat', 6, 6, 5), tally('notCat', 4, 4, 3)]);
    expect(out).toEqual({
      precision: { estimate: 0.8333, low: 0.8333, high: 0.8333 },
      recall: { estimate: 0.8333, low: 0.8333, high: 0.8333 },
      accuracy: { estimate: 0.8, low: 0.8, high: 0.8 },
      cats: { estimate: 6, low: 6, high: 6 },
    });
  });

  it('the same tallies give the same intervals (seeded)', () => {
    const strata = [tally('cat', 300, 25, 20), tally('notCat', 700, 25, 24)];
    expect(estimateAccuracy(strata)).toEqual(estimateAccuracy(strata));
  });
});

/** One simulated audit: a batch of known truth, a draw, the first `reviewed` of it (in queue order) reviewed. */
function simulateAudit(random: () => number, seed: number) {
  const sizes = [200, 1000, 5000, 10_000];
  const images = sizes[Math.floor(random() * sizes.length)]!;
  const catShare = 0.02 + random() * 0.58;
  const errorRate = 0.01 + random() * 0.29;
  const truth = new Map<string, boolean>();
  const pool: AuditCandidate[] = [];
  const population: ByStratum = { cat: 0, notCat: 0 };
  const trueCats: ByStratum = { cat: 0, notCat: 0 };
  for (let i = 0; i < images; i++) {
    const isCat = random() < catShare;
    const machine = random() < errorRate ? !isCat : isCat;
    const stratum: Stratum = machine ? 'cat' : 'notCat';
    const fprint = `f${i}`;
    truth.set(fprint, isCat);
    pool.push({ fprint, stratum });
    population[stratum]++;
    if (isCat) trueCats[stratum]++;
  }
  const size = [50, 100, 200, 400][Math.floor(random() * 4)]!;
  const drawn = drawSample(pool, size, population, seed).sort((a, b) => (a.order < b.order ? -1 : 1));
  // A person works down the pending queue (random order) and stops somewhere past half of it.
  const reviewed = drawn.slice(0, Math.ceil(drawn.length * (0.5 + random() * 0.5)));
  const strata = (['cat', 'notCat'] as const).map((stratum) => {
    const mine = reviewed.filter((d) => d.stratum === stratum);
    const agree = mine.filter((d) => truth.get(d.fprint) === (stratum === 'cat')).length;
    return {
      stratum,
      images: population[stratum],
      sampled: drawn.filter((d) => d.stratum === stratum).length,
      reviewed: mine.length,
      agree,
    };
  });
  const cats = trueCats.cat + trueCats.notCat;
  return {
    strata,
    truth: {
      precision: population.cat > 0 ? trueCats.cat / population.cat : undefined,
      recall: cats > 0 ? trueCats.cat / cats : undefined,
      accuracy: (trueCats.cat + population.notCat - trueCats.notCat) / images,
      cats,
    },
  };
}

test('1,000 simulated audits: the 95 % intervals hold the truth in at least 93 % of them', () => {
  const random = seededRandom(2026_11_27);
  const figures = ['precision', 'recall', 'accuracy', 'cats'] as const;
  const held = { precision: 0, recall: 0, accuracy: 0, cats: 0 };
  const asked = { precision: 0, recall: 0, accuracy: 0, cats: 0 };
  for (let i = 0; i < 1000; i++) {
    const { strata, truth } = simulateAudit(random, i + 1);
    const out = estimateAccuracy(strata, { seed: i + 1 });
    for (const f of figures) {
      const t = truth[f];
      if (t === undefined) continue;
      asked[f]++;
      const e = out[f];
      if (e && e.low <= t + 1e-9 && t - 1e-9 <= e.high) held[f]++;
    }
  }
  const coverage = Object.fromEntries(figures.map((f) => [f, held[f] / asked[f]]));
  console.log(
    `audit simulation, 1,000 audits: coverage of the 95 % intervals ${figures.map((f) => `${f} ${(coverage[f]! * 100).toFixed(1)} % (of ${asked[f]})`).join(', ')}`,
  );
  for (const f of ['precision', 'recall', 'cats'] as const) expect(coverage[f]).toBeGreaterThanOrEqual(0.93);
});
