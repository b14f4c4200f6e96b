// POST …/audit (docs/accuracy.md; design §13), free of HTTP: draws more of a batch's classified images into its audit
// sample. Apart from the estimate (audit.ts): it writes, and runs on the batches function.
import { randomInt } from 'node:crypto';
import type { Image } from '../domain/image';
import type { AuditStratum } from '../domain/review';
import { drawSample, STRATA } from '../review/audit-sample';
import { markAudited, setStrataSizes } from '../store/audit/draw';
import { auditCandidates, type Ctx } from '../store/audit/queue';
import { sizesOf, stratumOf } from './audit';
import { BatchNotFoundError, NothingToAuditError } from './errors';
import type { AuditResult } from './schemas/audit';

/**
 * Draws `size` more images of the batch's classified ones into its audit sample (never one drawn before), stratified by
 * the machine's verdict now, with a fresh seed; the strata's sizes are remembered on the summary first, so that no
 * drawn image is ever without the weights it is estimated by. The caller has checked the batch is the client's.
 */
export async function drawAudit(ctx: Ctx, clientId: string, batchId: string, size: number, nowMs: number): Promise<AuditResult> {
  const images = await auditCandidates(ctx, clientId, batchId);
  if (images.length === 0)
    throw new NothingToAuditError(`batch ${batchId} has no classified image to audit (none is success yet)`, { batchId });
  const population = sizesOf(images);
  const left = images.filter((i) => i.audit === undefined);
  const seed = randomInt(1, 2 ** 31);
  const drawn = drawSample(
    left.map((i) => ({ fprint: i.fprint, stratum: stratumOf(i) })),
    size,
    population,
    seed,
  );
  if (!(await setStrataSizes(ctx, clientId, batchId, population, nowMs)))
    throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
  const byFprint = new Map(left.map((i) => [i.fprint, i]));
  const written = await markAudited(
    ctx,
    // The projected read names no partition: the image's batch is the one asked for.
    drawn.map((d) => ({
      image: { ...byFprint.get(d.fprint)!, clientId, batchId },
      audit: { drawnAt: nowMs, stratum: d.stratum, order: d.order, seed },
    })),
  );
  const before = images.filter((i) => i.audit !== undefined);
  const inStratum = (list: readonly Image[], h: AuditStratum) => list.filter((i) => i.audit?.stratum === h).length;
  return {
    batchId,
    seed,
    drawn: written.length,
    sampled: before.length + written.length,
    strata: STRATA.map((h) => ({
      stratum: h,
      images: population[h],
      sampled: inStratum(before, h) + inStratum(written, h),
      drawn: inStratum(written, h),
    })),
  };
}
