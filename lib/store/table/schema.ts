// The shape of the IceCatWrangler table (docs/design.md §2): keys, index names, the stored items and their bounds.
// resources/table.yml is the deployed definition; this file is how the store names what it holds. Nothing outside
// lib/store reads a stored attribute name.
import { createHash } from 'node:crypto';
import type { CatInstance, Label, ModelVersion, TrimmedLabels } from '../../domain/detection';
import type { ImageStatus, SourceObject } from '../../domain/image';
import type { Audit, Review } from '../../domain/review';
import type { StoredImport } from './import-item';

export const BATCH_SK = '#BATCH';
export const CLIENT_SK = '#CLIENT';
/** Partition prefixes of the items that are not batches. */
export const API_KEY_ITEM_PREFIX = 'APIKEY#';
export const CLIENT_PREFIX = 'CLIENT#';
/**
 * Partition prefix of a batch's upload items (`UPLOAD#{clientId}#{batchId}`): one per upload (key and ETag), apart
 * from the batch's own partition so that no read of its records or summary meets them. A client `UPLOAD` cannot
 * collide: its batch partitions hold one '#', these two.
 */
export const UPLOAD_ITEM_PREFIX = 'UPLOAD#';
/**
 * Partition prefix of the known-fingerprint items (`KNOWN#{clientId}#{the fingerprint's first two characters}`, sorted
 * by the fingerprint): one per pixels a client has classified, naming the batch that last did (knownItemKey). Two '#'
 * keep them apart from every batch partition, and the fingerprint's first characters spread a client's items over 256
 * partitions (no hot key, no item collection near its size limit).
 */
export const KNOWN_ITEM_PREFIX = 'KNOWN#';
/**
 * A batch partition is `{clientId}#{batchId}`; a client named like a prefix above would share its partitions with the
 * key or client items, so these ids are refused at registration (and no upload under them is ever accepted).
 */
export const RESERVED_CLIENT_IDS: ReadonlySet<string> = new Set([API_KEY_ITEM_PREFIX.slice(0, -1), CLIENT_PREFIX.slice(0, -1)]);

export const INDEX = {
  batchStatus: 'batch-status',
  batchTime: 'batch-time',
  batchLogs: 'batch-logs',
  clientStatus: 'client-status',
  clientFprint: 'client-fprint',
  clientTime: 'client-time',
  clientCats: 'client-cats',
  clientBatches: 'client-batches',
  callbacksDue: 'callbacks-due',
  batchesExpiring: 'batches-expiring',
  batchCaptured: 'batch-captured',
  batchReview: 'batch-review',
  batchAudit: 'batch-audit',
  redetectRuns: 'redetect-runs',
} as const;

/**
 * The sort key of the sparse batch-review index (`review_key`): every classified image of a batch, pending review
 * (`P#`) or reviewed (`R#`), then its cat confidence as 9 digits of millionths (floored, so a confidence read back
 * from the key is never above the stored one). Pending images nearest the batch's threshold come first by two key
 * conditions walking away from it (lib/store/review/queue.ts); the reviewed ones are what agreement reads.
 */
export const REVIEW_PENDING = 'P#';
export const REVIEW_DONE = 'R#';
const CONF_DIGITS = 9;
const CONF_SCALE = 1_000_000;

/** The confidence's key digits (0-100 in millionths). */
export const confidenceDigits = (confidence: number): string =>
  String(Math.min(100 * CONF_SCALE, Math.max(0, Math.floor(confidence * CONF_SCALE)))).padStart(CONF_DIGITS, '0');

export const reviewKey = (reviewed: boolean, confidence: number): string =>
  (reviewed ? REVIEW_DONE : REVIEW_PENDING) + confidenceDigits(confidence);

/** The confidence a review key holds (millionths, floored). */
export const confidenceOfReviewKey = (key: string): number => Number(key.slice(2)) / CONF_SCALE;

/** The key digits just below those of this confidence, or undefined when there are none (0). */
export const digitsBelow = (confidence: number): string | undefined => {
  const n = Number(confidenceDigits(confidence)) - 1;
  return n < 0 ? undefined : String(n).padStart(CONF_DIGITS, '0');
};

/** A person's verdict as stored in the image's `review` map. */
export interface StoredReview {
  cat: boolean;
  note?: string;
  ts: number;
  /** The machine's verdict at the batch's threshold. */
  mc: boolean;
}

export const toStoredReview = (r: Review): StoredReview => ({
  cat: r.isCat,
  ...(r.note ? { note: r.note } : {}),
  ts: r.reviewedAt,
  mc: r.machineIsCat,
});
export const fromStoredReview = (r: StoredReview): Review => ({
  isCat: r.cat === true,
  ...(typeof r.note === 'string' && r.note !== '' ? { note: r.note } : {}),
  reviewedAt: Number(r.ts),
  machineIsCat: r.mc === true,
});

/** An audited image's `audit` map: when drawn (ts), its stratum (s: c or n), its queue order (o) and the draw's seed. */
export interface StoredAudit {
  ts: number;
  s: 'c' | 'n';
  o: string;
  seed: number;
}

export const toStoredAudit = (a: Audit): StoredAudit => ({ ts: a.drawnAt, s: a.stratum === 'cat' ? 'c' : 'n', o: a.order, seed: a.seed });
export const fromStoredAudit = (a: StoredAudit): Audit => ({
  drawnAt: Number(a.ts),
  stratum: a.s === 'c' ? 'cat' : 'notCat',
  order: String(a.o),
  seed: Number(a.seed),
});

/**
 * The sort key of the sparse batch-audit index (`audit_key`): pending (`P#`) or reviewed (`R#`), the image's random
 * queue order, its stratum (c, n) and, once reviewed, the person's verdict (c, n). Keys alone tally the sample.
 */
export const AUDIT_PENDING = 'P#';
export const AUDIT_DONE = 'R#';
export const auditKey = (audit: Audit, review: Pick<Review, 'isCat'> | undefined): string =>
  review
    ? `${AUDIT_DONE}${audit.order}${audit.stratum === 'cat' ? 'c' : 'n'}${review.isCat ? 'c' : 'n'}`
    : `${AUDIT_PENDING}${audit.order}${audit.stratum === 'cat' ? 'c' : 'n'}`;

/** The one value of cb_due: every batch whose completion callback is still to deliver is in one index partition. */
export const CALLBACK_DUE = 'due';

/**
 * The one value of exp_due: every batch summary is in one partition of the sparse batches-expiring index, sorted by
 * its expiry, where the expiry sweep finds the batches whose retention is over (docs/design.md §6).
 */
export const EXPIRY_DUE = 'due';

/**
 * How long after its expiry (`ttl`, which every read filters on) DynamoDB's own TTL may delete an item (`purge_at`, the
 * table's TTL attribute). The expiry sweep erases a batch, objects and items, within minutes of its expiry; DynamoDB
 * deletes expired items at a time of its choosing, sometimes within minutes too, and a summary it deleted first would
 * leave the batch's objects with no record to find them by. A week later it is only the backstop of a sweep that failed.
 */
export const PURGE_AFTER_EXPIRY_S = 7 * 86_400;

export const purgeAt = (expiresAt: number): number => expiresAt + PURGE_AFTER_EXPIRY_S;

/** Bounds that keep an item far below DynamoDB's 400 KB. */
export const LIMITS = {
  dupFiles: 50,
  logLines: 100,
  logLineChars: 500,
  labels: 25,
  /** Cat instances kept per image, most confident first. */
  cats: 10,
  /** Boxes of the labels other than Cat kept per image (rek_dets), most confident first. */
  otherBoxes: 30,
  errMessageChars: 500,
} as const;

/** A stored image record (docs/design.md §2). */
export interface ImageItem {
  batch_id: string;
  img_fprint: string;
  client_id: string;
  s3img_key?: string;
  etag?: string;
  file_name?: string;
  op_status: ImageStatus;
  /** When the upload arrived, while being classified: the claim writes no index key, so not upload_ts yet. */
  received_ts?: number;
  /** `${op_status}#${upload_ts zero-padded}`: sort key of batch-status and client-status, written with the result. */
  status_ts?: string;
  upload_ts?: number;
  ttl: number;
  /** DynamoDB's TTL attribute: ttl + PURGE_AFTER_EXPIRY_S. */
  purge_at?: number;
  claim_id?: string;
  lease_until?: number;
  rek_ts?: number;
  /** The image's verdict: a person's when reviewed (review), otherwise the machine's. */
  rek_iscat?: boolean;
  /** A person's verdict (docs/design.md §10). */
  review?: StoredReview;
  /** The image's place in the audit sample (lib/store/audit/queue.ts). */
  audit?: StoredAudit;
  /** Sort key of the sparse batch-audit index: written when the image is drawn, moved by a review. */
  audit_key?: string;
  /** Sort key of the sparse batch-review index (reviewKey): written with a success result, moved by a review. */
  review_key?: string;
  cat_conf?: number;
  rek_cats?: CatInstance[];
  /** true when copied from the client's earlier classification of the same pixels. */
  reused?: boolean;
  labels?: Label[];
  rek_resp?: TrimmedLabels;
  /** detections.ts: the other labels' boxes and the model, one compact string. */
  rek_dets?: string;
  /** The model that gave the answer (a reused one: the original's). */
  rek_model?: ModelVersion;
  /** Written only for cats: the sparse client-cats index. Equals upload_ts. */
  cat_ts?: number;
  /** Written only in debug mode: the sparse batch-logs index. */
  logs?: string[];
  log_ts?: number;
  phash?: string;
  width?: number;
  height?: number;
  format?: string;
  processed_key?: string;
  err_code?: string;
  err_msg?: string;
  dup_count?: number;
  dup_files?: Set<string> | string[];
  /** The answer a re-detection replaced: {model, cat (the machine's verdict), conf}; a string model is the first runs' LabelModelVersion. */
  prev?: { model: ModelVersion | string; cat: boolean; conf: number };
  /** The run of a re-detection that still owes this image its answer. */
  rd_run?: string;
  /** An imported image's object (docs/design.md §16). */
  source?: SourceObject;
}

/** An upload's item (uploadItemKey): kept until its batch expires. */
export interface UploadItem {
  batch_id: string;
  img_fprint: string;
  /** Attempts started (counted before any risky step) and not ended cleanly. */
  attempts?: number;
  /** The fingerprint an attempt found: the record a later attempt may have to finish. */
  seen_fprint?: string;
  /** Set when the upload was counted as a duplicate of this fingerprint without its name being kept (LIMITS.dupFiles). */
  dup_of?: string;
  /** Set (the UTC day) when the first attempt found the client's daily quota used up: every attempt ends it as QuotaExceeded. */
  quota_over?: string;
  /** Set (the UTC day) with the count of the upload against that day's quota: no attempt counts it again. */
  quota_day?: string;
  /** An imported object's send mark (import-marks.ts). */
  imp_send?: 'sending' | 'sent';
  imp_src?: SourceObject;
  /** An imported object counted in its import's progress (import-jobs.ts): once, as enqueued or skipped. */
  imp_cnt?: 'enqueued' | 'skipped';
  ttl: number;
  /** DynamoDB's TTL, as on every item of the batch (purgeAt). */
  purge_at?: number;
}

/**
 * A known-fingerprint item: written with each `success` record (in its transaction, or right after it), so that
 * POST /v1/fingerprints:known reads keys, not an index. It names the batch that wrote it last; a reader checks that
 * batch is still visible (not erased, not expired).
 */
export interface KnownItem {
  batch_id: string;
  img_fprint: string;
  /** The batch id (bare) of the record that wrote the item last. */
  known_in: string;
  /** The model that answered that record (absent on items written before models were kept). */
  rek_model?: ModelVersion;
  /** That record's expiry. */
  ttl: number;
  purge_at: number;
}

/**
 * The batch summary: one GetItem answers a batch's state. owner_id + created_ts put it (alone) in the sparse
 * client-batches index; it has no client_id or upload_ts, so it stays out of every image index.
 */
export interface BatchItem {
  batch_id: string;
  img_fprint: typeof BATCH_SK;
  owner_id: string;
  created_ts: number;
  debug: boolean;
  retention_days: number;
  ttl: number;
  /** DynamoDB's TTL attribute: ttl + PURGE_AFTER_EXPIRY_S. */
  purge_at?: number;
  expected?: number;
  closed?: boolean;
  closed_ts?: number;
  cat_min_conf?: number;
  done_ts?: number;
  /** Set by DELETE /v1/batches/{batchId}: the batch answers 404 and takes no uploads while it is erased. */
  deleting?: boolean;
  callback_url?: string;
  /** The completion callback's delivery state (lib/notify/delivery.ts CallbackState). */
  callback?: Record<string, unknown>;
  /**
   * CALLBACK_DUE from the write that stamped done_ts (with a callback_url) until the callback is delivered or given
   * up: the sparse callbacks-due index, from which the reconciliation sweep queues callbacks whose message was lost.
   */
  cb_due?: string;
  /** When the sweep last queued the callback again (epoch ms). */
  cb_requeued_ts?: number;
  /** EXPIRY_DUE on every summary: the sparse batches-expiring index (exp_due + ttl) the expiry sweep reads. */
  exp_due?: string;
  /** When the expiry sweep last queued the batch's erasure (epoch ms). */
  erase_ts?: number;
  n_total: number;
  n_pending?: number;
  n_success: number;
  n_fail: number;
  n_duplicate: number;
  n_reused?: number;
  n_cats: number;
  n_reviewed?: number;
  n_corrected?: number;
  /** A re-detection in progress: its run id, and the images it still owes an answer. */
  rd_run?: string;
  rd_left?: number;
  /** An import's source, progress and the lister's checkpoint (docs/design.md §16). */
  imp?: StoredImport;
}

/** The partition of a client's batch: batch names are the client's own, so two clients may share one. */
export const batchPartition = (clientId: string, batchId: string): string => `${clientId}#${batchId}`;

/** The client and batch of a batch partition (client ids hold no '#'). */
export function splitPartition(partition: string): { clientId: string; batchId: string } {
  const at = partition.indexOf('#');
  return { clientId: partition.slice(0, at), batchId: partition.slice(at + 1) };
}

export const batchKey = (clientId: string, batchId: string) => ({ batch_id: batchPartition(clientId, batchId), img_fprint: BATCH_SK });
export const imageKey = (clientId: string, batchId: string, fprint: string) => ({
  batch_id: batchPartition(clientId, batchId),
  img_fprint: fprint,
});
/**
 * The item of one upload of a batch: its attempts, the fingerprint they found, whether it was counted as a duplicate.
 * Sorted by a hash of its key and ETag (the same upload, whoever delivers it).
 */
export const uploadItemKey = (u: { clientId: string; batchId: string; key: string; etag?: string }) => ({
  batch_id: UPLOAD_ITEM_PREFIX + batchPartition(u.clientId, u.batchId),
  img_fprint: createHash('sha256')
    .update(u.etag === undefined ? u.key : `${u.key}\u0000${u.etag}`)
    .digest('hex')
    .slice(0, 32),
});
export const knownItemKey = (clientId: string, fprint: string) => ({
  batch_id: `${KNOWN_ITEM_PREFIX}${clientId}#${fprint.slice(0, 2)}`,
  img_fprint: fprint,
});
export const clientKey = (clientId: string) => ({ batch_id: CLIENT_PREFIX + clientId, img_fprint: CLIENT_SK });

export const statusTs = (status: ImageStatus, uploadedAt: number): string => `${status}#${String(uploadedAt).padStart(15, '0')}`;

export const nowSeconds = (ms: number = Date.now()): number => Math.floor(ms / 1000);
export const ttlFor = (fromMs: number, retentionDays: number): number => nowSeconds(fromMs) + Math.round(retentionDays * 86400);

/**
 * What a listing shows of an image: the attributes every image index projects (resources/table.yml), the later
 * uploads' file names (dup_files) and where the image rests (processed_key: its imageUrl) among them.
 */
export const LISTING_ATTRIBUTES = [
  'cat_conf',
  'rek_cats',
  'reused',
  'review',
  'batch_id',
  'img_fprint',
  'file_name',
  'op_status',
  'rek_iscat',
  'labels',
  'upload_ts',
  'rek_ts',
  'ttl',
  'dup_count',
  'dup_files',
  'processed_key',
  'err_code',
  'err_msg',
] as const;

/**
 * Capture time, camera and place: shown by listings of the table itself and of batch-captured, which project them;
 * the indexes made before them (their projections cannot change in place) do not.
 */
export const CAPTURE_ATTRIBUTES = ['cap_at', 'camera', 'gps'] as const;

/**
 * A listing read from the table itself (or client-fprint) also shows images still being classified, whose upload
 * time is still in received_ts.
 */
export const IN_PROGRESS_LISTING_ATTRIBUTES = [...LISTING_ATTRIBUTES, 'received_ts', ...CAPTURE_ATTRIBUTES] as const;

/** An image read by its key from the table (GetItem, BatchGetItem): a listing's fields, its place in the audit sample, the answer a re-detection replaced and its model. */
export const IMAGE_BY_KEY_ATTRIBUTES = [...IN_PROGRESS_LISTING_ATTRIBUTES, 'audit', 'prev', 'rek_model'] as const;
