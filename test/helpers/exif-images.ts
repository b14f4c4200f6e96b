// Camera-trap-like test photos with EXIF, made with sharp at test time (no binary fixture): a capture time with and
// without an offset, a camera, a GPS position, impossible values, and a 60 KB maker note.
import sharp from 'sharp';

export interface ExifSpec {
  make?: string;
  model?: string;
  dateTimeOriginal?: string;
  offsetTimeOriginal?: string;
  createDate?: string;
  /** Degrees, minutes, seconds and hemisphere. */
  lat?: [number, number, number, 'N' | 'S'];
  lon?: [number, number, number, 'E' | 'W'];
  /** Bytes of a maker note (MakerNote, tag 0x927C), at most ~60,000 (one JPEG APP1 segment). */
  makerNoteBytes?: number;
}

const rational = (n: number) => `${Math.round(n * 1000)}/1000`;

/** A JPEG of `side` px of a colour, carrying the EXIF described. */
export async function photoWithExif(spec: ExifSpec, side = 160, colour = '#5a7d3c'): Promise<Buffer> {
  const ifd0: Record<string, string> = {};
  const ifd2: Record<string, string> = {};
  const ifd3: Record<string, string> = {};
  if (spec.make) ifd0.Make = spec.make;
  if (spec.model) ifd0.Model = spec.model;
  if (spec.dateTimeOriginal) ifd2.DateTimeOriginal = spec.dateTimeOriginal;
  if (spec.offsetTimeOriginal) ifd2.OffsetTimeOriginal = spec.offsetTimeOriginal;
  if (spec.createDate) ifd2.DateTimeDigitized = spec.createDate;
  // sharp writes no MakerNote itself: a UserComment of that size, renamed to MakerNote below.
  if (spec.makerNoteBytes) ifd2.UserComment = 'm'.repeat(spec.makerNoteBytes);
  if (spec.lat) {
    ifd3.GPSLatitudeRef = spec.lat[3];
    ifd3.GPSLatitude = spec.lat
      .slice(0, 3)
      .map((n) => rational(n as number))
      .join(' ');
  }
  if (spec.lon) {
    ifd3.GPSLongitudeRef = spec.lon[3];
    ifd3.GPSLongitude = spec.lon
      .slice(0, 3)
      .map((n) => rational(n as number))
      .join(' ');
  }
  // Some texture, so that each photo has its own pixels.
  const seed = [...colour].reduce((n, c) => n * 31 + c.charCodeAt(0), 7) % 9973;
  const noise = Buffer.from(Array.from({ length: side * side * 3 }, (_, i) => (i * 7919 + seed * (1 + (i % 3))) % 251));
  const jpeg = await sharp(noise, { raw: { width: side, height: side, channels: 3 } })
    .jpeg({ quality: 85 })
    .withExif({ IFD0: ifd0, IFD2: ifd2, IFD3: ifd3 })
    .toBuffer();
  return spec.makerNoteBytes ? renameTag(jpeg, 0x9286, 0x927c) : jpeg;
}

/** The same JPEG with one EXIF tag id changed (little-endian, as sharp writes EXIF on this platform). */
function renameTag(jpeg: Buffer, from: number, to: number): Buffer {
  const out = Buffer.from(jpeg);
  const needle = Buffer.from([from & 0xff, from >> 8, 0x07, 0x00]);
  const at = out.indexOf(needle);
  if (at < 0) throw new Error(`tag 0x${from.toString(16)} not found in the EXIF`);
  out[at] = to & 0xff;
  out[at + 1] = to >> 8;
  return out;
}

/**
 * The EXIF bomb (issue 29, item 1): one IFD of `entries` BYTE entries, each of count 0xFFFFFFFF with its values at the
 * IFD itself, and ExifTag, GPSTag, InteroperabilityTag and the next-IFD pointer all pointing back at that IFD. A reader
 * that builds an array as long as a count says (within the buffer) builds ~65,000 elements per entry, in every IFD it
 * is pointed to. The block is what sharp's metadata().exif answers: `Exif\0\0` and a little-endian TIFF.
 */
export function exifBombBlock(entries = 5450): Buffer {
  const ifd = 8;
  const pointers = [0x8769, 0x8825, 0xa005];
  const count = entries + pointers.length;
  const tiff = Buffer.alloc(ifd + 2 + count * 12 + 4);
  tiff.write('II', 0, 'latin1');
  tiff.writeUInt16LE(42, 2);
  tiff.writeUInt32LE(ifd, 4);
  tiff.writeUInt16LE(count, ifd);
  for (let i = 0; i < count; i += 1) {
    const at = ifd + 2 + i * 12;
    const pointer = pointers[i - entries];
    tiff.writeUInt16LE(pointer ?? 0x1000 + i, at);
    tiff.writeUInt16LE(pointer ? 4 : 1, at + 2); // LONG pointer, or BYTE
    tiff.writeUInt32LE(pointer ? 1 : 0xffffffff, at + 4);
    tiff.writeUInt32LE(ifd, at + 8);
  }
  tiff.writeUInt32LE(ifd, ifd + 2 + count * 12); // next IFD: itself
  return Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
}

/** A sharp-made JPEG of `side` px with the EXIF bomb spliced in as its APP1 segment, right after SOI (~66 KB). */
export async function exifBombJpeg(side = 160, colour = '#6b4f2a'): Promise<Buffer> {
  const plain = await sharp({ create: { width: side, height: side, channels: 3, background: colour } })
    .jpeg({ quality: 80 })
    .toBuffer();
  const block = exifBombBlock();
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xffe1, 0);
  segment.writeUInt16BE(block.length + 2, 2);
  return Buffer.concat([plain.subarray(0, 2), segment, block, plain.subarray(2)]);
}
