// The image record: its result on the claim (image/claim.ts), a refused upload's `fail` record, and the duplicates
// counted on it, with what each moves on the counters (written through batch/counters.ts).
import { GetCommand, type PutCommandInput, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Counts } from '../../domain/counts';
import type { ModelVersion } from '../../domain/detection';
import type { Image } from '../../domain/image';
import type { Review } from '../../domain/review';
import type { Claim, Finish, ImageResult, UploadRef } from '../../domain/upload';
import type { BatchCounters, RecordOptions } from '../batch/counters';
import type { TableAccess } from '../table/access';
import { toImage, toImageItem } from '../table/attributes';
import { encodeDetections } from '../table/detections';
import {
  type ImageItem,
  imageKey,
  type KnownItem,
  knownItemKey,
  LIMITS,
  purgeAt,
  reviewKey,
  statusTs,
  toStoredReview,
} from '../table/schema';
import { imageWrite } from '../table/update-expression';
import { duplicateMarkRequest, noteFingerprintRequest } from '../upload/attempts';
import { paidWrite } from './paid-result';

/**
 * The known-fingerprint item (schema.ts KnownItem) written with each classified (`success`) record: it names `batchId`
 * as the latest batch where the client's pixels `fprint` were classified; POST /v1/fingerprints:known reads it by key
 * (known.ts).
 */
export function knownItemRequest(
  tableName: string,
  r: { clientId: string; batchId: string; fprint: string; expiresAt: number },
  model?: ModelVersion,
): PutCommandInput {
  const item: KnownItem = {
    ...knownItemKey(r.clientId, r.fprint),
    known_in: r.batchId,
    ...(model ? { rek_model: model } : {}),
    ttl: r.expiresAt,
    purge_at: purgeAt(r.expiresAt),
  };
  return { TableName: tableName, Item: item };
}

export const DUPLICATE_COUNTS: Partial<Counts> = { total: 1, duplicate: 1 };

export const REJECTION_COUNTS: Partial<Counts> = { total: 1, fail: 1 };

/** The final state of a claimed image, written only by the claim's holder; it writes the index keys. */
export function finishRequest(table: string, c: Claim, f: Finish): UpdateCommandInput {
  const w = paidWrite()
    .set('status', ':status', f.result.status)
    .set('uploadedAt', ':uploadedAt', f.uploadedAt)
    .set('statusKey', ':statusKey', statusTs(f.result.status, f.uploadedAt))
    .set('classifiedAt', ':now', f.result.status === 'success' && f.result.reusedFrom !== undefined ? f.result.reusedFrom : f.now);
  // An imported image rests nowhere but at its source (docs/design.md §16).
  if (f.restingKey !== undefined) w.set('restingKey', ':resting', f.restingKey);
  if (f.result.status === 'success') setSuccess(w, f, f.result);
  else
    w.set('errorCode', ':errorCode', f.result.error.code).set(
      'errorMessage',
      ':errorMessage',
      f.result.error.message.slice(0, LIMITS.errMessageChars),
    );
  if (f.logs?.length) w.set('logs', ':logs', f.logs).set('loggedAt', ':uploadedAt', f.uploadedAt);
  // The answer a run kept on the claim (paid-result.ts) goes with the claim: the record holds the result itself.
  w.remove('claimId', 'leaseUntil', 'paid').when(w.is('claimId', '=', ':claim', c.claimId));
  return { TableName: table, Key: imageKey(c.clientId, c.batchId, c.fprint), ...w.update() };
}

/** A success's answer, its verdict and where and when the photo was taken (as its EXIF says), added to the finish's SET. */
function setSuccess(w: ReturnType<typeof paidWrite>, f: Finish, result: Extract<ImageResult, { status: 'success' }>): void {
  const review = reviewOfResult(result);
  w.set('isCat', ':cat', review?.isCat ?? result.isCat)
    .set('catConfidence', ':catConfidence', result.catConfidence)
    .set('cats', ':cats', result.cats)
    .set('labels', ':labels', result.labels)
    .set('reviewKey', ':reviewKey', reviewKey(review !== undefined, result.catConfidence));
  if (review) w.set('review', ':review', toStoredReview(review));
  if (result.detection) w.set('detection', ':detection', result.detection);
  if (result.detections) w.set('detections', ':detections', encodeDetections(result.detections));
  if (result.model) w.set('model', ':model', result.model);
  const capture = f.capture;
  if (capture?.capturedAt)
    w.set('capturedAt', ':capturedAt', capture.capturedAt).set('capturedWall', ':capturedWall', capture.capturedAt.slice(0, 19));
  if (capture?.camera) w.set('camera', ':camera', capture.camera);
  if (capture?.location) w.set('location', ':location', capture.location);
  if (result.reusedFrom !== undefined) w.set('reused', ':reused', true);
  if (review?.isCat ?? result.isCat) w.set('catAt', ':uploadedAt', f.uploadedAt);
}

/** The person's verdict a success result carries, beside the machine's (its isCat). */
function reviewOfResult(r: Extract<ImageResult, { status: 'success' }>): Review | undefined {
  return r.review ? { ...r.review, machineIsCat: r.isCat } : undefined;
}

/** What finishing moves on the counters: pending becomes success (and a cat, reviewed, corrected) or fail. */
export function finishCounts(r: ImageResult): Partial<Counts> {
  if (r.status !== 'success') return { pending: -1, fail: 1 };
  const review = reviewOfResult(r);
  return {
    pending: -1,
    success: 1,
    ...((review?.isCat ?? r.isCat) ? { cats: 1 } : {}),
    ...(r.reusedFrom !== undefined ? { reused: 1 } : {}),
    ...(review ? { reviewed: 1, ...(review.isCat !== review.machineIsCat ? { corrected: 1 } : {}) } : {}),
  };
}

/** A `fail` record for an upload refused before any claim; conditional, so a redelivery writes nothing. */
export function rejectionRequest(table: string, image: Image): PutCommandInput {
  const uploadedAt = image.uploadedAt ?? image.classifiedAt ?? 0;
  const item: ImageItem = {
    ...toImageItem({ ...image, errorMessage: image.errorMessage?.slice(0, LIMITS.errMessageChars) }),
    status_ts: statusTs('fail', uploadedAt),
    ...(image.logs?.length ? { log_ts: uploadedAt } : {}),
  };
  const w = imageWrite();
  return { TableName: table, Item: item, ...w.when(w.notExists('fprint')).condition() };
}

/**
 * Counts another upload of an image already recorded in the batch. The file name set makes a redelivered event a
 * no-op; past LIMITS.dupFiles names only the count grows, and the upload's own item guards it (duplicateMarkRequest).
 */
export function duplicateRequest(table: string, original: Image, fileName: string): UpdateCommandInput {
  const w = imageWrite().add('duplicates', ':one', 1);
  w.when(w.exists('fprint'));
  if (keepsDuplicateName(original))
    w.add('duplicateFiles', ':name', new Set([fileName])).when(w.not(w.contains('duplicateFiles', w.val(':file', fileName))));
  return { TableName: table, Key: imageKey(original.clientId, original.batchId, original.fprint), ...w.update() };
}

/** Whether a duplicate's name is kept on its original (and so guards its redelivery there). */
export const keepsDuplicateName = (original: Pick<Image, 'duplicateFiles'>): boolean =>
  (original.duplicateFiles?.length ?? 0) < LIMITS.dupFiles;

export async function getImageRecord(
  store: Pick<TableAccess, 'ddb' | 'table'>,
  clientId: string,
  batchId: string,
  fprint: string,
): Promise<Image | undefined> {
  const out = await store.ddb.send(
    new GetCommand({ TableName: store.table, Key: imageKey(clientId, batchId, fprint), ConsistentRead: true }),
  );
  return out.Item ? toImage(out.Item as ImageItem) : undefined;
}

/** Records the claimed image's result and moves pending to success or fail; false when the claim was lost. */
export async function finishImage(store: BatchCounters, c: Claim, f: Finish, opts: RecordOptions = {}): Promise<boolean> {
  const record = finishRequest(store.table, c, f);
  // A classified record names its batch in the client's known item of these pixels (POST /v1/fingerprints:known).
  const records = f.result.status === 'success' ? [record, knownItemRequest(store.table, c, f.result.model)] : record;
  return store.recordWithCounts(records, c, finishCounts(f.result), opts);
}

/** Records a refused upload (a `fail` record) and counts it; false when it was recorded before (a redelivery). */
export async function rejectUpload(store: BatchCounters, image: Image, opts: RecordOptions = {}): Promise<boolean> {
  return store.recordWithCounts(rejectionRequest(store.table, image), image, REJECTION_COUNTS, opts);
}

/**
 * Counts another upload of a recorded image; false when this upload was counted before (a redelivery). Its name on
 * the original guards that while names are kept; past them, the upload's own item is marked in the same write.
 */
export async function addDuplicate(
  store: BatchCounters,
  original: Image,
  fileName: string,
  upload: UploadRef,
  opts: RecordOptions & { note?: boolean } = {},
): Promise<boolean> {
  const count = duplicateRequest(store.table, original, fileName);
  // The mark sets the upload's fingerprint too; without it, a transaction notes the fingerprint beside the count (a
  // claim's transaction that found the image claimed wrote nothing).
  const uploadItem = keepsDuplicateName(original)
    ? opts.note && store.transactions
      ? [noteFingerprintRequest(store.table, upload, original.fprint)]
      : []
    : [duplicateMarkRequest(store.table, upload, original.fprint)];
  return store.recordWithCounts([...uploadItem, count], original, DUPLICATE_COUNTS, opts);
}
