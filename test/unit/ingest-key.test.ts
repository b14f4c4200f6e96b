import { RejectedUploadError } from '../../lib/ingest/errors';
import { decodeS3Key, invalidKeyDestination, parseUploadKey, restingKey } from '../../lib/ingest/s3-key';

describe('decodeS3Key', () => {
  it('turns + back into a space', () => {
    expect(decodeS3Key('uploads/demo/b1/my+cat+photo.jpg')).toBe('uploads/demo/b1/my cat photo.jpg');
  });

  it('turns %2B back into a plus sign', () => {
    expect(decodeS3Key('uploads/demo/b1/a%2Bb.jpg')).toBe('uploads/demo/b1/a+b.jpg');
  });

  it('decodes UTF-8 percent-encoding', () => {
    expect(decodeS3Key('uploads/demo/b1/k%C3%A4tzchen+%F0%9F%90%88.png')).toBe('uploads/demo/b1/kätzchen 🐈.png');
  });

  it('rejects a malformed escape with InvalidKey', () => {
    expect(() => decodeS3Key('uploads/demo/b1/bad%E0%A4.jpg')).toThrow(RejectedUploadError);
  });
});

describe('parseUploadKey', () => {
  it('reads client, batch and file name', () => {
    expect(parseUploadKey('uploads/demo/01J9ZX/cat.jpg')).toEqual({ clientId: 'demo', batchId: '01J9ZX', fileName: 'cat.jpg' });
  });

  it('keeps sub-folders in the file name', () => {
    expect(parseUploadKey('uploads/demo/b1/holiday/day 1/cat.jpg').fileName).toBe('holiday/day 1/cat.jpg');
  });

  it.each([
    ['outside uploads/', 'processed/demo/b1/cat.jpg'],
    ['no file name', 'uploads/demo/b1/'],
    ['no batch', 'uploads/demo/cat.jpg'],
    ['batch id with a dot', 'uploads/demo/b.1/cat.jpg'],
    ['batch id over 64 chars', `uploads/demo/${'b'.repeat(65)}/cat.jpg`],
    ['empty client', 'uploads//b1/cat.jpg'],
  ])('rejects a key with %s', (_why, key) => {
    expect(() => parseUploadKey(key)).toThrow(expect.objectContaining({ code: 'InvalidKey' }));
  });
});

describe('restingKey', () => {
  const upload = { clientId: 'demo', batchId: 'b1', fileName: 'x/cat photo.jpeg' };

  it('names processed objects by fingerprint and detected format', () => {
    expect(restingKey('processed', upload, 'abc', 'jpeg')).toBe('processed/demo/b1/abc.jpg');
  });

  it('keeps every duplicate under its fingerprint with its own name', () => {
    expect(restingKey('duplicates', upload, 'abc')).toBe('duplicates/demo/b1/abc/x/cat photo.jpeg');
  });

  it('keeps failed uploads under their own name', () => {
    expect(restingKey('failed', upload)).toBe('failed/demo/b1/x/cat photo.jpeg');
  });

  it('puts keys outside the layout under failed/_invalid/', () => {
    expect(invalidKeyDestination('uploads/stray.jpg')).toBe('failed/_invalid/uploads/stray.jpg');
  });
});
