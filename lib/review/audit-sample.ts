// The audit sample (docs/accuracy.md): a seeded random draw without replacement from a batch's classified images,
// stratified by the machine's verdict, so that its reviews estimate accuracy without the bias of the uncertainty queue.
// Pure: the candidates in, the drawn images out; the store records them (lib/store/audit/queue.ts).

import type { AuditStratum } from '../domain/review';

/** The machine's verdict an image was drawn under: a machine-cat or a machine-non-cat. */
export type Stratum = AuditStratum;
export const STRATA: readonly Stratum[] = ['cat', 'notCat'];

/** Most images one draw takes (POST …/audit `size`). */
export const AUDIT_SIZE_MAX = 500;

/**
 * The least share of a draw each stratum that still has images gets, whatever its share of the batch: with 2 % cats a
 * proportional draw of 50 gives the machine-cats 1 image, and precision would rest on one review. The estimator weights
 * each stratum by its share of the batch, so the over-sampling biases nothing; it only narrows precision's interval and
 * widens accuracy's a little (docs/decisions/0030-audit-sample-and-accuracy.md).
 */
const STRATUM_FLOOR_SHARE = 0.25;

export type ByStratum = Record<Stratum, number>;

// Held as a constant: a lookup of the global `Math` on every call costs ~25× the call itself inside a vm context (jest's).
const imul = Math.imul;

/** A seeded uniform generator on [0, 1) (mulberry32): the same seed draws the same sample. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * How many images of each stratum a draw of `size` takes: proportional to each stratum's share of the batch
 * (`population`, largest remainder), at least a quarter of the draw for each stratum with images left, never more than
 * is left, and the whole draw when enough is left (what one stratum cannot give goes to the other).
 */
export function allocate(size: number, population: ByStratum, left: ByStratum): ByStratum {
  const open = STRATA.filter((h) => left[h] > 0);
  const out: ByStratum = { cat: 0, notCat: 0 };
  const total = open.reduce((s, h) => s + population[h], 0);
  const floorOf = (h: Stratum) => Math.min(left[h], Math.floor(size * STRATUM_FLOOR_SHARE));
  for (const h of open) {
    const share = total > 0 ? population[h] / total : 1 / open.length;
    out[h] = Math.min(left[h], Math.max(floorOf(h), Math.round(size * share)));
  }
  const target = Math.min(
    size,
    open.reduce((s, h) => s + left[h], 0),
  );
  const sum = () => out.cat + out.notCat;
  while (sum() > target) {
    // Take back from the stratum furthest above its floor.
    const h = open.reduce((a, b) => (out[a] - floorOf(a) >= out[b] - floorOf(b) ? a : b));
    out[h]--;
  }
  while (sum() < target) {
    const h = open.filter((s) => out[s] < left[s]).reduce((a, b) => (population[a] >= population[b] ? a : b));
    out[h]++;
  }
  return out;
}

export interface AuditCandidate {
  fprint: string;
  stratum: Stratum;
}

interface DrawnImage extends AuditCandidate {
  /** A random key (12 hex digits) that orders the drawn images in the pending queue: random, and stable across pages. */
  order: string;
}

/**
 * Draws `size` images (all that are left when fewer are) from `left`, the images not drawn before, allocated by
 * `allocate` over the batch's strata (`population`: every classified image, drawn or not): a simple random sample
 * without replacement within each stratum (a partial Fisher-Yates shuffle over the candidates sorted by fingerprint,
 * so the seed alone decides it whatever order they were read in).
 */
export function drawSample(left: readonly AuditCandidate[], size: number, population: ByStratum, seed: number): DrawnImage[] {
  const random = seededRandom(seed);
  const pools = Object.fromEntries(
    STRATA.map((h) => [h, left.filter((c) => c.stratum === h).sort((a, b) => (a.fprint < b.fprint ? -1 : a.fprint > b.fprint ? 1 : 0))]),
  ) as Record<Stratum, AuditCandidate[]>;
  const counts = allocate(size, population, { cat: pools.cat.length, notCat: pools.notCat.length });
  const drawn: DrawnImage[] = [];
  for (const h of STRATA) {
    const pool = [...pools[h]];
    for (let i = 0; i < counts[h]; i++) {
      const j = i + Math.floor(random() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
      drawn.push({ ...pool[i]!, order: orderKey(random) });
    }
  }
  return drawn;
}

const orderKey = (random: () => number): string =>
  Math.floor(random() * 0x1000000)
    .toString(16)
    .padStart(6, '0') +
  Math.floor(random() * 0x1000000)
    .toString(16)
    .padStart(6, '0');
