// Builds HEIF files box by box (ISO/IEC 23008-12, on the ISO base media file format ISO/IEC 14496-12), from HEVC
// tiles that libheif's own heif-enc coded: the grid photo a phone writes (tiles in a `grid` item, `irot`/`imir`, an
// Exif item), and the worst files we could think of (a huge declared grid, a tile count that lies, a loop of
// references). test/fixtures/make-heic.ts writes the committed fixtures with it; the bound tests build the bad ones.

/** One HEVC-coded image taken out of a single-image HEIF: its hvcC box, its colr box if any, its data, its size. */
export interface CodedTile {
  hvcC: Buffer;
  colr?: Buffer;
  data: Buffer;
  width: number;
  height: number;
}

interface RawBox {
  type: string;
  start: number;
  end: number;
  whole: Buffer;
}

function boxes(buf: Buffer, start: number, end: number): RawBox[] {
  const out: RawBox[] = [];
  for (let at = start; at + 8 <= end; ) {
    const size = buf.readUInt32BE(at) || end - at;
    out.push({ type: buf.toString('latin1', at + 4, at + 8), start: at + 8, end: at + size, whole: buf.subarray(at, at + size) });
    at += size;
  }
  return out;
}

/**
 * The first HEVC item of a heif-enc file (iloc version 0 or 1, file offsets): its primary image, or its one tile
 * when heif-enc wrapped an odd-sized image in a 1x1 grid (it codes the even size and crops with the grid).
 */
export function codedTile(file: Buffer): CodedTile {
  const meta = boxes(file, 0, file.length).find((b) => b.type === 'meta')!;
  const parts = boxes(file, meta.start + 4, meta.end);
  const part = (t: string) => parts.find((b) => b.type === t)!;
  const iinf = part('iinf');
  const hevc = boxes(file, iinf.start + 6, iinf.end).find(
    (b) => b.type === 'infe' && file.toString('latin1', b.start + 8, b.start + 12) === 'hvc1',
  )!;
  const primary = file.readUInt16BE(hevc.start + 4);
  const iprp = part('iprp');
  const [ipco, ipma] = ['ipco', 'ipma'].map((t) => boxes(file, iprp.start, iprp.end).find((b) => b.type === t)!);
  const props = boxes(file, ipco!.start, ipco!.end);
  const mine: RawBox[] = [];
  const wide = (file[ipma!.start + 3]! & 1) === 1;
  let at = ipma!.start + 8;
  for (let e = file.readUInt32BE(ipma!.start + 4); e > 0; e--) {
    const id = file.readUInt16BE(at);
    const n = file[at + 2]!;
    at += 3;
    for (let a = 0; a < n; a++, at += wide ? 2 : 1) {
      const index = wide ? file.readUInt16BE(at) & 0x7fff : file[at]! & 0x7f;
      if (id === primary) mine.push(props[index - 1]!);
    }
  }
  const ispe = mine.find((b) => b.type === 'ispe')!;
  const iloc = part('iloc');
  const version = file[iloc.start]!;
  const sizes = file.readUInt16BE(iloc.start + 4);
  if (sizes >> 12 !== 4 || ((sizes >> 8) & 15) !== 4) throw new Error('expected 4-byte iloc offsets and lengths');
  const baseSize = (sizes >> 4) & 15;
  let p = iloc.start + 8;
  for (let i = file.readUInt16BE(iloc.start + 6); i > 0; i--) {
    const id = file.readUInt16BE(p);
    p += 2 + (version > 0 ? 2 : 0) + 2;
    const base = baseSize === 4 ? file.readUInt32BE(p) : 0;
    p += baseSize;
    const extents = file.readUInt16BE(p);
    p += 2;
    if (id === primary) {
      if (extents !== 1) throw new Error('expected one extent');
      const offset = base + file.readUInt32BE(p);
      const length = file.readUInt32BE(p + 4);
      return {
        hvcC: mine.find((b) => b.type === 'hvcC')!.whole,
        ...(mine.some((b) => b.type === 'colr') ? { colr: mine.find((b) => b.type === 'colr')!.whole } : {}),
        data: file.subarray(offset, offset + length),
        width: file.readUInt32BE(ispe.start + 4),
        height: file.readUInt32BE(ispe.start + 8),
      };
    }
    p += extents * 8;
  }
  throw new Error('the primary item has no location');
}

const u8 = (n: number) => Buffer.from([n]);
const u16 = (n: number) => Buffer.from([n >> 8, n & 255]);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const box = (type: string, ...payload: Buffer[]) => {
  const body = Buffer.concat(payload);
  return Buffer.concat([u32(body.length + 8), Buffer.from(type, 'latin1'), body]);
};
const fullBox = (type: string, version: number, flags: number, ...payload: Buffer[]) =>
  box(type, u8(version), Buffer.from([(flags >> 16) & 255, (flags >> 8) & 255, flags & 255]), ...payload);

export interface GridSpec {
  tiles: CodedTile[];
  rows: number;
  columns: number;
  outputWidth: number;
  outputHeight: number;
  /** irot: quarter turns anticlockwise applied on display. */
  rotation?: 0 | 1 | 2 | 3;
  /** imir, applied after irot (ipma order): 0 flips top to bottom as libheif reads it, 1 left to right. */
  mirror?: 0 | 1;
  /** The TIFF block (with or without its `Exif\0\0`), stored as the grid's Exif item. */
  exif?: Buffer;
  /** The grid's dimg references, in place of one per tile (to make a count that lies, or a loop). */
  gridRefs?: number[];
  /** More dimg references, from an item id to others (a loop through a second grid). */
  moreRefs?: [number, number[]][];
  /** Items of type `grid` beyond the primary one, each with the primary's grid description. */
  extraGrids?: number[];
}

const GRID_ID = 1;
const EXIF_ID = 2;
/** Tile item ids are 10, 11, ...: `tileId(i)`. */
export const tileId = (i: number): number => 10 + i;

/** A HEIF whose primary item is a grid of the tiles, row by row, with its transforms and Exif item. */
export function gridHeif(spec: GridSpec): Buffer {
  const tileIds = spec.tiles.map((_, i) => tileId(i));
  const gridIds = [GRID_ID, ...(spec.extraGrids ?? [])];
  const wide = spec.outputWidth > 0xffff || spec.outputHeight > 0xffff;
  const gridData = Buffer.concat([
    u8(0),
    u8(wide ? 1 : 0),
    u8(spec.rows - 1),
    u8(spec.columns - 1),
    ...(wide ? [u32(spec.outputWidth), u32(spec.outputHeight)] : [u16(spec.outputWidth), u16(spec.outputHeight)]),
  ]);
  const exifData = spec.exif
    ? Buffer.concat([
        u32(6),
        spec.exif.toString('latin1', 0, 6) === 'Exif\0\0' ? spec.exif : Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), spec.exif]),
      ])
    : undefined;
  // Properties, 1-based: the tiles' hvcC (one per distinct box), colr, the tile ispe, the grid ispe, irot, imir.
  const hvcCs = [...new Set(spec.tiles.map((t) => t.hvcC.toString('hex')))];
  const props: Buffer[] = hvcCs.map((h) => Buffer.from(h, 'hex'));
  const colr = spec.tiles[0]?.colr;
  const colrIndex = colr ? props.push(colr) : 0;
  const tile = spec.tiles[0]!;
  const tileIspe = props.push(fullBox('ispe', 0, 0, u32(tile.width), u32(tile.height)));
  const gridIspe = props.push(fullBox('ispe', 0, 0, u32(spec.outputWidth), u32(spec.outputHeight)));
  const irot = spec.rotation ? props.push(box('irot', u8(spec.rotation))) : 0;
  const imir = spec.mirror !== undefined ? props.push(box('imir', u8(spec.mirror))) : 0;
  const essential = (i: number) => u8(0x80 | i);
  const ipmaEntries: Buffer[] = [
    ...gridIds.map((id) =>
      Buffer.concat([
        u16(id),
        u8(1 + (colrIndex ? 1 : 0) + (irot ? 1 : 0) + (imir ? 1 : 0)),
        u8(gridIspe),
        ...(colrIndex ? [u8(colrIndex)] : []),
        ...(irot ? [essential(irot)] : []),
        ...(imir ? [essential(imir)] : []),
      ]),
    ),
    ...spec.tiles.map((t, i) =>
      Buffer.concat([
        u16(tileIds[i]!),
        u8(colrIndex ? 3 : 2),
        essential(hvcCs.indexOf(t.hvcC.toString('hex')) + 1),
        u8(tileIspe),
        ...(colrIndex ? [u8(colrIndex)] : []),
      ]),
    ),
  ];
  const infe = (id: number, type: string, hidden: boolean) =>
    fullBox('infe', 2, hidden ? 1 : 0, u16(id), u16(0), Buffer.from(type, 'latin1'), u8(0));
  const refBox = (type: string, from: number, to: number[]) => box(type, u16(from), u16(to.length), ...to.map(u16));
  const items: Buffer[] = [
    ...gridIds.map((id) => infe(id, 'grid', id !== GRID_ID)),
    ...(exifData ? [infe(EXIF_ID, 'Exif', true)] : []),
    ...tileIds.map((id) => infe(id, 'hvc1', true)),
  ];
  const refs = [
    refBox('dimg', GRID_ID, spec.gridRefs ?? tileIds),
    ...(spec.moreRefs ?? []).map(([from, to]) => refBox('dimg', from, to)),
    ...(exifData ? [refBox('cdsc', EXIF_ID, [GRID_ID])] : []),
  ];
  const ftyp = box('ftyp', Buffer.from('heic', 'latin1'), u32(0), Buffer.from('mif1heic', 'latin1'));
  const payloads: [number, Buffer][] = [
    ...spec.tiles.map((t, i): [number, Buffer] => [tileIds[i]!, t.data]),
    ...(exifData ? [[EXIF_ID, exifData] as [number, Buffer]] : []),
  ];
  const meta = (mdatStart: number) => {
    let offset = mdatStart;
    const located = payloads.map(([id, data]) => {
      const entry = Buffer.concat([u16(id), u16(0), u16(0), u16(1), u32(offset), u32(data.length)]);
      offset += data.length;
      return entry;
    });
    const gridLocs = gridIds.map((id) => Buffer.concat([u16(id), u16(1), u16(0), u16(1), u32(0), u32(gridData.length)]));
    return fullBox(
      'meta',
      0,
      0,
      fullBox('hdlr', 0, 0, u32(0), Buffer.from('pict', 'latin1'), u32(0), u32(0), u32(0), u8(0)),
      fullBox('pitm', 0, 0, u16(GRID_ID)),
      fullBox('iinf', 0, 0, u16(items.length), ...items),
      fullBox('iref', 0, 0, ...refs),
      box('iprp', box('ipco', ...props), fullBox('ipma', 0, 0, u32(ipmaEntries.length), ...ipmaEntries)),
      fullBox('iloc', 1, 0, u16(0x4400), u16(payloads.length + gridIds.length), ...located, ...gridLocs),
      box('idat', gridData),
    );
  };
  const start = ftyp.length + meta(0).length + 8;
  return Buffer.concat([ftyp, meta(start), box('mdat', ...payloads.map(([, d]) => d))]);
}
