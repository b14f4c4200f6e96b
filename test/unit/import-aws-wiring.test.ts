// The import path on AWS, wired (docs/decisions/0043): the batches function given an import engine and no local
// lister starts an S3 Batch Operations job for a batch from a source (after the allowed-sources check: 403 first,
// nothing started), records its id on the import, and :retry sends the failed in-place images to the uploads queue;
// given the local lister it queues the listing as before and never touches the engine. The task skips non-images by
// name and counts each object in the import's progress. The engine, the stores and the queue are fakes through their
// interfaces: no SDK client is mocked.
import { s3BatchInvocationFor } from '../../events/s3-batch-operations';
import { type ImportStores, importDeps } from '../../functions/batches/app';
import {
  checkSource,
  type ImportApiDeps,
  ImportsNotConfiguredError,
  retryFailed,
  SourceNotAllowedError,
  startListing,
} from '../../lib/api/import-batch';
import type { Batch } from '../../lib/domain/batch';
import type { Image, SourceObject } from '../../lib/domain/image';
import type { ImportSource } from '../../lib/domain/import';
import type { ImportEngine, ImportJob } from '../../lib/import/batch-operations';
import { answerInvocation, type TaskDeps } from '../../lib/import/batch-operations-task';
import type { EnqueueDeps, ImportRef } from '../../lib/import/enqueue';
import { importMessageIn, listJobIn } from '../../lib/import/message';
import { newBatch } from '../../lib/store/batch/summary';

const LISTED = { state: 'listed' as const, listed: 3, enqueued: 2, skipped: 1 };
const ALLOWED = ['s3://acme-photos/2024/', 's3://acme-photos/manifests/'];
const PREFIX: ImportSource = { bucket: 'acme-photos', prefix: '2024/trip/' };
const MANIFEST: ImportSource = { manifest: 's3://acme-photos/manifests/cats.csv' };
const batchOf = (source: ImportSource) => ({
  clientId: 'acme',
  batchId: 'lib-1',
  expiresAt: 1_893_456_000,
  import: { source } as Batch['import'],
});

function fakeEngine() {
  const calls = { check: [] as ImportSource[], start: [] as ImportJob[], describe: [] as string[] };
  const engine: ImportEngine = {
    check: async (source) => void calls.check.push(source),
    start: async (job) => {
      calls.start.push(job);
      return { jobId: `job-${calls.start.length}` };
    },
    describe: async (jobId) => {
      calls.describe.push(jobId);
      return { status: 'Active', over: false, tasks: { total: 0, succeeded: 0, failed: 0 } };
    },
  };
  return { engine, calls };
}

/** The uploads queue, the send marks and the quota, in memory: what a run sent, once per object. */
function uploads(maxImagesPerDay = 100) {
  const sent: { body: string; group: string }[] = [];
  const marks = new Map<string, string>();
  let counted = 0;
  const deps: EnqueueDeps = {
    queue: { send: async (body, group) => void sent.push({ body, group }) },
    marks: {
      begin: async (r) => {
        const was = marks.get(r.key);
        if (was !== 'sent') marks.set(r.key, 'sending');
        return was === 'sent' ? 'sent' : was ? 'unfinished' : 'new';
      },
      sent: async (r) => void marks.set(r.key, 'sent'),
    },
    quota: {
      limitsOf: async () => ({ ratePerSecond: 10, maxImagesPerDay, maxBatchesPerDay: 10 }),
      countUpload: async () => (counted < maxImagesPerDay ? ((counted += 1), true) : false),
    },
  };
  return { deps, sent };
}

function apiDeps(engine: ImportEngine, recorded: { jobId: string; attempt: number }[], failed: (Image & { source: SourceObject })[] = []) {
  const { deps: enqueue, sent } = uploads();
  const deps: ImportApiDeps = {
    sources: { sourcesOf: async () => ALLOWED },
    imports: {
      markLive: async () => undefined,
      read: async () => ({
        batch: {
          ...newBatch({ clientId: 'acme', batchId: 'lib-1', now: 0, debug: false, retentionDays: 30 }),
          import: { source: PREFIX, ...LISTED },
        },
        checkpoint: LISTED,
      }),
      sentObjects: async () => ({ items: [] }),
      records: async () => new Map(),
      failedImports: async () => failed,
      putBack: async () => true,
    },
    engine: { check: engine.check, start: engine.start, recordJob: async (_c, _b, job) => void recorded.push(job) },
    enqueue,
    usage: async () => ({ accepted: 0 }),
  };
  return { deps, sent };
}

describe('the batches function with an import engine and no local lister (AWS)', () => {
  it('refuses a source outside the client’s with SourceNotAllowedError (403) before the engine is asked anything', async () => {
    const { engine, calls } = fakeEngine();
    const { deps } = apiDeps(engine, []);

    await expect(checkSource(deps, 'acme', { bucket: 'acme-photos', prefix: '2023/' })).rejects.toBeInstanceOf(SourceNotAllowedError);
    await expect(checkSource(deps, 'acme', { manifest: 's3://other/m.csv' })).rejects.toBeInstanceOf(SourceNotAllowedError);

    expect(calls).toEqual({ check: [], start: [], describe: [] });
  });

  it('starts one job for a prefix, its tasks allowed under the prefix alone, and records its id on the import', async () => {
    const { engine, calls } = fakeEngine();
    const recorded: { jobId: string; attempt: number }[] = [];
    const { deps } = apiDeps(engine, recorded);

    await checkSource(deps, 'acme', PREFIX);
    await startListing(deps, batchOf(PREFIX));

    expect(calls.check).toEqual([PREFIX]);
    expect(calls.start).toEqual([
      { clientId: 'acme', batchId: 'lib-1', expiresAt: 1_893_456_000, source: PREFIX, allow: ['s3://acme-photos/2024/trip/'], attempt: 1 },
    ]);
    expect(recorded).toEqual([{ jobId: 'job-1', attempt: 1 }]);
  });

  it("reads a manifest before the batch is made, and lets the manifest's job read only the client's allowed sources", async () => {
    const { engine, calls } = fakeEngine();
    const { deps } = apiDeps(engine, []);

    await checkSource(deps, 'acme', MANIFEST);
    await startListing(deps, batchOf(MANIFEST));

    expect(calls.check).toEqual([MANIFEST]);
    expect(calls.start.map((j) => [j.source, j.allow])).toEqual([[MANIFEST, ALLOWED]]);
  });

  it(':retry sends exactly the failed in-place images to the uploads queue, in the client’s group', async () => {
    const { engine, calls } = fakeEngine();
    const source = { bucket: 'acme-photos', key: '2024/trip/cat.jpg', etag: 'e1' };
    const failed = [
      { fprint: 'f'.repeat(64), status: 'fail', key: 's3://acme-photos/2024/trip/cat.jpg', source } as unknown as Image & {
        source: SourceObject;
      },
    ];
    const { deps, sent } = apiDeps(engine, [], failed);

    const out = await retryFailed(deps, 'acme', 'lib-1', 0.001);

    expect(out.resubmitted).toBe(1);
    expect(sent.map((s) => [importMessageIn(s.body)?.source, s.group])).toEqual([[source, 'acme']]);
    expect(calls.start).toEqual([]);
  });
});

describe("the batches function's wiring of imports", () => {
  /** The import's stores in memory, as createBatchesHandler hands them built: the job ids it records kept. */
  function stores() {
    const recorded: { clientId: string; batchId: string; jobId: string; attempt: number }[] = [];
    const { deps: enqueue } = uploads();
    const { deps } = apiDeps(fakeEngine().engine, []);
    const built: ImportStores = {
      sources: deps.sources,
      imports: deps.imports,
      marks: enqueue.marks,
      quota: enqueue.quota,
      jobs: { recordJob: async (clientId, batchId, job) => void recorded.push({ clientId, batchId, ...job }) },
      limits: { usage: async () => ({ accepted: 0 }) },
    };
    return { built, recorded };
  }
  const queue = { send: async () => undefined };

  it('on AWS (an engine, no listings) starts the engine’s job; locally (listings) queues the listing and leaves the engine alone', async () => {
    const aws = fakeEngine();
    const onAwsStores = stores();
    const onAws = importDeps({ importEngine: aws.engine, imports: { uploads: queue } }, onAwsStores.built)!;
    const local = fakeEngine();
    const jobs: string[] = [];
    const listings = { send: async (body: string) => void jobs.push(body) };
    const onLocalStores = stores();
    const onLocal = importDeps({ importEngine: local.engine, imports: { listings, uploads: queue } }, onLocalStores.built)!;

    expect([onAws.listings, typeof onAws.engine?.start]).toEqual([undefined, 'function']);
    await checkSource(onAws, 'acme', PREFIX);
    await startListing(onAws, batchOf(PREFIX));
    await startListing(onLocal, batchOf(PREFIX));

    expect(aws.calls.start).toHaveLength(1);
    expect(onAwsStores.recorded).toEqual([{ clientId: 'acme', batchId: 'lib-1', jobId: 'job-1', attempt: 1 }]);
    expect(jobs.map(listJobIn)).toEqual([{ type: 'import-list', clientId: 'acme', batchId: 'lib-1' }]);
    expect(local.calls).toEqual({ check: [], start: [], describe: [] });
    expect(onLocalStores.recorded).toEqual([]);
  });

  it('without an engine or a lister answers imports_not_configured', async () => {
    const deps = importDeps({ imports: { uploads: queue } }, stores().built);

    await expect(checkSource(deps, 'acme', PREFIX)).rejects.toBeInstanceOf(ImportsNotConfiguredError);
    expect(importDeps({}, stores().built)).toBeUndefined();
  });
});

describe("the task's progress on the import", () => {
  const ARGS = { clientId: 'acme', batchId: 'lib-1', expiresAt: '1893456000', allow: '["s3://acme-photos/2024/"]' };
  const invoke = (deps: TaskDeps, encodedKey: string) =>
    answerInvocation(deps, s3BatchInvocationFor(ARGS, { bucket: 'acme-photos', encodedKey, taskId: 't' })).then((r) => r.results[0]!);

  function progress() {
    const counted = new Map<string, string>();
    const waits: number[] = [];
    return {
      counted,
      waits,
      port: {
        countObject: async (ref: ImportRef, as: 'enqueued' | 'skipped') => !counted.has(ref.key) && Boolean(counted.set(ref.key, as)),
        waitForQuota: async (_c: string, _b: string, at: number) => void waits.push(at),
      },
    };
  }

  it('skips a key that is no image by its name (Succeeded, counted skipped, nothing sent), and counts an image once however often its task runs', async () => {
    const { deps: enqueue, sent } = uploads();
    const p = progress();
    const deps: TaskDeps = { ...enqueue, progress: p.port };

    const skipped = await invoke(deps, '2024/notes.txt');
    const first = await invoke(deps, '2024/cat.jpg');
    const redrive = await invoke(deps, '2024/cat.jpg');

    expect([skipped.resultCode, skipped.resultString]).toEqual([
      'Succeeded',
      'skipped: s3://acme-photos/2024/notes.txt is not an image by its name',
    ]);
    expect([first.resultCode, redrive.resultCode, redrive.resultString]).toEqual([
      'Succeeded',
      'Succeeded',
      'sent before: s3://acme-photos/2024/cat.jpg',
    ]);
    expect(sent).toHaveLength(1);
    expect([...p.counted]).toEqual([
      ['s3://acme-photos/2024/notes.txt', 'skipped'],
      ['s3://acme-photos/2024/cat.jpg', 'enqueued'],
    ]);
  });

  it('answers TemporaryFailure beyond today’s quota and sets the import waiting for the next UTC midnight, counting nothing', async () => {
    const { deps: enqueue, sent } = uploads(0);
    const p = progress();
    const now = Date.UTC(2026, 11, 1, 23, 0);

    const result = await invoke({ ...enqueue, progress: p.port, now: () => now }, '2024/cat.jpg');

    expect([result.resultCode, result.resultString]).toEqual([
      'TemporaryFailure',
      "QuotaExceeded: today's images quota of acme is used up; the import goes on at 2026-12-02T00:00:00.000Z",
    ]);
    expect([sent.length, p.counted.size, p.waits]).toEqual([0, 0, [Date.UTC(2026, 11, 2)]]);
  });
});
