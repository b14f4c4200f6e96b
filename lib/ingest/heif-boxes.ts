// A bounded reader of the HEIF boxes the ingest needs before it decodes anything (ISO/IEC 23008-12 on ISO/IEC 14496-12):
// the file type, the primary item, its codec, its declared size (ispe, or a grid's output size and tile count), its
// Exif item. It never follows an offset outside the file, reads at most MAX_BOXES boxes and MAX_ITEMS items, and
// allocates nothing beyond the Exif block it returns (at most MAX_EXIF_BYTES). Its answer decides, before any pixel is
// decoded, whether the file is read at all (the codec), whether it is too large (the pixel cap), and whether its grid
// is sound (a tile count that lies, a loop of references): lib/ingest/heif.ts.
import { IceCatError } from '../errors';
import { MAX_EXIF_BYTES } from './exif-ifd';

/** Boxes visited in all: a camera's HEIF has a few dozen. */
const MAX_BOXES = 4096;
/** Items, properties and references kept: an iPhone photo has ~60 items (48 tiles, a thumbnail, Exif, ...). */
const MAX_ITEMS = 4096;

interface HeifItem {
  id: number;
  /** The item type: `hvc1` (HEVC), `av01` (AV1), `grid`, `iden`, `iovl`, `Exif`, `mime`, ... */
  type: string;
  /** Its properties' box types in ipco order (`ispe`, `hvcC`, `irot`, ...), and the ispe size when it has one. */
  properties: string[];
  width?: number;
  height?: number;
}

interface HeifGrid {
  rows: number;
  columns: number;
  outputWidth: number;
  outputHeight: number;
}

export interface HeifFile {
  majorBrand: string;
  brands: string[];
  /** The meta box's handler (`pict` for images). */
  handler?: string;
  primary?: HeifItem;
  /** The primary item's grid, when it is one. */
  grid?: HeifGrid;
  /** Items referenced by `dimg` from each item id (a grid's tiles, in order). */
  derived: Map<number, number[]>;
  items: Map<number, HeifItem>;
  /** The primary item's Exif block (the TIFF header on), when it has one. */
  exif?: Buffer;
}

/** The file is not sound: a box runs past its parent, an item lies about its data. */
export class HeifStructureError extends IceCatError {
  override name = 'HeifStructureError';
  readonly code = 'heif_structure';
}

interface Box {
  type: string;
  /** Where the payload starts and the box ends. */
  start: number;
  end: number;
}

class Reader {
  boxes = 0;
  constructor(readonly buf: Buffer) {}

  children(start: number, end: number): Box[] {
    const out: Box[] = [];
    let at = start;
    while (at + 8 <= end) {
      if (++this.boxes > MAX_BOXES) throw new HeifStructureError(`more than ${MAX_BOXES} boxes`);
      let size = this.buf.readUInt32BE(at);
      const type = this.buf.toString('latin1', at + 4, at + 8);
      let header = 8;
      if (size === 1) {
        if (at + 16 > end) throw new HeifStructureError(`box ${type} is cut short`);
        const large = this.buf.readBigUInt64BE(at + 8);
        size = large > BigInt(end - at) ? end - at + 1 : Number(large);
        header = 16;
      } else if (size === 0) size = end - at;
      if (size < header || at + size > end) throw new HeifStructureError(`box ${type} runs past its end`);
      out.push({ type, start: at + header, end: at + size });
      at += size;
    }
    return out;
  }

  need(at: number, bytes: number, end: number, what: string): void {
    if (at + bytes > end) throw new HeifStructureError(`${what} is cut short`);
  }

  uint(at: number, bytes: number): number {
    if (bytes === 0) return 0;
    if (bytes === 1) return this.buf.readUInt8(at);
    if (bytes === 2) return this.buf.readUInt16BE(at);
    if (bytes === 4) return this.buf.readUInt32BE(at);
    if (bytes === 8) return Number(this.buf.readBigUInt64BE(at));
    throw new HeifStructureError(`a field of ${bytes} bytes`);
  }
}

/** The file's ftyp brands, or undefined when it does not start with one (not an ISO base media file). */
export function fileBrands(buf: Buffer): { majorBrand: string; brands: string[] } | undefined {
  if (buf.length < 16 || buf.toString('latin1', 4, 8) !== 'ftyp') return undefined;
  const size = buf.readUInt32BE(0);
  if (size < 16 || size > Math.min(buf.length, 4096)) return undefined;
  const brands: string[] = [];
  for (let at = 16; at + 4 <= size; at += 4) brands.push(buf.toString('latin1', at, at + 4));
  return { majorBrand: buf.toString('latin1', 8, 12), brands };
}

/** Reads the file's meta box. Throws HeifStructureError when the structure is unsound. */
export function readHeif(buf: Buffer): HeifFile {
  const ftyp = fileBrands(buf);
  if (!ftyp) throw new HeifStructureError('no ftyp box');
  const r = new Reader(buf);
  const top = r.children(0, buf.length);
  const file: HeifFile = { ...ftyp, derived: new Map(), items: new Map() };
  const meta = top.find((b) => b.type === 'meta');
  if (!meta) return file;
  const parts = r.children(meta.start + 4, meta.end);
  const part = (type: string) => parts.find((b) => b.type === type);
  const hdlr = part('hdlr');
  if (hdlr && hdlr.start + 12 <= hdlr.end) file.handler = buf.toString('latin1', hdlr.start + 8, hdlr.start + 12);
  readItemInfo(r, part('iinf'), file.items);
  readProperties(r, part('iprp'), file.items);
  const refs = readReferences(r, part('iref'));
  for (const [from, to] of refs.get('dimg') ?? []) file.derived.set(from, to);
  const pitm = part('pitm');
  if (pitm) {
    r.need(pitm.start, 6, pitm.end, 'pitm');
    const id = buf[pitm.start] === 0 ? buf.readUInt16BE(pitm.start + 4) : r.uint(pitm.start + 4, 4);
    file.primary = file.items.get(id);
  }
  const locations = readLocations(r, part('iloc'));
  const idat = part('idat');
  const data = (id: number, limit: number): Buffer | undefined => itemData(buf, locations.get(id), idat, limit);
  if (file.primary?.type === 'grid') file.grid = readGrid(data(file.primary.id, 64));
  const exifId = [...(refs.get('cdsc') ?? [])].find(
    ([from, to]) => file.items.get(from)?.type === 'Exif' && to.includes(file.primary?.id ?? -1),
  )?.[0];
  const exif = exifId === undefined ? undefined : data(exifId, MAX_EXIF_BYTES + 4);
  // An Exif item starts with the offset of the TIFF header after its own 4 bytes (ISO/IEC 23008-12 A.2.1).
  if (exif && exif.length >= 12) {
    const skip = 4 + exif.readUInt32BE(0);
    if (skip < exif.length) file.exif = exif.subarray(skip);
  }
  return file;
}

function readItemInfo(r: Reader, iinf: Box | undefined, items: Map<number, HeifItem>): void {
  if (!iinf) return;
  const { buf } = r;
  const countBytes = buf[iinf.start] === 0 ? 2 : 4;
  for (const infe of r.children(iinf.start + 4 + countBytes, iinf.end)) {
    if (infe.type !== 'infe' || items.size >= MAX_ITEMS) continue;
    const version = buf[infe.start]!;
    if (version < 2) continue;
    const idBytes = version === 2 ? 2 : 4;
    r.need(infe.start + 4, idBytes + 6, infe.end, 'infe');
    const id = r.uint(infe.start + 4, idBytes);
    const type = buf.toString('latin1', infe.start + 4 + idBytes + 2, infe.start + 4 + idBytes + 6);
    items.set(id, { id, type, properties: [] });
  }
}

function readProperties(r: Reader, iprp: Box | undefined, items: Map<number, HeifItem>): void {
  if (!iprp) return;
  const { buf } = r;
  const parts = r.children(iprp.start, iprp.end);
  const ipco = parts.find((b) => b.type === 'ipco');
  const properties = ipco ? r.children(ipco.start, ipco.end) : [];
  for (const ipma of parts.filter((b) => b.type === 'ipma')) {
    r.need(ipma.start, 8, ipma.end, 'ipma');
    const version = buf[ipma.start]!;
    const wide = (buf[ipma.start + 3]! & 1) === 1;
    const count = buf.readUInt32BE(ipma.start + 4);
    let at = ipma.start + 8;
    for (let e = 0; e < count; e++) {
      const idBytes = version < 1 ? 2 : 4;
      r.need(at, idBytes + 1, ipma.end, 'ipma');
      const item = items.get(r.uint(at, idBytes));
      const associations = buf[at + idBytes]!;
      at += idBytes + 1;
      for (let a = 0; a < associations; a++) {
        r.need(at, wide ? 2 : 1, ipma.end, 'ipma');
        const index = wide ? buf.readUInt16BE(at) & 0x7fff : buf[at]! & 0x7f;
        at += wide ? 2 : 1;
        const prop = properties[index - 1];
        if (!item || !prop || item.properties.length >= 64) continue;
        item.properties.push(prop.type);
        if (prop.type === 'ispe' && prop.start + 12 <= prop.end) {
          item.width = buf.readUInt32BE(prop.start + 4);
          item.height = buf.readUInt32BE(prop.start + 8);
        }
      }
    }
  }
}

/** Each reference type's links, from an item to the items it references. */
function readReferences(r: Reader, iref: Box | undefined): Map<string, Map<number, number[]>> {
  const out = new Map<string, Map<number, number[]>>();
  if (!iref) return out;
  const idBytes = r.buf[iref.start] === 0 ? 2 : 4;
  let kept = 0;
  for (const ref of r.children(iref.start + 4, iref.end)) {
    r.need(ref.start, idBytes + 2, ref.end, `iref ${ref.type}`);
    const from = r.uint(ref.start, idBytes);
    const count = r.buf.readUInt16BE(ref.start + idBytes);
    r.need(ref.start + idBytes + 2, count * idBytes, ref.end, `iref ${ref.type}`);
    if ((kept += count) > MAX_ITEMS) throw new HeifStructureError(`more than ${MAX_ITEMS} item references`);
    const to = Array.from({ length: count }, (_, i) => r.uint(ref.start + idBytes + 2 + i * idBytes, idBytes));
    const links = out.get(ref.type) ?? new Map<number, number[]>();
    links.set(from, [...(links.get(from) ?? []), ...to]);
    out.set(ref.type, links);
  }
  return out;
}

interface Location {
  method: number;
  extents: { offset: number; length: number }[];
}

function readLocations(r: Reader, iloc: Box | undefined): Map<number, Location> {
  const out = new Map<number, Location>();
  if (!iloc) return out;
  const { buf } = r;
  r.need(iloc.start, 8, iloc.end, 'iloc');
  const version = buf[iloc.start]!;
  const sizes = buf.readUInt16BE(iloc.start + 4);
  const [offsetSize, lengthSize, baseSize, indexSize] = [sizes >> 12, (sizes >> 8) & 15, (sizes >> 4) & 15, version > 0 ? sizes & 15 : 0];
  const countBytes = version < 2 ? 2 : 4;
  const count = r.uint(iloc.start + 6, countBytes);
  let at = iloc.start + 6 + countBytes;
  for (let i = 0; i < Math.min(count, MAX_ITEMS); i++) {
    const idBytes = version < 2 ? 2 : 4;
    r.need(at, idBytes + (version > 0 ? 2 : 0) + 2 + baseSize + 2, iloc.end, 'iloc');
    const id = r.uint(at, idBytes);
    at += idBytes;
    const method = version > 0 ? buf.readUInt16BE(at) & 15 : 0;
    at += (version > 0 ? 2 : 0) + 2;
    const base = r.uint(at, baseSize);
    at += baseSize;
    const extentCount = buf.readUInt16BE(at);
    at += 2;
    const extents: Location['extents'] = [];
    for (let e = 0; e < extentCount; e++) {
      r.need(at, indexSize + offsetSize + lengthSize, iloc.end, 'iloc');
      at += indexSize;
      const offset = base + r.uint(at, offsetSize);
      const length = r.uint(at + offsetSize, lengthSize);
      at += offsetSize + lengthSize;
      if (extents.length < 32) extents.push({ offset, length });
    }
    out.set(id, { method, extents });
  }
  return out;
}

/** An item's bytes (file offsets, or inside idat), at most `limit` of them; undefined when it has none that fit. */
function itemData(buf: Buffer, loc: Location | undefined, idat: Box | undefined, limit: number): Buffer | undefined {
  if (!loc || (loc.method !== 0 && loc.method !== 1)) return undefined;
  const origin = loc.method === 1 ? idat : { start: 0, end: buf.length };
  if (!origin) return undefined;
  const parts: Buffer[] = [];
  let total = 0;
  for (const { offset, length } of loc.extents) {
    const start = origin.start + offset;
    const end = length === 0 ? origin.end : start + length;
    if (end > origin.end || start > end) throw new HeifStructureError('an item points outside the file');
    if ((total += end - start) > limit) return undefined;
    parts.push(buf.subarray(start, end));
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

/** ImageGrid (ISO/IEC 23008-12 6.6.2.3.2): version, flags, rows − 1, columns − 1, output size in 16 or 32 bits. */
function readGrid(data: Buffer | undefined): HeifGrid {
  if (!data || data.length < 8) throw new HeifStructureError('the grid has no description');
  const wide = (data[1]! & 1) === 1;
  if (wide && data.length < 12) throw new HeifStructureError('the grid description is cut short');
  return {
    rows: data[2]! + 1,
    columns: data[3]! + 1,
    outputWidth: wide ? data.readUInt32BE(4) : data.readUInt16BE(4),
    outputHeight: wide ? data.readUInt32BE(8) : data.readUInt16BE(6),
  };
}
