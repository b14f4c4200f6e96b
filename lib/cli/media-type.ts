// Which files are images, and of what type: the presigned form only takes image/* and the declared type must be the
// one sent. The extension decides; a file without a known one is recognised by its first bytes.
import { open } from 'node:fs/promises';
import path from 'node:path';

const BY_EXTENSION: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.jpe': 'image/jpeg',
  '.jfif': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.bmp': 'image/bmp',
  '.avif': 'image/avif',
  '.heic': 'image/heic',
  '.heif': 'image/heif',
  '.svg': 'image/svg+xml',
};

export const typeByExtension = (fileName: string): string | undefined => BY_EXTENSION[path.extname(fileName).toLowerCase()];

const startsWith = (head: Buffer, bytes: number[], at = 0): boolean => bytes.every((b, i) => head[at + i] === b);
const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/** The image type the first bytes of a file announce (pure), or undefined. */
export function sniffImageType(head: Buffer): string | undefined {
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'image/webp';
  if (startsWith(head, [0x49, 0x49, 0x2a, 0x00]) || startsWith(head, [0x4d, 0x4d, 0x00, 0x2a])) return 'image/tiff';
  if (startsWith(head, ascii('BM'))) return 'image/bmp';
  if (startsWith(head, ascii('ftyp'), 4)) {
    const brand = head.subarray(8, 12).toString('latin1');
    if (brand === 'avif' || brand === 'avis') return 'image/avif';
    if (['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx'].includes(brand)) return 'image/heic';
    if (['mif1', 'mif2', 'msf1'].includes(brand)) return 'image/heif';
  }
  return undefined;
}

/** The type to declare for a file, or undefined when it is not an image by name or by content. */
export async function imageTypeOf(filePath: string): Promise<string | undefined> {
  const byName = typeByExtension(filePath);
  if (byName) return byName;
  const handle = await open(filePath, 'r');
  try {
    const head = Buffer.alloc(16);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return sniffImageType(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
