// A 12-megapixel HEIC fingerprinted by the ingest (libheif-js in its bounded thread, then the hashes and the preview)
// against libheif-js's bare decode of the same file on this thread, paired round by round (goal: <= 1.15), beside a
// 12 MP JPEG's fingerprint; the peak RSS one decode adds; and the event loop's p99 delay (what the local stack's API,
// which shares the ingest's process, waits) while 0-3 HEIC decodes run at once. Decision 0040.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import sharp from 'sharp';
import { fingerprint } from '../lib/ingest/fingerprint';
import { type CodedTile, codedTile, gridHeif } from '../test/helpers/heif-builder';
import { twelveMegapixelJpeg } from './fingerprint.bench';
import { headline as figure, type Headline, median, pick, round, sized, timeMs as time } from './stats';

const ROUNDS = sized(10, 2); // even: rounds are paired
const TILE = 512;
const opts = { maxInputPixels: 100_000_000 };

const hasHeifEnc = (): boolean => {
  try {
    execFileSync('heif-enc', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/**
 * The photo as a phone writes it: 512 px tiles coded by heif-enc, in a grid. Without heif-enc, the fixture's one
 * HEVC tile repeated to the same size (a real decode of as many pixels; its content repeats).
 */
export async function phoneHeic(jpeg: Buffer): Promise<{ heic: Buffer; tiles: string }> {
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true });
  const [columns, rows] = [Math.ceil(info.width / TILE), Math.ceil(info.height / TILE)];
  if (!hasHeifEnc()) {
    const tile = codedTile(readFileSync(join(__dirname, '..', 'test', 'fixtures', 'chelsea.heic')));
    const [c, r] = [Math.ceil(info.width / tile.width), Math.ceil(info.height / tile.height)];
    const heic = gridHeif({
      tiles: Array.from({ length: c * r }, () => tile),
      rows: r,
      columns: c,
      outputWidth: info.width,
      outputHeight: info.height,
    });
    return { heic, tiles: `${c}x${r} repeated ${tile.width}x${tile.height} fixture tiles (no heif-enc here)` };
  }
  const work = mkdtempSync(join(tmpdir(), 'heic-bench-'));
  try {
    const tiles: CodedTile[] = [];
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < columns; c++) {
        const [w, h] = [Math.min(TILE, info.width - c * TILE), Math.min(TILE, info.height - r * TILE)];
        const png = join(work, `${r}-${c}.png`);
        await sharp(data, { raw: info })
          .extract({ left: c * TILE, top: r * TILE, width: w, height: h })
          .extend({ right: TILE - w, bottom: TILE - h, extendWith: 'copy' })
          .png({ compressionLevel: 1 })
          .toFile(png);
        execFileSync('heif-enc', ['-q', '60', '-o', `${png}.heic`, png], { stdio: 'ignore' });
        tiles.push(codedTile(readFileSync(`${png}.heic`)));
      }
    }
    return {
      heic: gridHeif({ tiles, rows, columns, outputWidth: info.width, outputHeight: info.height }),
      tiles: `${columns}x${rows} tiles of ${TILE} px, heif-enc q60`,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** libheif-js's own decode to interleaved RGB on this thread: what the ingest's decode is measured against. */
export function bareDecoder(): (bytes: Buffer) => number {
  /* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any -- the package has no types for its glue */
  const lib: any = require('libheif-js/libheif-wasm/libheif.js')({
    wasmBinary: readFileSync(require.resolve('libheif-js/libheif-wasm/libheif.wasm')),
  });
  /* eslint-enable @typescript-eslint/no-require-imports, @typescript-eslint/no-explicit-any */
  return (bytes) => {
    const ctx = lib.heif_context_alloc();
    lib.heif_context_read_from_memory(ctx, bytes);
    const handle = lib.heif_js_context_get_primary_image_handle(ctx);
    const image = lib.heif_js_decode_image2(handle, lib.heif_colorspace.heif_colorspace_RGB, lib.heif_chroma.heif_chroma_interleaved_RGB);
    const width: number = image.channels[0].width;
    lib.heif_image_release(image.image);
    lib.heif_image_handle_release(handle);
    lib.heif_context_free(ctx);
    return width;
  };
}

/** Peak RSS above the level before, sampled every 5 ms while `fn` runs. */
export async function peakRss(fn: () => Promise<unknown>): Promise<number> {
  await delay(200);
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  await fn();
  clearInterval(timer);
  return Math.max(0, Math.max(peak, process.memoryUsage.rss()) - before);
}

/** The event loop's p99 delay (ms) while `n` decodes run at once, a few rounds of them. */
export async function loopP99(n: number, heic: Buffer): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  if (n === 0) await delay(1500);
  else for (let i = 0; i < sized(3, 1); i++) await Promise.all(Array.from({ length: n }, () => fingerprint(heic, opts)));
  h.disable();
  return h.percentile(99) / 1e6;
}

export default async function run(): Promise<Record<string, unknown>> {
  const full = await twelveMegapixelJpeg();
  const jpeg = sized(full, await sharp(full).resize(1200).jpeg().toBuffer());
  const { heic, tiles } = await phoneHeic(jpeg);
  // The first decode starts the decoder thread: its peak is the thread, the decoder's heap and one image's pixels
  // (the heap stays grown for the next decodes: WebAssembly memory never shrinks, so later decodes add nothing).
  const rss = await peakRss(() => fingerprint(heic, opts));
  const bare = bareDecoder();
  bare(heic);
  await fingerprint(jpeg, opts);
  const ingest: number[] = [];
  const decode: number[] = [];
  const jpegFp: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const first = i % 2 === 0;
    const a = await time(async () => (first ? bare(heic) : fingerprint(heic, opts)));
    const b = await time(async () => (first ? fingerprint(heic, opts) : bare(heic)));
    decode.push(first ? a : b);
    ingest.push(first ? b : a);
    jpegFp.push(await time(() => fingerprint(jpeg, opts)));
  }
  const paired = median(
    Array.from({ length: ROUNDS / 2 }, (_, k) => (ingest[2 * k]! + ingest[2 * k + 1]!) / (decode[2 * k]! + decode[2 * k + 1]!)),
  );
  const idle = await loopP99(0, heic);
  const atOnce: Record<string, number> = {};
  for (const n of [1, 2, 3]) atOnce[n] = round(await loopP99(n, heic));
  const meta = await sharp(jpeg).metadata();
  return {
    input: { width: meta.width, height: meta.height, heicBytes: heic.length, jpegBytes: jpeg.length, tiles },
    rounds: ROUNDS,
    cores: availableParallelism(),
    bareDecodeMedianMs: round(median(decode)),
    ingestFingerprintMedianMs: round(median(ingest)),
    jpegFingerprintMedianMs: round(median(jpegFp)),
    ingestOverBareDecodePairedMedian: round(paired),
    goal: 'ingestOverBareDecodePairedMedian <= 1.15',
    goalMet: paired <= 1.15,
    peakRssFirstDecodeMb: round(rss / 1024 / 1024, 1),
    eventLoopP99Ms: { idle: round(idle), decodesAtOnce: atOnce },
    machineLoadAverage1m: round(loadavg()[0]!, 2),
  };
}

export function headline(r: Record<string, unknown>): Headline[] {
  return [
    figure('HEIC fingerprint ÷ bare libheif-js decode, 12 MP (paired median)', pick(r, 'ingestOverBareDecodePairedMedian'), '<= 1.15'),
    figure('HEIC fingerprint, 12 MP (median ms)', pick(r, 'ingestFingerprintMedianMs')),
    figure('peak RSS the first HEIC decode adds, its thread included (MB)', pick(r, 'peakRssFirstDecodeMb')),
  ];
}
