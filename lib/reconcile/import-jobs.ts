// The sweep's look after imports on AWS (docs/decisions/0043): an import's S3 Batch Operations job runs without us,
// and no task can know it is the last, so the sweep follows each running import (partition IMPORT#LIVE#, a Query) to
// its job's end with DescribeJob:
// - a job over (Complete, Failed or Cancelled) ends the listing: the import is `listed` and the batch is closed with
//   `expected` = the images its tasks enqueued, so it is done once they are recorded (what the job could not send is in
//   its completion report under imports/{clientId}/{batchId}/);
// - an import whose tasks found today's quota used up (`waiting-for-quota`) gets, once its job is over and the quota
//   reset, a job started again (attempt + 1, another idempotency token): objects sent before answer `sent before`;
// - an import with no job recorded past a grace period (the batches function died, or CreateJob failed, after the batch
//   was made) gets its first job started (attempt 1: the same token, so a job CreateJob did make is the one answered).
// Work per run is bounded in imports and in time; a fault on one import is logged and left to the next run.
import type { Batch } from '../domain/batch';
import type { ImportEngine, ImportJob } from '../import/batch-operations';
import type { StoredImport } from '../store/table/import-item';

export interface ImportJobSweepDeps {
  /** The running imports (lib/store/imports/imports.ts liveImports). */
  live(): Promise<{ clientId: string; batchId: string }[]>;
  /** The batch and its import as stored (lib/store/imports/jobs.ts readJob). */
  read(clientId: string, batchId: string): Promise<{ batch: Batch; listing: StoredImport } | undefined>;
  engine: Pick<ImportEngine, 'start' | 'describe'>;
  recordJob(clientId: string, batchId: string, job: { jobId: string; attempt: number }): Promise<void>;
  /** Ends the listing of the job's import (undefined: ended before): lib/store/imports/jobs.ts finish. */
  finish(clientId: string, batchId: string, jobId: string): Promise<StoredImport | undefined>;
  /** Closes the batch with the images it gets in all (BatchStore.close). */
  close(clientId: string, batchId: string, expected: number): Promise<void>;
  endLive(clientId: string, batchId: string): Promise<void>;
  /** What a job's tasks may read (lib/api/import-batch.ts jobAllow). */
  allow(clientId: string, source: StoredImport['source']): Promise<string[]>;
  now?: () => number;
  log?: (line: string, details?: Record<string, unknown>) => void;
}

export interface ImportJobSweepLimits {
  maxImports: number;
  maxDurationMs: number;
  /** A batch from a source with no job recorded this long after it was made gets its job started. */
  startGraceMs: number;
}

export interface ImportJobSweepResult {
  /** Running imports looked at. */
  looked: number;
  /** Jobs started (first jobs never recorded, and jobs started again after the quota's reset). */
  started: number;
  /** Imports whose job was over: listed, their batch closed. */
  closed: number;
  truncated: boolean;
}

type Outcome = 'started' | 'closed' | 'waiting' | 'ended' | 'running';

/** One import looked after: started, closed, or left to run. */
async function lookAfter(deps: ImportJobSweepDeps, clientId: string, batchId: string, graceMs: number): Promise<Outcome> {
  const now = (deps.now ?? Date.now)();
  const found = await deps.read(clientId, batchId);
  if (!found || found.batch.deleting === true || found.listing.state === 'listed') {
    await deps.endLive(clientId, batchId);
    return 'ended';
  }
  const { batch, listing } = found;
  const start = async (attempt: number): Promise<Outcome> => {
    const job: ImportJob = {
      clientId,
      batchId,
      expiresAt: batch.expiresAt,
      source: listing.source,
      allow: await deps.allow(clientId, listing.source),
      attempt,
    };
    const { jobId } = await deps.engine.start(job);
    await deps.recordJob(clientId, batchId, { jobId, attempt });
    deps.log?.('started an import job', { batch: `${clientId}/${batchId}`, jobId, attempt });
    return 'started';
  };
  if (listing.jobId === undefined) return now - batch.createdAt >= graceMs ? start(1) : 'running';
  const job = await deps.engine.describe(listing.jobId);
  if (!job.over) return 'running';
  if (listing.state === 'waiting-for-quota') return now >= (listing.resumesAt ?? 0) ? start((listing.attempt ?? 1) + 1) : 'waiting';
  const listed = await deps.finish(clientId, batchId, listing.jobId);
  if (listed) await deps.close(clientId, batchId, Number(listed.enqueued ?? 0));
  await deps.endLive(clientId, batchId);
  deps.log?.('an import job is over: its batch is closed', {
    batch: `${clientId}/${batchId}`,
    jobId: listing.jobId,
    status: job.status,
    tasks: job.tasks,
    ...(listed ? { listed: listed.listed, enqueued: listed.enqueued, skipped: listed.skipped } : {}),
    ...(job.failure ? { failure: job.failure } : {}),
  });
  return 'closed';
}

export async function sweepImportJobs(deps: ImportJobSweepDeps, limits: ImportJobSweepLimits): Promise<ImportJobSweepResult> {
  const now = deps.now ?? Date.now;
  const deadline = now() + limits.maxDurationMs;
  const result: ImportJobSweepResult = { looked: 0, started: 0, closed: 0, truncated: false };
  for (const { clientId, batchId } of await deps.live()) {
    if (result.looked >= limits.maxImports || now() >= deadline) {
      result.truncated = true;
      break;
    }
    result.looked += 1;
    try {
      const outcome = await lookAfter(deps, clientId, batchId, limits.startGraceMs);
      if (outcome === 'started') result.started += 1;
      if (outcome === 'closed') result.closed += 1;
    } catch (err) {
      deps.log?.('looking after an import job failed; the next sweep tries again', { batch: `${clientId}/${batchId}`, error: String(err) });
    }
  }
  return result;
}
