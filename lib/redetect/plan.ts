// POST /v1/batches/{batchId}:redetect (docs/api.md "Re-detect"): chooses the batch's classified images answered by
// another model than the current one (all of them with `all`), and either prices them (the dry run: nothing changes)
// or starts the run: counts them against the client's images of the day, marks each, makes the batch `processing`,
// and queues one message per image on the uploads queue, which the ingest consumes (lib/redetect/job.ts). One image
// per distinct fingerprint: a duplicate is counted on its original and follows its answer, so DetectLabels is paid once
// per distinct image. Asked again while its run goes on, it queues the images still owed again (a start cut short).
import { ulid } from 'ulid';
import { uploadEstimate, type Batch, type ModelVersion } from '../domain';
import type { JobQueue } from '../jobs/queue';
import { utcDay, type ClientLimits } from '../quota/limits';
import type { Redetections, RedetectCandidate } from '../store/redetect';
import { encodeRedetectMessage } from './message';
import { answeredByCurrentModel } from '../model-version';

export interface RedetectRequest {
  dryRun?: boolean;
  all?: boolean;
}

export interface RedetectPlan {
  /** Uploads whose answer changes: the images chosen and their duplicates. */
  images: number;
  /** DetectLabels calls: one per distinct image chosen. */
  newCalls: number;
  estimatedCostUsd: number;
}

export type RedetectOutcome =
  | { outcome: 'missing' }
  | { outcome: 'erasing' }
  /** Open, or still processing its uploads. */
  | { outcome: 'not-done'; batch: Batch }
  | { outcome: 'over-quota'; limits: ClientLimits; asked: number }
  | { outcome: 'planned'; plan: RedetectPlan; batch: Batch; started: boolean };

export interface RedetectPlanDeps {
  redetections: Redetections;
  /** The model answering now (lib/redetect/model.ts currentModel). */
  currentModel: () => Promise<ModelVersion>;
  /** The uploads queue the ingest reads. */
  queue: JobQueue;
  limitsOf?: (clientId: string) => Promise<ClientLimits>;
  pricePerImageUsd: number;
  isLive: (batch: Batch | undefined) => boolean;
  now?: () => number;
}

/** Chooses the images, prices them, and (unless a dry run) starts their re-detection. */
export async function redetectBatch(
  deps: RedetectPlanDeps,
  clientId: string,
  batchId: string,
  req: RedetectRequest,
): Promise<RedetectOutcome> {
  const batch = await deps.redetections.getBatch(clientId, batchId);
  if (batch?.deleting === true) return { outcome: 'erasing' };
  if (!batch || !deps.isLive(batch)) return { outcome: 'missing' };
  if (batch.doneAt === undefined) return { outcome: 'not-done', batch };
  if (batch.redetecting && req.dryRun !== true) return resume(deps, batch, batch.redetecting.run);
  const current = req.all === true ? undefined : await deps.currentModel();
  const chosen: RedetectCandidate[] = [];
  for await (const page of deps.redetections.candidates(clientId, batchId))
    chosen.push(...page.filter((c) => current === undefined || !answeredByCurrentModel(c.facts, current)));
  const plan = planOf(chosen, deps.pricePerImageUsd);
  if (req.dryRun === true || chosen.length === 0) return { outcome: 'planned', plan, batch, started: false };
  const now = (deps.now ?? Date.now)();
  if (deps.limitsOf) {
    const limits = await deps.limitsOf(clientId);
    if (!(await deps.redetections.countImages(clientId, utcDay(now), plan.newCalls, limits.maxImagesPerDay)))
      return { outcome: 'over-quota', limits, asked: plan.newCalls };
  }
  const run = ulid(now);
  const marked = await deps.redetections.mark(
    clientId,
    batchId,
    chosen.map((c) => c.fprint),
    run,
  );
  const started = await deps.redetections.start(clientId, batchId, run, marked.length);
  if (!started)
    return redetectBatch(deps, clientId, batchId, { ...req, dryRun: true }).then((o) =>
      o.outcome === 'planned' ? { ...o, started: false } : o,
    );
  await queueImages(deps.queue, clientId, batchId, run, marked);
  return { outcome: 'planned', plan, batch: started, started: true };
}

/** The run goes on: the images it still owes are queued again (a message too many is answered once). */
async function resume(deps: RedetectPlanDeps, batch: Batch, run: string): Promise<RedetectOutcome> {
  const owed = await deps.redetections.owedImages(batch.clientId, batch.batchId, run);
  await queueImages(deps.queue, batch.clientId, batch.batchId, run, owed);
  return {
    outcome: 'planned',
    plan: planOf(
      owed.map((fprint) => ({ fprint, facts: {}, duplicates: 0 })),
      deps.pricePerImageUsd,
    ),
    batch,
    started: true,
  };
}

/** The price of the chosen images, with the upload estimate's arithmetic (docs/decisions/0027-cost-and-estimate.md). */
export function planOf(chosen: readonly Pick<RedetectCandidate, 'duplicates'>[], pricePerImageUsd: number): RedetectPlan {
  const uploads = chosen.reduce((sum, c) => sum + 1 + c.duplicates, 0);
  const { images, newCalls, estimatedCostUsd } = uploadEstimate(uploads, chosen.length, 0, pricePerImageUsd);
  return { images, newCalls, estimatedCostUsd };
}

const QUEUED_AT_ONCE = 10;

async function queueImages(queue: JobQueue, clientId: string, batchId: string, run: string, fprints: readonly string[]): Promise<void> {
  for (let i = 0; i < fprints.length; i += QUEUED_AT_ONCE) {
    await Promise.all(
      fprints.slice(i, i + QUEUED_AT_ONCE).map((fprint) => queue.send(encodeRedetectMessage({ clientId, batchId, fprint, run }))),
    );
  }
}
