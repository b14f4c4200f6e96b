// The image's claim: taken for classification (counted as pending), taken over when the lease ends, handed back,
// each as a pure request builder beside the function that sends it. The claim writes through the batch's counters
// (batch/counters.ts), never through the store's facade.
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Counts } from '../../domain/counts';
import type { Image } from '../../domain/image';
import type { Claim, UploadRef } from '../../domain/upload';
import { BatchClosedError } from '../../errors';
import type { BatchCounters, RecordOptions } from '../batch/counters';
import { imageNames } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { BatchErasedError } from '../table/errors';
import { imageKey, purgeAt } from '../table/schema';
import { noteFingerprintRequest } from '../upload/attempts';
import { getImage } from './record';

export const CLAIM_COUNTS: Partial<Counts> = { total: 1, pending: 1 };

const CLAIM_SET =
  'SET #status = :processing, #claimId = :claim, #leaseUntil = :lease, #clientId = :client, #key = :key, ' +
  '#fileName = :file, #phash = :phash, #format = :format, #width = :w, #height = :h';

const CLAIM_NAMES = ['status', 'claimId', 'leaseUntil', 'clientId', 'key', 'fileName', 'phash', 'format', 'width', 'height'] as const;

function claimValues(c: Claim): Record<string, unknown> {
  return {
    ':processing': 'processing',
    ':claim': c.claimId,
    ':lease': c.now + c.leaseMs,
    ':client': c.clientId,
    ':key': c.key,
    ':file': c.fileName,
    ':phash': c.phash,
    ':format': c.format,
    ':w': c.width,
    ':h': c.height,
  };
}

/**
 * Claims a new image for classification. Of the index keys it writes only client_id (the image is findable by
 * fingerprint at once, through client-fprint); status_ts and upload_ts come with the result, so a claim costs one
 * index write instead of five. Until then the upload time waits in received_ts.
 */
export function claimRequest(table: string, c: Claim): UpdateCommandInput {
  const etag = c.etag !== undefined;
  return withSource(c, {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    UpdateExpression: `${CLAIM_SET}, #receivedAt = :now, #expiresAt = :ttl, #purgeAt = :purge${etag ? ', #etag = :etag' : ''}`,
    ConditionExpression: 'attribute_not_exists(#fprint)',
    ExpressionAttributeNames: imageNames(
      ...CLAIM_NAMES,
      'receivedAt',
      'expiresAt',
      'purgeAt',
      'fprint',
      ...(etag ? (['etag'] as const) : []),
    ),
    ExpressionAttributeValues: {
      ...claimValues(c),
      ':now': c.now,
      ':ttl': c.expiresAt,
      ':purge': purgeAt(c.expiresAt),
      ...(etag ? { ':etag': c.etag } : {}),
    },
  });
}

/** An imported image's claim names its source object on the record (docs/design.md §16). */
function withSource(c: Claim, request: UpdateCommandInput): UpdateCommandInput {
  if (!c.source) return request;
  return {
    ...request,
    UpdateExpression: `${request.UpdateExpression}, #source = :source`,
    ExpressionAttributeNames: { ...request.ExpressionAttributeNames, ...imageNames('source') },
    ExpressionAttributeValues: { ...request.ExpressionAttributeValues, ':source': c.source },
  };
}

/** Takes over a claim left 'processing' by a run whose lease expired; keeps the first receipt time and expiry. */
export function takeoverRequest(table: string, c: Claim, previousClaimId: string): UpdateCommandInput {
  const etag = c.etag !== undefined;
  return withSource(c, {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    UpdateExpression: `${CLAIM_SET}${etag ? ', #etag = :etag' : ''}`,
    ConditionExpression: '#status = :processing AND #leaseUntil < :now AND #claimId = :previous',
    ExpressionAttributeNames: imageNames(...CLAIM_NAMES, ...(etag ? (['etag'] as const) : [])),
    ExpressionAttributeValues: { ...claimValues(c), ':now': c.now, ':previous': previousClaimId, ...(etag ? { ':etag': c.etag } : {}) },
  });
}

/** Ends a claim early so a retry of the same upload can take it at once (a transient failure). */
export function releaseRequest(table: string, c: Claim): UpdateCommandInput {
  return {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    UpdateExpression: 'SET #leaseUntil = :zero',
    ConditionExpression: '#claimId = :claim',
    ExpressionAttributeNames: imageNames('leaseUntil', 'claimId'),
    ExpressionAttributeValues: { ':zero': 0, ':claim': c.claimId },
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
  const existing = await getImage(store, c.clientId, c.batchId, c.fprint);
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
