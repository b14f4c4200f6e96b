// The pairs of a batch's hashes within maxDistance bits (docs/similarity.md): by multi-index hashing (pigeonhole on
// bit chunks: an index plan, a table per chunk), or by comparing every pair where no plan pays; in steps, so a caller
// can yield between them. Pure, no I/O.
import { popcount32 as importedPopcount32 } from './phash';

// Bound once: a transpiled import is a property read (a getter under CommonJS interop) on every call, and this
// one runs millions of times per batch.
const popcount32 = importedPopcount32;

export interface Hashes {
  hi: Uint32Array;
  lo: Uint32Array;
}

/** Pairs (i < j) within maxDistance bits, as parallel arrays. */
interface Pairs {
  a: number[];
  b: number[];
  distance: number[];
}

/** Where a search puts each close pair (i < j, d bits apart) it finds, once. */
export type PairSink = (i: number, j: number, d: number) => void;

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
export function pairSearch(h: Hashes, maxDistance: number, sink: PairSink, everyPair = false): Generator<void, void> {
  const plan = everyPair ? undefined : indexPlan(h.hi.length, maxDistance);
  return plan ? indexedPairs(h, maxDistance, plan, sink) : allPairs(h, maxDistance, sink);
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
interface IndexPlan {
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
