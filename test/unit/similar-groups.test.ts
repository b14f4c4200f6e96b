import { fingerprint } from '../../lib/ingest/fingerprint';
import { closePairs, indexPlan } from '../../lib/similar/close-pairs';
import {
  DEFAULT_MAX_DISTANCE,
  type HashedImage,
  MAX_DISTANCE_LIMIT,
  nearDuplicateGroups,
  nearDuplicateGroupsAsync,
  spanningPairs,
} from '../../lib/similar/groups';
import { hammingDistance, isFlatPhash, parsePhash } from '../../lib/similar/phash';
import { flatImages, photoVariants, type StudyImage } from '../helpers/near-duplicates';

/** Deterministic pseudo-random 64-bit hashes with exactly 32 bits set, as photos' pHashes have. */
function randomHashes(count: number, seed = 1): string[] {
  let s = seed;
  const next = (): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s;
  };
  const out: string[] = [];
  for (let k = 0; k < count; k++) {
    const bits: number[] = Array.from({ length: 64 }, (_, i) => (i < 32 ? 1 : 0));
    for (let i = 63; i > 0; i--) {
      const j = next() % (i + 1);
      [bits[i], bits[j]] = [bits[j]!, bits[i]!];
    }
    out.push(
      BigInt(`0b${bits.join('')}`)
        .toString(16)
        .padStart(16, '0'),
    );
  }
  return out;
}

/** The hash with the given bit positions (0 = lowest) flipped. */
function flip(phash: string, ...positions: number[]): string {
  let x = BigInt(`0x${phash}`);
  for (const p of positions) x ^= 1n << BigInt(p);
  return x.toString(16).padStart(16, '0');
}

const images = (hashes: string[]): HashedImage[] => hashes.map((phash, i) => ({ fprint: `f${i}`, phash }));

describe('pHash bits', () => {
  it('counts differing bits across both halves', () => {
    expect(hammingDistance('0000000000000000', 'ffffffffffffffff')).toBe(64);
    expect(hammingDistance('8000000000000001', '0000000000000000')).toBe(2);
    expect(hammingDistance('00000000ffffffff', '00000001fffffffe')).toBe(2);
  });

  it('calls a hash with too few or too many set bits flat', () => {
    expect([
      isFlatPhash(parsePhash('8000000000000000')!),
      isFlatPhash(parsePhash('ffffffffffff0000')!),
      isFlatPhash(parsePhash('ffffffff00000000')!),
    ]).toEqual([true, true, false]);
  });
});

describe('nearDuplicateGroups', () => {
  it('links hashes within maxDistance and reports the largest link', () => {
    const [a, b] = randomHashes(2);
    const hashes = [a!, flip(a!, 1, 2, 3), b!, flip(b!, 10, 20)];

    const { groups } = nearDuplicateGroups(images(hashes));

    expect(groups).toEqual([
      { fprints: ['f0', 'f1'], maxDistance: 3 },
      { fprints: ['f2', 'f3'], maxDistance: 2 },
    ]);
  });

  it('chains: A~B and B~C make one group whose maxDistance is the largest link, not A to C', () => {
    const [a] = randomHashes(1);
    const b = flip(a!, 0, 1, 2, 3, 4, 5);
    const c = flip(b, 10, 11, 12, 13, 14, 15, 16, 17);

    const { groups } = nearDuplicateGroups(images([a!, b, c]), { maxDistance: 8 });

    expect(hammingDistance(a!, c)).toBe(14);
    expect(groups).toEqual([{ fprints: ['f0', 'f1', 'f2'], maxDistance: 8 }]);
  });

  it('leaves hashes further apart than maxDistance ungrouped', () => {
    const [a] = randomHashes(1);

    const { groups } = nearDuplicateGroups(images([a!, flip(a!, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)]));

    expect(groups).toEqual([]);
  });

  it('never groups flat hashes, even identical ones', () => {
    const { groups } = nearDuplicateGroups(images(['8000000000000000', '8000000000000000', '0000000000000000', '8080008000800080']));

    expect(groups).toEqual([]);
  });

  it('counts each fprint once and skips images without a valid pHash', () => {
    const [a] = randomHashes(1);
    const list: HashedImage[] = [
      { fprint: 'x', phash: a! },
      { fprint: 'x', phash: a! },
      { fprint: 'y', phash: null },
      { fprint: 'z', phash: 'not-a-hash' },
      { fprint: 'w', phash: flip(a!, 5) },
    ];

    expect(nearDuplicateGroups(list).groups).toEqual([{ fprints: ['x', 'w'], maxDistance: 1 }]);
  });

  it.each([-1, 65, 2.5, Number.NaN])('refuses maxDistance %p', (maxDistance) => {
    expect(() => nearDuplicateGroups([], { maxDistance })).toThrow(/maxDistance must be an integer from 0 to 64/);
  });

  it.each([0, 5, 10, 12])('finds with its index exactly the pairs that comparing every pair finds (maxDistance %p)', (maxDistance) => {
    // Random hashes plus planted near copies, so both close and far pairs exist at every distance.
    const base = randomHashes(1000, 42);
    const planted = base.slice(0, 250).map((h, i) => flip(h, ...Array.from({ length: i % 16 }, (_, k) => (k * 7 + i) % 64)));
    const all = [...base, ...planted];
    const parsed = all.map((h) => parsePhash(h)!);
    const hashes = { hi: Uint32Array.from(parsed.map((p) => p.hi)), lo: Uint32Array.from(parsed.map((p) => p.lo)) };
    const key = (p: ReturnType<typeof closePairs>): string[] => p.a.map((a, i) => `${a}-${p.b[i]}:${p.distance[i]}`).sort();

    expect(indexPlan(all.length, maxDistance)).toBeDefined();
    const indexed = closePairs(hashes, maxDistance);
    const everyPair = closePairs(hashes, maxDistance, true);

    expect(key(indexed)).toEqual(key(everyPair));
    expect(everyPair.a.length).toBeGreaterThan(0);
  });
});

describe('bounded work at any distance (many images all close to one another)', () => {
  /** n hashes each a few bits from one photo's: every pair is within 16 bits, so n(n-1)/2 pairs are close. */
  const oneScene = (n: number): string[] => {
    const [base] = randomHashes(1, 7);
    return Array.from({ length: n }, (_, i) => flip(base!, (i * 5) % 64, (i * 11 + 3) % 64, (i * 17 + 9) % 64, ((i >> 6) * 13 + 1) % 64));
  };
  const hashesOf = (list: string[]) => {
    const parsed = list.map((h) => parsePhash(h)!);
    return { hi: Uint32Array.from(parsed.map((p) => p.hi)), lo: Uint32Array.from(parsed.map((p) => p.lo)) };
  };

  it('keeps at most (maxDistance + 1)·(n − 1) of the close pairs it finds, however many there are', () => {
    const scene = oneScene(1500);

    const kept = spanningPairs(hashesOf(scene), MAX_DISTANCE_LIMIT);

    // Close pairs met: each pair of distinct hashes (all within 8 bits), and one link per repeated hash.
    expect(kept.found).toBeGreaterThan(10 * (MAX_DISTANCE_LIMIT + 1) * 1499);
    expect(kept.a.length).toBeLessThanOrEqual((MAX_DISTANCE_LIMIT + 1) * 1499);
  });

  it('groups from the kept pairs exactly as from every close pair: the same groups, each with the same largest link', () => {
    // Two scenes and spread-out photos, at several distances: Kruskal over every close pair is the reference.
    // Some hashes repeat exactly (frames that hash alike): linked at 0 bits without being searched again.
    const spread = randomHashes(300, 3);
    const list = [
      ...oneScene(300),
      ...spread,
      ...oneScene(200).map((h) => flip(h, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
      ...spread.slice(0, 40),
    ];
    for (const maxDistance of [4, 10, 24]) {
      const every = closePairs(hashesOf(list), maxDistance, true);
      const reference = kruskal(
        list.length,
        every,
        list.map((_, i) => `f${i}`),
      );

      expect(nearDuplicateGroups(images(list), { maxDistance }).groups).toEqual(reference);
    }
  });

  it('lets the event loop run while it groups (the async form the API calls)', async () => {
    const list = randomHashes(1500, 11);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);

    const grouped = await nearDuplicateGroupsAsync(images(list), { maxDistance: MAX_DISTANCE_LIMIT, sliceMs: 2 });

    clearInterval(timer);
    expect(grouped).toEqual(nearDuplicateGroups(images(list), { maxDistance: MAX_DISTANCE_LIMIT }));
    expect(ticks).toBeGreaterThan(0);
  });
});

/** Groups by Kruskal over the given pairs, in the shape nearDuplicateGroups answers (the reference). */
function kruskal(n: number, pairs: { a: number[]; b: number[]; distance: number[] }, fprints: string[]) {
  const parent = Array.from({ length: n }, (_, i) => i);
  const linked = new Array<number>(n).fill(0);
  const root = (x: number): number => (parent[x] === x ? x : (parent[x] = root(parent[x]!)));
  const order = pairs.a.map((_, p) => p).sort((x, y) => pairs.distance[x]! - pairs.distance[y]!);
  const paired = new Set<number>();
  for (const p of order) {
    paired.add(pairs.a[p]!).add(pairs.b[p]!);
    const [x, y] = [root(pairs.a[p]!), root(pairs.b[p]!)];
    if (x === y) continue;
    parent[Math.max(x, y)] = Math.min(x, y);
    linked[Math.min(x, y)] = pairs.distance[p]!;
  }
  const groups = new Map<number, { fprints: string[]; maxDistance: number }>();
  for (let i = 0; i < n; i++) {
    if (!paired.has(i)) continue;
    const r = root(i);
    if (!groups.has(r)) groups.set(r, { fprints: [], maxDistance: linked[r]! });
    groups.get(r)!.fprints.push(fprints[i]!);
  }
  return [...groups.values()];
}

describe('near-duplicate groups of real photos (fixtures)', () => {
  const PHOTOS = ['chelsea.png', 'coffee.png', 'rocket.jpg', 'brick.png'];
  let hashed: (StudyImage & { fprint: string; phash: string })[];
  beforeAll(async () => {
    // brick.png is the hardest photo of the study (a low-contrast texture: its JPEG q15 and stretch are 6 bits off).
    const photos = await Promise.all(PHOTOS.map((p) => photoVariants(p)));
    const set = [...photos.flat(), ...(await flatImages())];
    hashed = await Promise.all(
      set.map(async (s) => {
        const fp = await fingerprint(s.bytes, { maxInputPixels: 50_000_000 });
        return { ...s, fprint: fp.fprint, phash: fp.phash };
      }),
    );
  }, 60_000);
  const groupOf = (groups: { fprints: string[] }[], fprint: string): number => groups.findIndex((g) => g.fprints.includes(fprint));

  it('puts the re-encodings and resizes of one photo in one group, and different photos in different groups', () => {
    const reencodedOrResized = hashed.filter((h) => ['original', 'reencode', 'resize'].includes(h.kind));

    const { groups } = nearDuplicateGroups(reencodedOrResized);

    const photosOf = groups.map((g) => [...new Set(g.fprints.map((f) => hashed.find((h) => h.fprint === f)!.photo))]);
    expect(photosOf).toEqual(PHOTOS.map((p) => [p]));
    // Distinct images: the greyscale PNG of a grey photo has its very pixels, so its fprint.
    const distinct = (p: string): number => new Set(reencodedOrResized.filter((h) => h.photo === p).map((h) => h.fprint)).size;
    expect(groups.map((g) => g.fprints.length)).toEqual(PHOTOS.map(distinct));
    expect(Math.max(...groups.map((g) => g.maxDistance))).toBeLessThanOrEqual(DEFAULT_MAX_DISTANCE);
  });

  it('never groups flat images: solid colours and gradients, beside photos', () => {
    const { groups } = nearDuplicateGroups(hashed);

    const flat = hashed.filter((h) => h.kind === 'flat');
    expect(flat.length).toBeGreaterThan(10);
    expect(flat.map((f) => groupOf(groups, f.fprint))).toEqual(flat.map(() => -1));
  });

  it('does not group a mirrored copy with its photo at the default distance', () => {
    const { groups } = nearDuplicateGroups(hashed);

    const pairs = PHOTOS.map((photo) => {
      const original = hashed.find((h) => h.photo === photo && h.kind === 'original')!;
      const mirror = hashed.find((h) => h.photo === photo && h.name.endsWith('/mirror'))!;
      return [groupOf(groups, original.fprint) >= 0, groupOf(groups, mirror.fprint) === groupOf(groups, original.fprint)];
    });
    expect(pairs).toEqual(PHOTOS.map(() => [true, false]));
  });
});
