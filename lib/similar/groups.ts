// Near-duplicate groups of a batch's distinct images by 64-bit pHash (docs/similarity.md): pure, no I/O. Pairs
// within maxDistance bits are found by multi-index hashing (pigeonhole on bit chunks), not by comparing every pair,
// and link their images into groups. The pairs found are never all kept: only those that join images not yet joined
// at their distance, at most (maxDistance + 1)·(n − 1) however many pairs are close, so memory stays linear in the
// batch even when thousands of images of one scene are all within the distance of one another.
import { isFlatPhash, parsePhash, popcount32 as importedPopcount32 } from './phash';
import { IceCatError } from '../errors';

// Bound once: a transpiled import is a property read (a getter under CommonJS interop) on every call, and this
// one runs millions of times per batch.
const popcount32 = importedPopcount32;

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

export interface SimilarGroup {
  /** The group's images, in the order they were given. */
  fprints: string[];
  /**
   * The largest link needed to hold the group together: the smallest maxDistance at which these images still form
   * one group. Never above the maxDistance asked for; two members of a chain (A~B~C) may differ by more.
   */
  maxDistance: number;
}

export interface NearDuplicateGroups {
  groups: SimilarGroup[];
}

export class InvalidMaxDistanceError extends IceCatError {
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

/** Where a search puts each close pair (i < j, d bits apart) it finds, once. */
type PairSink = (i: number, j: number, d: number) => void;

/** Rows of the indexed search between two chances to pause (a generator step). */
const ROWS_PER_STEP = 256;
/** Comparisons of the every-pair search between two chances to pause: a few milliseconds. */
const COMPARISONS_PER_STEP = 1 << 18;

/** Every pair within maxDistance bits, all kept (tests and the bench); `everyPair` forces the O(n²) comparison. */
export function closePairs(h: Hashes, maxDistance: number, everyPair = false): Pairs {
  const pairs: Pairs = { a: [], b: [], distance: [] };
  const search = pairSearch(
    h,
    maxDistance,
    (i, j, d) => {
      pairs.a.push(i);
      pairs.b.push(j);
      pairs.distance.push(d);
    },
    everyPair,
  );
  for (let step = search.next(); !step.done; step = search.next());
  return pairs;
}

/** The search, in steps (a generator, so that a caller can pause between them); the cheaper of the two plans. */
function pairSearch(h: Hashes, maxDistance: number, sink: PairSink, everyPair = false): Generator<void, void> {
  const plan = everyPair ? undefined : indexPlan(h.hi.length, maxDistance);
  return plan ? indexedPairs(h, maxDistance, plan, sink) : allPairs(h, maxDistance, sink);
}

/** The kept pairs of a search (spanningSearch), as typed parallel arrays, and how many close pairs it found. */
export interface KeptPairs {
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

function* allPairs(h: Hashes, maxDistance: number, sink: PairSink): Generator<void, void> {
  const { hi, lo } = h;
  const n = hi.length;
  let budget = COMPARISONS_PER_STEP;
  for (let i = 0; i < n; i++) {
    const hiI = hi[i]!;
    const loI = lo[i]!;
    for (let j = i + 1; j < n; j++) {
      const d = popcount32(hiI ^ hi[j]!) + popcount32(loI ^ lo[j]!);
      if (d <= maxDistance) sink(i, j, d);
    }
    budget -= n - i;
    if (budget <= 0) {
      budget = COMPARISONS_PER_STEP;
      yield;
    }
  }
}

/**
 * Split the 64 bits into `chunks` parts. Writing maxDistance = chunks·r + a (0 <= a < chunks), two hashes within
 * maxDistance bits differ in at most r bits in one of the first a + 1 parts, or in at most r - 1 bits in one of
 * the others (pigeonhole, as in multi-index hashing: Norouzi, Punjani and Fleet, CVPR 2012). So each image only
 * meets the images whose part lies within that radius of its own, found by flipping up to that many bits of its
 * part in a table of all images by part.
 */
export interface IndexPlan {
  chunks: number;
}

/** Widest part indexed: a table of 2^16 bucket offsets per part. */
const MAX_CHUNK_BITS = 16;

const chunkWidth = (chunks: number, c: number): number => Math.floor(64 / chunks) + (c < 64 % chunks ? 1 : 0);
const chunkRadius = (chunks: number, c: number, maxDistance: number): number =>
  Math.floor(maxDistance / chunks) - (c <= maxDistance % chunks ? 0 : 1);

/**
 * The cheapest plan by expected work on spread-out hashes (bucket lookups, plus the candidates met, half of those
 * in the buckets, each costing about three lookups: measured), or none when comparing every pair is cheaper.
 */
export function indexPlan(n: number, maxDistance: number): IndexPlan | undefined {
  let best: { plan: IndexPlan; cost: number } | undefined;
  for (let chunks = Math.ceil(64 / MAX_CHUNK_BITS); chunks <= 16; chunks++) {
    let cost = 0;
    for (let c = 0; c < chunks; c++) {
      const width = chunkWidth(chunks, c);
      const lookups = n * flipCount(width, chunkRadius(chunks, c, maxDistance));
      cost += lookups + (3 * lookups * n) / 2 / 2 ** width + 2 ** width;
    }
    if (!best || cost < best.cost) best = { plan: { chunks }, cost };
  }
  return best && best.cost < n * (n - 1) ? best.plan : undefined;
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

/** Every mask of `width` bits with at most `radius` set (none for a negative radius). */
function flipMasks(width: number, radius: number): Int32Array {
  const masks: number[] = [];
  const visit = (from: number, mask: number, left: number): void => {
    masks.push(mask);
    if (left === 0) return;
    for (let bit = from; bit < width; bit++) visit(bit + 1, mask | (1 << bit), left - 1);
  };
  if (radius >= 0) visit(0, 0, radius);
  return Int32Array.from(masks);
}

/** Bits [start, start + width) of the 64-bit hash, bit 0 the lowest; width <= 16. */
function chunkOf(hi: number, lo: number, start: number, width: number): number {
  const mask = (1 << width) - 1;
  if (start >= 32) return (hi >>> (start - 32)) & mask;
  if (start + width <= 32) return (lo >>> start) & mask;
  return ((lo >>> start) | (hi << (32 - start))) & mask;
}

interface ChunkTable {
  /** Each image's part. */
  keys: Int32Array;
  /** Images by part: members[offsets[k] .. offsets[k + 1]) have part k. */
  offsets: Int32Array;
  members: Int32Array;
  /** The members' hashes, in the members' order, so a bucket's candidates are read in sequence. */
  memberHi: Uint32Array;
  memberLo: Uint32Array;
  /** The flips that reach every part within this part's radius. */
  masks: Int32Array;
  radius: number;
}

function chunkTables(h: Hashes, maxDistance: number, plan: IndexPlan): ChunkTable[] {
  const n = h.hi.length;
  const tables: ChunkTable[] = [];
  let start = 0;
  for (let c = 0; c < plan.chunks; c++) {
    const width = chunkWidth(plan.chunks, c);
    const radius = chunkRadius(plan.chunks, c, maxDistance);
    const masks = flipMasks(width, radius);
    if (masks.length > 0) {
      const keys = new Int32Array(n);
      const offsets = new Int32Array((1 << width) + 1);
      for (let i = 0; i < n; i++) {
        const key = chunkOf(h.hi[i]!, h.lo[i]!, start, width);
        keys[i] = key;
        offsets[key + 1]!++;
      }
      for (let k = 1; k < offsets.length; k++) offsets[k]! += offsets[k - 1]!;
      const fill = offsets.slice(0, -1);
      const members = new Int32Array(n);
      for (let i = 0; i < n; i++) members[fill[keys[i]!]!++] = i;
      const memberHi = new Uint32Array(n);
      const memberLo = new Uint32Array(n);
      for (let t = 0; t < n; t++) {
        memberHi[t] = h.hi[members[t]!]!;
        memberLo[t] = h.lo[members[t]!]!;
      }
      tables.push({ keys, offsets, members, memberHi, memberLo, masks, radius });
    }
    start += width;
  }
  return tables;
}

function* indexedPairs(h: Hashes, maxDistance: number, plan: IndexPlan, sink: PairSink): Generator<void, void> {
  const n = h.hi.length;
  const { hi, lo } = h;
  const tables = chunkTables(h, maxDistance, plan);
  // One part at a time, so that its tables stay in cache. A close pair reached through several parts is kept only
  // at the first part that reaches it.
  for (let c = 0; c < tables.length; c++) {
    const { keys, offsets, members, memberHi, memberLo, masks } = tables[c]!;
    for (let i = 0; i < n; i++) {
      const hiI = hi[i]!;
      const loI = lo[i]!;
      const key = keys[i]!;
      for (let m = 0; m < masks.length; m++) {
        const bucket = key ^ masks[m]!;
        // A bucket lists its images in ascending order: walking it from the end meets only the j > i wanted.
        for (let t = offsets[bucket + 1]! - 1, first = offsets[bucket]!; t >= first; t--) {
          const j = members[t]!;
          if (j <= i) break;
          const d = popcount32(hiI ^ memberHi[t]!) + popcount32(loI ^ memberLo[t]!);
          if (d > maxDistance || reachedEarlier(tables, c, i, j)) continue;
          sink(i, j, d);
        }
      }
      if (i % ROWS_PER_STEP === ROWS_PER_STEP - 1) yield;
    }
  }
}

/** Whether a part before `c` already reached the pair: their keys there within that part's radius. */
function reachedEarlier(tables: ChunkTable[], c: number, i: number, j: number): boolean {
  for (let e = 0; e < c; e++) {
    const { keys, radius } = tables[e]!;
    if (popcount32(keys[i]! ^ keys[j]!) <= radius) return true;
  }
  return false;
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
