// The import's contract (docs/design.md §16): the uploads-queue message of one source object, told apart from S3's
// notifications and re-detections, and its once-only enqueue with the quota counted first.
import { type EnqueueDeps, enqueueSourceObject, type ImportRef, importRef, nextUtcMidnight, sourceUri } from '../../lib/import/enqueue';
import { encodeImportMessage, importMessageIn } from '../../lib/import/message';
import { encodeRedetectMessage } from '../../lib/redetect/message';

const object = { bucket: 'library', key: 'cats/a b+c.jpg', versionId: 'v1', etag: 'abc', size: 12 };
const target = { clientId: 'acme', batchId: 'b1', expiresAt: 2_000_000_000 };

describe('the import message', () => {
  it('round-trips and keeps only the fields set', () => {
    const body = encodeImportMessage({ clientId: 'acme', batchId: 'b1', source: { bucket: 'library', key: 'k.jpg' }, listedAt: 5 });
    expect(JSON.parse(body)).toEqual({
      type: 'import',
      clientId: 'acme',
      batchId: 'b1',
      source: { bucket: 'library', key: 'k.jpg' },
      listedAt: 5,
    });
    expect(importMessageIn(body)).toEqual(JSON.parse(body));
  });

  it('is undefined for an S3 notification, a re-detection or no JSON, and refuses a broken one', () => {
    expect(importMessageIn(JSON.stringify({ Records: [] }))).toBeUndefined();
    expect(importMessageIn(encodeRedetectMessage({ clientId: 'a', batchId: 'b', fprint: 'f', run: 'r' }))).toBeUndefined();
    expect(importMessageIn('not json')).toBeUndefined();
    expect(() => importMessageIn(JSON.stringify({ type: 'import', clientId: 'a', batchId: 'b', source: { bucket: 'x' } }))).toThrow();
  });

  it('names the object by its URI, version included', () => {
    expect(sourceUri(object)).toBe('s3://library/cats/a b+c.jpg?versionId=v1');
    expect(importRef(target, { bucket: 'library', key: 'k' })).toEqual({
      ...target,
      key: 's3://library/k',
      source: { bucket: 'library', key: 'k' },
    });
  });

  it('resumes at the next UTC midnight', () => {
    expect(new Date(nextUtcMidnight(Date.UTC(2026, 11, 31, 23, 59))).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});

describe('enqueueSourceObject', () => {
  const world = (limit: number) => {
    const marks = new Map<string, 'sending' | 'sent'>();
    const counted = new Set<string>();
    const sent: { body: string; group: string }[] = [];
    const id = (r: ImportRef) => `${r.key}\u0000${r.etag ?? ''}`;
    const deps: EnqueueDeps = {
      queue: { send: async (body, group) => void sent.push({ body, group }) },
      marks: {
        begin: async (r) => {
          const was = marks.get(id(r));
          if (was !== 'sent') marks.set(id(r), 'sending');
          return was === 'sent' ? 'sent' : was === 'sending' ? 'unfinished' : 'new';
        },
        sent: async (r) => void marks.set(id(r), 'sent'),
      },
      quota: {
        limitsOf: async () => ({ ratePerSecond: 1, maxImagesPerDay: limit, maxBatchesPerDay: 1 }),
        countUpload: async (r) => {
          if (counted.has(id(r))) return true;
          if (counted.size >= limit) return false;
          counted.add(id(r));
          return true;
        },
      },
      now: () => Date.UTC(2026, 11, 1),
    };
    return { deps, sent, counted };
  };

  it('sends an object once in its client group, however often it is listed', async () => {
    const { deps, sent } = world(10);
    expect(await enqueueSourceObject(deps, target, object)).toBe('enqueued');
    expect(await enqueueSourceObject(deps, target, object)).toBe('sent-before');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.group).toBe('acme');
    expect(importMessageIn(sent[0]!.body)?.source).toEqual(object);
  });

  it('beyond the quota sends nothing and marks nothing sent', async () => {
    const { deps, sent } = world(1);
    expect(await enqueueSourceObject(deps, target, object)).toBe('enqueued');
    expect(await enqueueSourceObject(deps, target, { ...object, key: 'other.jpg' })).toBe('over-quota');
    expect(sent).toHaveLength(1);
  });
});
