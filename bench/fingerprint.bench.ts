// Fingerprinting a 12-megapixel JPEG against a bare sharp decode of it (goal: ratio <= 1.25), and the hash
// functions that were measured to choose the fingerprint's.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createXXHash128, md5, xxhash128 } from 'hash-wasm';
import sharp from 'sharp';
import { fingerprint } from '../lib/ingest/fingerprint';
import { median, round, timeMs as time } from './stats';

const ROUNDS = 25;

/** A 4000x3000 photo JPEG: the skimage cat upscaled with film grain, so it decodes like a real camera file. */
export async function twelveMegapixelJpeg(): Promise<Buffer> {
  const cat = join(__dirname, '..', 'test', 'fixtures', 'chelsea.png');
  const source = existsSync(cat)
    ? sharp(readFileSync(cat))
    : sharp({ create: { width: 451, height: 300, channels: 3, background: { r: 120, g: 90, b: 60 } } });
  const { data, info } = await source.resize(4000, 3000, { fit: 'fill', kernel: 'cubic' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let seed = 12345;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    data[i] = Math.max(0, Math.min(255, data[i]! + ((seed >>> 24) % 13) - 6));
  }
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } }).jpeg({ quality: 92 }).toBuffer();
}


export default async function run(): Promise<Record<string, unknown>> {
  const jpeg = await twelveMegapixelJpeg();
  const opts = { maxInputPixels: 100_000_000 };
  await fingerprint(jpeg, opts); // warm up sharp and the wasm hasher
  await createXXHash128();

  const decode: number[] = [];
  const fp: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    // Interleaved, so both see the same machine load.
    decode.push(await time(() => sharp(jpeg).raw().toBuffer()));
    fp.push(await time(() => fingerprint(jpeg, opts)));
  }

  const pixels = await sharp(jpeg).raw().toBuffer();
  const hashes: Record<string, number[]> = { sha256: [], md5: [], xxh3_128: [] };
  for (let i = 0; i < ROUNDS; i++) {
    hashes.sha256!.push(await time(async () => createHash('sha256').update(pixels).digest('hex')));
    hashes.md5!.push(await time(() => md5(pixels)));
    hashes.xxh3_128!.push(await time(() => xxhash128(pixels)));
  }

  const decodeMs = median(decode);
  const fingerprintMs = median(fp);
  // Each round's fingerprint over the decode that ran just before it: load on this shared machine drifts between
  // rounds, and a paired ratio cancels it where a ratio of two medians does not.
  const paired = median(fp.map((f, i) => f / decode[i]!));
  return {
    input: { width: 4000, height: 3000, jpegBytes: jpeg.length, decodedBytes: pixels.length },
    rounds: ROUNDS,
    bareDecodeMedianMs: round(decodeMs),
    fingerprintMedianMs: round(fingerprintMs),
    fingerprintOverDecode: round(fingerprintMs / decodeMs),
    fingerprintOverDecodePairedMedian: round(paired),
    goal: 'fingerprintOverDecodePairedMedian <= 1.25',
    goalMet: paired <= 1.25,
    hashOfDecodedPixelsMedianMs: Object.fromEntries(Object.entries(hashes).map(([k, v]) => [k, round(median(v))])),
    chosenHash: 'xxh3_128',
  };
}
