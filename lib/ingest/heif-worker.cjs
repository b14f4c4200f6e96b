// One HEIF decoder thread (lib/ingest/heif.ts starts it): libheif-js, libheif and libde265 built to WebAssembly, loaded
// from its own unmodified package files, decodes one file at a time into 8-bit sRGB pixels, the grid assembled and its
// irot/imir transforms applied by libheif. Plain CommonJS, so the same file runs under tsx, jest and in the Lambda zip.
//
// Its memory is capped twice: the JavaScript heap by the Worker's resourceLimits, the decoder's WebAssembly heap
// here, by refusing to grow it past workerData.heapBytes (libheif then fails the allocation and says so, and the
// thread reports `memory`). A thread whose heap grew large, or whose decoder aborted, asks to be replaced.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- run by node as is */
/* global WebAssembly -- a global of every Node.js */
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');

const heapBytes = workerData.heapBytes;
let capHit = false;
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function capped(pages) {
  if (this.buffer.byteLength + pages * 65536 > heapBytes) {
    capHit = true;
    throw new RangeError(`the decoder's memory would pass ${heapBytes} bytes`);
  }
  return grow.call(this, pages);
};

const wasmBinary = readFileSync(require.resolve('libheif-js/libheif-wasm/libheif.wasm'));
const lib = require('libheif-js/libheif-wasm/libheif.js')({ wasmBinary });

const UNSUPPORTED = new Set([3, 4]); // heif_error_Unsupported_filetype, heif_error_Unsupported_feature
const MEMORY = 6; // heif_error_Memory_allocation_error
const SECURITY_LIMIT = 1000; // heif_suberror_Security_limit_exceeded

/** A failure the decoder reported, of a kind the ingest names (lib/ingest/heif.ts); anything else is an abort. */
const DecodeFailure = (kind, message) => Object.assign(new Error(message), { kind });
const isFailure = (err) => !!err && typeof err.kind === 'string';

const codeOf = (v) => (v && typeof v === 'object' && 'value' in v ? v.value : v);

/** Throws the failure a libheif error answer (an object with a code) stands for. */
function check(answer, what) {
  if (answer && typeof answer === 'object' && answer.code !== undefined && codeOf(answer.code) !== 0) {
    const code = codeOf(answer.code);
    const sub = codeOf(answer.subcode);
    const message = `${what}: ${answer.message || `libheif error ${code}.${sub}`}`;
    if (code === MEMORY || capHit) throw DecodeFailure('memory', message);
    if (sub === SECURITY_LIMIT) throw DecodeFailure('pixels', message);
    throw DecodeFailure(UNSUPPORTED.has(code) ? 'unsupported' : 'corrupt', message);
  }
  if (!answer) throw DecodeFailure(capHit ? 'memory' : 'corrupt', `${what}: no answer`);
  return answer;
}

/** The primary image as interleaved RGB (RGBA when it has alpha), rows packed. */
function decode(bytes, maxPixels) {
  const ctx = lib.heif_context_alloc();
  let handle;
  let image;
  try {
    check(lib.heif_context_read_from_memory(ctx, bytes), 'the HEIF structure');
    handle = check(lib.heif_js_context_get_primary_image_handle(ctx), 'the primary image');
    const width = lib.heif_image_handle_get_width(handle);
    const height = lib.heif_image_handle_get_height(handle);
    if (width * height > maxPixels)
      throw DecodeFailure('pixels', `the image is ${width}x${height} pixels, above the limit of ${maxPixels}`);
    const channels = lib.heif_image_handle_has_alpha_channel(handle) ? 4 : 3;
    const chroma = channels === 4 ? lib.heif_chroma.heif_chroma_interleaved_RGBA : lib.heif_chroma.heif_chroma_interleaved_RGB;
    image = check(lib.heif_js_decode_image2(handle, lib.heif_colorspace.heif_colorspace_RGB, chroma), 'the decode');
    const plane = (image.channels || []).find((c) => codeOf(c.id) === codeOf(lib.heif_channel.heif_channel_interleaved));
    if (!plane) throw DecodeFailure('corrupt', 'the decode gave no pixels');
    const row = plane.width * channels;
    const data = new Uint8Array(row * plane.height);
    if (plane.stride === row) data.set(plane.data.subarray(0, data.length));
    else for (let y = 0; y < plane.height; y++) data.set(plane.data.subarray(y * plane.stride, y * plane.stride + row), y * row);
    return { width: plane.width, height: plane.height, channels, data };
  } finally {
    if (image && image.image) lib.heif_image_release(image.image);
    if (handle) lib.heif_image_handle_release(handle);
    lib.heif_context_free(ctx);
  }
}

parentPort.on('message', ({ id, bytes, maxPixels, recycleBytes }) => {
  capHit = false;
  let reply;
  let aborted = false;
  try {
    const out = decode(bytes, maxPixels);
    reply = { id, ok: true, ...out };
  } catch (err) {
    aborted = !isFailure(err);
    const kind = isFailure(err) ? err.kind : capHit ? 'memory' : 'corrupt';
    reply = { id, ok: false, kind, message: String((err && err.message) || err).slice(0, 300) };
  }
  reply.heapBytes = lib.HEAPU8.buffer.byteLength;
  reply.recycle = aborted || capHit || reply.heapBytes > recycleBytes;
  parentPort.postMessage(reply, reply.ok ? [reply.data.buffer] : []);
});
