// Step 6 (docs/design.md §1): the outcome recorded on the claimed image's item, with the batch's counters.
import type { Claim } from '../../domain/upload';
import { BatchErasedError } from '../../store/table/errors';
import type { IngestDeps } from '../deps';
import { restingKey } from '../s3-key';
import { removeUpload } from '../storage';
import type { Classified } from './detect';
import type { Placed } from './place';

export async function recordResult(deps: IngestDeps, classified: Classified, processedKey: string | undefined): Promise<void> {
  const { upload, held, result, capture } = classified;
  let finished;
  try {
    finished = await deps.store.finish(
      held.claim,
      {
        result,
        uploadedAt: held.uploadedAt,
        now: (deps.now ?? Date.now)(),
        ...(processedKey !== undefined ? { restingKey: processedKey } : {}),
        logs: upload.log.entries(),
        ...(capture ? { capture } : {}),
      },
      { seen: upload.batch },
    );
  } catch (err) {
    // The answer is paid for: kept on the claim (its lease ended), the retry taking the claim over records it.
    if (!(err instanceof BatchErasedError)) await keepAnswer(deps, classified);
    throw err;
  }
  if (!finished) throw await lostClaim(deps, upload, held.claim);
}

/** Keeps the result on the claim for the run that takes it over; a failure to keep it only costs that run a call. */
async function keepAnswer(deps: IngestDeps, { upload, held, result }: Classified): Promise<void> {
  try {
    if (await deps.store.keepPaidResult(held.claim, result))
      upload.log.add('record not written: the answer is kept on the claim for the next attempt');
  } catch (err) {
    deps.logger.warn('the answer could not be kept on the claim; the next attempt classifies the image again', {
      key: upload.key,
      error: err as Error,
    });
  }
}

/**
 * The claim's record is gone or another's: erased with its batch meanwhile (the discard removes the copy), or taken
 * over by another run.
 */
export async function lostClaim(deps: IngestDeps, upload: Placed, claim: Claim): Promise<Error> {
  const batch = await deps.store.getBatch(claim.clientId, claim.batchId);
  if (!deps.store.isLive(batch)) return new BatchErasedError(`batch ${claim.batchId} was erased while its upload was classified`);
  deps.logger.warn('claim was taken over while classifying; leaving the result to the new holder', {
    batchId: claim.batchId,
    fprint: claim.fprint,
  });
  await dropUnsharedCopy(deps, upload, claim);
  return new Error(`claim on ${claim.batchId}/${claim.fprint} was lost`);
}

/**
 * The copy made before a lost claim stays where the new holder may rest its own upload: the same key is the same
 * upload, or the same pixels in the same format, which the holder copies there too (deleting it could delete the
 * holder's). Anywhere else nothing would ever remove it: this upload comes back as a duplicate of the holder's.
 */
async function dropUnsharedCopy(deps: IngestDeps, upload: Placed, claim: Claim): Promise<void> {
  const rested = upload.written.restedAt;
  if (!rested) return;
  const holder = await deps.store.getImage(claim.clientId, claim.batchId, claim.fprint);
  if (holder) {
    const holderUpload = { clientId: claim.clientId, batchId: claim.batchId, fileName: holder.fileName ?? claim.fileName };
    const holderKeys = holder.restingKey
      ? [holder.restingKey]
      : [restingKey('processed', holderUpload, holder.fprint, holder.format), restingKey('failed', holderUpload)];
    if (holderKeys.includes(rested)) return;
  }
  await removeUpload(deps.s3, { bucket: upload.bucket, key: rested });
  upload.written.rested(undefined);
}
