// Step 1b (docs/design.md §11): the upload counted once against its client's images quota of the day.
import { quotaExceededMessage, utcDay } from '../../quota/limits';
import type { AttemptCount } from '../../store/upload/attempts';
import type { IngestDeps } from '../deps';
import { RejectedUploadError } from '../errors';
import type { Placed } from './place';

/** An attempt at a placed upload, counted on its own item before anything that may never return. */
export interface Started {
  readonly upload: Placed;
  /** The attempts counted so far, with the fingerprint an earlier attempt noted on the upload's item, if any. */
  readonly attempt: Readonly<AttemptCount>;
}

/**
 * An upload counts once against its client's images quota of the UTC day it was uploaded, on a mark its own item gets
 * with the count (so whichever attempt gets there first counts it, and no later one again: a retry, a redelivery, a
 * deferred attempt, an attempt handed back); beyond the quota it is marked, so that every later attempt ends it the
 * same way: a `fail` record with code QuotaExceeded and the object under failed/, never classified. The limit is read
 * when the upload is handled, so a quota changed while uploads wait in the queue applies to them.
 */
export async function countAgainstQuota(deps: IngestDeps, { upload, attempt }: Started): Promise<RejectedUploadError | undefined> {
  const { quota } = deps;
  if (!quota) return undefined;
  const day = attempt.quotaExceeded ?? utcDay(upload.createdAt);
  if (attempt.quotaExceeded === undefined) {
    if (attempt.quotaCounted !== undefined) return undefined;
    const { maxImagesPerDay } = await quota.limitsOf(upload.clientId);
    if (await quota.countUpload(upload, day, maxImagesPerDay)) return undefined;
    await quota.refuseUpload(upload, day);
    upload.log.add(`beyond the quota of ${maxImagesPerDay} images for ${day}`);
    return new RejectedUploadError(quotaExceededMessage(maxImagesPerDay, day), { code: 'QuotaExceeded' });
  }
  const { maxImagesPerDay } = await quota.limitsOf(upload.clientId);
  return new RejectedUploadError(quotaExceededMessage(maxImagesPerDay, day), { code: 'QuotaExceeded' });
}
