// Near-duplicate groups of a batch's distinct images by 64-bit pHash (docs/similarity.md): pure, no I/O. Pairs
// within maxDistance bits are found by multi-index hashing (close-pairs.ts), not by comparing every pair, and link
// their images into groups. The pairs found are never all kept: only those that join images not yet joined at their
// distance, at most (maxDistance + 1)·(n − 1) however many pairs are close, so memory stays linear in the batch even
// when thousands of images of one scene are all within the distance of one another.

import { IceCatError } from '../errors';
import { type Hashes, type PairSink, pairSearch } from './close-pairs';
import { isFlatPhash, parsePhash } from './phash';

/** Bits two pHashes may differ in and still group, when the caller names no maxDistance (docs/similarity.md). */
export const DEFAULT_MAX_DISTANCE = 10;

/**
 * The largest maxDistance the API takes (docs/similarity.md): past it unrelated photos group by chance (4 % of pairs of
 * independent photo hashes are within 24 bits), and the search can no longer use its index, so its time is quadratic in
 * the batch. The pure functions here take up to 64.
 */
export const MAX_DISTANCE_LIMIT = 24;

export interface HashedImage {
  fprint: string;
  /** 16 hex digits as the fingerprint writes it; an image without one is not grouped. */
  phash?: string | null;
}

interface SimilarGroup {
  /** The group's images, in the order they were given. */
  fprints: string[];
  /**
   * The largest link needed to hold the group together: the smallest maxDistance at which these images still form
   * one group. Never above the maxDistance asked for; two members of a chain (A~B~C) may differ by more.
   */
  maxDistance: number;
}

interface NearDuplicateGroups {
  groups: SimilarGroup[];
}

class InvalidMaxDistanceError extends IceCatError {
  override name = 'InvalidMaxDistanceError';
  readonly code: string = 'invalid_parameter';
}

/**
 * Groups the distinct images (by fprint; repeats are ignored) whose pHashes differ in at most `maxDistance` bits,
 * transitively: A~B and B~C put A, B and C in one group. Flat images (INFORMATIVE_BITS) and images without a valid
 * pHash are never grouped; an image near no other is in no group. Groups come in the order of their first image.
 */
export function nearDuplicateGroups(images: Iterable<HashedImage>, opts: { maxDistance?: number } = {}): NearDuplicateGroups {
  const { fprints, hashes, maxDistance } = candidates(images, opts);
  const search = spanningSearch(hashes, maxDistance);
  for (let step = search.next(); !step.done; step = search.next());
  return { groups: linkGroups(fprints, search.kept) };
}

/**
 * nearDuplicateGroups, giving the event loop back every `sliceMs` (default 20 ms) of work: a server grouping a large
 * batch keeps answering its other requests meanwhile.
 */
export async function nearDuplicateGroupsAsync(
  images: Iterable<HashedImage>,
  opts: { maxDistance?: number; sliceMs?: number } = {},
): Promise<NearDuplicateGroups> {
  const { fprints, hashes, maxDistance } = candidates(images, opts);
  const search = spanningSearch(hashes, maxDistance);
  const sliceMs = opts.sliceMs ?? 20;
  let sliceStart = performance.now();
  for (let step = search.next(); !step.done; step = search.next()) {
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  return { groups: linkGroups(fprints, search.kept) };
}

function candidates(
  images: Iterable<HashedImage>,
  opts: { maxDistance?: number },
): { fprints: string[]; hashes: Hashes; maxDistance: number } {
  const maxDistance = opts.maxDistance ?? DEFAULT_MAX_DISTANCE;
  if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance > 64) {
    throw new InvalidMaxDistanceError(`maxDistance must be an integer from 0 to 64, got ${String(maxDistance)}`);
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
  return { fprints, hashes: { hi: Uint32Array.from(his), lo: Uint32Array.from(los) }, maxDistance };
}

/** The kept pairs of a search (spanningSearch), as typed parallel arrays, and how many close pairs it found. */
interface KeptPairs {
  a: Int32Array;
  b: Int32Array;
  distance: Uint8Array;
  /** Close pairs met, kept or not: of distinct hashes, plus one link per image whose hash repeats an earlier one's. */
  found: number;
}

/**
 * The pairs within maxDistance bits that nearDuplicateGroups needs, in one search: a pair found at distance d is kept
 * only when its two images are not yet joined by kept pairs of distance ≤ d (one union-find per distance, 0 to
 * maxDistance). So at every threshold t ≤ maxDistance the kept pairs within t join exactly the images that all pairs
 * within t join: the same groups, each with the same largest necessary link, from at most (maxDistance + 1)·(n − 1)
 * pairs, whatever the number found (up to n(n − 1)/2 when a batch is one scene).
 */
export function spanningPairs(h: Hashes, maxDistance: number): KeptPairs {
  const search = spanningSearch(h, maxDistance);
  for (let step = search.next(); !step.done; step = search.next());
  return search.kept;
}

/**
 * The distinct hashes (frames of one scene often hash alike) and, for every other image, the first image of its hash:
 * an image whose hash repeats is linked at distance 0 to that first one and never searched again.
 */
function distinctHashes(h: Hashes): { distinct: Hashes; firstOf: Int32Array; repeats: [number, number][] } {
  const seen = new Map<number, Map<number, number>>();
  const hi: number[] = [];
  const lo: number[] = [];
  const first: number[] = [];
  const repeats: [number, number][] = [];
  for (let i = 0; i < h.hi.length; i++) {
    let byLo = seen.get(h.hi[i]!);
    if (!byLo) seen.set(h.hi[i]!, (byLo = new Map()));
    const u = byLo.get(h.lo[i]!);
    if (u !== undefined) {
      repeats.push([first[u]!, i]);
      continue;
    }
    byLo.set(h.lo[i]!, hi.length);
    hi.push(h.hi[i]!);
    lo.push(h.lo[i]!);
    first.push(i);
  }
  return { distinct: { hi: Uint32Array.from(hi), lo: Uint32Array.from(lo) }, firstOf: Int32Array.from(first), repeats };
}

function spanningSearch(all: Hashes, maxDistance: number): Generator<void, void> & { kept: KeptPairs } {
  const { distinct: h, firstOf, repeats } = distinctHashes(all);
  const n = h.hi.length;
  const levels = maxDistance + 1;
  // parent[k * n + x]: x's parent in the union-find of kept pairs of distance ≤ k.
  const parent = new Int32Array(levels * n);
  for (let k = 0; k < levels; k++) for (let x = 0; x < n; x++) parent[k * n + x] = x;
  const root = (base: number, x: number): number => {
    while (parent[base + x] !== x) {
      const up = parent[base + parent[base + x]!]!;
      parent[base + x] = up;
      x = up;
    }
    return x;
  };
  let capacity = Math.max(16, Math.min(n * levels, 1024) + repeats.length);
  let a: Int32Array = new Int32Array(capacity);
  let b: Int32Array = new Int32Array(capacity);
  let distance: Uint8Array = new Uint8Array(capacity);
  let size = 0;
  const kept: KeptPairs = { a, b, distance, found: 0 };
  const keep = (i: number, j: number, d: number): void => {
    if (size === capacity) {
      capacity *= 2;
      a = grow(a, capacity);
      b = grow(b, capacity);
      const wider = new Uint8Array(capacity);
      wider.set(distance);
      distance = wider;
    }
    a[size] = i;
    b[size] = j;
    distance[size] = d;
    size++;
  };
  // i and j index the distinct hashes; the kept pair links the first image of each.
  const sink: PairSink = (i, j, d) => {
    kept.found++;
    if (root(d * n, i) === root(d * n, j)) return;
    for (let k = d; k < levels; k++) {
      const x = root(k * n, i);
      const y = root(k * n, j);
      // Joined at k, so at every larger distance too.
      if (x === y) break;
      parent[k * n + Math.max(x, y)] = Math.min(x, y);
    }
    keep(firstOf[i]!, firstOf[j]!, d);
  };
  const steps = pairSearch(h, maxDistance, sink);
  const search = (function* () {
    yield* steps;
    for (const [i, j] of repeats) keep(i, j, 0);
    kept.found += repeats.length;
    kept.a = a.subarray(0, size);
    kept.b = b.subarray(0, size);
    kept.distance = distance.subarray(0, size);
  })();
  return Object.assign(search, { kept });
}

function grow(array: Int32Array, capacity: number): Int32Array {
  const wider = new Int32Array(capacity);
  wider.set(array);
  return wider;
}

/**
 * Connected components of the pairs, each with the largest link of its minimum spanning tree (Kruskal: pairs
 * joined in order of distance, so the last join of a component is its bottleneck).
 */
function linkGroups(fprints: string[], pairs: KeptPairs): SimilarGroup[] {
  const n = fprints.length;
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = i;
  const linkedAt = new Int32Array(n);
  const root = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  };
  // The pairs in order of distance (a counting sort: distances are 0–64).
  const count = new Int32Array(66);
  for (let p = 0; p < pairs.distance.length; p++) count[pairs.distance[p]! + 1]!++;
  for (let d = 1; d < count.length; d++) count[d]! += count[d - 1]!;
  const byDistance = new Int32Array(pairs.distance.length);
  for (let p = 0; p < pairs.distance.length; p++) byDistance[count[pairs.distance[p]!]!++] = p;
  for (const p of byDistance) {
    const x = root(pairs.a[p]!);
    const y = root(pairs.b[p]!);
    if (x === y) continue;
    parent[Math.max(x, y)] = Math.min(x, y);
    linkedAt[Math.min(x, y)] = pairs.distance[p]!;
  }
  // Only images with a pair can be in a group; a root is its component's lowest index, so visiting images in order
  // makes groups in the order of their first image.
  const paired = new Uint8Array(n);
  for (let p = 0; p < pairs.a.length; p++) paired[pairs.a[p]!] = paired[pairs.b[p]!] = 1;
  const groupAt = new Map<number, SimilarGroup>();
  const groups: SimilarGroup[] = [];
  for (let i = 0; i < n; i++) {
    if (!paired[i]) continue;
    const r = root(i);
    let group = groupAt.get(r);
    if (!group) {
      group = { fprints: [], maxDistance: linkedAt[r]! };
      groupAt.set(r, group);
      groups.push(group);
    }
    group.fprints.push(fprints[i]!);
  }
  return groups;
}
