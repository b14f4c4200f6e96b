// POST /v1/batches/{batchId}:redetect (docs/api.md "Re-detect"): chooses the batch's classified images answered by
// another model than the current one (all of them with `all`), and either prices them (the dry run: nothing changes)
// or starts the run: takes it first (one call of several at once does), then a page at a time counts the page's images
// against the client's images of the day, marks each, and queues one message per image on the uploads queue, which
// the ingest consumes (lib/redetect/job.ts); what one call's time budget leaves is paged on by the reconcile sweep
// (lib/redetect/pages.ts, resume.ts). One image per distinct fingerprint: a duplicate is counted on its original and
// follows its answer, so DetectLabels is paid once per distinct image. Asked again while its run goes on, it starts
// nothing and charges nothing (newCalls 0), beyond looking after the run as the sweep does.
import { ulid } from 'ulid';
import { type Batch } from '../domain/batch';
import { type ModelVersion } from '../domain/detection';
import { uploadEstimate } from '../domain/pricing';
import { answeredByCurrentModel } from '../model-version';
import { type ClientLimits, utcDay } from '../quota/limits';
import type { RedetectCandidate } from '../store/redetect/images';
import { type PagesStarted, type PagingDeps, startPages } from './pages';
import { resumeRun } from './resume';

interface RedetectRequest {
  dryRun?: boolean;
  all?: boolean;
}

interface RedetectPlan {
  /** Uploads whose answer changes: the images chosen and their duplicates. */
  images: number;
  /** DetectLabels calls: one per distinct image chosen. */
  newCalls: number;
  estimatedCostUsd: number;
}

type RedetectOutcome =
  | { outcome: 'missing' }
  | { outcome: 'erasing' }
  /** Open, or still processing its uploads. */
  | { outcome: 'not-done'; batch: Batch }
  | { outcome: 'over-quota'; limits: ClientLimits; asked: number }
  | { outcome: 'planned'; plan: RedetectPlan; batch: Batch; started: boolean };

export interface RedetectPlanDeps extends PagingDeps {
  /** The model answering now (lib/redetect/model.ts currentModel). */
  currentModel: () => Promise<ModelVersion>;
  pricePerImageUsd: number;
  isLive: (batch: Batch | undefined) => boolean;
  /** How long one call starts pages (ms); the rest is paged on by the sweep or a later call. */
  budgetMs?: number;
  /** An image queued longer ago than this, and not claimed, is in no one's hands (lib/redetect/resume.ts). */
  resumeGraceMs: number;
}

/**
 * The batches function stops after 10 s (serverless.yml): no page starts after 5 s, and one page (500 records, marks 16
 * at a time, sends 10 at a time) takes far less than the rest.
 */
const REDETECT_BUDGET_MS = 5_000;

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
  if (req.dryRun === true) return dryRun(deps, batch, req);
  const now = (deps.now ?? Date.now)();
  const deadline = now + (deps.budgetMs ?? REDETECT_BUDGET_MS);
  if (batch.redetecting) return during(deps, batch, deadline);
  const current = req.all === true ? undefined : await deps.currentModel();
  const run = ulid(now);
  const choice = { all: req.all === true, ...(current ? { model: current } : {}), day: utcDay(now) };
  if (!(await deps.redetections.runs.take(clientId, batchId, run, choice))) {
    // Another call took the batch first (or it changed meanwhile): answer as a call during that run.
    const again = await deps.redetections.getBatch(clientId, batchId);
    if (again?.redetecting) return during(deps, again, deadline);
    return { outcome: 'planned', plan: planOf([], deps.pricePerImageUsd), batch: again ?? batch, started: false };
  }
  const started = await startPages(deps, clientId, batchId, run, deadline);
  if (started.overQuota && started.calls === 0) return { outcome: 'over-quota', ...started.overQuota };
  return startedOutcome(deps, batch, started);
}

/** The dry run: every page read, nothing changes. */
async function dryRun(deps: RedetectPlanDeps, batch: Batch, req: RedetectRequest): Promise<RedetectOutcome> {
  const current = req.all === true ? undefined : await deps.currentModel();
  const chosen: RedetectCandidate[] = [];
  for await (const page of deps.redetections.candidates(batch.clientId, batch.batchId))
    chosen.push(...page.filter((c) => current === undefined || !answeredByCurrentModel(c.facts, current)));
  return { outcome: 'planned', plan: planOf(chosen, deps.pricePerImageUsd), batch, started: false };
}

/** Asked during a run: it looks after the run as the sweep does (a start whose pager stopped goes on), nothing more. */
async function during(deps: RedetectPlanDeps, batch: Batch, deadline: number): Promise<RedetectOutcome> {
  const resumed = await resumeRun({ ...deps, graceMs: deps.resumeGraceMs }, batch.clientId, batch.batchId, deadline);
  return startedOutcome(deps, batch, resumed);
}

async function startedOutcome(deps: RedetectPlanDeps, batch: Batch, started: PagesStarted): Promise<RedetectOutcome> {
  const now = (await deps.redetections.getBatch(batch.clientId, batch.batchId)) ?? batch;
  const { images, newCalls, estimatedCostUsd } = uploadEstimate(started.images, started.calls, 0, deps.pricePerImageUsd);
  return {
    outcome: 'planned',
    plan: { images, newCalls, estimatedCostUsd },
    batch: now,
    started: started.calls > 0,
  };
}

/** The price of the chosen images, with the upload estimate's arithmetic (docs/decisions/0027-cost-and-estimate.md). */
export function planOf(chosen: readonly Pick<RedetectCandidate, 'duplicates'>[], pricePerImageUsd: number): RedetectPlan {
  const uploads = chosen.reduce((sum, c) => sum + 1 + c.duplicates, 0);
  const { images, newCalls, estimatedCostUsd } = uploadEstimate(uploads, chosen.length, 0, pricePerImageUsd);
  return { images, newCalls, estimatedCostUsd };
}
