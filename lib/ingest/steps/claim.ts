// Step 4 (docs/design.md §1): claim (batch, fprint) with a conditional write, then the new claim's thumbnail.
import { randomUUID } from 'node:crypto';
import { allArrived, type Batch } from '../../domain/batch';
import { type Image } from '../../domain/image';
import { type Claim, type Fingerprint } from '../../domain/upload';
import { BatchClosedError } from '../../errors';
import type { IngestDeps } from '../deps';
import { type HeldClaim, RejectedUploadError } from '../errors';
import { thumbnailKey } from '../s3-key';
import { storeThumbnail } from '../storage';
import { type Fingerprinted, noteNeeded } from './fingerprint';
import type { Placed } from './place';
import { isSameUpload } from './settle';

/** The image claimed by this run. */
export interface Claimed extends Fingerprinted {
  readonly held: HeldClaim;
}

/** This run's claim, or the record of whoever claimed the image before. A closed batch takes no new upload. */
export async function claimFingerprint(deps: IngestDeps, step: Fingerprinted): Promise<Claimed | { existing: Image }> {
  const { upload, object, image } = step;
  const claim: Claim = {
    clientId: upload.clientId,
    batchId: upload.batchId,
    fprint: image.fprint,
    claimId: randomUUID(),
    key: upload.key,
    etag: object.etag,
    fileName: upload.fileName,
    phash: image.phash,
    format: image.format,
    width: image.width,
    height: image.height,
    now: upload.receivedAt,
    leaseMs: deps.config.claimLeaseSeconds * 1000,
    expiresAt: upload.batch.expiresAt,
    ...(upload.inPlace ? { source: upload.inPlace } : {}),
  };
  if (takesNoMoreUploads(upload.batch)) {
    // Only an upload already counted in the batch may go on: redelivered, or left claimed by a run that died, whose
    // expired lease the claim below takes over (settling it from the record would hand it back forever).
    const existing = await deps.store.getImage(upload.clientId, upload.batchId, image.fprint);
    if (!existing || !isSameUpload(existing, object)) {
      throw new RejectedUploadError(`batch ${upload.batchId} was closed before this upload arrived`, {
        code: 'BatchClosed',
        decoded: image,
      });
    }
  }
  let outcome;
  try {
    outcome = await deps.store.claim(claim, { note: noteNeeded(step) ? upload : undefined, seen: upload.batch });
  } catch (err) {
    // Closed (and complete) after this upload read the batch: refused by the write that would have counted it.
    if (err instanceof BatchClosedError)
      throw new RejectedUploadError(`batch ${upload.batchId} was closed before this upload arrived`, {
        code: 'BatchClosed',
        decoded: image,
      });
    throw err;
  }
  if (!outcome.held) return { existing: outcome.existing };
  upload.log.add(outcome.takeover ? 'took over an expired claim' : 'claimed');
  return { ...step, held: { claim, uploadedAt: outcome.uploadedAt, ...(outcome.takeover ? { takeover: true } : {}) } };
}

/** Closed, and every file it was told of arrived: uploads still in flight when it closed are still taken. */
const takesNoMoreUploads = (batch: Batch): boolean => batch.closed && allArrived(batch);

/**
 * Step 4b: the thumbnail, from the pixels the fingerprint decoded (no second decode). Stored once per record: a
 * duplicate shows its original's. Never fails the image: without a thumbnail the upload is still classified, recorded
 * and moved, and the fault is logged and counted.
 */
export async function storeImageThumbnail(deps: IngestDeps, upload: Placed, image: Fingerprint, fprint: string): Promise<void> {
  const key = thumbnailKey(upload, fprint);
  try {
    const webp = await image.thumbnail();
    await storeThumbnail(deps.s3, upload.bucket, key, webp);
    upload.written.thumbnail(key);
    upload.log.add(`thumbnail ${key} (${webp.length} bytes)`);
  } catch (err) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    deps.metrics.thumbnailFailed();
    deps.logger.error('thumbnail not stored; the image goes on without it', { key: upload.key, thumbnail: key, reason });
    upload.log.add(`thumbnail not stored: ${reason}`);
  }
}
