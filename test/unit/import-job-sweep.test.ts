// How an import's batch closes on AWS (docs/decisions/0043): the reconcile sweep follows each running import's S3
// Batch Operations job with DescribeJob; a job over lists the import and closes the batch with `expected` = the images
// enqueued; an import waiting for the quota gets attempt + 1 once the job is over and the quota reset; a batch whose
// job was never recorded gets its first past the grace. The engine and the stores are fakes through their interfaces.
import type { Batch } from '../../lib/domain/batch';
import type { ImportJob, ImportJobStatus } from '../../lib/import/batch-operations';
import { type ImportJobSweepDeps, sweepImportJobs } from '../../lib/reconcile/import-jobs';
import { newBatch } from '../../lib/store/batch/summary';
import type { StoredImport } from '../../lib/store/table/import-item';

const NOW = Date.UTC(2026, 11, 2, 1, 0);
const LIMITS = { maxImports: 10, maxDurationMs: 10_000, startGraceMs: 120_000 };
const SOURCE = { bucket: 'acme-photos', prefix: '2024/' };

function world(imp: StoredImport, job: Partial<ImportJobStatus> = {}, createdAt = NOW - 3_600_000) {
  const batch: Batch = { ...newBatch({ clientId: 'acme', batchId: 'b1', now: createdAt, debug: false, retentionDays: 30 }) };
  let stored = { ...imp };
  const log = { started: [] as ImportJob[], recorded: [] as unknown[], closed: [] as number[], ended: 0, described: [] as string[] };
  const deps: ImportJobSweepDeps = {
    live: async () => [{ clientId: 'acme', batchId: 'b1' }],
    read: async () => ({ batch, listing: stored }),
    engine: {
      start: async (j) => {
        log.started.push(j);
        return { jobId: `job-${j.attempt}` };
      },
      describe: async (jobId) => {
        log.described.push(jobId);
        return { status: 'Complete', over: true, tasks: { total: 5, succeeded: 5, failed: 0 }, ...job };
      },
    },
    recordJob: async (_c, _b, j) => void log.recorded.push(j),
    finish: async (_c, _b, jobId) =>
      stored.jobId === jobId && stored.state !== 'listed' ? (stored = { ...stored, state: 'listed' }) : undefined,
    close: async (_c, _b, expected) => void log.closed.push(expected),
    endLive: async () => void (log.ended += 1),
    allow: async () => ['s3://acme-photos/2024/'],
    now: () => NOW,
  };
  return { deps, log };
}

describe("the reconcile sweep's look after import jobs", () => {
  it('closes the batch of a job that is over, with expected = the images its tasks enqueued, and ends the live mark', async () => {
    const w = world({ source: SOURCE, state: 'listing', listed: 5, enqueued: 4, skipped: 1, jobId: 'job-1', attempt: 1 });

    const out = await sweepImportJobs(w.deps, LIMITS);

    expect(out).toEqual({ looked: 1, started: 0, closed: 1, truncated: false });
    expect([w.log.described, w.log.closed, w.log.ended, w.log.started]).toEqual([['job-1'], [4], 1, []]);
  });

  it.each(['Failed', 'Cancelled'])(
    'closes the batch of a %s job too: what it sent is enqueued, the rest is in its report',
    async (status) => {
      const w = world({ source: SOURCE, state: 'listing', listed: 2, enqueued: 2, skipped: 0, jobId: 'job-1' }, { status });

      await sweepImportJobs(w.deps, LIMITS);

      expect(w.log.closed).toEqual([2]);
    },
  );

  it('leaves a running job alone', async () => {
    const w = world(
      { source: SOURCE, state: 'listing', listed: 2, enqueued: 2, skipped: 0, jobId: 'job-1' },
      { status: 'Active', over: false },
    );

    const out = await sweepImportJobs(w.deps, LIMITS);

    expect([out.closed, out.started, w.log.closed, w.log.ended]).toEqual([0, 0, [], 0]);
  });

  it('starts the job again (attempt + 1) for an import waiting for the quota once its job is over and the reset passed, and not before', async () => {
    const waiting = { source: SOURCE, state: 'waiting-for-quota' as const, listed: 3, enqueued: 3, skipped: 0, jobId: 'job-1', attempt: 1 };
    const early = world({ ...waiting, resumesAt: NOW + 60_000 });
    const due = world({ ...waiting, resumesAt: NOW - 1 });

    await sweepImportJobs(early.deps, LIMITS);
    await sweepImportJobs(due.deps, LIMITS);

    expect([early.log.started, early.log.closed]).toEqual([[], []]);
    expect(due.log.started.map((j) => [j.attempt, j.allow, j.source])).toEqual([[2, ['s3://acme-photos/2024/'], SOURCE]]);
    expect([due.log.recorded, due.log.closed]).toEqual([[{ jobId: 'job-2', attempt: 2 }], []]);
  });

  it('starts the first job of a batch whose job was never recorded, once past the grace', async () => {
    const fresh = world({ source: SOURCE, state: 'listing', listed: 0, enqueued: 0, skipped: 0 }, {}, NOW - 10_000);
    const stale = world({ source: SOURCE, state: 'listing', listed: 0, enqueued: 0, skipped: 0 }, {}, NOW - 600_000);

    await sweepImportJobs(fresh.deps, LIMITS);
    await sweepImportJobs(stale.deps, LIMITS);

    expect(fresh.log.started).toEqual([]);
    expect(stale.log.started.map((j) => j.attempt)).toEqual([1]);
    expect(stale.log.recorded).toEqual([{ jobId: 'job-1', attempt: 1 }]);
  });

  it('logs a fault on one import and goes on (the next sweep tries again)', async () => {
    const w = world({ source: SOURCE, state: 'listing', listed: 0, enqueued: 0, skipped: 0, jobId: 'job-1' });
    const lines: string[] = [];
    w.deps.engine.describe = () => Promise.reject(new Error('DescribeJob: 503'));
    w.deps.log = (line) => void lines.push(line);

    const out = await sweepImportJobs(w.deps, LIMITS);

    expect([out.looked, out.closed, lines]).toEqual([1, 0, ['looking after an import job failed; the next sweep tries again']]);
  });
});
