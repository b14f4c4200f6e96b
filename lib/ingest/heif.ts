// HEIC/HEIF photos (docs/design.md §12, decision 0040): sharp's prebuilt libvips reads AVIF but carries no HEVC
// decoder, so an HEVC-coded HEIF is decoded by libheif-js (WebAssembly, shipped unmodified as its own files) in a
// worker thread bounded by the same pixel cap as sharp's, a memory cap and a time cap. What it is, and whether it is
// too large or unsound, is decided from its boxes before any pixel is decoded (heif-boxes.ts).
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { RejectedUploadError } from './errors';
import { fileBrands, type HeifFile, HeifStructureError, readHeif } from './heif-boxes';

/** Raw decoded pixels, as the fingerprint hashes them. */
export interface HeifPixels {
  data: Uint8Array;
  width: number;
  height: number;
  /** RGB, or RGBA when the image has alpha. */
  channels: 3 | 4;
}

export interface HeifLimits {
  maxInputPixels: number;
  /** Wall time one decode may take before its thread is ended (default DECODE_TIMEOUT_MS). */
  timeoutMs?: number;
  /** The decoder's WebAssembly heap cap in bytes (default DECODER_HEAP_BYTES). */
  heapBytes?: number;
}

/** A 12 MP photo decodes in ~1.5 s on a quiet core; a 100 MP one (the pixel cap) in ~15 s. Lambda's timeout is 120 s. */
export const DECODE_TIMEOUT_MS = 60_000;
/** 100 MP (the pixel cap) needs ~150 MB of YUV planes and 300 MB of RGB in the decoder's heap; 12 MP ~80 MB. */
export const DECODER_HEAP_BYTES = 768 * 1024 * 1024;
/** A thread whose heap grew past this after a decode is replaced (WebAssembly memory never shrinks). */
const RECYCLE_BYTES = 192 * 1024 * 1024;
/** The thread's JavaScript heap (the glue and the message; pixels live in ArrayBuffers outside it). */
const JS_HEAP_MB = 96;

/** Brands of HEIF image files (ISO/IEC 23008-12 Annex B; avif is AV1 in HEIF, which sharp reads itself). */
export const HEIF_BRANDS: ReadonlySet<string> = new Set([
  'heic',
  'heix',
  'heim',
  'heis',
  'hevc',
  'hevx',
  'hevm',
  'hevs',
  'mif1',
  'mif2',
  'msf1',
  'avif',
  'avis',
  'avci',
]);
/** Item types of coded images, by what they are, for the message of one that is not read. */
const CODECS: Record<string, string> = {
  hvc1: 'HEVC',
  av01: 'AV1',
  avc1: 'H.264',
  vvc1: 'VVC',
  evc1: 'EVC',
  j2k1: 'JPEG 2000',
  jpeg: 'JPEG',
  unci: 'uncompressed',
  htj2: 'HTJ2K',
};
const DERIVED = new Set(['grid', 'iden', 'iovl']);

/** What a HEIF file's primary image is coded with: 'HEVC' is decoded here, 'AV1' by sharp, anything else is not read. */
export type HeifRoute = { decoder: 'libheif'; file: HeifFile } | { decoder: 'sharp' };

const rejected = (code: 'TooManyPixels' | 'UnsupportedFormat' | 'CorruptImage', message: string, cause?: unknown) =>
  new RejectedUploadError(message, { code, cause });

/** Whether the bytes are a HEIF image file (by its ftyp brands). */
export function isHeif(bytes: Buffer): boolean {
  const ftyp = fileBrands(bytes);
  return !!ftyp && [ftyp.majorBrand, ...ftyp.brands].some((b) => HEIF_BRANDS.has(b));
}

/**
 * How a HEIF file is read, its soundness and size checked from its boxes first: a grid whose tile count lies or whose
 * references loop is CorruptImage, a declared size past the cap TooManyPixels, a codec not read UnsupportedFormat.
 */
export function heifRoute(bytes: Buffer, maxInputPixels: number): HeifRoute {
  let file: HeifFile;
  try {
    file = readHeif(bytes);
  } catch (cause) {
    if (cause instanceof HeifStructureError) throw rejected('CorruptImage', `the HEIF file is broken: ${cause.message}`, cause);
    throw cause;
  }
  const primary = file.primary;
  if (file.handler !== 'pict' || !primary) throw rejected('CorruptImage', 'the HEIF file has no primary image');
  const coded = codedItems(file, primary.id, new Set());
  const types = [...new Set(coded.map((id) => file.items.get(id)?.type ?? '?'))];
  if (types.length === 1 && types[0] === 'av01') return { decoder: 'sharp' };
  if (types.length !== 1 || types[0] !== 'hvc1') {
    const named = types.map((t) => CODECS[t] ?? `"${t}"`).join(' and ');
    throw rejected('UnsupportedFormat', `a HEIF image coded as ${named}, which the ingest does not read (it reads HEVC and AV1)`);
  }
  checkSize(file, coded, maxInputPixels);
  return { decoder: 'libheif', file };
}

/** The coded items a primary image is made of (itself, or a derived image's tiles), every reference followed once. */
function codedItems(file: HeifFile, id: number, seen: Set<number>): number[] {
  if (seen.has(id)) throw rejected('CorruptImage', `the HEIF file's image references loop (item ${id} is reached twice)`);
  seen.add(id);
  const item = file.items.get(id);
  if (!item) throw rejected('CorruptImage', `the HEIF file references item ${id}, which it does not have`);
  if (!DERIVED.has(item.type)) return [id];
  const refs = file.derived.get(id) ?? [];
  if (refs.length === 0) throw rejected('CorruptImage', `the HEIF ${item.type} image ${id} references no image`);
  return refs.flatMap((ref) => codedItems(file, ref, seen));
}

/** The declared size against the pixel cap, and a grid's tile count against its references, before any decode. */
function checkSize(file: HeifFile, coded: number[], maxInputPixels: number): void {
  const primary = file.primary!;
  const tooMany = (what: string, pixels: number) =>
    rejected('TooManyPixels', `the HEIF image declares ${what} (${pixels} pixels), above the limit of ${maxInputPixels}`);
  const { grid } = file;
  if (grid) {
    const declared = grid.outputWidth * grid.outputHeight;
    if (declared > maxInputPixels) throw tooMany(`a ${grid.outputWidth}x${grid.outputHeight} grid`, declared);
    const tiles = file.derived.get(primary.id) ?? [];
    if (tiles.length !== grid.rows * grid.columns) {
      throw rejected('CorruptImage', `the HEIF grid declares ${grid.rows}x${grid.columns} tiles and references ${tiles.length}`);
    }
  } else if (primary.width !== undefined && primary.height !== undefined && primary.width * primary.height > maxInputPixels) {
    throw tooMany(`${primary.width}x${primary.height}`, primary.width * primary.height);
  }
  // What the decoder allocates for the tiles themselves: each tile's declared size, all of them.
  let tilePixels = 0;
  for (const id of coded) {
    const item = file.items.get(id)!;
    if (item.width === undefined || item.height === undefined)
      throw rejected('CorruptImage', `the HEIF image ${id} declares no size (ispe)`);
    tilePixels += item.width * item.height;
  }
  if (tilePixels > 2 * maxInputPixels) throw tooMany(`${coded.length} tiles`, tilePixels);
}

interface Reply {
  id: number;
  ok: boolean;
  kind?: 'pixels' | 'memory' | 'unsupported' | 'corrupt';
  message?: string;
  width?: number;
  height?: number;
  channels?: 3 | 4;
  data?: Uint8Array;
  recycle?: boolean;
}

interface Task {
  id: number;
  bytes: Uint8Array;
  limits: Required<HeifLimits>;
  resolve(pixels: HeifPixels): void;
  reject(err: Error): void;
}

const WORKER = path.join(__dirname, 'heif-worker.cjs');

/** Decoder threads, each one decode at a time; started on first use, ended when they fail, idle ones unref'd. */
class DecoderPool {
  private readonly idle: Worker[] = [];
  private running = 0;
  private readonly waiting: Task[] = [];
  private next = 0;
  constructor(readonly size: number) {}

  decode(bytes: Uint8Array, limits: Required<HeifLimits>): Promise<HeifPixels> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ id: ++this.next, bytes, limits, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length > 0 && (this.idle.length > 0 || this.running < this.size)) {
      const task = this.waiting.shift()!;
      const worker = this.idle.pop() ?? this.spawn(task.limits.heapBytes);
      this.running++;
      this.run(worker, task);
    }
  }

  private spawn(heapBytes: number): Worker {
    return new Worker(WORKER, {
      workerData: { heapBytes },
      resourceLimits: { maxOldGenerationSizeMb: JS_HEAP_MB, maxYoungGenerationSizeMb: 16 },
      stdout: false,
      stderr: false,
    });
  }

  private run(worker: Worker, task: Task): void {
    worker.ref();
    let settled = false;
    const finish = (keep: boolean, outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      this.running--;
      if (keep) {
        worker.unref();
        this.idle.push(worker);
      } else {
        // A thread ended here may still report an error: heard, never thrown at the process.
        worker.on('error', () => undefined);
        void worker.terminate();
      }
      outcome();
      this.pump();
    };
    const timer = setTimeout(
      () => finish(false, () => task.reject(limitError(`the decode took longer than its time cap of ${task.limits.timeoutMs} ms`))),
      task.limits.timeoutMs,
    );
    const onMessage = (reply: Reply) =>
      finish(!reply.recycle, () => (reply.ok ? task.resolve(reply as Required<Reply>) : task.reject(replyError(reply))));
    const onError = (err: Error & { code?: string }) =>
      finish(false, () =>
        task.reject(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? limitError(`the decoder ran out of its memory: ${err.message}`)
            : rejected('CorruptImage', err.message, err),
        ),
      );
    const onExit = (code: number) => finish(false, () => task.reject(limitError(`the decoder thread ended (code ${code})`)));
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage({ id: task.id, bytes: task.bytes, maxPixels: task.limits.maxInputPixels, recycleBytes: RECYCLE_BYTES });
  }
}

const limitError = (message: string) => new RejectedUploadError(message, { code: 'decode_limit_exceeded' });

function replyError(reply: Reply): RejectedUploadError {
  const message = reply.message ?? 'the decoder failed';
  if (reply.kind === 'pixels') return rejected('TooManyPixels', message);
  if (reply.kind === 'memory') return limitError(`the decode needed more than the decoder's memory cap: ${message}`);
  if (reply.kind === 'unsupported') return rejected('UnsupportedFormat', `a HEIF file the decoder does not read: ${message}`);
  return rejected('CorruptImage', `the image is truncated or corrupt: ${message}`);
}

/** One pool per heap cap (the cap is the thread's, set when it starts): the ingest's, and a test's smaller one. */
const pools = new Map<number, DecoderPool>();

/** Decoder threads at most: one a core, at most two (each holds one image's pixels and its decoder's heap). */
export const DECODER_THREADS = Math.max(1, Math.min(2, availableParallelism()));

/** The primary image's pixels, decoded in a bounded thread. */
export function decodeHeif(bytes: Buffer, limits: HeifLimits): Promise<HeifPixels> {
  const full = { timeoutMs: DECODE_TIMEOUT_MS, heapBytes: DECODER_HEAP_BYTES, ...limits };
  let pool = pools.get(full.heapBytes);
  if (!pool) pools.set(full.heapBytes, (pool = new DecoderPool(DECODER_THREADS)));
  return pool.decode(bytes, full);
}
