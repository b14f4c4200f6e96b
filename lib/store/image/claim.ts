// The image's claim: taken for classification (counted as pending), taken over when the lease ends, handed back,
// each as a pure request builder beside the function that sends it. The claim writes through the batch's counters
// (batch/counters.ts), never through the store's facade.
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Counts } from '../../domain/counts';
import type { Image } from '../../domain/image';
import type { Claim, UploadRef } from '../../domain/upload';
import { BatchClosedError } from '../../errors';
import type { BatchCounters, RecordOptions } from '../batch/counters';
import type { ImageAttribute } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { BatchErasedError } from '../table/errors';
import { imageKey, purgeAt } from '../table/schema';
import { imageWrite, type WriteExpression } from '../table/update-expression';
import { noteFingerprintRequest } from '../upload/attempts';
import { getImageRecord } from './record';

export const CLAIM_COUNTS: Partial<Counts> = { total: 1, pending: 1 };

/** What every claim writes: the upload it holds the image for, and its lease. */
function claimWrite(c: Claim): WriteExpression<ImageAttribute> {
  return imageWrite()
    .set('status', ':processing', 'processing')
    .set('claimId', ':claim', c.claimId)
    .set('leaseUntil', ':lease', c.now + c.leaseMs)
    .set('clientId', ':client', c.clientId)
    .set('key', ':key', c.key)
    .set('fileName', ':file', c.fileName)
    .set('phash', ':phash', c.phash)
    .set('format', ':format', c.format)
    .set('width', ':w', c.width)
    .set('height', ':h', c.height);
}

/** The claim's ETag, and an imported image's source object (docs/design.md §16), when it has them. */
function claimRequestOf(table: string, c: Claim, w: WriteExpression<ImageAttribute>): UpdateCommandInput {
  if (c.etag !== undefined) w.set('etag', ':etag', c.etag);
  if (c.source) w.set('source', ':source', c.source);
  return { TableName: table, Key: imageKey(c.clientId, c.batchId, c.fprint), ...w.update() };
}

/**
 * Claims a new image for classification. Of the index keys it writes only client_id (the image is findable by
 * fingerprint at once, through client-fprint); status_ts and upload_ts come with the result, so a claim costs one
 * index write instead of five. Until then the upload time waits in received_ts.
 */
export function claimRequest(table: string, c: Claim): UpdateCommandInput {
  const w = claimWrite(c)
    .set('receivedAt', ':now', c.now)
    .set('expiresAt', ':ttl', c.expiresAt)
    .set('purgeAt', ':purge', purgeAt(c.expiresAt));
  return claimRequestOf(table, c, w.when(w.notExists('fprint')));
}

/** Takes over a claim left 'processing' by a run whose lease expired; keeps the first receipt time and expiry. */
export function takeoverRequest(table: string, c: Claim, previousClaimId: string): UpdateCommandInput {
  const w = claimWrite(c);
  w.when(
    w.is('status', '=', ':processing', 'processing'),
    w.is('leaseUntil', '<', ':now', c.now),
    w.is('claimId', '=', ':previous', previousClaimId),
  );
  return claimRequestOf(table, c, w);
}

/** Ends a claim early so a retry of the same upload can take it at once (a transient failure). */
export function releaseRequest(table: string, c: Claim): UpdateCommandInput {
  const w = imageWrite().set('leaseUntil', ':zero', 0);
  return {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    ...w.when(w.is('claimId', '=', ':claim', c.claimId)).update(),
  };
}

export type ClaimOutcome =
  | { held: true; takeover: boolean; uploadedAt: number }
  /** Someone holds or held this image already: the record that says so. */
  | { held: false; existing: Image };

/**
 * Claims (batch, fingerprint) for classification, counting a new image as pending; takes over a claim whose lease
 * has expired (already counted). Otherwise answers the record that holds the image. Throws BatchClosedError, leaving
 * nothing written, when the batch takes no more uploads (closed, every declared file arrived) by the time it counts.
 */
export async function claimImage(store: BatchCounters, c: Claim, opts: RecordOptions & { note?: UploadRef } = {}): Promise<ClaimOutcome> {
  // The fingerprint this upload found goes on its own item with the claim, so that an attempt giving up later finds
  // the record without decoding (docs/design.md §6): in the claim's transaction, or written just before it.
  const note = opts.note && noteFingerprintRequest(store.table, opts.note, c.fprint);
  if (note && !store.transactions) await store.ddb.send(new UpdateCommand(note));
  const records = note && store.transactions ? [claimRequest(store.table, c), note] : [claimRequest(store.table, c)];
  let counted: boolean;
  try {
    counted = await store.recordWithCounts(records, c, CLAIM_COUNTS, { ...opts, takingUploads: true });
  } catch (err) {
    // Without transactions the claim may stand uncounted (its count refused, e.g. by a full disk): handed back, so
    // the retry takes it over at once; the count it lacks shows once it finishes, and is recounted then.
    if (!store.transactions && !(err instanceof BatchClosedError) && !(err instanceof BatchErasedError))
      await releaseClaim(store, c).catch(() => undefined);
    throw err;
  }
  if (counted) return { held: true, takeover: false, uploadedAt: c.now };
  const existing = await getImageRecord(store, c.clientId, c.batchId, c.fprint);
  if (!existing) return claimImage(store, c, opts); // removed between the two calls: try again
  if (existing.status === 'processing' && existing.claimId && (existing.leaseUntil ?? 0) < c.now) {
    try {
      if (note && store.transactions) await store.ddb.send(new UpdateCommand(note));
      await store.ddb.send(new UpdateCommand(takeoverRequest(store.table, c, existing.claimId)));
      return { held: true, takeover: true, uploadedAt: existing.uploadedAt ?? c.now };
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      return claimImage(store, c, opts); // another run took it over first
    }
  }
  return { held: false, existing };
}

export async function releaseClaim(store: BatchCounters, c: Claim): Promise<void> {
  try {
    await store.ddb.send(new UpdateCommand(releaseRequest(store.table, c)));
  } catch (err) {
    if (!conditionFailed(err)) throw err;
  }
}
