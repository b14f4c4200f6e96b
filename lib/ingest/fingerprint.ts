import sharp, { type Metadata } from 'sharp';
import { XXHash128 } from 'xxhash-addon';
import type { Fingerprint } from '../domain/upload';
import { REKOGNITION_LIMITS } from '../ids';
import { toRekognitionJpeg } from './detect';
import { RejectedUploadError } from './errors';
import { unreadFormat } from './format-sniff';
import { decodeHeif, HEIF_BRANDS, heifRoute, isHeif } from './heif';

export { hammingDistance } from '../similar/phash';

interface FingerprintOptions {
  maxInputPixels: number;
}

export const THUMBNAIL_SIDE = 256;

// Why a native XXH3 (xxhash-addon, prebuilt for linux x64 and arm64 inside its npm package; on x64 it picks AVX2 or
// AVX-512 at run time): on 36 MB of 12 MP pixels it takes ~2 ms, where the WebAssembly XXH3 took ~6 ms, sha1 and
// sha256 with SHA extensions ~19 ms and the napi-rs XXH3 ~15 ms (bench/fingerprint.bench.ts). 128 bits
// make an accidental collision negligible; a crafted one could only merge two images of the crafter's own batch.

/**
 * Decodes once: auto-oriented, sRGB, 8 bits per channel. The canonical pixels feed both hashes and the thumbnail,
 * so a PNG and a lossless WebP of the same pixels, or an EXIF-rotated photo and its pre-rotated copy, fingerprint
 * the same.
 */
export async function fingerprint(image: Buffer, opts: FingerprintOptions): Promise<Fingerprint> {
  const unread = unreadFormat(image, HEIF_BRANDS);
  if (unread) throw new RejectedUploadError(`the file is ${unread}, a format the ingest does not read`, { code: 'UnsupportedFormat' });
  if (isHeif(image)) {
    const route = heifRoute(image, opts.maxInputPixels);
    if (route.decoder === 'libheif') {
      const pixels = await decodeHeif(image, opts);
      // No autoOrient: in HEIF the irot/imir boxes (applied by libheif) orient the image, never the EXIF tag.
      return fromPixels(pixels, 'heif', route.file.exif, () => toRekognitionJpeg(pixels, opts.maxInputPixels));
    }
  }
  // The header check runs beside the decode (which enforces the pixel limit itself before decoding anything),
  // so it adds nothing to the time of a good image; its verdict still wins for a bad one.
  const decoding = sharp(image, { limitInputPixels: opts.maxInputPixels, failOn: 'warning' })
    .autoOrient()
    .toColourspace('srgb')
    .raw({ depth: 'uchar' })
    .toBuffer({ resolveWithObject: true })
    .then(
      (decoded) => decoded,
      (cause: unknown) => decodeFailure(cause),
    );
  const format = await detectFormat(image, opts).catch(async (err: unknown) => {
    await decoding;
    throw err;
  });
  const decoded = await decoding;
  if (decoded instanceof RejectedUploadError) throw decoded;
  const { data, info } = decoded;
  return fromPixels({ data, width: info.width, height: info.height, channels: info.channels }, format.format, format.exif);
}

/** Both hashes and the preview of canonical pixels; `rekognitionJpeg` when sharp cannot convert the bytes themselves. */
function fromPixels(canonical: Raster, format: string, exif: Buffer | undefined, rekognitionJpeg?: () => Promise<Buffer>): Fingerprint {
  const { data, width, height, channels } = canonical;
  // Pixels first and alone: a short header before them would misalign XXH3's stripes for all 36 MB.
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const pixels = XXHash128.hash(bytes).toString('hex');
  const fprint = XXHash128.hash(Buffer.from(`${width}x${height}x${channels}:${pixels}`)).toString('hex');
  const small = preview(canonical);
  const phash = perceptualHash(luminance32(small));
  return {
    fprint,
    phash,
    format,
    width,
    height,
    thumbnail: () => encodeThumbnail(small),
    ...(exif ? { exif } : {}),
    ...(rekognitionJpeg ? { rekognitionJpeg } : {}),
  };
}

/**
 * The fingerprint of an image the ingest would send to DetectLabels: every check the ingest makes on the pixels
 * (not an image, unsupported format, too many pixels, truncated or corrupt, and a side under Rekognition's minimum:
 * ImageTooSmall) throws its RejectedUploadError. The ingest and the dry run's estimate (lib/cli/estimate.ts) both call it.
 */
export async function detectableImage(image: Buffer, opts: FingerprintOptions): Promise<Fingerprint> {
  const decoded = await fingerprint(image, opts);
  if (Math.min(decoded.width, decoded.height) < REKOGNITION_LIMITS.minSide) {
    throw new RejectedUploadError(
      `the image is ${decoded.width}x${decoded.height}; both sides must be at least ${REKOGNITION_LIMITS.minSide} px`,
      {
        code: 'ImageTooSmall',
        decoded,
      },
    );
  }
  return decoded;
}

/** The format sharp reads from the header, and the EXIF block it found there (no second header read for it). */
async function detectFormat(image: Buffer, opts: FingerprintOptions): Promise<{ format: string; exif?: Buffer }> {
  let meta: Metadata;
  try {
    meta = await sharp(image, { limitInputPixels: false }).metadata(); // header only: the limit is checked below
  } catch (cause) {
    throw new RejectedUploadError('the file is not an image in a format sharp can read', { code: 'NotAnImage', cause });
  }
  const pixels = (meta.width ?? 0) * (meta.height ?? 0);
  if (pixels > opts.maxInputPixels) {
    throw new RejectedUploadError(`the image declares ${meta.width}x${meta.height} pixels, above the limit of ${opts.maxInputPixels}`, {
      code: 'TooManyPixels',
    });
  }
  if (!meta.format || !SUPPORTED.has(meta.format)) {
    throw new RejectedUploadError(`image format "${meta.format ?? 'unknown'}" is not one the ingest reads`, { code: 'UnsupportedFormat' });
  }
  return { format: meta.format, ...(meta.exif ? { exif: meta.exif } : {}) };
}

const SUPPORTED = new Set(['jpeg', 'png', 'webp', 'gif', 'tiff', 'avif', 'heif']);

function decodeFailure(cause: unknown): RejectedUploadError {
  const message = cause instanceof Error ? cause.message : String(cause);
  if (/pixel limit/i.test(message)) {
    return new RejectedUploadError('the image has more pixels than the limit', { code: 'TooManyPixels', cause });
  }
  return new RejectedUploadError(`the image is truncated or corrupt: ${decoderSays(message)}`, { code: 'CorruptImage', cause });
}

/** libvips' own words, without sharp's note that a warning was treated as an error. */
const decoderSays = (message: string): string =>
  message
    .split('\n')
    .filter((line) => line && !/treated as error/i.test(line))
    .join('; ')
    .slice(0, 200) || 'the decoder reported a problem';

/** Decoded pixels, row-major, `channels` bytes a pixel. */
interface Raster {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

/**
 * The image fitted inside THUMBNAIL_SIDE (never enlarged), each pixel the mean of 2x2 points spread evenly over the
 * area it covers (at scale 1 they coincide: an exact copy). Sampling the buffer already in memory costs ~0.7 ms on
 * 12 MP; handing the 36 MB back to sharp to resize cost ~10 ms before any encoding (bench/fingerprint.bench.ts).
 */
export function preview(src: Raster): Raster {
  const { data, width: w, height: h, channels: c } = src;
  const scale = Math.min(1, THUMBNAIL_SIDE / Math.max(w, h));
  const tw = Math.max(1, Math.round(w * scale));
  const th = Math.max(1, Math.round(h * scale));
  const at = (i: number, quarter: number, from: number, to: number): number => Math.min(from - 1, Math.floor(((i + quarter) * from) / to));
  const left = new Int32Array(tw);
  const right = new Int32Array(tw);
  for (let x = 0; x < tw; x++) {
    left[x] = at(x, 0.25, w, tw) * c;
    right[x] = at(x, 0.75, w, tw) * c;
  }
  const out = new Uint8Array(tw * th * c);
  let o = 0;
  for (let y = 0; y < th; y++) {
    const top = at(y, 0.25, h, th) * w * c;
    const bottom = at(y, 0.75, h, th) * w * c;
    for (let x = 0; x < tw; x++) {
      const p = top + left[x]!;
      const q = top + right[x]!;
      const r = bottom + left[x]!;
      const s = bottom + right[x]!;
      for (let ch = 0; ch < c; ch++) out[o++] = (data[p + ch]! + data[q + ch]! + data[r + ch]! + data[s + ch]! + 2) >> 2;
    }
  }
  return { data: out, width: tw, height: th, channels: c };
}

const N = 32;

/** 32x32 luminance, each cell the mean of up to 16x16 points spread evenly over it. */
function luminance32(src: Raster): Float64Array {
  const { data, width: w, height: h, channels: c } = src;
  const luma = new Float64Array(N * N);
  const sx = Math.max(1, Math.min(16, Math.floor(w / N)));
  const sy = Math.max(1, Math.min(16, Math.floor(h / N)));
  for (let cy = 0; cy < N; cy++) {
    for (let cx = 0; cx < N; cx++) {
      let sum = 0;
      for (let j = 0; j < sy; j++) {
        const y = Math.min(h - 1, Math.floor(((cy + (j + 0.5) / sy) * h) / N));
        for (let i = 0; i < sx; i++) {
          const x = Math.min(w - 1, Math.floor(((cx + (i + 0.5) / sx) * w) / N));
          const o = (y * w + x) * c;
          sum += c >= 3 ? 0.299 * data[o]! + 0.587 * data[o + 1]! + 0.114 * data[o + 2]! : data[o]!;
        }
      }
      luma[cy * N + cx] = sum / (sx * sy);
    }
  }
  return luma;
}

/**
 * WebP settings chosen by measurement (bench/webapp.bench.ts): effort 0 encodes a 256 px thumbnail in ~2.3 ms on a
 * quiet core where effort 2 took ~2.9 ms (the default 4, twice that). Its files are ~20 % larger (9 KB for 7.6 KB at 256x192) for the
 * same or a slightly better PSNR against the preview (the test photos: 32-46 dB either way), which a thumbnail affords.
 */
const THUMBNAIL_WEBP = { quality: 80, effort: 0 } as const;

function encodeThumbnail(small: Raster): Promise<Buffer> {
  const channels = small.channels as 1 | 2 | 3 | 4;
  return sharp(small.data, { raw: { width: small.width, height: small.height, channels } })
    .webp(THUMBNAIL_WEBP)
    .toBuffer();
}

/**
 * A cosine pattern of amplitude A luma levels gives a coefficient of 256·A or more (unnormalised 32x32 DCT-II), so
 * coefficients under 128 carry less than half a level: quantisation noise. They count as zero, which is what makes
 * a flat picture's hash nearly empty instead of the sign pattern of its rounding errors (docs/similarity.md).
 */
const PHASH_DEAD_ZONE = 16;

/**
 * DCT-II pHash: the 8x8 lowest frequencies of the 32x32 luminance, one bit per coefficient above the median of the
 * AC ones, coefficients inside the dead zone counting as zero. A picture with detail sets 32 bits; a flat one
 * (solid colour, smooth gradient) sets few.
 */
function perceptualHash(small: Float64Array): string {
  // Separable: along x for each row, then along y (10 K multiplications instead of 65 K).
  const alongX = new Float64Array(N * 8);
  for (let y = 0; y < N; y++) {
    for (let u = 0; u < 8; u++) {
      let sum = 0;
      for (let x = 0; x < N; x++) sum += COS[u * N + x]! * small[y * N + x]!;
      alongX[y * 8 + u] = sum;
    }
  }
  const coeffs: number[] = [];
  for (let u = 0; u < 8; u++) {
    for (let v = 0; v < 8; v++) {
      let sum = 0;
      for (let y = 0; y < N; y++) sum += COS[v * N + y]! * alongX[y * 8 + u]!;
      coeffs.push(Math.abs(sum) < PHASH_DEAD_ZONE ? 0 : sum);
    }
  }
  const ac = coeffs.slice(1);
  const median = [...ac].sort((a, b) => a - b)[Math.floor(ac.length / 2)]!;
  let bits = 0n;
  for (const c of coeffs) bits = (bits << 1n) | (c > median ? 1n : 0n);
  return bits.toString(16).padStart(16, '0');
}

const COS = (() => {
  const t = new Float64Array(8 * N);
  for (let u = 0; u < 8; u++) for (let x = 0; x < N; x++) t[u * N + x] = Math.cos(((2 * x + 1) * u * Math.PI) / (2 * N));
  return t;
})();
