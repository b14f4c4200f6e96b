// The API's side of a re-detection (docs/api.md "Re-detect"): POST …:redetect answers the plan (lib/redetect/plan.ts)
// or its refusal; GET …/changes lists the images whose machine verdict the re-detection changed.
import { machineIsCatOf, type Image as StoredImage } from '../domain';
import { redetectBatch, type RedetectPlanDeps } from '../redetect/plan';
import { redetectionsBeyondQuota } from '../quota/limits';
import { changesPlan, storedModelOf } from '../store/redetect-writes';
import { getBatch, runQuery, type StoreContext } from '../store/reader';
import { toImage } from '../store/attributes';
import { nowSeconds, type ImageItem } from '../store/schema';
import { BatchErasingError, BatchNotDoneError, BatchNotFoundError } from './errors';
import { presentBatch } from './present';
import type { ChangesQuery, RedetectBody, RedetectResult, VerdictChange } from './redetect-schemas';

/** POST …:redetect: the plan, and the batch as it is after it (processing when a run started). */
export async function redetectAnswer(
  deps: RedetectPlanDeps,
  clientId: string,
  batchId: string,
  body: RedetectBody,
): Promise<RedetectResult> {
  const out = await redetectBatch(deps, clientId, batchId, body);
  switch (out.outcome) {
    case 'missing':
      throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
    case 'erasing':
      throw new BatchErasingError(`batch ${batchId} is being erased`, { batchId });
    case 'not-done':
      throw new BatchNotDoneError(`batch ${batchId} is still open or processing its uploads; re-detect it once it is done`, { batchId });
    case 'over-quota':
      throw redetectionsBeyondQuota(out.limits, out.asked, (deps.now ?? Date.now)());
    default:
      return { dryRun: body.dryRun === true, ...out.plan, batch: presentBatch(out.batch) };
  }
}

/** One image's change, as the listing shows it. */
export function presentChange(image: StoredImage): VerdictChange | undefined {
  const previous = image.previous;
  const isCat = machineIsCatOf(image) === true;
  if (!previous || previous.isCat === isCat) return undefined;
  return {
    fprint: image.fprint,
    fileName: image.fileName ?? null,
    change: previous.isCat ? 'cat → not cat' : 'not cat → cat',
    previous,
    current: { model: storedModelOf(image), isCat, catConfidence: image.catConfidence ?? 0 },
  };
}

/** GET …/changes: a page of the batch's images whose machine verdict changed; 404 for a batch the client cannot see. */
export async function changesPage(
  ctx: StoreContext,
  clientId: string,
  batchId: string,
  q: ChangesQuery,
): Promise<{ items: VerdictChange[]; cursor?: string }> {
  if (!(await getBatch(ctx, clientId, batchId))) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
  const plan = changesPlan(ctx.tableName, clientId, batchId, nowSeconds((ctx.now ?? Date.now)()));
  const page = await runQuery<ImageItem>(ctx, plan, { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) });
  const items = page.items.flatMap((item) => presentChange(toImage(item)) ?? []);
  return { items, ...(page.cursor ? { cursor: page.cursor } : {}) };
}
