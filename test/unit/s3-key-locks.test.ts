// The local S3's per-key locks: work on one name runs one flow at a time, a flow hands what it holds to the calls it
// nests (no AsyncLocalStorage, so no promise hooks in the stack's process), and a released name is forgotten.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { KeyLocks } from '../../local/s3/key-locks';
import type { FilesystemStore } from '../../local/s3/s3rver-store';
import { hardenStore } from '../../local/s3/store';

// s3rver ships no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Store = require('s3rver/lib/stores/filesystem') as new (dir: string) => FilesystemStore;

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('KeyLocks', () => {
  it('runs work on one name one flow at a time, in arrival order', async () => {
    const locks = new KeyLocks();
    const order: string[] = [];
    const first = gate();
    const a = locks.with(['k'], async () => {
      order.push('a starts');
      await first.opened;
      order.push('a ends');
    });
    const b = locks.with(['k'], async () => {
      order.push('b runs');
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['a starts']);
    first.open();
    await Promise.all([a, b]);
    expect(order).toEqual(['a starts', 'a ends', 'b runs']);
  });

  it('lets a flow take again the names it was handed, and only those', async () => {
    const locks = new KeyLocks();
    const seen: string[][] = [];
    await locks.with(['x', 'y'], async (held) => {
      seen.push([...held]);
      // Nested with what it holds: no wait on itself; a new name is added to what the nested work holds.
      await locks.with(['y', 'z'], async (inner) => void seen.push([...inner].sort()), held);
    });
    expect(seen).toEqual([
      ['x', 'y'],
      ['x', 'y', 'z'],
    ]);
  });

  it('forgets every name once its last holder released it', async () => {
    const locks = new KeyLocks();
    await Promise.all(Array.from({ length: 50 }, (_, i) => locks.with([`n${i % 5}`, `m${i % 7}`], async () => undefined)));
    expect(locks.size).toBe(0);
  });

  it('releases a name whose work threw', async () => {
    const locks = new KeyLocks();
    await expect(locks.with(['k'], () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(locks.size).toBe(0);
    await expect(locks.with(['k'], async () => 'next')).resolves.toBe('next');
  });
});

describe('the hardened store under a held lock', () => {
  let dir: string;
  let store: FilesystemStore;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'icecat-s3-locks-'));
    store = new Store(dir);
    await store.putBucket('photos');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("gives the holder a view whose writes go through while another flow's write on the key waits", async () => {
    const locks = hardenStore(store);
    const put = (on: FilesystemStore, body: string) =>
      on.putObject({ bucket: 'photos', key: 'a.txt', content: Readable.from([Buffer.from(body)]), metadata: {} });
    const order: string[] = [];
    const release = gate();
    const wrote = gate();
    const holder = locks.with(['photos/a.txt'], async (view) => {
      await put(view, 'held'); // would wait on itself forever through the plain store
      order.push('holder wrote');
      wrote.open();
      await release.opened;
    });
    await wrote.opened;
    const other = put(store, 'other').then(() => order.push('other wrote'));
    // Time for an unguarded write to finish (a loaded machine can only make this pass, never fail, wrongly).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual(['holder wrote']);
    release.open();
    await Promise.all([holder, other]);
    expect(order).toEqual(['holder wrote', 'other wrote']);
    expect((await store.getMetadata('photos', 'a.txt')).etag).toBeDefined();
  });
});
