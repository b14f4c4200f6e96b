// The 64-bit perceptual hash as the fingerprint writes it (16 hex digits), read into two 32-bit halves so that
// distances are integer operations, not BigInt ones.

/** A pHash as two unsigned 32-bit halves: `hi` holds bits 63..32, `lo` bits 31..0. */
interface PhashBits {
  hi: number;
  lo: number;
}

const HEX64 = /^[0-9a-f]{16}$/i;

/** The hash's bits, or undefined when it is not 16 hex digits. */
export function parsePhash(phash: string): PhashBits | undefined {
  if (!HEX64.test(phash)) return undefined;
  return { hi: parseInt(phash.slice(0, 8), 16) >>> 0, lo: parseInt(phash.slice(8), 16) >>> 0 };
}

export function popcount32(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** Bits that differ between two pHashes (hex): 0 for the same picture re-encoded, ~32 for unrelated pictures. */
export function hammingDistance(a: string, b: string): number {
  const x = parsePhash(a);
  const y = parsePhash(b);
  if (!x || !y) throw new RangeError(`not a 64-bit hex pHash: ${x ? b : a}`);
  return popcount32(x.hi ^ y.hi) + popcount32(x.lo ^ y.lo);
}

/**
 * Set bits outside which a pHash says nothing about its picture. A picture with detail sets 32 of the 64 bits (one
 * per coefficient above the median); solid colours and smooth gradients set 0–14, because their coefficients fall
 * in the fingerprint's dead zone; photos and all their re-encodings, resizes and crops set 26–32 (measured on the
 * fixtures, docs/similarity.md). The upper bound mirrors the lower one for hashes that set too many.
 */
export const INFORMATIVE_BITS = { min: 20, max: 44 } as const;

/** A flat picture's hash: too few or too many set bits to compare. Flat images are never grouped. */
export function isFlatPhash(bits: PhashBits): boolean {
  const set = popcount32(bits.hi) + popcount32(bits.lo);
  return set < INFORMATIVE_BITS.min || set > INFORMATIVE_BITS.max;
}
