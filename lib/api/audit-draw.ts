// POST …/audit (docs/accuracy.md; design §13), free of HTTP: draws more of a batch's classified images into its audit
// sample. Apart from the estimate (audit.ts): it writes, and runs on the batches function.
import { randomInt } from 'node:crypto';
import type { Image } from '../domain/image';
import type { Audit, AuditStratum } from '../domain/review';
import { drawSample, STRATA } from '../review/audit-sample';
import type { StrataSizes } from '../store/audit/queue';
import { sizesOf, stratumOf } from './audit';
import { BatchNotFoundError, NothingToAuditError } from './errors';
import type { AuditResult } from './schemas/audit';

/** What a draw asks of the store (lib/store/batch-store.ts BatchStore). */
export interface AuditDrawStore {
  auditCandidates(clientId: string, batchId: string): Promise<Image[]>;
  /** Remembers the strata's sizes on the summary; false when the batch is gone. */
  setStrataSizes(clientId: string, batchId: string, sizes: StrataSizes, nowMs: number): Promise<boolean>;
  /** Marks the drawn images audited; answers those written. */
  markAudited(drawn: readonly { image: Image; audit: Audit }[]): Promise<Image[]>;
}

/**
 * Draws `size` more images of the batch's classified ones into its audit sample (never one drawn before), stratified by
 * the machine's verdict now, with a fresh seed; the strata's sizes are remembered on the summary first, so that no
 * drawn image is ever without the weights it is estimated by. The caller has checked the batch is the client's.
 */
export async function drawAudit(
  store: AuditDrawStore,
  clientId: string,
  batchId: string,
  size: number,
  nowMs: number,
): Promise<AuditResult> {
  const images = await store.auditCandidates(clientId, batchId);
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
  if (!(await store.setStrataSizes(clientId, batchId, population, nowMs)))
    throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
  const byFprint = new Map(left.map((i) => [i.fprint, i]));
  const written = await store.markAudited(
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
