// The domain the store speaks: images, batches and their counters, with the names the rest of the code uses.
// lib/store/attributes.ts is the one table that maps these names to the stored attribute names.
import type { CallbackState } from '../notify/delivery';

/**
 * What a stored image record says about its upload: being classified, classified, or refused. Duplicates are counted
 * on the record of the image they repeat, not recorded apart.
 */
export const IMAGE_STATUSES = ['processing', 'success', 'fail'] as const;
export type ImageStatus = (typeof IMAGE_STATUSES)[number];

/** How an upload ended: its own record's final status, or a duplicate counted on an earlier record. */
export type Outcome = 'success' | 'fail' | 'duplicate';

export interface Label {
  name: string;
  confidence: number;
}

/** Trimmed DetectLabels answer: what a debugger needs, without boxes or raw payload. */
export interface TrimmedLabels {
  model: string;
  labels: { name: string; confidence: number; parents: string[]; instances: number }[];
}

/** A box DetectLabels drew around one instance of a label other than Cat, as ratios of the image's sides. */
export interface NamedBox {
  name: string;
  confidence: number;
  box: { left: number; top: number; width: number; height: number };
}

/** The model that classified an image and the boxes it drew of the labels other than Cat (the MegaDetector export's). */
export interface Detections {
  model: string;
  boxes: NamedBox[];
}

/** One cat DetectLabels found, with its box as ratios of the image's sides (Rekognition's BoundingBox). */
export interface CatInstance {
  confidence: number;
  box: { left: number; top: number; width: number; height: number };
}

export interface ImageError {
  code: string;
  message: string;
}

/** One image record: an upload with new pixels (or a refused upload) in a client's batch. */
export interface Image {
  clientId: string;
  /** The client's own name for the batch (the API's and S3's batch id). */
  batchId: string;
  /** Pixel fingerprint; a refused upload's record key (`fail-…`). */
  fprint: string;
  status: ImageStatus;
  /** Epoch ms: when the upload was first received. */
  uploadedAt?: number;
  /** Epoch ms: when its result was recorded. */
  classifiedAt?: number;
  /** Epoch s: DynamoDB TTL. */
  expiresAt: number;
  key?: string;
  /** ETag of the uploaded object: same key and ETag is the same upload. */
  etag?: string;
  fileName?: string;
  isCat?: boolean;
  /** The best Cat confidence (label or instance), 0 when none: isCat is catConfidence >= the batch's threshold. */
  catConfidence?: number;
  cats?: CatInstance[];
  /** Copied from the client's earlier classification of the same pixels in another batch: no DetectLabels call. */
  reused?: boolean;
  labels?: Label[];
  detection?: TrimmedLabels;
  /** Set by a DetectLabels call of its own (not on a reused result). */
  detections?: Detections;
  logs?: string[];
  /** Epoch ms; set only when the record holds logs. */
  loggedAt?: number;
  phash?: string;
  width?: number;
  height?: number;
  format?: string;
  /** Where the object rests: processed/…, failed/…. */
  restingKey?: string;
  errorCode?: string;
  errorMessage?: string;
  /** Later uploads of the same pixels to this batch, and the first of their names. */
  duplicates?: number;
  duplicateFiles?: string[];
  claimId?: string;
  leaseUntil?: number;
}

export interface Counts {
  /** Every upload counted: pending + success + fail + duplicate. */
  total: number;
  /** Claimed and still being classified. */
  pending: number;
  success: number;
  fail: number;
  duplicate: number;
  /** Of success: classified by copying the client's earlier result for the same pixels (no DetectLabels call). */
  reused: number;
  cats: number;
}

export const ZERO_COUNTS: Counts = { total: 0, pending: 0, success: 0, fail: 0, duplicate: 0, reused: 0, cats: 0 };

export interface Batch {
  clientId: string;
  batchId: string;
  /** Epoch ms. */
  createdAt: number;
  debug: boolean;
  retentionDays: number;
  /** Epoch s: DynamoDB TTL. */
  expiresAt: number;
  /** Files the client said it uploads in all; undefined when it never said. */
  expected?: number;
  closed: boolean;
  /** Epoch ms. */
  closedAt?: number;
  /** The cat threshold the batch was last re-thresholded to (POST …:reclassify); the configured one until then. */
  catMinConfidence?: number;
  /** Epoch ms; set once, by the write that made the batch done. */
  doneAt?: number;
  counts: Counts;
  /** Being erased (DELETE): invisible to reads, refused by the ingest. */
  deleting?: boolean;
  /** Where the summary is POSTed once the batch is done. */
  callbackUrl?: string;
  /** The last delivery of that POST. */
  callback?: CallbackState;
  /** Done with a callback not yet delivered nor given up (the sweep queues it again when its message was lost). */
  callbackDue?: boolean;
  /** Epoch ms: when the sweep last queued the callback again. */
  callbackRequeuedAt?: number;
}

export const BATCH_STATUSES = ['open', 'processing', 'done'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** Every declared file arrived (or none was declared). */
export const allArrived = (b: Pick<Batch, 'expected' | 'counts'>): boolean => b.expected === undefined || b.counts.total >= b.expected;

/** docs/design.md §6: open until closed; processing while anything is pending or declared files are missing; then done. */
export function batchStatus(b: Pick<Batch, 'closed' | 'expected' | 'counts'>): BatchStatus {
  if (!b.closed) return 'open';
  return b.counts.pending === 0 && allArrived(b) ? 'done' : 'processing';
}

/**
 * The status a reader is told: `done` only once the write that stamps doneAt has landed, as the batch list's filter
 * (done_ts) has it, so no summary says done without doneAt, before the completion callback is queued.
 */
export function reportedStatus(b: Pick<Batch, 'closed' | 'expected' | 'counts' | 'doneAt'>): BatchStatus {
  if (b.doneAt !== undefined) return 'done';
  const status = batchStatus(b);
  return status === 'done' ? 'processing' : status;
}

/**
 * A batch is shown while it exists, has not expired and is not being erased (the reads and the lifecycle service alike).
 * Here rather than beside isVisibleImage in reader.ts, which the batches function must not bundle.
 */
export function isVisibleBatch(batch: Batch | undefined, nowS: number): batch is Batch {
  return batch !== undefined && batch.deleting !== true && typeof batch.expiresAt === 'number' && batch.expiresAt > nowS;
}

/** Auto-close: as many uploads arrived as the client declared. */
export const shouldAutoClose = (b: Batch): boolean => !b.closed && b.expected !== undefined && b.counts.total >= b.expected;

/** Done now, and not yet stamped done. */
export const shouldMarkDone = (b: Batch): boolean => b.doneAt === undefined && batchStatus(b) === 'done';

/** The one cat rule: a Cat was found, at or above the threshold (0 takes every Cat found, never an image without one). */
export const isCatAt = (catConfidence: number | undefined, threshold: number): boolean =>
  catConfidence !== undefined && catConfidence > 0 && catConfidence >= threshold;
