import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveConnection } from '../../lib/cli/config';
import { UsageError } from '../../lib/cli/errors';
import { checkFile, nameProblem } from '../../lib/cli/file-checks';
import { sniffImageType, typeByExtension } from '../../lib/cli/media-type';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'icecat-checks-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fileWith = (name: string, content: Buffer | string) => {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return { path: p, name: `trip/${name}`, size: Buffer.byteLength(content) };
};

describe('checkFile', () => {
  it('declares an image by its extension', async () => {
    expect(await checkFile(fileWith('a.JPG', 'not really'), new Set())).toMatchObject({
      name: 'trip/a.JPG',
      contentType: 'image/jpeg',
      size: 10,
    });
  });

  it('recognises an image without a known extension by its first bytes', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);

    expect(await checkFile(fileWith('scan.dat', png), new Set())).toMatchObject({ contentType: 'image/png' });
  });

  it.each([
    ['empty.jpg', '', new Set<string>(), 'EmptyFile'],
    ['notes.txt', 'hello', new Set<string>(), 'NotAnImage'],
    ['twice.jpg', 'x', new Set(['trip/twice.jpg']), 'DuplicateName'],
  ])('refuses %s before upload (%s)', async (name, content, seen, code) => {
    expect(await checkFile(fileWith(name, content), seen)).toMatchObject({ file: `trip/${name}`, code });
  });

  it('refuses names the API would refuse', () => {
    expect(nameProblem('trip/a.jpg')).toBeUndefined();
    expect(nameProblem('trip/tab\there.jpg')).toMatch(/control characters/);
    expect(nameProblem('trip\\a.jpg')).toMatch(/backslashes/);
    expect(nameProblem(`trip/${'é'.repeat(130)}.jpg`)).toMatch(/255 bytes/);
    expect(nameProblem(`${'a/'.repeat(130)}b.jpg`)).toMatch(/255 characters/);
  });
});

describe('media types', () => {
  it.each([
    [[0xff, 0xd8, 0xff, 0xe0], 'image/jpeg'],
    [[...Buffer.from('GIF89a')], 'image/gif'],
    [[...Buffer.from('RIFF\0\0\0\0WEBP')], 'image/webp'],
    [[0x49, 0x49, 0x2a, 0x00], 'image/tiff'],
    [[...Buffer.from('\0\0\0\x1cftypheic')], 'image/heic'],
    [[...Buffer.from('\0\0\0\x1cftypheix')], 'image/heic'],
    [[...Buffer.from('\0\0\0\x1cftypmif1')], 'image/heif'],
    [[...Buffer.from('\0\0\0\x1cftypavif')], 'image/avif'],
    [[...Buffer.from('hello world')], undefined],
  ])('sniffs %j as %s', (bytes, type) => {
    expect(sniffImageType(Buffer.from(bytes))).toBe(type);
  });

  it('maps extensions case-insensitively', () => {
    expect(typeByExtension('x/IMG_1.HEIC')).toBe('image/heic');
    expect(typeByExtension('x/IMG_2.heif')).toBe('image/heif');
    expect(typeByExtension('x/readme.md')).toBeUndefined();
  });
});

describe('resolveConnection', () => {
  it('prefers flags to the environment and defaults the URL to the local stack', () => {
    expect(resolveConnection({ apiKey: 'flag' }, { apiKey: 'env', apiUrl: 'https://api.example/' })).toEqual({
      apiUrl: 'https://api.example',
      apiKey: 'flag',
    });
    expect(resolveConnection({}, { apiKey: 'env' })).toEqual({ apiUrl: 'http://127.0.0.1:3000', apiKey: 'env' });
  });

  it('fails naming the variable when there is no key, or the URL is not one', () => {
    expect(() => resolveConnection({}, {})).toThrow(UsageError);
    expect(() => resolveConnection({}, {})).toThrow(/ICECAT_API_KEY/);
    expect(() => resolveConnection({ apiUrl: 'ftp://x' }, { apiKey: 'k' })).toThrow(/http or https/);
  });
});
