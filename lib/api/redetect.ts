// POST …:redetect (docs/api.md "Re-detect"): the plan (lib/redetect/plan.ts) or its refusal. GET …/changes is
// lib/api/changes.ts, apart so that the read function's bundle carries no DetectLabels.

import { redetectionsBeyondQuota } from '../quota/limits';
import { type RedetectPlanDeps, redetectBatch } from '../redetect/plan';
import { BatchErasingError, BatchNotDoneError, BatchNotFoundError } from './errors';
import { presentBatch } from './present';
import type { RedetectBody, RedetectResult } from './schemas/redetect';

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
      return { dryRun: body.dryRun === true, ...out.plan, batch: presentBatch(out.batch, deps.pricePerImageUsd) };
  }
}
