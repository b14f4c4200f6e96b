// The sweep's look after re-detection runs (docs/decisions/0039-redetect-runs.md): each live batch with a run is handed
// to lib/redetect/resume.ts, which pages on a start whose pager stopped (a call that ended its time budget, or died),
// queues again, at most once a while, the images owed that are in no one's hands, and ends a run that owes nothing or
// that no answer reached for several resumes in a row. Work per run is bounded in batches and in time.
import type { Batch } from '../domain/batch';
import type { JobQueue } from '../jobs/queue';
import type { ClientLimits } from '../quota/limits';
import { type ResumeDeps, resumeRun } from '../redetect/resume';

export interface RedetectSweepDeps {
  /** The keys of the batches running a re-detection (lib/store/redetect/running.ts). */
  batches(): AsyncIterable<{ clientId: string; batchId: string }>;
  getBatch(clientId: string, batchId: string): Promise<Batch | undefined>;
  resume: ResumeDeps;
  now?: () => number;
  log?: (line: string, details?: Record<string, unknown>) => void;
}

export interface RedetectSweepResult {
  /** Runs looked after. */
  runs: number;
  /** Images whose page this sweep started (charged and queued), queued again, and given up. */
  started: number;
  requeued: number;
  forgone: number;
  truncated: boolean;
}

export async function sweepRedetections(
  deps: RedetectSweepDeps,
  limits: { maxBatches: number; maxDurationMs: number },
): Promise<RedetectSweepResult> {
  const now = deps.now ?? Date.now;
  const deadline = now() + limits.maxDurationMs;
  const result: RedetectSweepResult = { runs: 0, started: 0, requeued: 0, forgone: 0, truncated: false };
  let checked = 0;
  for await (const { clientId, batchId } of deps.batches()) {
    if (checked >= limits.maxBatches || now() >= deadline) {
      result.truncated = true;
      break;
    }
    checked += 1;
    const batch = await deps.getBatch(clientId, batchId);
    if (!batch?.redetecting || batch.deleting === true) continue;
    result.runs += 1;
    try {
      const out = await resumeRun(deps.resume, clientId, batchId, deadline);
      result.started += out.calls;
      result.requeued += out.requeued;
      result.forgone += out.forgone;
    } catch (err) {
      deps.log?.('looking after a re-detection failed; the next sweep tries again', {
        batch: `${clientId}/${batchId}`,
        error: String(err),
      });
    }
  }
  if (result.started + result.requeued + result.forgone > 0) deps.log?.('looked after re-detections', { ...result });
  return result;
}

/**
 * What the sweep of re-detection runs is built from, on AWS (functions/reconcile) and locally (local/stack/services.ts):
 * the runs' store (lib/store/redetect/images.ts Redetections, built with the batch's completion hook), where the
 * batches running one are listed, and the uploads queue.
 */
export interface RedetectSweepWiring {
  redetections: ResumeDeps['redetections'];
  /** The batches to look at: the redetect-runs index's (lib/store/redetect/running.ts; a local table made before it: every live batch). */
  batches: () => AsyncIterable<{ clientId: string; batchId: string }>;
  /** The uploads queue, where a run's images go (the ingest consumes them). */
  queue: JobQueue;
  limitsOf(clientId: string): Promise<ClientLimits>;
  graceMs: number;
  /** Records a page (REDETECT_PAGE_SIZE); the run's own when unset. */
  pageSize?: number;
  log?: (line: string, details?: Record<string, unknown>) => void;
}

/** The sweep of re-detection runs, ready to run on each reconcile within the bounds it is given. */
export function redetectSweepOf(
  wiring: RedetectSweepWiring,
): (limits: { maxBatches: number; maxDurationMs: number }) => Promise<RedetectSweepResult> {
  const { redetections } = wiring;
  const resume: ResumeDeps = {
    redetections,
    queue: wiring.queue,
    limitsOf: wiring.limitsOf,
    graceMs: wiring.graceMs,
    ...(wiring.pageSize !== undefined ? { pageSize: wiring.pageSize } : {}),
  };
  return (limits) =>
    sweepRedetections(
      {
        batches: wiring.batches,
        getBatch: (clientId, batchId) => redetections.getBatch(clientId, batchId),
        resume,
        ...(wiring.log ? { log: wiring.log } : {}),
      },
      limits,
    );
}
