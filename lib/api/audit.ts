// The accuracy the audit sample estimates (docs/accuracy.md; design §13), free of HTTP: GET …/accuracy. POST …/audit
// draws (audit-draw.ts, on the function with write rights); GET …/images?audit=pending is the store's queue.
import { type Image, machineIsCatOf } from '../domain/image';
import { type AuditStratum } from '../domain/review';
import { estimateAccuracy, type StratumTally } from '../review/accuracy';
import { STRATA } from '../review/audit-sample';
import type { AuditedEntry, StrataSizes } from '../store/audit/queue';
import { modelAccuracies } from './audit-models';
import type { AccuracyAnswer } from './schemas/audit';

/** What the estimate reads of the audit sample (lib/store/store-reads.ts StoreReads). */
export interface AuditReader {
  strataSizes(clientId: string, batchId: string): Promise<StrataSizes | undefined>;
  auditEntries(clientId: string, batchId: string): Promise<AuditedEntry[]>;
  auditCandidates(clientId: string, batchId: string): Promise<Image[]>;
  answersAfterRedetect(clientId: string, batchId: string, audited: readonly string[]): Promise<Image[] | undefined>;
}

export const stratumOf = (image: Image): AuditStratum => (machineIsCatOf(image) === true ? 'cat' : 'notCat');

export const sizesOf = (images: readonly Image[]): StrataSizes => ({
  cat: images.filter((i) => stratumOf(i) === 'cat').length,
  notCat: images.filter((i) => stratumOf(i) === 'notCat').length,
});

/**
 * The batch's accuracy from its audit sample's reviews only (lib/review/accuracy.ts), weighted by the strata's sizes
 * at the last draw; a batch never audited answers its strata as they are now and null estimates. After a re-detection
 * that left audited images with another model's answer too, `models` gives each model's estimates on the same sample.
 */
export async function batchAccuracy(reads: AuditReader, clientId: string, batchId: string): Promise<AccuracyAnswer> {
  const sizes = await reads.strataSizes(clientId, batchId);
  const entries = sizes ? await reads.auditEntries(clientId, batchId) : [];
  const weights = sizes ?? sizesOf(await reads.auditCandidates(clientId, batchId));
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
  const images = sizes
    ? await reads.answersAfterRedetect(
        clientId,
        batchId,
        entries.map((e) => e.fprint),
      )
    : undefined;
  return {
    sampled: entries.length,
    reviewed: strata.reduce((s, t) => s + t.reviewed, 0),
    strata,
    ...estimateAccuracy(strata),
    ...(sizes && images ? { models: modelAccuracies(entries, sizes, images) } : {}),
  };
}
