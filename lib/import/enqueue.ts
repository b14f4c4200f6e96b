// One listed object sent to the uploads queue, once (docs/design.md §16). This is the one call whoever lists a source
// makes per object: the local lister (lib/import/lister.ts), and on AWS the engine's task function (an S3 Batch
// Operations task or a distributed map's item), so fair share, throttling, quotas and dead letters stay the uploads'.
//
// Exactly once per (batch, object), without transactions too, on the object's own upload item (the one the ingest's
// attempts and quota mark live on, docs/design.md §2 "Upload"):
//   1. begin: the item is marked `sending` unless it is `sent` already (a page listed again after a crash: skipped);
//   2. the images quota counts it, idempotently on the same item (lib/store/client/quota.ts), and the ingest, finding
//      it counted, counts nothing more; beyond today's quota nothing is sent and the caller waits for the reset;
//   3. the message is sent in its client's message group;
//   4. the item is marked `sent`.
// A run killed between 3 and 4 sends that object again when its page is listed again: the ingest takes the second
// message as a redelivery of the same object (same source key and ETag) and records nothing twice.
import type { SourceObject } from '../domain/image';
import type { ClientLimits } from '../quota/limits';
import { utcDay } from '../quota/limits';
import { encodeImportMessage } from './message';

/** The batch an object is imported into. */
export interface ImportTarget {
  clientId: string;
  batchId: string;
  /** Epoch s: the batch's expiry, which the object's upload item shares. */
  expiresAt: number;
}

/** The uploads queue as an import sends to it: each message in its client's group (SQS MessageGroupId, the local queue's group). */
export interface ImportQueue {
  send(body: string, groupId: string): Promise<void>;
}

/** The object's own mark of being sent (lib/store/imports/marks.ts). */
export interface ImportMarks {
  /** Marks the object `sending`; answers `sent` when an earlier run sent it (nothing to do), else whether it is `new`. */
  begin(ref: ImportRef): Promise<'new' | 'unfinished' | 'sent'>;
  sent(ref: ImportRef): Promise<void>;
}

/** The images quota, as the ingest's (lib/ingest/deps.ts UploadQuota; lib/store/client/quota.ts ClientQuotaStore). */
export interface ImportQuota {
  limitsOf(clientId: string): Promise<ClientLimits>;
  countUpload(upload: ImportRef, day: string, limit: number): Promise<boolean>;
}

export interface EnqueueDeps {
  queue: ImportQueue;
  marks: ImportMarks;
  quota: ImportQuota;
  now?: () => number;
}

/**
 * An imported object's reference as an upload (its upload item: attempts, quota mark, send mark): the key is the
 * object's URI, so two buckets' (or two versions') objects of one key are two uploads.
 */
export interface ImportRef {
  clientId: string;
  batchId: string;
  key: string;
  etag?: string;
  expiresAt: number;
  /** The object, kept on its upload item by the send mark: the completion report's row (GET …/report). */
  source?: SourceObject;
}

/** `s3://bucket/key`, with `?versionId=` when a version was listed: what an imported record's `key` holds. */
export const sourceUri = (o: Pick<SourceObject, 'bucket' | 'key' | 'versionId'>): string =>
  `s3://${o.bucket}/${o.key}${o.versionId !== undefined ? `?versionId=${encodeURIComponent(o.versionId)}` : ''}`;

export const importRef = (target: ImportTarget, object: SourceObject): ImportRef => ({
  clientId: target.clientId,
  batchId: target.batchId,
  key: sourceUri(object),
  ...(object.etag !== undefined ? { etag: object.etag } : {}),
  expiresAt: target.expiresAt,
  source: object,
});

/**
 * `enqueued`: sent now; `sent-before`: an earlier run sent it; `over-quota`: today's images quota is used up, nothing
 * sent and nothing marked sent (the caller stops and goes on after the reset, sending this object again).
 */
export type EnqueueOutcome = 'enqueued' | 'sent-before' | 'over-quota';

/** Sends one listed object to the uploads queue, at most once however often it is listed (see the top of this file). */
export async function enqueueSourceObject(deps: EnqueueDeps, target: ImportTarget, object: SourceObject): Promise<EnqueueOutcome> {
  const ref = importRef(target, object);
  if ((await deps.marks.begin(ref)) === 'sent') return 'sent-before';
  const listedAt = (deps.now ?? Date.now)();
  const { maxImagesPerDay } = await deps.quota.limitsOf(target.clientId);
  if (!(await deps.quota.countUpload(ref, utcDay(listedAt), maxImagesPerDay))) return 'over-quota';
  await deps.queue.send(
    encodeImportMessage({ clientId: target.clientId, batchId: target.batchId, source: object, listedAt }),
    target.clientId,
  );
  await deps.marks.sent(ref);
  return 'enqueued';
}

/** The next UTC midnight after `nowMs`: when an import waiting for the images quota goes on. */
export const nextUtcMidnight = (nowMs: number): number => {
  const d = new Date(nowMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
};
