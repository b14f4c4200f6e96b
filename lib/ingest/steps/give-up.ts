// An upload whose attempts did not finish (docs/design.md §6, "An upload's attempts are bounded").

import type { Image } from '../../domain/image';
import type { Claim } from '../../domain/upload';
import type { IngestDeps, IngestResult } from '../deps';
import { RejectedUploadError } from '../errors';
import { sourceState } from '../storage';
import type { Placed } from './place';
import type { Started } from './quota';
import { recordRejection } from './reject';
import { isSameUpload, leaseLeftSeconds, redelivered, settleClaimed } from './settle';

/** What the failed attempt found before it failed: the fingerprint, and the claim it held on it. */
export interface Found {
  readonly fprint?: string;
  readonly claimId?: string;
}

/**
 * Ends an upload whose attempts all failed as a `fail` record with code ProcessingFailed and its object under
 * failed/, doing none of the steps that failed before: no read, no decode, no DetectLabels. A claim an earlier
 * attempt left `processing` is finished as that record (pending becomes fail) once its lease is over; an upload found
 * recorded already (a late redelivery) or counted as a duplicate is settled as such. When the object cannot even be
 * looked at (AccessDenied), the record is written all the same and the object stays under uploads/.
 */
export async function giveUp(deps: IngestDeps, { upload, attempt }: Started, found: Found = {}): Promise<IngestResult> {
  const failed = Math.min(attempt.attempts, deps.config.maxAttempts);
  const message = `gave up after ${failed} attempt${failed === 1 ? '' : 's'} that did not finish (the function timed out, ran out of memory, or met a fault that persisted)`;
  deps.logger.error('giving up on an upload', { key: upload.key, attempts: attempt.attempts });
  upload.log.add(`giving up after ${failed} attempts`);
  // An imported image's source is not the pipeline's to look after: it is given up on as present, and stays.
  const source = upload.inPlace ? 'present' : await sourceState(deps.s3, upload);
  if (source === 'gone') return redelivered(deps, upload);
  const fprint = found.fprint ?? attempt.fprint;
  const existing = fprint === undefined ? undefined : await deps.store.getImage(upload.clientId, upload.batchId, fprint);
  if (existing && (existing.status !== 'processing' || !isSameUpload(existing, upload))) {
    return settleClaimed(deps, upload, upload, existing, found.fprint !== undefined && found.fprint !== attempt.fprint);
  }
  if (existing) {
    const now = (deps.now ?? Date.now)();
    if (existing.claimId !== found.claimId && (existing.leaseUntil ?? 0) >= now) {
      return { outcome: 'deferred', key: upload.key, retryAfterSeconds: leaseLeftSeconds(existing, now) };
    }
    const claim = claimOfRecord(deps, upload, existing, now);
    const held = { claim, uploadedAt: existing.uploadedAt ?? upload.receivedAt };
    return recordRejection(deps, upload, new RejectedUploadError(message, { code: 'ProcessingFailed', claim: held }), {
      move: source === 'present',
    });
  }
  if (source === 'overwritten') {
    return recordRejection(
      deps,
      upload,
      new RejectedUploadError('the file was replaced by a newer upload before it could be read', { code: 'Overwritten' }),
    );
  }
  return recordRejection(deps, upload, new RejectedUploadError(message, { code: 'ProcessingFailed' }), { move: source === 'present' });
}

/** The claim an earlier attempt left on the record, as this run finishes it (conditionally on that very claim). */
function claimOfRecord(deps: IngestDeps, upload: Placed, record: Image, now: number): Claim {
  return {
    clientId: upload.clientId,
    batchId: upload.batchId,
    fprint: record.fprint,
    claimId: record.claimId ?? '',
    key: upload.key,
    etag: upload.etag,
    fileName: upload.fileName,
    phash: record.phash ?? '',
    format: record.format ?? '',
    width: record.width ?? 0,
    height: record.height ?? 0,
    now,
    leaseMs: deps.config.claimLeaseSeconds * 1000,
    expiresAt: upload.batch.expiresAt,
    ...(upload.inPlace ? { source: upload.inPlace } : {}),
  };
}
