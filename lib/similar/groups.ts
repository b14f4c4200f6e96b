// Near-duplicate groups of a batch's distinct images by 64-bit pHash (docs/similarity.md): pure, no I/O. Pairs
// within maxDistance bits are found by multi-index hashing (pigeonhole on bit chunks), not by comparing every pair,
// and link their images into groups.
import { isFlatPhash, parsePhash, popcount32 } from './phash';

/** Bits two pHashes may differ in and still group, when the caller names no maxDistance (docs/similarity.md). */
export const DEFAULT_MAX_DISTANCE = 10;

export interface HashedImage {
  fprint: string;
  /** 16 hex digits as the fingerprint writes it; an image without one is not grouped. */
  phash?: string | null;
}

export interface SimilarGroup {
  /** The group's images, in the order they were given. */
  fprints: string[];
  /**
   * The largest link needed to hold the group together: the smallest maxDistance at which these images still form
   * one group. Never above the maxDistance asked for; two members of a chain (A~B~C) may differ by more.
   */
  maxDistance: number;
}

export interface SimilarGroups {
  groups: SimilarGroup[];
}

export class InvalidMaxDistance extends RangeError {
  override name = 'InvalidMaxDistance';
}

/**
 * Groups the distinct images (by fprint; repeats are ignored) whose pHashes differ in at most `maxDistance` bits,
 * transitively: A~B and B~C put A, B and C in one group. Flat images (INFORMATIVE_BITS) and images without a valid
 * pHash are never grouped; an image near no other is in no group. Groups come in the order of their first image.
 */
export function nearDuplicateGroups(images: Iterable<HashedImage>, opts: { maxDistance?: number } = {}): SimilarGroups {
  const maxDistance = opts.maxDistance ?? DEFAULT_MAX_DISTANCE;
  if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > 64) {
    throw new InvalidMaxDistance(`maxDistance must be an integer from 0 to 64, got ${String(maxDistance)}`);
  }
  const fprints: string[] = [];
  const his: number[] = [];
  const los: number[] = [];
  const seen = new Set<string>();
  for (const image of images) {
    if (seen.has(image.fprint)) continue;
    seen.add(image.fprint);
    const bits = image.phash ? parsePhash(image.phash) : undefined;
    if (!bits || isFlatPhash(bits)) continue;
    fprints.push(image.fprint);
    his.push(bits.hi);
    los.push(bits.lo);
  }
  const hashes = { hi: Uint32Array.from(his), lo: Uint32Array.from(los) };
  return { groups: linkGroups(fprints, closePairs(hashes, maxDistance)) };
}

export interface Hashes {
  hi: Uint32Array;
  lo: Uint32Array;
}

/** Pairs (i < j) within maxDistance bits, as parallel arrays. */
export interface Pairs {
  a: number[];
  b: number[];
  distance: number[];
}

const distanceAt = (h: Hashes, i: number, j: number): number => popcount32(h.hi[i]! ^ h.hi[j]!) + popcount32(h.lo[i]! ^ h.lo[j]!);

/** The pairs within maxDistance bits; `everyPair` forces the O(n²) comparison the index exists to avoid (bench). */
export function closePairs(h: Hashes, maxDistance: number, everyPair = false): Pairs {
  const plan = everyPair ? undefined : indexPlan(h.hi.length, maxDistance);
  return plan ? indexedPairs(h, maxDistance, plan) : allPairs(h, maxDistance);
}

function allPairs(h: Hashes, maxDistance: number): Pairs {
  const pairs: Pairs = { a: [], b: [], distance: [] };
  const n = h.hi.length;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const d = distanceAt(h, i, j);
      if (d <= maxDistance) {
        pairs.a.push(i);
        pairs.b.push(j);
        pairs.distance.push(d);
      }
    }
  }
  return pairs;
}

/**
 * Split the 64 bits into `chunks` parts: two hashes within maxDistance bits differ in at most floor(maxDistance /
 * chunks) bits in at least one part (pigeonhole), so each image only meets the images whose part lies within that
 * radius of its own, found by flipping up to `radius` bits of it in a table of all images by part.
 */
export interface IndexPlan {
  chunks: number;
  radius: number;
}

/** Widest chunk indexed: a table of 2^16 bucket offsets per chunk. */
const MAX_CHUNK_BITS = 16;

/** The cheapest plan by expected work (lookups plus candidate checks on spread-out hashes), or none if all pairs is cheaper. */
export function indexPlan(n: number, maxDistance: number): IndexPlan | undefined {
  let best: { plan: IndexPlan; cost: number } | undefined;
  for (let chunks = Math.ceil(64 / MAX_CHUNK_BITS); chunks <= 16; chunks++) {
    const radius = Math.floor(maxDistance / chunks);
    const width = Math.ceil(64 / chunks);
    const flips = flipCount(width, radius);
    const lookups = n * chunks * flips;
    const cost = lookups + (2 * lookups * n) / 2 ** Math.floor(64 / chunks) + chunks * 2 ** width;
    if (!best || cost < best.cost) best = { plan: { chunks, radius }, cost };
  }
  return best && best.cost < (n * (n - 1)) / 2 ? best.plan : undefined;
}

function flipCount(width: number, radius: number): number {
  let total = 0;
  let c = 1;
  for (let i = 0; i <= radius && i <= width; i++) {
    total += c;
    c = (c * (width - i)) / (i + 1);
  }
  return total;
}

/** Every mask of `width` bits with at most `radius` set. */
function flipMasks(width: number, radius: number): Int32Array {
  const masks: number[] = [];
  const visit = (from: number, mask: number, left: number): void => {
    masks.push(mask);
    if (left === 0) return;
    for (let bit = from; bit < width; bit++) visit(bit + 1, mask | (1 << bit), left - 1);
  };
  visit(0, 0, radius);
  return Int32Array.from(masks);
}

/** Bits [start, start + width) of the 64-bit hash, bit 0 the lowest; width <= 16. */
function chunkOf(hi: number, lo: number, start: number, width: number): number {
  const mask = (1 << width) - 1;
  if (start >= 32) return (hi >>> (start - 32)) & mask;
  if (start + width <= 32) return (lo >>> start) & mask;
  return ((lo >>> start) | (hi << (32 - start))) & mask;
}

function indexedPairs(h: Hashes, maxDistance: number, plan: IndexPlan): Pairs {
  const n = h.hi.length;
  const tables: { keys: Int32Array; offsets: Int32Array; members: Int32Array; masks: Int32Array }[] = [];
  let start = 0;
  for (let c = 0; c < plan.chunks; c++) {
    const width = Math.floor(64 / plan.chunks) + (c < 64 % plan.chunks ? 1 : 0);
    const keys = new Int32Array(n);
    const offsets = new Int32Array((1 << width) + 1);
    for (let i = 0; i < n; i++) {
      keys[i] = chunkOf(h.hi[i]!, h.lo[i]!, start, width);
      offsets[keys[i]! + 1]!++;
    }
    for (let k = 1; k < offsets.length; k++) offsets[k]! += offsets[k - 1]!;
    const fill = offsets.slice(0, -1);
    const members = new Int32Array(n);
    for (let i = 0; i < n; i++) members[fill[keys[i]!]!++] = i;
    tables.push({ keys, offsets, members, masks: flipMasks(width, plan.radius) });
    start += width;
  }

  const pairs: Pairs = { a: [], b: [], distance: [] };
  const lastMet = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    for (const { keys, offsets, members, masks } of tables) {
      const key = keys[i]!;
      for (let m = 0; m < masks.length; m++) {
        const bucket = key ^ masks[m]!;
        for (let t = offsets[bucket]!, end = offsets[bucket + 1]!; t < end; t++) {
          const j = members[t]!;
          if (j <= i || lastMet[j] === i) continue;
          lastMet[j] = i;
          const d = distanceAt(h, i, j);
          if (d <= maxDistance) {
            pairs.a.push(i);
            pairs.b.push(j);
            pairs.distance.push(d);
          }
        }
      }
    }
  }
  return pairs;
}

/**
 * Connected components of the pairs, each with the largest link of its minimum spanning tree (Kruskal: pairs
 * joined in order of distance, so the last join of a component is its bottleneck).
 */
function linkGroups(fprints: string[], pairs: Pairs): SimilarGroup[] {
  const n = fprints.length;
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const linkedAt = new Int32Array(n);
  const root = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  };
  const byDistance = Array.from({ length: 65 }, () => [] as number[]);
  pairs.distance.forEach((d, p) => byDistance[d]!.push(p));
  for (let d = 0; d < byDistance.length; d++) {
    for (const p of byDistance[d]!) {
      const x = root(pairs.a[p]!);
      const y = root(pairs.b[p]!);
      if (x === y) continue;
      parent[Math.max(x, y)] = Math.min(x, y);
      linkedAt[Math.min(x, y)] = d;
    }
  }
  const groups = new Map<number, SimilarGroup>();
  for (let i = 0; i < n; i++) {
    const r = root(i);
    const group = groups.get(r) ?? { fprints: [], maxDistance: linkedAt[r]! };
    group.fprints.push(fprints[i]!);
    groups.set(r, group);
  }
  // The root is a component's lowest index, so Map order is the order of each group's first image.
  return [...groups.values()].filter((g) => g.fprints.length > 1);
}
