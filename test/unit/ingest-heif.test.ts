// HEIC/HEIF photos (docs/design.md §12): heif-enc's HEICs and a grid HEIC (tiles, irot/imir, an Exif item) fingerprint
// as their JPEG originals do (the same pixels within coding noise, one near-duplicate group, the capture facts of
// their EXIF); the worst HEIFs built here fail with their own codes before or while decoding and leave the decoder
// threads working; a format the ingest does not read fails UnsupportedFormat saying what it is.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { readCapture } from '../../lib/ingest/capture';
import { RejectedUploadError } from '../../lib/ingest/errors';
import { detectableImage, fingerprint, hammingDistance } from '../../lib/ingest/fingerprint';
import { decodeHeif } from '../../lib/ingest/heif';
import { type CodedTile, codedTile, gridHeif, tileId } from '../helpers/heif-builder';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const opts = { maxInputPixels: 100_000_000 };
const NOW = Date.parse('2026-12-01T00:00:00Z');

async function codeOf(bytes: Buffer, limits = opts): Promise<{ code: string; message: string }> {
  try {
    await fingerprint(bytes, limits);
  } catch (err) {
    if (err instanceof RejectedUploadError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the file was read');
}

/** Mean absolute difference per channel between two rasters of the same size. */
const meanDifference = (a: Uint8Array, b: Uint8Array): number => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
};

describe('HEIC photos', () => {
  it.each(['chelsea.heic', 'chelsea-grid.heic'])(
    '%s fingerprints as the JPEG it was made from: one near-duplicate group, its EXIF read',
    async (name) => {
      const heic = await detectableImage(fixture(name), opts);
      const jpeg = await detectableImage(fixture('chelsea-phone.jpg'), opts);
      expect([heic.format, heic.width, heic.height]).toEqual(['heif', 451, 300]);
      expect(hammingDistance(heic.phash, jpeg.phash)).toBeLessThanOrEqual(4);
      expect(heic.fprint).not.toBe(jpeg.fprint);
      expect(readCapture(heic.exif, NOW)).toEqual({ capturedAt: '2024-06-01T06:30:00+02:00', camera: 'Apple iPhone 12', location: null });
      const thumb = await sharp(await heic.thumbnail()).metadata();
      expect([thumb.format, thumb.width, thumb.height]).toEqual(['webp', 256, 170]);
      const sent = await sharp(await heic.rekognitionJpeg!()).metadata();
      expect([sent.format, sent.width, sent.height]).toEqual(['jpeg', 451, 300]);
    },
  );

  it('assembles the grid from its tiles and applies irot and imir: the pixels are the upright photo', async () => {
    const grid = await decodeHeif(fixture('chelsea-grid.heic'), opts);
    const upright = await sharp(fixture('chelsea-phone.jpg')).raw().toBuffer();
    expect(meanDifference(grid.data, upright)).toBeLessThan(4);
    // The same pixels turned the other way round are far away: the transforms are what makes them match.
    expect(meanDifference(grid.data, await sharp(fixture('chelsea-phone.jpg')).rotate(180).raw().toBuffer())).toBeGreaterThan(20);
  });

  it('gives a HEIC and another photo different fingerprints and far perceptual hashes', async () => {
    const cat = await fingerprint(fixture('chelsea.heic'), opts);
    const cup = await fingerprint(fixture('coffee.heic'), opts);
    expect(hammingDistance(cat.phash, cup.phash)).toBeGreaterThan(12);
  });
});

describe('the worst HEIFs', () => {
  let tile: CodedTile;
  beforeAll(() => {
    // The one tile of heif-enc's chelsea.heic (it codes an odd-sized photo as a 1x1 grid of an even-sized tile).
    tile = codedTile(fixture('chelsea.heic'));
  });
  const grid = (spec: Partial<Parameters<typeof gridHeif>[0]>) =>
    gridHeif({ tiles: [tile, tile], rows: 1, columns: 2, outputWidth: tile.width * 2, outputHeight: tile.height, ...spec });

  it('decodes a grid of repeated tiles (the builder makes sound files)', async () => {
    const ok = await fingerprint(grid({}), opts);
    expect([ok.width, ok.height]).toEqual([tile.width * 2, tile.height]);
  });

  it('refuses a huge declared grid before decoding: TooManyPixels', async () => {
    expect(await codeOf(grid({ outputWidth: 100_000, outputHeight: 100_000 }))).toEqual({
      code: 'TooManyPixels',
      message: expect.stringContaining('100000x100000 grid'),
    });
    // 200x200 tiles: more references than any photo has, refused while reading the boxes.
    const tiles = grid({
      rows: 200,
      columns: 200,
      outputWidth: 60_000,
      outputHeight: 60_000,
      gridRefs: Array.from({ length: 40_000 }, () => tileId(0)),
    });
    expect(await codeOf(tiles)).toEqual({ code: 'CorruptImage', message: 'the HEIF file is broken: more than 4096 item references' });
    // Within its declared size but past the cap given.
    expect((await codeOf(grid({}), { maxInputPixels: 200_000 })).code).toBe('TooManyPixels');
  });

  it('refuses a tile count that lies: CorruptImage', async () => {
    expect(await codeOf(grid({ rows: 8, columns: 8 }))).toEqual({
      code: 'CorruptImage',
      message: 'the HEIF grid declares 8x8 tiles and references 2',
    });
  });

  it('refuses tiles whose declared sizes add up past the cap: TooManyPixels', async () => {
    const liar = { ...tile, width: 40_000, height: 40_000 };
    expect((await codeOf(grid({ tiles: [liar, liar] }))).code).toBe('TooManyPixels');
  });

  it('refuses a loop of item references: CorruptImage', async () => {
    const selfLoop = grid({ gridRefs: [1, tileId(0)], rows: 1, columns: 2 });
    expect(await codeOf(selfLoop)).toEqual({ code: 'CorruptImage', message: expect.stringContaining('references loop') });
    const twoGrids = grid({ gridRefs: [5, tileId(0)], extraGrids: [5], moreRefs: [[5, [1]]] });
    expect((await codeOf(twoGrids)).code).toBe('CorruptImage');
  });

  it('fails a decode past the time cap or the memory cap with decode_limit_exceeded, and the next decode works', async () => {
    const big = gridHeif({
      tiles: Array.from({ length: 16 }, () => tile),
      rows: 4,
      columns: 4,
      outputWidth: tile.width * 4,
      outputHeight: tile.height * 4,
    });
    expect(await codeOf(big, { ...opts, timeoutMs: 1 } as typeof opts)).toEqual({
      code: 'decode_limit_exceeded',
      message: expect.stringContaining('time cap'),
    });
    // 8.7 MP (26 MB of RGB) under a heap cap just above the decoder's initial 16.25 MB: its growth is refused.
    const bigger = gridHeif({
      tiles: Array.from({ length: 64 }, () => tile),
      rows: 8,
      columns: 8,
      outputWidth: tile.width * 8,
      outputHeight: tile.height * 8,
    });
    expect(await codeOf(bigger, { ...opts, heapBytes: 17 * 1024 * 1024 } as typeof opts)).toEqual({
      code: 'decode_limit_exceeded',
      message: expect.stringContaining('memory cap'),
    });
    const after = await fingerprint(big, opts);
    expect([after.width, after.height]).toEqual([tile.width * 4, tile.height * 4]);
  });

  it('fails a truncated HEIC as CorruptImage', async () => {
    const heic = fixture('chelsea.heic');
    expect((await codeOf(heic.subarray(0, Math.floor(heic.length * 0.7)))).code).toBe('CorruptImage');
  });
});

describe('formats the ingest does not read fail UnsupportedFormat, saying what they are', () => {
  const heicAs = (codec: string) => {
    const heic = Buffer.from(fixture('chelsea.heic'));
    const at = heic.indexOf('infe');
    const type = heic.indexOf('hvc1', at);
    heic.write(codec, type, 'latin1');
    return heic;
  };
  const ftyp = (brand: string, ...compatible: string[]) =>
    Buffer.concat([
      Buffer.from([0, 0, 0, 16 + 4 * compatible.length]),
      Buffer.from(`ftyp${brand}\0\0\0\0${compatible.join('')}`, 'latin1'),
      Buffer.alloc(64),
    ]);
  const tiff = (entries: [number, number, number, number][]) => {
    const b = Buffer.alloc(8 + 2 + entries.length * 12 + 4 + 16);
    b.write('II', 0, 'latin1');
    b.writeUInt16LE(42, 2);
    b.writeUInt32LE(8, 4);
    b.writeUInt16LE(entries.length, 8);
    entries.forEach(([tag, type, count, value], i) => {
      b.writeUInt16LE(tag, 10 + i * 12);
      b.writeUInt16LE(type, 12 + i * 12);
      b.writeUInt32LE(count, 14 + i * 12);
      b.writeUInt32LE(value, 18 + i * 12);
    });
    return b;
  };

  it.each([
    ['a PDF', Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'), 'a PDF document'],
    ['an MP4 video', ftyp('isom', 'isom', 'iso2', 'avc1', 'mp41'), 'a video or audio file (ISO media, brand "isom")'],
    ['a QuickTime video', ftyp('qt  ', 'qt  '), 'a video (QuickTime)'],
    ['a Photoshop file', Buffer.concat([Buffer.from('8BPS', 'latin1'), Buffer.alloc(40)]), 'a Photoshop document (PSD)'],
    ['a DNG', tiff([[0xc612, 1, 4, 0x01040000]]), 'a camera RAW (DNG)'],
    ['a Canon CR3', ftyp('crx ', 'crx ', 'isom'), 'a camera RAW (Canon CR3)'],
    [
      'an SVG',
      Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"></svg>'),
      'an SVG drawing',
    ],
    ['a VVC-coded HEIF', heicAs('vvc1'), 'a HEIF image coded as VVC'],
  ])('%s', async (_, bytes, what) => {
    const { code, message } = await codeOf(bytes);
    expect(code).toBe('UnsupportedFormat');
    expect(message).toContain(what);
  });

  it('still reads AV1 in HEIF (AVIF) with sharp, and still calls bytes that are nothing NotAnImage', async () => {
    const avif = await sharp(fixture('chelsea.png')).avif({ quality: 50 }).toBuffer();
    expect((await fingerprint(avif, opts)).format).toBe('heif');
    expect((await codeOf(Buffer.from('just some text, not a picture at all'))).code).toBe('NotAnImage');
  });
});

describe("the dry run's estimate", () => {
  it('fingerprints a HEIC file exactly as the ingest does', async () => {
    const { localFingerprint } = await import('../../lib/cli/estimate');
    const file = path.join(__dirname, '..', 'fixtures', 'chelsea-grid.heic');
    expect(await localFingerprint(file)).toBe((await detectableImage(fixture('chelsea-grid.heic'), opts)).fprint);
  });
});
