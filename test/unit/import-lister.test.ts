// The lister's checkpoint (docs/design.md §16): a run that dies after sending part of a page and before its checkpoint
// lists that page again, counts what it had sent as `sent-before`, and sends no object twice; a manifest's CSV is read
// as S3 Batch Operations reads it. The source is a stand-in for ListObjectsV2 (one S3 call, answered from a list).
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { Batch } from '../../lib/domain/batch';
import type { EnqueueDeps, ImportRef } from '../../lib/import/enqueue';
import { type ListerDeps, listImport } from '../../lib/import/lister';
import { csvFields } from '../../lib/import/manifest';
import { importMessageIn } from '../../lib/import/message';
import type { ImportCheckpoint } from '../../lib/store/imports/imports';

const KEYS = Array.from({ length: 25 }, (_, i) => `p/${String(i).padStart(3, '0')}.${i % 5 === 4 ? 'txt' : 'jpg'}`);

function world() {
  const s3 = {
    send: async (cmd: ListObjectsV2Command) => {
      const { StartAfter, MaxKeys = 1000 } = cmd.input;
      const rest = KEYS.filter((k) => StartAfter === undefined || k > StartAfter);
      return { Contents: rest.slice(0, MaxKeys).map((Key) => ({ Key, ETag: `"e-${Key}"`, Size: 1 })), IsTruncated: rest.length > MaxKeys };
    },
  } as unknown as S3Client;
  const batch = { clientId: 'c', batchId: 'b', expiresAt: 2e9, import: { source: { bucket: 'lib', prefix: 'p/' } } } as unknown as Batch;
  let stored: ImportCheckpoint = { state: 'listing', listed: 0, enqueued: 0, skipped: 0 };
  const marks = new Map<string, string>();
  const sent: string[] = [];
  let crashAfterSends = Infinity;
  const quota = { left: Infinity, slow: new Set<string>() };
  const id = (r: ImportRef) => r.key;
  const enqueue: EnqueueDeps = {
    queue: {
      send: async (body) => {
        if (sent.length >= crashAfterSends) throw new Error('killed');
        sent.push(importMessageIn(body)!.source.key);
      },
    },
    marks: {
      begin: async (r) => {
        const was = marks.get(id(r));
        if (was !== 'sent') marks.set(id(r), 'sending');
        return was === 'sent' ? 'sent' : was ? 'unfinished' : 'new';
      },
      sent: async (r) => void marks.set(id(r), 'sent'),
    },
    quota: {
      limitsOf: async () => ({ ratePerSecond: 1, maxImagesPerDay: 1000, maxBatchesPerDay: 1 }),
      countUpload: async (r) => {
        // A slow charge: the objects sent beside it are charged first (DynamoDB answers in no set order).
        if (quota.slow.has(r.source!.key)) await new Promise((resolve) => setTimeout(resolve, 5));
        if (quota.left <= 0) return false;
        quota.left -= 1;
        return true;
      },
    },
  };
  const closed: number[] = [];
  const deps: ListerDeps = {
    s3,
    enqueue,
    imports: {
      read: async () => ({ batch, checkpoint: stored }),
      checkpoint: async (_c, _b, _s, was, next) => {
        if (was !== stored) return false;
        stored = next;
        return true;
      },
      endLive: async () => undefined,
    },
    close: async (_c, _b, expected) => void closed.push(expected),
    sourcesOf: async () => ['s3://lib/p/'],
    pageSize: 10,
    concurrency: 1,
  };
  return { deps, sent, closed, quota, checkpoint: () => stored, crashAfter: (n: number) => (crashAfterSends = n) };
}

describe('the import lister', () => {
  it('after a run killed mid-page, lists that page again and sends no object twice', async () => {
    const w = world();
    w.crashAfter(12); // the first page (8 images) and 4 of the second page's
    await expect(listImport(w.deps, 'c', 'b')).rejects.toThrow('killed');
    expect(w.checkpoint()).toMatchObject({ listed: 10, enqueued: 8, skipped: 2, cursor: 'p/009.txt' });
    w.crashAfter(Infinity);
    expect(await listImport(w.deps, 'c', 'b')).toEqual({ state: 'listed' });
    expect(w.sent).toHaveLength(20);
    expect(new Set(w.sent).size).toBe(20);
    expect(w.checkpoint()).toMatchObject({ state: 'listed', listed: 25, enqueued: 20, skipped: 5 });
    expect(w.closed).toEqual([20]);
  });

  it('beyond the quota, holds what it refused beside what it sent, counts exactly what was sent, and sends the held first', async () => {
    const w = world();
    let now = Date.UTC(2026, 0, 5, 10);
    w.deps.now = () => now;
    w.deps.concurrency = 4;
    w.quota.left = 3;
    w.quota.slow.add('p/000.jpg'); // the first object's charge lands last: the quota refuses it, not its neighbours
    expect(await listImport(w.deps, 'c', 'b')).toEqual({ state: 'waiting-for-quota', resumesAt: Date.UTC(2026, 0, 6) });
    expect(w.sent).toEqual(['p/001.jpg', 'p/002.jpg', 'p/003.jpg']);
    expect(w.checkpoint()).toMatchObject({ state: 'waiting-for-quota', listed: 4, enqueued: 3, skipped: 0, cursor: 'p/003.jpg' });
    expect(w.checkpoint().held?.map((o) => o.key)).toEqual(['p/000.jpg']);
    // Before the reset nothing moves; after it, the held object goes first and the listing goes on.
    expect(await listImport(w.deps, 'c', 'b')).toMatchObject({ state: 'waiting-for-quota' });
    now = Date.UTC(2026, 0, 6, 0, 1);
    w.quota.left = Infinity;
    expect(await listImport(w.deps, 'c', 'b')).toEqual({ state: 'listed' });
    expect(w.sent[3]).toBe('p/000.jpg');
    expect(new Set(w.sent).size).toBe(20);
    expect(w.sent).toHaveLength(20);
    expect(w.checkpoint()).toMatchObject({ state: 'listed', listed: 25, enqueued: 20, skipped: 5 });
    expect(w.checkpoint().held).toBeUndefined();
    expect(w.closed).toEqual([20]);
  });

  it('reads CSV fields as Batch Operations and Inventory write them', () => {
    expect(csvFields('lib,photos/a%20b.jpg,v1')).toEqual(['lib', 'photos/a%20b.jpg', 'v1']);
    expect(csvFields('"lib","a,""b"".jpg","","true"')).toEqual(['lib', 'a,"b".jpg', '', 'true']);
  });
});
