// A bounded reader of the few EXIF tags the capture facts need (docs/design.md §12): IFD0's Make, Model and its two
// pointers, the Exif IFD's capture times and offsets, the GPS IFD's latitude and longitude. It visits at most those
// three IFDs, each once, reads at most MAX_ENTRIES entries of each, and reads a tag's value only when it is one of the
// tags above and its count is within that tag's own cap; every read is bounded by the block. A block beyond its caps
// (too long, an IFD with more entries than any camera writes, a pointer back into an IFD already visited) defeats the
// reader: it answers undefined and the capture facts are null. Nothing here allocates more than the tags it keeps.
import { IceCatError } from '../errors';

/** sharp's EXIF block of a JPEG is one APP1 segment (< 64 KB); other formats may carry more, never this much. */
export const MAX_EXIF_BYTES = 256 * 1024;
/** Entries read of one IFD: cameras write a few dozen. An IFD that says more defeats the reader. */
export const MAX_ENTRIES = 512;
/** Characters of an ASCII value kept (a camera's make, a date: a few dozen). */
const MAX_ASCII = 256;

/** The tags the capture facts need, as exif-reader named and typed them (strings, dates as text, rationals). */
interface ExifFields {
  make?: string | Buffer;
  model?: string | Buffer;
  dateTimeOriginal?: string | Buffer;
  dateTimeDigitized?: string | Buffer;
  offsetTimeOriginal?: string | Buffer;
  offsetTimeDigitized?: string | Buffer;
  gpsLatitudeRef?: string | Buffer;
  gpsLatitude?: number | number[];
  gpsLongitudeRef?: string | Buffer;
  gpsLongitude?: number | number[];
}

/** What a read did: how many IFDs and entries it looked at (tests and debugging). */
export interface ExifReadStats {
  ifds: number;
  entries: number;
}

type Field = keyof ExifFields;
type Ifd = 'image' | 'photo' | 'gpsInfo';

const EXIF_POINTER = 0x8769;
const GPS_POINTER = 0x8825;

const TAGS: Record<Ifd, Record<number, Field>> = {
  image: { 0x010f: 'make', 0x0110: 'model' },
  photo: { 0x9003: 'dateTimeOriginal', 0x9004: 'dateTimeDigitized', 0x9011: 'offsetTimeOriginal', 0x9012: 'offsetTimeDigitized' },
  gpsInfo: { 0x0001: 'gpsLatitudeRef', 0x0002: 'gpsLatitude', 0x0003: 'gpsLongitudeRef', 0x0004: 'gpsLongitude' },
};

const ASCII = 2;
const SHORT = 3;
const LONG = 4;
const RATIONAL = 5;
const IFD_TYPE = 13;
/** Rationals kept of a GPS coordinate: degrees, minutes, seconds. A longer one is impossible. */
const MAX_RATIONALS = 3;

/** An EXIF block the reader refuses to follow further (a loop, an oversized IFD): its capture facts read as null. */
class ExifDefeatedError extends IceCatError {
  override name = 'ExifDefeatedError';
  readonly code = 'exif_defeated';
}

/** The capture tags of an EXIF block (with or without sharp's `Exif\0\0` prefix), or undefined when it defeats the reader. */
export function readExifFields(block: Buffer, stats: ExifReadStats = { ifds: 0, entries: 0 }): ExifFields | undefined {
  if (block.length > MAX_EXIF_BYTES) return undefined;
  const base = block.toString('latin1', 0, 6) === 'Exif\0\0' ? 6 : 0;
  const tiff = block.subarray(base);
  if (tiff.length < 8) return undefined;
  const order = tiff.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const big = order === 'MM';
  const u16 = (at: number): number => (big ? tiff.readUInt16BE(at) : tiff.readUInt16LE(at));
  const u32 = (at: number): number => (big ? tiff.readUInt32BE(at) : tiff.readUInt32LE(at));
  if (u16(2) !== 42) return undefined;

  const fields: ExifFields = {};
  const visited = new Set<number>();

  /** The value of one wanted entry, or undefined when its type or count is not what the tag can be. */
  const value = (entry: number, type: number, count: number): string | Buffer | number | number[] | undefined => {
    const size = type === ASCII ? 1 : type === RATIONAL ? 8 : type === SHORT ? 2 : type === LONG ? 4 : 0;
    if (size === 0 || count === 0) return undefined;
    if (type === ASCII ? count > MAX_ASCII : count > MAX_RATIONALS) return undefined;
    const start = size * count <= 4 ? entry + 8 : u32(entry + 8);
    if (start + size * count > tiff.length) return undefined;
    if (type === ASCII) {
      const bytes = tiff.subarray(start, start + count);
      if (bytes.some((b) => b > 0x7f)) return Buffer.from(bytes);
      const text = bytes.toString('latin1');
      return text.endsWith('\0') ? text.slice(0, -1) : text;
    }
    const read = (at: number): number => (type === RATIONAL ? u32(at) / u32(at + 4) : type === SHORT ? u16(at) : u32(at));
    const values = Array.from({ length: count }, (_, i) => read(start + i * size));
    return count === 1 ? values[0] : values;
  };

  /** Reads one IFD's wanted tags; answers the offsets of the IFDs it points to. */
  const readIfd = (offset: number, ifd: Ifd): { photo?: number; gpsInfo?: number } => {
    if (visited.has(offset)) throw new ExifDefeatedError('an IFD points back at one already read');
    visited.add(offset);
    stats.ifds += 1;
    if (offset < 8 || offset + 2 > tiff.length) return {};
    const entries = u16(offset);
    if (entries > MAX_ENTRIES) throw new ExifDefeatedError(`an IFD of ${entries} entries`);
    const pointers: { photo?: number; gpsInfo?: number } = {};
    for (let i = 0; i < entries; i += 1) {
      const entry = offset + 2 + i * 12;
      if (entry + 12 > tiff.length) break;
      stats.entries += 1;
      const tag = u16(entry);
      const type = u16(entry + 2);
      const count = u32(entry + 4);
      if (ifd === 'image' && (tag === EXIF_POINTER || tag === GPS_POINTER)) {
        if (count !== 1 || (type !== LONG && type !== IFD_TYPE && type !== SHORT)) continue;
        const target = type === SHORT ? u16(entry + 8) : u32(entry + 8);
        if (target > 0) pointers[tag === EXIF_POINTER ? 'photo' : 'gpsInfo'] = target;
        continue;
      }
      const field = TAGS[ifd][tag];
      if (!field) continue;
      const v = value(entry, type, count);
      if (v === undefined) continue;
      (fields as Record<Field, unknown>)[field] = v;
    }
    return pointers;
  };

  try {
    const pointers = readIfd(u32(4), 'image');
    if (pointers.photo !== undefined) readIfd(pointers.photo, 'photo');
    if (pointers.gpsInfo !== undefined) readIfd(pointers.gpsInfo, 'gpsInfo');
  } catch (err) {
    if (err instanceof ExifDefeatedError || err instanceof RangeError) return undefined;
    throw err;
  }
  return fields;
}
