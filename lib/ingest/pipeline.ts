// One upload, start to end: the seven steps of docs/design.md §1, each a module of lib/ingest/steps/ that returns a
// new value (Placed → Started → Read → Fingerprinted → Claimed → Classified → recorded), in order, with the thumbnail
// of a newly claimed image stored after its claim. Every upload ends as a record (or, when no batch of its uploader
// can hold one, a logged refusal) and an object under processed/, duplicates/ or failed/; only transient faults
// (throttling past retries, network) escape as errors, for SQS to redeliver. The move is split around the record
// (restAround): the copy lands before the record says where it rests, the source goes only after it.

import type { ImportMessage } from '../import/message';
import { BatchErasedError } from '../store/table/errors';
import type { IngestDeps, IngestResult, UploadEvent } from './deps';
import { RejectedUploadError } from './errors';
import { timed } from './metrics';
import { restingKey } from './s3-key';
import { type Claimed, claimFingerprint, storeImageThumbnail } from './steps/claim';
import { classifyImage } from './steps/detect';
import { type Fingerprinted, fingerprintImage, noteNeeded } from './steps/fingerprint';
import { type Found, giveUp } from './steps/give-up';
import { restAround } from './steps/move';
import { discardErased, type Placed, placeUpload } from './steps/place';
import { placeImport } from './steps/place-import';
import { countAgainstQuota, type Started } from './steps/quota';
import { readObject } from './steps/read';
import { recordResult } from './steps/record';
import { recordRejection } from './steps/reject';
import { redelivered, settleClaimed } from './steps/settle';
import { UploadGoneError } from './storage';

export async function processUpload(deps: IngestDeps, event: UploadEvent): Promise<IngestResult> {
  return counted(deps, await handleUpload(deps, await placeUpload(deps, event)));
}

/** One imported image (docs/design.md §16): placed by its message, read where it is, the rest as an upload. */
export async function processImport(deps: IngestDeps, message: ImportMessage): Promise<IngestResult> {
  return counted(deps, await handleUpload(deps, await placeImport(deps, message)));
}

function counted(deps: IngestDeps, result: IngestResult): IngestResult {
  if (result.outcome === 'duplicate') deps.metrics.callSaved('duplicate');
  deps.metrics.image(result.outcome, 'code' in result ? result.code : 'errorCode' in result ? result.errorCode : undefined);
  return result;
}

/** After step 1, the attempt; a batch erased meanwhile makes the upload a discard, with what this run wrote beside it. */
async function handleUpload(deps: IngestDeps, upload: Placed | IngestResult): Promise<IngestResult> {
  if ('outcome' in upload) return upload;
  try {
    return await classifyUpload(deps, upload);
  } catch (err) {
    if (err instanceof BatchErasedError) return discardErased(deps, upload, upload.written.keys());
    throw err;
  }
}

/**
 * One attempt at the upload, counted on its own item before anything that may never return (a timeout, running out
 * of memory: on AWS neither reaches a catch), so the attempt after the limit ends it before trying again, and the
 * last one ends it when its fault does reach the catch (docs/design.md §6, "An upload's attempts are bounded").
 */
async function classifyUpload(deps: IngestDeps, upload: Placed): Promise<IngestResult> {
  const started: Started = { upload, attempt: await deps.store.startAttempt(upload) };
  const overQuota = await countAgainstQuota(deps, started);
  if (overQuota) return recordRejection(deps, upload, overQuota);
  const result = started.attempt.attempts > deps.config.maxAttempts ? await giveUp(deps, started) : await attemptUpload(deps, started);
  // Handed back until another run's lease is over: not an attempt that failed.
  if (result.outcome === 'deferred') await deps.store.endAttempt(upload);
  return result;
}

/**
 * One attempt that reads, decodes and classifies. The fingerprint it finds is noted on the upload's item by the write
 * that records something under it (the claim, or the duplicate's count), not by a write of its own: an attempt that
 * gives up later needs it only to find that record, and the claim it held.
 */
async function attemptUpload(deps: IngestDeps, started: Started): Promise<IngestResult> {
  const { metrics } = deps;
  const { upload, attempt } = started;
  let reached: Fingerprinted | Claimed | undefined;
  try {
    const read = await timed(metrics, 'Read', () => readObject(deps, started));
    const fingerprinted = (reached = await timed(metrics, 'Fingerprint', () => fingerprintImage(deps, read)));
    const claim = await timed(metrics, 'Claim', () => claimFingerprint(deps, fingerprinted));
    if ('existing' in claim) return settleClaimed(deps, upload, read.object, claim.existing, noteNeeded(fingerprinted));
    const claimed = (reached = claim);
    await timed(metrics, 'Thumbnail', () => storeImageThumbnail(deps, upload, claimed.image, claimed.image.fprint));
    const classified = await timed(metrics, 'Detect', () => classifyImage(deps, claimed));
    const { image, object, held } = classified;
    const processedKey = upload.inPlace ? undefined : restingKey('processed', upload, image.fprint, image.format);
    const record = () => timed(metrics, 'Record', () => recordResult(deps, classified, processedKey));
    await restAround(deps, upload, object, processedKey ?? upload.key, record, held);
    return { outcome: 'success', batchId: upload.batchId, fprint: image.fprint };
  } catch (err) {
    if (err instanceof UploadGoneError) return redelivered(deps, upload);
    if (err instanceof RejectedUploadError) return recordRejection(deps, upload, err);
    if (err instanceof BatchErasedError || attempt.attempts < deps.config.maxAttempts) throw err;
    deps.logger.error('the last attempt at the upload failed; it ends as ProcessingFailed', {
      key: upload.key,
      attempts: attempt.attempts,
      error: err as Error,
    });
    return giveUp(deps, started, foundBy(reached));
  }
}

/** What an attempt found before it failed, for giving up on it. */
const foundBy = (reached: Fingerprinted | Claimed | undefined): Found => ({
  ...(reached ? { fprint: reached.image.fprint } : {}),
  ...(reached && 'held' in reached ? { claimId: reached.held.claim.claimId } : {}),
});
