// Step 1 (docs/design.md §1): decode the key and place the upload in a batch of a known client, or refuse it (nothing
// can record it) or discard it (its batch is being erased or has expired).

import type { Batch } from '../../domain/batch';
import type { SourceObject } from '../../domain/image';
import { utcDay } from '../../quota/limits';
import type { BatchCounter } from '../../store/batch/summary';
import { DebugLog } from '../debug-log';
import type { IngestDeps, IngestResult, RefusalCode, UploadEvent } from '../deps';
import { type BatchFile, decodeS3Key, invalidKeyDestination, restingKey, tryParseUploadKey } from '../s3-key';
import { moveUpload, removeUpload, type StoredObject, uploadExists } from '../storage';
import { Written } from './written';

/**
 * An upload placed in its client's batch. It is also the object the moves name (StoredObject) and the reference of its
 * own item in the store (UploadRef: client, batch, key, ETag and the batch's expiry).
 */
export interface Placed extends Readonly<BatchFile> {
  readonly bucket: string;
  readonly key: string;
  readonly etag?: string;
  readonly size?: number;
  readonly batch: Batch;
  /** The batch's expiry (epoch s), which the upload's own item shares. */
  readonly expiresAt: number;
  readonly receivedAt: number;
  /** When the object was created (the event's time, else receivedAt). */
  readonly createdAt: number;
  readonly log: DebugLog;
  readonly written: Written;
  /**
   * An imported image (docs/design.md §16): read from this object, where it stays. `bucket` is then the stack's own
   * (where its thumbnail goes) and `key` the object's URI; nothing is moved, copied or deleted for it.
   */
  readonly inPlace?: SourceObject;
}

export async function placeUpload(deps: IngestDeps, event: UploadEvent): Promise<Placed | IngestResult> {
  const key = safeDecode(event.encodedKey);
  const object = { bucket: event.bucket, key, etag: event.etag };
  const parsed = tryParseUploadKey(key);
  if (!parsed) return refuse(deps, object, invalidKeyDestination(key), 'InvalidKey');
  if (!(await deps.store.isRegisteredClient(parsed.clientId))) return refuse(deps, object, restingKey('failed', parsed), 'UnknownClient');
  const receivedAt = (deps.now ?? Date.now)();
  const day = utcDay(event.eventTime ?? receivedAt);
  const placed = await deps.store.openBatch(
    {
      clientId: parsed.clientId,
      batchId: parsed.batchId,
      now: receivedAt,
      retentionDays: deps.config.defaultRetentionDays,
      catMinConfidence: deps.config.catMinConfidence,
    },
    batchCounter(deps, parsed.clientId, day),
  );
  if (!placed) return refuseBeyondBatches(deps, object, parsed.clientId, day);
  const { batch, opened } = placed;
  if (!deps.store.isLive(batch)) return discardErased(deps, object, [], batch.deleting ? 'BatchErased' : 'BatchExpired');
  // The erasure deletes a batch's objects before its summary: a summary opened just now for an object gone since
  // belongs to a batch erased while this event was on its way (a stale event must not bring the batch back).
  if (opened && !(await uploadExists(deps.s3, event.bucket, key))) {
    await deps.store.dropOpenedBatch(parsed.clientId, parsed.batchId);
    return discardErased(deps, object);
  }
  const log = new DebugLog(batch.debug, receivedAt);
  log.add(`received s3://${event.bucket}/${key} (${event.size ?? '?'} bytes, ETag ${event.etag ?? '?'})`);
  const createdAt = event.eventTime ?? receivedAt;
  return { ...parsed, ...object, size: event.size, batch, expiresAt: batch.expiresAt, receivedAt, createdAt, log, written: new Written() };
}

/**
 * An upload into a batch being erased or expired (or erased while it was ingested): nothing of it is written, and its
 * object is deleted rather than moved under failed/, where it could land after the erasure's last pass over that prefix.
 * `written`: what the run wrote after the claim (Written.keys), which may have landed behind the erasure's pass too.
 */
export async function discardErased(
  deps: IngestDeps,
  object: StoredObject,
  written: readonly string[] = [],
  code: 'BatchErased' | 'BatchExpired' = 'BatchErased',
): Promise<IngestResult> {
  deps.logger.warn(`upload into a batch ${code === 'BatchExpired' ? 'past its retention' : 'being erased'}: deleted, nothing recorded`, {
    key: object.key,
    code,
  });
  // An imported image's source is never the pipeline's to delete: only what this run wrote goes.
  if (!('inPlace' in object && object.inPlace)) await removeUpload(deps.s3, object);
  for (const key of written) await removeUpload(deps.s3, { bucket: object.bucket, key });
  return { outcome: 'refused', key: object.key, code };
}

/** The client's batches of the day, counted as a plain-S3 upload opens a new batch (docs/design.md §11). */
function batchCounter(deps: IngestDeps, clientId: string, day: string): BatchCounter | undefined {
  const { quota } = deps;
  if (!quota?.countBatch) return undefined;
  return { count: async () => quota.countBatch!(clientId, day, (await quota.limitsOf(clientId)).maxBatchesPerDay) };
}

/**
 * A plain-S3 upload into a new batch id beyond the client's batches of the day: refused like an upload beyond the
 * images quota (counted `rejected`, its bytes not kept), but with no batch to hold a record, none is written.
 */
async function refuseBeyondBatches(deps: IngestDeps, object: StoredObject, clientId: string, day: string): Promise<IngestResult> {
  deps.logger.warn("upload into a new batch beyond the client's batches of the day: deleted, no batch opened", {
    key: object.key,
    code: 'BatchQuotaExceeded',
  });
  await deps.quota?.countRefused?.(clientId, day);
  await removeUpload(deps.s3, object);
  return { outcome: 'refused', key: object.key, code: 'BatchQuotaExceeded' };
}

/** Nothing can record it: a log line, a metric, and the object under failed/. */
async function refuse(deps: IngestDeps, object: StoredObject, to: string, code: RefusalCode): Promise<IngestResult> {
  deps.logger.error('upload refused: no batch of its uploader can hold it', { key: object.key, code });
  await moveUpload(deps.s3, object, to);
  return { outcome: 'refused', key: object.key, code };
}

function safeDecode(encoded: string): string {
  try {
    return decodeS3Key(encoded);
  } catch {
    return encoded;
  }
}
