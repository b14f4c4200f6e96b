// The one table from domain names (lib/domain.ts) to stored attribute names, read both ways: items become
// domain objects through it, and the write builders name attributes through it (`#fileName` → file_name), so an
// attribute's stored name is written here once.
import type { Batch } from '../../domain/batch';
import type { Counts } from '../../domain/counts';
import type { ModelVersion } from '../../domain/detection';
import type { Image } from '../../domain/image';
import { parseModelVersion } from '../../model-version';
import { decodeDetections, encodeDetections } from './detections';
import type { StoredImport } from './import-item';
import {
  BATCH_SK,
  type BatchItem,
  batchPartition,
  EXPIRY_DUE,
  fromStoredAudit,
  fromStoredReview,
  type ImageItem,
  purgeAt,
  splitPartition,
  toStoredAudit,
  toStoredReview,
} from './schema';

export const IMAGE_ATTRIBUTES = {
  fprint: 'img_fprint',
  clientId: 'client_id',
  key: 's3img_key',
  etag: 'etag',
  fileName: 'file_name',
  status: 'op_status',
  uploadedAt: 'upload_ts',
  classifiedAt: 'rek_ts',
  expiresAt: 'ttl',
  isCat: 'rek_iscat',
  review: 'review',
  audit: 'audit',
  catConfidence: 'cat_conf',
  cats: 'rek_cats',
  reused: 'reused',
  labels: 'labels',
  detection: 'rek_resp',
  // A compact string (detections.ts): encoded and decoded here, not copied as it is.
  detections: 'rek_dets',
  // The model that gave the answer, {name, version} (lib/model-version.ts); absent on records written before it was kept.
  model: 'rek_model',
  capturedAt: 'cap_at',
  camera: 'camera',
  location: 'gps',
  logs: 'logs',
  loggedAt: 'log_ts',
  phash: 'phash',
  width: 'width',
  height: 'height',
  format: 'format',
  restingKey: 'processed_key',
  errorCode: 'err_code',
  errorMessage: 'err_msg',
  duplicates: 'dup_count',
  duplicateFiles: 'dup_files',
  claimId: 'claim_id',
  leaseUntil: 'lease_until',
  // A re-detection's (lib/store/redetect/images.ts): the answer it replaced, and its run while it still owes the image one.
  previous: 'prev',
  redetectRun: 'rd_run',
  // An imported image's object, {bucket, key, versionId?, etag?} (docs/design.md §16).
  source: 'source',
  // Index keys with no domain field of their own: uploadedAt while classifying, and the sparse index keys.
  receivedAt: 'received_ts',
  statusKey: 'status_ts',
  catAt: 'cat_ts',
  // The capture time's wall clock (cap_at without its offset), the batch-captured index's sort key.
  capturedWall: 'cap_wall',
  reviewKey: 'review_key',
  auditKey: 'audit_key',
  partition: 'batch_id',
  // DynamoDB's TTL attribute, a while after expiresAt (schema.ts PURGE_AFTER_EXPIRY_S); reads filter on expiresAt.
  purgeAt: 'purge_at',
} as const;

export const BATCH_ATTRIBUTES = {
  partition: 'batch_id',
  sortKey: 'img_fprint',
  clientId: 'owner_id',
  createdAt: 'created_ts',
  debug: 'debug',
  retentionDays: 'retention_days',
  expiresAt: 'ttl',
  expected: 'expected',
  closed: 'closed',
  closedAt: 'closed_ts',
  catMinConfidence: 'cat_min_conf',
  doneAt: 'done_ts',
  deleting: 'deleting',
  callbackUrl: 'callback_url',
  callback: 'callback',
  callbackDue: 'cb_due',
  callbackRequeuedAt: 'cb_requeued_ts',
  // The expiry sweep's: the sparse index key every summary carries, and when it last queued the batch's erasure.
  expiryDue: 'exp_due',
  eraseQueuedAt: 'erase_ts',
  // The strata's sizes at the last audit draw (lib/store/audit/queue.ts).
  auditPopulation: 'audit_pop',
  // A re-detection in progress (lib/store/redetect/images.ts): its run id and the images it still owes an answer.
  redetectRun: 'rd_run',
  redetectLeft: 'rd_left',
  // An import's source, progress and lister checkpoint (lib/store/import-progress.ts).
  import: 'imp',
} as const;

/** An upload's item (schema.ts uploadItemKey). */
export const UPLOAD_ATTRIBUTES = {
  attempts: 'attempts',
  fprint: 'seen_fprint',
  duplicateOf: 'dup_of',
  /** Set when the upload was beyond its client's daily quota (docs/design.md §11). */
  quotaExceeded: 'quota_over',
  /** Set, with the count, when the upload was counted against its client's daily quota (quota-writes.ts). */
  quotaCounted: 'quota_day',
  /** An imported object's send mark (import-marks.ts): `sending`, then `sent` once on the uploads queue. */
  importSend: 'imp_send',
  /** An imported object's {bucket, key, versionId?, etag?}, written with its send mark. */
  importSource: 'imp_src',
  /** An imported object counted in its import's progress, on AWS (import-jobs.ts): `enqueued` or `skipped`. */
  importCounted: 'imp_cnt',
  expiresAt: 'ttl',
  purgeAt: 'purge_at',
} as const;

export const COUNTER_ATTRIBUTES = {
  total: 'n_total',
  pending: 'n_pending',
  success: 'n_success',
  fail: 'n_fail',
  duplicate: 'n_duplicate',
  reused: 'n_reused',
  cats: 'n_cats',
  reviewed: 'n_reviewed',
  corrected: 'n_corrected',
} as const satisfies Record<keyof Counts, string>;

export type ImageAttribute = keyof typeof IMAGE_ATTRIBUTES;
export type BatchAttribute = keyof typeof BATCH_ATTRIBUTES | keyof Counts;
export type UploadAttribute = keyof typeof UPLOAD_ATTRIBUTES;

const BATCH_AND_COUNTERS = { ...BATCH_ATTRIBUTES, ...COUNTER_ATTRIBUTES };

/** ExpressionAttributeNames for domain names used as `#name` placeholders in an image expression. */
export const imageNames = (...names: ImageAttribute[]): Record<string, string> =>
  Object.fromEntries(names.map((n) => [`#${n}`, IMAGE_ATTRIBUTES[n]]));

/** The same for a batch summary expression. */
export const batchNames = (...names: BatchAttribute[]): Record<string, string> =>
  Object.fromEntries(names.map((n) => [`#${n}`, BATCH_AND_COUNTERS[n]]));

/** The same for an upload item expression. */
export const uploadNames = (...names: UploadAttribute[]): Record<string, string> =>
  Object.fromEntries(names.map((n) => [`#${n}`, UPLOAD_ATTRIBUTES[n]]));

/** The attributes an image read back shows: the index keys are the store's own. */
const SHOWN_IMAGE_ATTRIBUTES = Object.entries(IMAGE_ATTRIBUTES).filter(
  ([name]) => !['receivedAt', 'statusKey', 'catAt', 'capturedWall', 'reviewKey', 'auditKey', 'partition', 'purgeAt'].includes(name),
);

/** A stored image (whole, or as an index projects it) as the domain sees it. */
export function toImage(item: Partial<ImageItem>): Image {
  const stored = item as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [name, attribute] of SHOWN_IMAGE_ATTRIBUTES) {
    if (stored[attribute] !== undefined) out[name] = stored[attribute];
  }
  const { clientId, batchId } = splitPartition(item.batch_id ?? '');
  out.clientId = item.client_id ?? clientId;
  out.batchId = batchId;
  // Indexes keyed by status_ts (`{op_status}#{upload_ts}`) project neither: they are read back from the key.
  const fromKey = typeof item.status_ts === 'string' ? /^(\w+)#(\d+)$/.exec(item.status_ts) : null;
  if (out.status === undefined && fromKey) out.status = fromKey[1];
  out.uploadedAt = item.upload_ts ?? item.received_ts ?? (fromKey ? Number(fromKey[2]) : undefined);
  if (item.dup_files !== undefined) out.duplicateFiles = [...item.dup_files].sort();
  if (item.review !== undefined) out.review = fromStoredReview(item.review);
  if (item.audit !== undefined) out.audit = fromStoredAudit(item.audit);
  if (item.prev !== undefined)
    out.previous = { model: previousModel(item.prev.model), isCat: item.prev.cat, catConfidence: item.prev.conf };
  const detections = decodeDetections(stored.rek_dets);
  if (detections) out.detections = detections;
  else delete out.detections;
  return out as unknown as Image;
}

/** The model of a replaced answer: {name, version}, or the LabelModelVersion string the first re-detections kept. */
const previousModel = (m: ModelVersion | string): ModelVersion =>
  typeof m === 'string' ? parseModelVersion(m) : { name: m.name, version: m.version };

/** The stored item of an image record (every field of the domain object that is set). */
/** A page of stored image items as domain images (a listing's answer), its cursor kept. */
export const imagesPage = (page: { items: ImageItem[]; cursor?: string }): { items: Image[]; cursor?: string } => ({
  ...page,
  items: page.items.map(toImage),
});

export function toImageItem(image: Image): ImageItem {
  const out: Record<string, unknown> = { batch_id: batchPartition(image.clientId, image.batchId) };
  for (const [name, attribute] of Object.entries(IMAGE_ATTRIBUTES)) {
    const value = (image as unknown as Record<string, unknown>)[name];
    if (value !== undefined && name !== 'partition') out[attribute] = value;
  }
  if (typeof image.expiresAt === 'number') out.purge_at = purgeAt(image.expiresAt);
  if (image.review) out.review = toStoredReview(image.review);
  if (image.audit) out.audit = toStoredAudit(image.audit);
  if (image.previous) out.prev = { model: image.previous.model, cat: image.previous.isCat, conf: image.previous.catConfidence };
  if (image.detections) out.rek_dets = encodeDetections(image.detections);
  return out as unknown as ImageItem;
}

export function toBatch(item: BatchItem): Batch {
  const { batchId } = splitPartition(item.batch_id);
  const counts = Object.fromEntries(
    Object.entries(COUNTER_ATTRIBUTES).map(([name, attribute]) => [
      name,
      Number((item as unknown as Record<string, unknown>)[attribute] ?? 0),
    ]),
  ) as unknown as Counts;
  return {
    clientId: item.owner_id,
    batchId,
    createdAt: item.created_ts,
    debug: item.debug === true,
    retentionDays: item.retention_days,
    expiresAt: item.ttl,
    ...(typeof item.expected === 'number' ? { expected: item.expected } : {}),
    closed: item.closed === true,
    ...(typeof item.closed_ts === 'number' ? { closedAt: item.closed_ts } : {}),
    ...(typeof item.cat_min_conf === 'number' ? { catMinConfidence: item.cat_min_conf } : {}),
    ...(typeof item.done_ts === 'number' ? { doneAt: item.done_ts } : {}),
    counts,
    ...(item.deleting === true ? { deleting: true } : {}),
    ...(typeof item.callback_url === 'string' ? { callbackUrl: item.callback_url } : {}),
    ...(item.callback ? { callback: item.callback as unknown as Batch['callback'] } : {}),
    ...(item.cb_due !== undefined ? { callbackDue: true } : {}),
    ...(typeof item.cb_requeued_ts === 'number' ? { callbackRequeuedAt: item.cb_requeued_ts } : {}),
    ...(typeof item.rd_run === 'string' ? { redetecting: { run: item.rd_run, left: Number(item.rd_left ?? 0) } } : {}),
    ...(item.imp ? { import: toImportProgress(item.imp) } : {}),
  };
}

/** The summary's import map as the domain sees it: the lister's checkpoint stays the store's. */
function toImportProgress(imp: StoredImport): NonNullable<Batch['import']> {
  return {
    source: imp.source,
    state: imp.state,
    listed: Number(imp.listed ?? 0),
    enqueued: Number(imp.enqueued ?? 0),
    skipped: Number(imp.skipped ?? 0),
    ...(typeof imp.resumesAt === 'number' ? { resumesAt: imp.resumesAt } : {}),
  };
}

export function toBatchItem(batch: Batch): BatchItem {
  const out: Record<string, unknown> = {
    batch_id: batchPartition(batch.clientId, batch.batchId),
    img_fprint: BATCH_SK,
    exp_due: EXPIRY_DUE,
  };
  for (const [name, attribute] of Object.entries(BATCH_ATTRIBUTES)) {
    const value = (batch as unknown as Record<string, unknown>)[name];
    if (value !== undefined && name !== 'partition' && name !== 'sortKey' && name !== 'callbackDue') out[attribute] = value;
  }
  for (const [name, attribute] of Object.entries(COUNTER_ATTRIBUTES)) out[attribute] = batch.counts[name as keyof Counts];
  out.purge_at = purgeAt(batch.expiresAt);
  return out as unknown as BatchItem;
}
