// The web app's estimate before an upload (web/estimate.ts): exact copies found among files of equal size only, and
// the most the upload can cost.
import { exactCopies, sha256Of, uploadUpperBound } from '../../web/estimate';

const file = (size: number, bytes: string) => ({ size, bytes });

describe('exact copies among the chosen files', () => {
  it('counts each file after the first of equal bytes, reading only files whose size another shares', async () => {
    const files = [file(3, 'cat'), file(3, 'cat'), file(3, 'dog'), file(5, 'mouse'), file(3, 'cat'), file(4, 'bird')];
    const read: string[] = [];

    const copies = await exactCopies(files, async (f) => (read.push(f.bytes), f.bytes));

    expect(copies).toBe(2);
    expect(read.sort()).toEqual(['cat', 'cat', 'cat', 'dog']);
  });

  it('never counts an empty file, and finds none without a shared size', async () => {
    expect(await exactCopies([file(0, ''), file(0, '')], async (f) => f.bytes)).toBe(0);
    expect(await exactCopies([file(1, 'a'), file(2, 'bb')], async () => 'same')).toBe(0);
  });

  it('hashes the bytes with SHA-256', async () => {
    expect(await sha256Of(new Blob(['abc']))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('the upload estimate', () => {
  it('is every file less the copies, at the service price; without a price, calls only', () => {
    expect(uploadUpperBound(6, 1, 0.001, 100)).toEqual({ files: 6, copies: 1, atMostCalls: 5, atMostUsd: 0.005, remainingToday: 100 });
    expect(uploadUpperBound(3, 0)).toEqual({ files: 3, copies: 0, atMostCalls: 3 });
    expect(uploadUpperBound(1000, 0, 0.001).atMostUsd).toBe(1);
  });
});
