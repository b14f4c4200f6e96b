// Fingerprinting a 12-megapixel JPEG against a bare sharp decode of it (goal: paired ratio <= 1.10), the thumbnail
// step beside the same decode (goal: <= 0.10), and the alternatives measured to choose the hash and the thumbnail.
// The fingerprint before the native hash and the preview (WebAssembly XXH3, luminance sampled from the full image)
// measured 1.19 here, with the same estimator.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { xxh3 } from '@node-rs/xxhash';
import { md5, xxhash128 } from 'hash-wasm';
import sharp from 'sharp';
import { XXHash128 } from 'xxhash-addon';
import { fingerprint, preview, THUMBNAIL_SIDE } from '../lib/ingest/fingerprint';
import { headline as figure, type Headline, median, pick, round, sized, timeMs as time } from './stats';

const ROUNDS = sized(40, 2); // even: rounds are paired

/**
 * Wall-clock and CPU milliseconds (all threads: libvips decodes on its own) of one call, after a pause that lets the
 * previous call's background work (V8 collecting its 36 MB of pixels on helper threads) finish outside both.
 */
async function measure(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  await delay(30);
  const cpu0 = process.cpuUsage();
  const wall = await time(fn);
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

/** A 4000x3000 photo JPEG: the skimage cat upscaled with film grain, so it decodes like a real camera file. */
export async function twelveMegapixelJpeg(): Promise<Buffer> {
  const cat = join(__dirname, '..', 'test', 'fixtures', 'chelsea.png');
  const source = existsSync(cat)
    ? sharp(readFileSync(cat))
    : sharp({ create: { width: 451, height: 300, channels: 3, background: { r: 120, g: 90, b: 60 } } });
  const { data, info } = await source
    .resize(4000, 3000, { fit: 'fill', kernel: 'cubic' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  let seed = 12345;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    data[i] = Math.max(0, Math.min(255, data[i]! + ((seed >>> 24) % 13) - 6));
  }
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
}

export default async function run(): Promise<Record<string, unknown>> {
  const jpeg = await twelveMegapixelJpeg();
  const opts = { maxInputPixels: 100_000_000 };
  const held = await fingerprint(jpeg, opts); // warms up sharp and the hasher

  const decode: number[] = [];
  const fp: number[] = [];
  const thumbnail: number[] = [];
  const decodeCpu: number[] = [];
  const fpCpu: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    // Interleaved, so all three see the same machine load; decode and fingerprint take turns going first, since the
    // call after another pays for collecting that one's 36 MB (measured: 1.04 one way round, 1.20 the other).
    const decodeFirst = i % 2 === 0;
    const first = await measure(() => (decodeFirst ? sharp(jpeg).raw().toBuffer() : fingerprint(jpeg, opts)));
    const second = await measure(() => (decodeFirst ? fingerprint(jpeg, opts) : sharp(jpeg).raw().toBuffer()));
    const [d, f] = decodeFirst ? [first, second] : [second, first];
    decode.push(d.wall);
    fp.push(f.wall);
    decodeCpu.push(d.cpu);
    fpCpu.push(f.cpu);
    thumbnail.push((await measure(() => held.thumbnail())).wall);
  }

  const { data: pixels, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  const canonical = { data: pixels, width: info.width, height: info.height, channels: info.channels };
  const rawInput = { raw: { width: info.width, height: info.height, channels: 3 as const } };
  const fit = { width: THUMBNAIL_SIDE, height: THUMBNAIL_SIDE, fit: 'inside' as const };
  const alternatives: Record<string, () => Promise<unknown>> = {
    hash_xxh3_128_native_xxhash_addon: async () => XXHash128.hash(pixels).toString('hex'),
    hash_xxh3_128_wasm_hash_wasm: () => xxhash128(pixels),
    hash_xxh3_128_native_node_rs: async () => xxh3.xxh128(pixels).toString(16),
    hash_sha1_node_crypto: async () => createHash('sha1').update(pixels).digest('hex'),
    hash_sha256_node_crypto: async () => createHash('sha256').update(pixels).digest('hex'),
    hash_md5_node_crypto: async () => createHash('md5').update(pixels).digest('hex'),
    hash_md5_wasm: () => md5(pixels),
    thumbnail_preview_sampling: async () => preview(canonical),
    thumbnail_sharp_resize_lanczos_then_webp: () => sharp(pixels, rawInput).resize(fit).webp().toBuffer(),
    thumbnail_sharp_resize_nearest_then_webp: () =>
      sharp(pixels, rawInput)
        .resize({ ...fit, kernel: 'nearest' })
        .webp()
        .toBuffer(),
  };
  const measured: Record<string, number[]> = Object.fromEntries(Object.keys(alternatives).map((k) => [k, []]));
  for (let i = 0; i < ROUNDS; i++) {
    for (const [name, fn] of Object.entries(alternatives)) measured[name]!.push(await time(fn));
  }

  const decodeMs = median(decode);
  const fingerprintMs = median(fp);
  // Each two rounds' fingerprints (one going first, one second) over their decodes: load on this shared machine
  // drifts between rounds, and a paired ratio cancels it where a ratio of two medians does not.
  const pairedRatio = (num: number[], den: number[]): number =>
    median(Array.from({ length: ROUNDS / 2 }, (_, k) => (num[2 * k]! + num[2 * k + 1]!) / (den[2 * k]! + den[2 * k + 1]!)));
  const paired = pairedRatio(fp, decode);
  // The thumbnail's cost is its WebP encode (on demand) plus the preview sampling inside the fingerprint.
  const previewMs = median(measured.thumbnail_preview_sampling!);
  const thumbnailPaired = median(thumbnail.map((t, i) => (t + previewMs) / decode[i]!));
  const thumb = await held.thumbnail();
  const thumbMeta = await sharp(thumb).metadata();
  return {
    input: { width: info.width, height: info.height, jpegBytes: jpeg.length, decodedBytes: pixels.length },
    rounds: ROUNDS,
    bareDecodeMedianMs: round(decodeMs),
    fingerprintMedianMs: round(fingerprintMs),
    fingerprintOverDecode: round(fingerprintMs / decodeMs),
    fingerprintOverDecodePairedMedian: round(paired),
    goal: 'fingerprintOverDecodePairedMedian <= 1.10',
    goalMet: paired <= 1.1,
    // CPU time of all threads instead of wall-clock: what the fingerprint costs whatever else runs on the machine.
    fingerprintOverDecodeCpuPairedMedian: round(pairedRatio(fpCpu, decodeCpu)),
    machineLoadAverage1m: round(loadavg()[0]!, 2),
    thumbnail: {
      webpEncodeMedianMs: round(median(thumbnail)),
      previewSamplingMedianMs: round(previewMs),
      stepOverDecodePairedMedian: round(thumbnailPaired),
      goal: 'stepOverDecodePairedMedian <= 0.10',
      goalMet: thumbnailPaired <= 0.1,
      output: { width: thumbMeta.width, height: thumbMeta.height, bytes: thumb.length },
    },
    alternativesMedianMs: Object.fromEntries(Object.entries(measured).map(([k, v]) => [k, round(median(v))])),
    chosen: { hash: 'hash_xxh3_128_native_xxhash_addon', thumbnail: 'preview sampling in the fingerprint, WebP encode on demand' },
  };
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure('fingerprint ÷ bare decode, 12 MP JPEG (paired median)', pick(r, 'fingerprintOverDecodePairedMedian'), '<= 1.10'),
    figure('thumbnail step ÷ bare decode (paired median)', pick(r, 'thumbnail', 'stepOverDecodePairedMedian'), '<= 0.10'),
  ];
}
