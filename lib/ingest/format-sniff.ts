// What a file is when it is a known format the ingest does not read (docs/design.md §12, docs/api.md "Why an image
// failed"): it fails `UnsupportedFormat` saying what it is, never `NotAnImage` (a file recognised as nothing) or
// `CorruptImage` (an image that is broken). Read from the first bytes only; a TIFF-based camera RAW, which sharp
// would read as a TIFF (its small preview), is told by its first IFD.
import { fileBrands } from './heif-boxes';

const ascii = (bytes: Buffer, at: number, text: string): boolean =>
  bytes.length >= at + text.length && bytes.toString('latin1', at, at + text.length) === text;

/** ISO base media brands of camera RAWs; any other non-HEIF brand is a video or audio file. */
const ISO_RAW: Record<string, string> = { 'crx ': 'a camera RAW (Canon CR3)' };
const QUICKTIME_ATOMS = new Set(['moov', 'mdat', 'wide', 'free', 'skip', 'pnot']);

/** A description of the file's format when it is one the ingest knows and does not read, else undefined. */
export function unreadFormat(bytes: Buffer, heifBrands: ReadonlySet<string>): string | undefined {
  if (ascii(bytes, 0, '%PDF-')) return 'a PDF document';
  if (ascii(bytes, 0, '8BPS')) return 'a Photoshop document (PSD)';
  if (ascii(bytes, 0, 'FUJIFILMCCD-RAW')) return 'a camera RAW (Fujifilm RAF)';
  if (ascii(bytes, 0, 'IIRO') || ascii(bytes, 0, 'IIRS') || ascii(bytes, 0, 'MMOR')) return 'a camera RAW (Olympus ORF)';
  if (ascii(bytes, 0, 'IIU\0')) return 'a camera RAW (Panasonic RW2)';
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x1a45dfa3) return 'a video (Matroska/WebM)';
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'AVI ')) return 'a video (AVI)';
  if ((bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0x0a) || ascii(bytes, 4, 'JXL ')) return 'a JPEG XL image';
  if (ascii(bytes, 0, 'BM') && bytes.length >= 18 && [12, 40, 52, 56, 108, 124].includes(bytes.readUInt32LE(14))) return 'a BMP bitmap';
  const ftyp = fileBrands(bytes);
  if (ftyp) {
    const all = [ftyp.majorBrand, ...ftyp.brands];
    if (all.some((b) => heifBrands.has(b))) return undefined;
    const raw = all.map((b) => ISO_RAW[b]).find(Boolean);
    if (raw) return raw;
    if (ftyp.majorBrand === 'qt  ') return 'a video (QuickTime)';
    return `a video or audio file (ISO media, brand "${ftyp.majorBrand.trim()}")`;
  }
  if (bytes.length >= 8 && QUICKTIME_ATOMS.has(bytes.toString('latin1', 4, 8)) && bytes.readUInt32BE(0) >= 8) return 'a video (QuickTime)';
  if (isSvg(bytes)) return 'an SVG drawing (a vector image, without pixels of its own)';
  return tiffRaw(bytes);
}

function isSvg(bytes: Buffer): boolean {
  const head = bytes
    .toString('utf8', 0, Math.min(bytes.length, 1024))
    .replace(/^\uFEFF/, '')
    .trimStart();
  return (head.startsWith('<?xml') || head.startsWith('<svg') || head.startsWith('<!DOCTYPE svg')) && /<svg[\s>]/.test(head);
}

const DNG_VERSION = 0xc612;
const SUB_IFDS = 0x014a;
const MAKE = 0x010f;

/** A TIFF whose first IFD says camera RAW: a DNGVersion, or a camera's make with SubIFDs (NEF, ARW, CR2, PEF, ...). */
function tiffRaw(bytes: Buffer): string | undefined {
  const order = bytes.toString('latin1', 0, 2);
  if (bytes.length < 16 || (order !== 'II' && order !== 'MM')) return undefined;
  const big = order === 'MM';
  const u16 = (at: number) => (big ? bytes.readUInt16BE(at) : bytes.readUInt16LE(at));
  const u32 = (at: number) => (big ? bytes.readUInt32BE(at) : bytes.readUInt32LE(at));
  if (u16(2) !== 42) return undefined;
  if (ascii(bytes, 8, 'CR')) return 'a camera RAW (Canon CR2)';
  const ifd = u32(4);
  if (ifd < 8 || ifd + 2 > bytes.length) return undefined;
  const count = Math.min(u16(ifd), 256);
  let make: string | undefined;
  let subIfds = false;
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > bytes.length) break;
    const tag = u16(entry);
    if (tag === DNG_VERSION) return 'a camera RAW (DNG)';
    if (tag === SUB_IFDS) subIfds = true;
    if (tag === MAKE) {
      const length = u32(entry + 4);
      const at = length <= 4 ? entry + 8 : u32(entry + 8);
      if (at + length <= bytes.length)
        make = bytes
          .toString('latin1', at, at + Math.min(length, 64))
          .replace(/\0.*$/s, '')
          .trim();
    }
  }
  return subIfds && make ? `a camera RAW (${make})` : undefined;
}
