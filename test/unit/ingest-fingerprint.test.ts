import { xxhash128 } from 'hash-wasm';
import sharp from 'sharp';
import { fingerprint, hammingDistance } from '../../lib/ingest/fingerprint';

const OPTS = { maxInputPixels: 50_000_000 };

/** A deterministic 160x120 RGB picture with structure (gradients and a block), so hashes mean something. */
function pixels(width = 160, height = 120): Buffer {
  const buf = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      const inBlock = x > 40 && x < 90 && y > 30 && y < 80;
      buf[o] = inBlock ? 250 : (x * 255) / width;
      buf[o + 1] = (y * 255) / height;
      buf[o + 2] = inBlock ? 20 : ((x + y) * 7) % 256;
    }
  }
  return buf;
}
const raw = (width = 160, height = 120) => ({ raw: { width, height, channels: 3 as const } });

describe('fingerprint', () => {
  it('gives a PNG and a lossless WebP of the same pixels the same fingerprint', async () => {
    const png = await sharp(pixels(), raw()).png().toBuffer();
    const webp = await sharp(pixels(), raw()).webp({ lossless: true }).toBuffer();

    const [a, b] = await Promise.all([fingerprint(png, OPTS), fingerprint(webp, OPTS)]);

    expect(a.format).toBe('png');
    expect(b.format).toBe('webp');
    expect(a.fprint).toBe(b.fprint);
  });

  it('changes when one pixel changes', async () => {
    const changed = pixels();
    const at = 3 * (60 * 160 + 10);
    changed[at] = changed[at]! ^ 1;
    const a = await fingerprint(await sharp(pixels(), raw()).png().toBuffer(), OPTS);
    const b = await fingerprint(await sharp(changed, raw()).png().toBuffer(), OPTS);

    expect(a.fprint).not.toBe(b.fprint);
    expect(hammingDistance(a.phash, b.phash)).toBeLessThanOrEqual(2);
  });

  it('gives an EXIF-rotated image and its pre-rotated copy the same fingerprint', async () => {
    const upright = await sharp(pixels(), raw()).png().toBuffer();
    // Stored sideways (rotated 90° counter-clockwise) with EXIF orientation 6 telling viewers to turn it clockwise.
    const sideways = await sharp(upright).rotate(-90).png().toBuffer();
    const tagged = await sharp(sideways).withMetadata({ orientation: 6 }).png().toBuffer();

    const [a, b] = await Promise.all([fingerprint(upright, OPTS), fingerprint(tagged, OPTS)]);

    expect(b.width).toBe(160);
    expect(b.height).toBe(120);
    expect(a.fprint).toBe(b.fprint);
  });

  it('includes the dimensions: the same bytes as a different shape differ', async () => {
    const a = await fingerprint(await sharp(pixels(), raw()).png().toBuffer(), OPTS);
    const b = await fingerprint(await sharp(pixels(), raw(120, 160)).png().toBuffer(), OPTS);

    expect(a.fprint).not.toBe(b.fprint);
  });

  it('keeps a near-identical re-encode perceptually close but exactly different', async () => {
    const png = await sharp(pixels(), raw()).png().toBuffer();
    const jpeg = await sharp(pixels(), raw()).jpeg({ quality: 70 }).toBuffer();

    const [a, b] = await Promise.all([fingerprint(png, OPTS), fingerprint(jpeg, OPTS)]);

    expect(a.fprint).not.toBe(b.fprint);
    expect(hammingDistance(a.phash, b.phash)).toBeLessThanOrEqual(6);
  });

  it('rejects a file that is not an image as NotAnImage', async () => {
    await expect(fingerprint(Buffer.from('hello, I am text named cat.jpg'), OPTS)).rejects.toMatchObject({ code: 'NotAnImage' });
  });

  it('rejects a truncated JPEG as CorruptImage', async () => {
    const jpeg = await sharp(pixels(), raw()).jpeg().toBuffer();

    await expect(fingerprint(jpeg.subarray(0, Math.floor(jpeg.length / 2)), OPTS)).rejects.toMatchObject({ code: 'CorruptImage' });
  });

  it('rejects an image declaring more pixels than the limit as TooManyPixels, before decoding', async () => {
    const big = await sharp({ create: { width: 3000, height: 3000, channels: 3, background: '#000' } })
      .png()
      .toBuffer();

    await expect(fingerprint(big, { maxInputPixels: 1_000_000 })).rejects.toMatchObject({ code: 'TooManyPixels' });
  });

  it('rejects a format Rekognition and the pipeline do not take as UnsupportedFormat', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><rect width="100" height="100"/></svg>');

    await expect(fingerprint(svg, OPTS)).rejects.toMatchObject({ code: 'UnsupportedFormat' });
  });
});

describe('fingerprint value', () => {
  it('is the XXH3-128 of the dimensions and the XXH3-128 of the canonical decoded pixels', async () => {
    const png = await sharp(pixels(), raw()).png().toBuffer();

    const fp = await fingerprint(png, OPTS);

    // An independent XXH3 implementation (WebAssembly) over the same canonical bytes.
    const ofPixels = await xxhash128(pixels());
    expect(fp.fprint).toBe(await xxhash128(`160x120x3:${ofPixels}`));
  });
});

describe('thumbnail', () => {
  /** A picture whose top-left quarter is red and the rest blue, so orientation shows. */
  function marked(width: number, height: number): Buffer {
    const buf = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const red = x < width / 2 && y < height / 2;
        buf.set(red ? [230, 20, 20] : [20, 20, 230], (y * width + x) * 3);
      }
    }
    return buf;
  }
  const pixelAt = async (image: Buffer, x: number, y: number): Promise<number[]> => {
    const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
    const o = (y * info.width + x) * info.channels;
    return [...data.subarray(o, o + 3)];
  };

  it('is a WebP at most 256 px a side that keeps a landscape aspect', async () => {
    const fp = await fingerprint(await sharp(marked(1200, 600), raw(1200, 600)).png().toBuffer(), OPTS);

    const meta = await sharp(await fp.thumbnail()).metadata();

    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 256, 128]);
  });

  it('keeps a portrait aspect within 256 px', async () => {
    const fp = await fingerprint(await sharp(marked(900, 1600), raw(900, 1600)).jpeg().toBuffer(), OPTS);

    const meta = await sharp(await fp.thumbnail()).metadata();

    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 144, 256]);
  });

  it('never enlarges a small image', async () => {
    const fp = await fingerprint(await sharp(pixels(), raw()).png().toBuffer(), OPTS);

    const meta = await sharp(await fp.thumbnail()).metadata();

    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 160, 120]);
  });

  it('applies the EXIF orientation', async () => {
    const upright = await sharp(marked(800, 600), raw(800, 600)).png().toBuffer();
    const sideways = await sharp(upright).rotate(-90).png().toBuffer();
    const tagged = await sharp(sideways).withMetadata({ orientation: 6 }).png().toBuffer();

    const thumb = await (await fingerprint(tagged, OPTS)).thumbnail();

    const meta = await sharp(thumb).metadata();
    expect([meta.width, meta.height]).toEqual([256, 192]);
    const [topLeft, bottomRight] = await Promise.all([pixelAt(thumb, 20, 20), pixelAt(thumb, 230, 170)]);
    expect(topLeft[0]).toBeGreaterThan(180); // red where the upright picture is red
    expect(bottomRight[2]).toBeGreaterThan(180);
  });

  it('keeps transparency', async () => {
    const rgba = await sharp({ create: { width: 400, height: 300, channels: 4, background: { r: 0, g: 128, b: 0, alpha: 0.5 } } })
      .png()
      .toBuffer();

    const meta = await sharp(await (await fingerprint(rgba, OPTS)).thumbnail()).metadata();

    expect([meta.format, meta.hasAlpha]).toEqual(['webp', true]);
  });

  it('encodes greyscale pictures, with or without transparency', async () => {
    const grey = await sharp(pixels(), raw()).greyscale().png().toBuffer();
    const greyAlpha = await sharp(pixels(), raw()).greyscale().ensureAlpha(0.5).png().toBuffer();

    const metas = await Promise.all(
      [grey, greyAlpha].map(async (png) => sharp(await (await fingerprint(png, OPTS)).thumbnail()).metadata()),
    );

    expect(metas.map((m) => [m.format, m.width, m.height, m.hasAlpha])).toEqual([
      ['webp', 160, 120, false],
      ['webp', 160, 120, true],
    ]);
  });

  it('encodes the same thumbnail on every call', async () => {
    const fp = await fingerprint(await sharp(marked(2000, 1500), raw(2000, 1500)).jpeg().toBuffer(), OPTS);

    const [first, second] = [await fp.thumbnail(), await fp.thumbnail()];

    expect(first.equals(second)).toBe(true);
  });
});
