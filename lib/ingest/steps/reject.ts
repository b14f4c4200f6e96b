// The one place a rejected upload becomes a `fail` record (docs/design.md §1: bad input never fails the SQS batch).
import type { Image } from '../../domain/image';
import type { IngestDeps, IngestResult } from '../deps';
import type { RejectedUploadError } from '../errors';
import { timed } from '../metrics';
import { rejectionKey } from '../rejection-key';
import { restingKey } from '../s3-key';
import { removeUpload } from '../storage';
import { storeImageThumbnail } from './claim';
import { restAround } from './move';
import type { Placed } from './place';
import { lostClaim } from './record';
import { repairRedelivered } from './settle';

export async function recordRejection(
  deps: IngestDeps,
  upload: Placed,
  err: RejectedUploadError,
  opts: { move?: boolean } = {},
): Promise<IngestResult> {
  const { store, logger } = deps;
  upload.log.add(`rejected: ${err.code}: ${err.message}`);
  logger.warn('upload rejected', { key: upload.key, code: err.code, reason: err.message });
  // An imported image rests at its source: no failed/ key (docs/design.md §16).
  const failedKey = upload.inPlace ? undefined : restingKey('failed', upload);
  const error = { code: err.code, message: err.message };
  const now = (deps.now ?? Date.now)();
  const fprint = err.claim?.claim.fprint ?? rejectionKey(upload.fileName, upload.etag);
  // A claimed image stored its thumbnail after the claim; an unclaimed one decoded before its rejection does it here.
  const decoded = err.claim ? undefined : err.decoded;
  if (decoded) await timed(deps.metrics, 'Thumbnail', () => storeImageThumbnail(deps, upload, decoded, fprint));
  const record = async (): Promise<void> => {
    const recorded = err.claim
      ? await store.finish(
          err.claim.claim,
          {
            result: { status: 'fail', error },
            uploadedAt: err.claim.uploadedAt,
            now,
            ...(failedKey !== undefined ? { restingKey: failedKey } : {}),
            logs: upload.log.entries(),
          },
          { seen: upload.batch },
        )
      : await store.reject(rejectionRecord(upload, fprint, err.code === 'QuotaExceeded' ? undefined : failedKey, err, now), {
          seen: upload.batch,
        });
    if (recorded) return;
    if (err.claim) throw await lostClaim(deps, upload, err.claim.claim);
    await repairRedelivered(deps, upload); // recorded by an earlier delivery that may not have counted it
  };
  // Overwritten: the key holds a newer upload, which stays for its own event. Not to move: an object the ingest
  // cannot look at (giving up on it), which stays under uploads/.
  if (err.code === 'Overwritten' || opts.move === false) await record();
  else if (err.code === 'QuotaExceeded') {
    // Beyond the images quota: the record stays, the bytes go (a client at its quota fills no one's disk).
    await record();
    if (!upload.inPlace) await removeUpload(deps.s3, upload);
  } else await restAround(deps, upload, upload, failedKey ?? upload.key, record, err.claim);
  return { outcome: 'fail', batchId: upload.batchId, fprint, errorCode: err.code };
}

function rejectionRecord(upload: Placed, fprint: string, failedKey: string | undefined, err: RejectedUploadError, now: number): Image {
  return {
    clientId: upload.clientId,
    batchId: upload.batchId,
    fprint,
    status: 'fail',
    key: upload.key,
    ...(upload.etag !== undefined ? { etag: upload.etag } : {}),
    ...(upload.inPlace ? { source: upload.inPlace } : {}),
    fileName: upload.fileName,
    uploadedAt: upload.receivedAt,
    classifiedAt: now,
    expiresAt: upload.batch.expiresAt,
    ...(failedKey !== undefined ? { restingKey: failedKey } : {}),
    errorCode: err.code,
    errorMessage: err.message,
    ...(upload.log.entries()?.length ? { logs: upload.log.entries() } : {}),
  };
}
