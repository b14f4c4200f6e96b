// The audit sample and the accuracy it estimates (docs/accuracy.md; design §13), free of HTTP: POST …/audit draws,
// GET …/accuracy estimates, GET …/images?audit=pending is the store's queue (lib/store/audit.ts).
import { randomInt } from 'node:crypto';
import { machineIsCatOf, type AuditStratum, type Image } from '../domain';
import { estimateAccuracy, type StratumTally } from '../review/accuracy';
import { drawSample, STRATA } from '../review/audit-sample';
import { auditCandidates, auditEntries, markAudited, setStrataSizes, strataSizes, type StrataSizes } from '../store/audit';
import type { StoreContext } from '../store/reader';
import type { AccuracyAnswer, AuditResult } from './audit-schemas';
import { BatchNotFoundError, NothingToAuditError } from './errors';

type Ctx = Pick<StoreContext, 'ddb' | 'tableName' | 'now'>;

const stratumOf = (image: Image): AuditStratum => (machineIsCatOf(image) === true ? 'cat' : 'notCat');

const sizesOf = (images: readonly Image[]): StrataSizes => ({
  cat: images.filter((i) => stratumOf(i) === 'cat').length,
  notCat: images.filter((i) => stratumOf(i) === 'notCat').length,
});

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

/**
 * The batch's accuracy from its audit sample's reviews only (lib/review/accuracy.ts), weighted by the strata's sizes
 * at the last draw; a batch never audited answers its strata as they are now and null estimates.
 */
export async function batchAccuracy(ctx: Ctx, clientId: string, batchId: string): Promise<AccuracyAnswer> {
  const sizes = await strataSizes(ctx, clientId, batchId);
  const entries = sizes ? await auditEntries(ctx, clientId, batchId) : [];
  const weights = sizes ?? sizesOf(await auditCandidates(ctx, clientId, batchId));
  const strata: StratumTally[] = STRATA.map((h) => {
    const mine = entries.filter((e) => e.stratum === h);
    const reviewed = mine.filter((e) => e.reviewedCat !== undefined);
    return {
      stratum: h,
      images: weights[h],
      sampled: mine.length,
      reviewed: reviewed.length,
      agree: reviewed.filter((e) => e.reviewedCat === (h === 'cat')).length,
    };
  });
  return {
    sampled: entries.length,
    reviewed: strata.reduce((s, t) => s + t.reviewed, 0),
    strata,
    ...estimateAccuracy(strata),
  };
}
