// Accuracy from the audit sample (docs/accuracy.md): the stratified estimator of precision, recall, accuracy and the
// number of cats, each with a 95 % interval, from the reviews of audited images only. Pure: the strata's tallies in.
//
// Point estimates: the classical stratified estimator (Cochran, Sampling Techniques, 3rd ed. 1977, ch. 5), each
// stratum's reviewed share weighted by its share of the batch; recall is the ratio of two such totals. Intervals: the
// batch's true cats are a finite population, so each stratum's unreviewed images are predicted from its reviews by the
// beta-binomial posterior predictive under a Jeffreys prior (Beta(½, ½); Ericson 1969, JRSS B 31; Jeffreys intervals:
// Brown, Cai & DasGupta 2001, Statistical Science 16), and the interval is the 2.5 and 97.5 percentiles of the figure
// over seeded Monte Carlo draws. A stratum reviewed in full contributes exactly what it holds, so a census has a zero-
// width interval at the truth; one stratum's uncertainty never leaks into precision, which the other does not enter.
import { type Stratum, seededRandom } from './audit-sample';

export interface StratumTally {
  stratum: Stratum;
  /** The batch's classified images the machine put in this stratum. */
  images: number;
  /** Of them, drawn into the audit sample. */
  sampled: number;
  /** Of those, reviewed by a person. */
  reviewed: number;
  /** Of those, the person's verdict is the stratum's (a machine-cat called a cat, a machine-non-cat not one). */
  agree: number;
}

export interface IntervalEstimate {
  estimate: number;
  /** The 95 % interval. */
  low: number;
  high: number;
}

export interface AccuracyEstimates {
  /** Of the machine's cats, the share that are cats. */
  precision: IntervalEstimate | null;
  /** Of the batch's cats, the share the machine called cats. */
  recall: IntervalEstimate | null;
  /** Of the batch's images, the share whose machine verdict is right. */
  accuracy: IntervalEstimate | null;
  /** How many cats the batch truly holds. */
  cats: IntervalEstimate | null;
}

interface EstimateOptions {
  /** Seeds the Monte Carlo draws: the same tallies always give the same intervals. */
  seed?: number;
  /** Monte Carlo draws (default 2,000: the percentiles move by less than the rounding between seeds). */
  draws?: number;
}

// Math's functions as constants: a lookup of the global `Math` per call costs ~25× the call inside a vm context (jest's).
const { cos, floor, ceil, log, pow, round, sqrt, min, max, PI } = Math;

const DEFAULT_DRAWS = 2000;
const DEFAULT_SEED = 0x1ce_ca7;

/** A stratum as the estimator sees it: its size, reviews and the true cats among them. */
interface Part {
  size: number;
  reviewed: number;
  cats: number;
}

/** The stratified estimates, or null for a figure that no review supports (see AccuracyEstimates). */
export function estimateAccuracy(strata: readonly StratumTally[], opts: EstimateOptions = {}): AccuracyEstimates {
  const part = (h: Stratum): Part => {
    const t = strata.find((s) => s.stratum === h);
    if (!t || t.images <= 0) return { size: 0, reviewed: 0, cats: 0 };
    const reviewed = min(t.reviewed, t.images);
    return { size: t.images, reviewed, cats: h === 'cat' ? t.agree : reviewed - t.agree };
  };
  const mc = part('cat');
  const mn = part('notCat');
  const supported = (p: Part) => p.size === 0 || p.reviewed > 0;
  const n = mc.size + mn.size;
  const both = n > 0 && supported(mc) && supported(mn);
  const share = (p: Part) => (p.size === 0 ? 0 : p.cats / p.reviewed);
  const catsHat = mc.size * share(mc) + mn.size * share(mn);
  const hasPrecision = mc.size > 0 && mc.reviewed > 0;
  const hasRecall = both && mc.cats + mn.cats > 0;
  if (!hasPrecision && !both) return { precision: null, recall: null, accuracy: null, cats: null };
  const sims = simulate(mc, mn, opts);
  const ratio = (v: number) => round(v * 10_000) / 10_000;
  const estimate = (point: number, values: Float64Array, shown: (v: number) => number): IntervalEstimate => {
    const [lo, hi] = percentiles(values);
    const at = shown(point);
    // A bound at the point itself (a census) is shown as the point; others are rounded outward.
    const bound = (v: number, outward: (v: number) => number) => (Math.abs(v - point) < 1e-9 ? at : outward(v));
    return { estimate: at, low: Math.min(at, bound(lo, floor4)), high: Math.max(at, bound(hi, ceil4)) };
  };
  return {
    precision: hasPrecision ? estimate(share(mc), sims.precision, ratio) : null,
    recall: hasRecall ? estimate((mc.size * share(mc)) / catsHat, sims.recall, ratio) : null,
    accuracy: both ? estimate((mc.size * share(mc) + mn.size * (1 - share(mn))) / n, sims.accuracy, ratio) : null,
    cats: both ? estimate(catsHat, sims.cats, (v) => round(v * 10) / 10) : null,
  };
}

/** Each figure over the Monte Carlo draws of the batch's true cats in each stratum. */
function simulate(mc: Part, mn: Part, opts: EstimateOptions) {
  const draws = opts.draws ?? DEFAULT_DRAWS;
  const random = seededRandom(opts.seed ?? DEFAULT_SEED);
  const out = {
    precision: new Float64Array(draws),
    recall: new Float64Array(draws),
    accuracy: new Float64Array(draws),
    cats: new Float64Array(draws),
  };
  for (let d = 0; d < draws; d++) {
    const tc = trueCats(mc, random);
    const tn = trueCats(mn, random);
    out.precision[d] = mc.size > 0 ? tc / mc.size : 0;
    out.recall[d] = tc + tn > 0 ? tc / (tc + tn) : 0;
    out.accuracy[d] = (tc + (mn.size - tn)) / (mc.size + mn.size || 1);
    out.cats[d] = tc + tn;
  }
  return out;
}

/** One draw of a stratum's true cats: those reviewed, plus its unreviewed images' predicted from the reviews. */
function trueCats(p: Part, random: () => number): number {
  const unreviewed = p.size - p.reviewed;
  if (unreviewed <= 0 || p.reviewed === 0) return p.cats;
  return p.cats + binomial(unreviewed, beta(p.cats + 0.5, p.reviewed - p.cats + 0.5, random), random);
}

/** The 2.5 and 97.5 percentiles (the draws' order statistics at those ranks), by selection, not a sort. */
function percentiles(values: Float64Array): [number, number] {
  const last = values.length - 1;
  const lo = floor(0.025 * last);
  const hi = ceil(0.975 * last);
  return [select(values, lo), select(values, hi)];
}

/** The k-th smallest value (Hoare's selection; reorders the array). */
function select(a: Float64Array, k: number): number {
  let left = 0;
  let right = a.length - 1;
  while (left < right) {
    const pivot = a[(left + right) >> 1]!;
    let i = left;
    let j = right;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const t = a[i]!;
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else return a[k]!;
  }
  return a[k]!;
}

// Bounds rounded outward, so rounding never cuts the truth out of an interval.
const floor4 = (v: number) => floor(v * 10_000 + 1e-9) / 10_000;
const ceil4 = (v: number) => ceil(v * 10_000 - 1e-9) / 10_000;

function normal(random: () => number): number {
  const u = 1 - random();
  return sqrt(-2 * log(u)) * cos(2 * PI * random());
}

/** Gamma(shape, 1) by Marsaglia and Tsang (2000); shapes below 1 by the boost Gamma(a + 1)·U^(1/a). */
function gamma(shape: number, random: () => number): number {
  if (shape < 1) return gamma(shape + 1, random) * pow(1 - random(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / sqrt(9 * d);
  for (;;) {
    const x = normal(random);
    const v0 = 1 + c * x;
    if (v0 <= 0) continue;
    const v = v0 * v0 * v0;
    const u = 1 - random();
    if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) return d * v;
  }
}

function beta(a: number, b: number, random: () => number): number {
  const x = gamma(a, random);
  return x / (x + gamma(b, random));
}

/** Binomial(n, p): by inversion when the mean is small, else the normal approximation (variance ≥ 5 there). */
function binomial(n: number, p: number, random: () => number): number {
  if (p > 0.5) return n - binomial(n, 1 - p, random);
  if (n * p < 10) {
    const q = 1 - p;
    const s = p / q;
    const a = (n + 1) * s;
    let r = pow(q, n);
    let u = random();
    let x = 0;
    while (u > r && x < n) {
      u -= r;
      x++;
      r *= a / x - s;
    }
    return x;
  }
  const k = round(n * p + sqrt(n * p * (1 - p)) * normal(random));
  return min(n, max(0, k));
}
