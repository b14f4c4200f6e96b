// One upload, start to end: the seven steps of docs/design.md §1, each a named function, in order, with the
// thumbnail of a newly claimed image stored after its claim. Every upload ends as a record (or, when no batch of its
// uploader can hold one, a logged refusal) and an object under processed/, duplicates/ or failed/; only transient
// faults (throttling past retries, network) escape as errors, for SQS to redeliver. The move is split around the
// record (restAround): the copy lands before the record says where it rests, the source goes only after it.
import { randomUUID } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { RekognitionClient } from '@aws-sdk/client-rekognition';
import type { S3Client } from '@aws-sdk/client-s3';
import { XXHash128 } from 'xxhash-addon';
import { quotaExceededMessage, utcDay, type ClientLimits } from '../quota/limits';
import type { Config, IngestConfig } from '../config';
import type { BatchStore } from '../store/batch-store';
import { BatchClosedError } from '../errors';
import { BatchErasedError } from '../store/errors';
import { allArrived, isCatAt, type Batch, type Capture, type Claim, type Image, type ImageResult, type Outcome, type UploadRef } from '../domain';
import type { BatchCounter } from '../store/batch-summary';
import type { AttemptCount } from '../store/upload-attempts';
import { DebugLog } from './debug-log';
import { readCapture } from './capture';
import { detectLabels } from './detect';
import { RejectedUpload, type HeldClaim } from './errors';
import { detectableImage, type Fingerprint } from './fingerprint';
import { timed, type IngestMetrics } from './metrics';
import { decodeS3Key, invalidKeyDestination, restingKey, thumbnailKey, tryParseUploadKey, type UploadKey } from './s3-key';
import {
  UploadGone,
  moveUpload,
  readUpload,
  removeUpload,
  restCopy,
  sourceState,
  storeThumbnail,
  tooLarge,
  uploadExists,
  type StoredUpload,
} from './storage';

/** What the handler hands over from one S3 event record. */
export interface UploadEvent {
  bucket: string;
  /** As it arrives in the event: URL-encoded. */
  encodedKey: string;
  size?: number;
  /** The ETag of the object the event announces: same key and ETag is the same upload. */
  etag?: string;
  /** When S3 says the object was created (epoch ms): the UTC day whose quota the upload counts against. */
  eventTime?: number;
}

/** The clients' daily images quotas (docs/design.md §11; lib/store/quota-writes.ts). */
export interface UploadQuota {
  limitsOf(clientId: string): Promise<ClientLimits>;
  /**
   * Counts the upload against the day's quota once, on a mark on its own item written with the count: true when it
   * is counted (by this call or an earlier one), false (nothing counted) when `limit` are counted already.
   */
  countUpload(upload: UploadRef, day: string, limit: number): Promise<boolean>;
  /** Marks the upload beyond the quota, for its later attempts, and counts it refused. */
  refuseUpload(upload: UploadRef, day: string): Promise<void>;
  /** Counts a batch an upload has just opened; false (nothing counted) when `limit` are counted already. */
  countBatch?(clientId: string, day: string, limit: number): Promise<boolean>;
  /** Counts an upload refused on the day (GET /v1/usage `rejected`) that no batch can record. */
  countRefused?(clientId: string, day: string): Promise<void>;
}

export type IngestResult =
  | { outcome: Outcome; batchId: string; fprint: string; errorCode?: string }
  /** No batch of the uploader's can hold it (a key outside the layout, an unknown client): moved under failed/. */
  | { outcome: 'refused'; key: string; code: RefusalCode }
  /** A redelivered event: the work was done by another delivery. */
  | { outcome: 'redelivered'; key: string }
  /**
   * The image's claim is leased by another run, alive or killed: the message comes back once the lease is over
   * (`retryAfterSeconds`), to find the finished record (a redelivery) or an expired claim to take over.
   */
  | { outcome: 'deferred'; key: string; retryAfterSeconds: number };

export interface IngestDeps {
  s3: S3Client;
  rekognition: RekognitionClient;
  store: BatchStore;
  /** The ingest's own settings too when built by the ingest function (a sweep gives the common ones only). */
  config: Config & Partial<Pick<IngestConfig, 'clientHint'>>;
  logger: Logger;
  metrics: IngestMetrics;
  /** Without one, uploads are not counted against any quota. */
  quota?: UploadQuota;
  now?: () => number;
}

type SuccessResult = Extract<ImageResult, { status: 'success' }>;

/**
 * An upload placed in its client's batch (step 1). It is also the object the moves name (StoredUpload) and the
 * reference of its own item in the store (UploadRef: client, batch, key, ETag and the batch's expiry).
 */
export interface Upload extends UploadKey {
  bucket: string;
  key: string;
  etag?: string;
  size?: number;
  batch: Batch;
  /** The batch's expiry (epoch s), which the upload's own item shares. */
  expiresAt: number;
  receivedAt: number;
  /** When the object was created (the event's time, else receivedAt). */
  createdAt: number;
  log: DebugLog;
  /** The thumbnail this upload stored, if any: deleted again when its batch turns out to be erased meanwhile. */
  thumbnail?: string;
  /** Capture time, camera and place from its EXIF (lib/ingest/capture.ts), read with its fingerprint. */
  capture?: Capture;
  /** Where this run copied the upload before recording it: deleted again when its batch turns out to be erased meanwhile. */
  rested?: string;
  /** The fingerprint this run found, and the claim it holds on it (if any). */
  fprint?: string;
  claimId?: string;
  /** The fingerprint the upload's own item holds (noted by an earlier attempt), if any. */
  notedFprint?: string;
}

/**
 * Why no batch can hold an upload: its key, its client, or its batch is being erased (DELETE) or was meanwhile, or its
 * retention is over (an expired batch is erased as a deleted one is: docs/design.md §6).
 */
type RefusalCode = 'InvalidKey' | 'UnknownClient' | 'BatchErased' | 'BatchExpired' | 'BatchQuotaExceeded';

export async function processUpload(deps: IngestDeps, event: UploadEvent): Promise<IngestResult> {
  const result = await handleUpload(deps, event);
  if (result.outcome === 'duplicate') deps.metrics.callSaved('duplicate');
  deps.metrics.image(result.outcome, 'code' in result ? result.code : 'errorCode' in result ? result.errorCode : undefined);
  return result;
}

async function handleUpload(deps: IngestDeps, event: UploadEvent): Promise<IngestResult> {
  const upload = await placeUpload(deps, event);
  if ('outcome' in upload) return upload;
  try {
    return await classifyUpload(deps, upload);
  } catch (err) {
    if (err instanceof BatchErasedError) return discardErased(deps, upload, upload);
    throw err;
  }
}

/**
 * One attempt at the upload, counted on its own item before anything that may never return (a timeout, running out
 * of memory: on AWS neither reaches a catch), so the attempt after the limit ends it before trying again, and the
 * last one ends it when its fault does reach the catch (docs/design.md §6, "An upload's attempts are bounded").
 */
async function classifyUpload(deps: IngestDeps, upload: Upload): Promise<IngestResult> {
  const attempt = await deps.store.startAttempt(upload);
  upload.notedFprint = attempt.fprint;
  const overQuota = await countAgainstQuota(deps, upload, attempt);
  if (overQuota) return recordRejection(deps, upload, overQuota);
  const result = attempt.attempts > deps.config.maxAttempts ? await giveUp(deps, upload, attempt) : await attemptUpload(deps, upload, attempt);
  // Handed back until another run's lease is over: not an attempt that failed.
  if (result.outcome === 'deferred') await deps.store.endAttempt(upload);
  return result;
}

/**
 * One attempt that reads, decodes and classifies. The fingerprint it finds is noted on the upload's item by the write
 * that records something under it (the claim, or the duplicate's count), not by a write of its own: an attempt that
 * gives up later needs it only to find that record.
 */
async function attemptUpload(deps: IngestDeps, upload: Upload, attempt: AttemptCount): Promise<IngestResult> {
  const { metrics } = deps;
  try {
    const object = await timed(metrics, 'Read', () => readObject(deps, upload));
    const image = await timed(metrics, 'Fingerprint', () => fingerprintImage(deps, upload, object));
    upload.fprint = image.fprint;
    const claim = await timed(metrics, 'Claim', () => claimImage(deps, upload, object, image));
    if ('existing' in claim) return settleClaimed(deps, upload, object, claim.existing);
    upload.claimId = claim.claim.claimId;
    await timed(metrics, 'Thumbnail', () => storeImageThumbnail(deps, upload, image, image.fprint));
    const result = await timed(
      metrics,
      'Detect',
      async () =>
        (await paidBefore(deps, upload, claim)) ?? (await reuseEarlierResult(deps, upload, image, claim)) ?? (await detectInClaim(deps, upload, object, image, claim)),
    );
    const processedKey = restingKey('processed', upload, image.fprint, image.format);
    await restAround(deps, upload, object, processedKey, () => timed(metrics, 'Record', () => recordResult(deps, upload, claim, result, processedKey)), claim);
    return { outcome: 'success', batchId: upload.batchId, fprint: image.fprint };
  } catch (err) {
    if (err instanceof UploadGone) return redelivered(deps, upload);
    if (err instanceof RejectedUpload) return recordRejection(deps, upload, err);
    if (err instanceof BatchErasedError || attempt.attempts < deps.config.maxAttempts) throw err;
    deps.logger.error('the last attempt at the upload failed; it ends as ProcessingFailed', { key: upload.key, attempts: attempt.attempts, error: err as Error });
    return giveUp(deps, upload, { ...attempt, fprint: upload.fprint ?? attempt.fprint });
  }
}

/** The upload's own item still lacks the fingerprint this run found: the write recording under it notes it. */
const noteNeeded = (upload: Upload): boolean => upload.fprint !== undefined && upload.notedFprint !== upload.fprint;

/**
 * Step 1b (docs/design.md §11): an upload counts once against its client's images quota of the UTC day it was
 * uploaded, on a mark its own item gets with the count (so whichever attempt gets there first counts it, and no later
 * one again: a retry, a redelivery, a deferred attempt, an attempt handed back); beyond the quota it is marked, so
 * that every later attempt ends it the same way: a `fail` record with code QuotaExceeded and the object under
 * failed/, never classified. The limit is read when the upload is handled, so a quota changed while uploads wait in
 * the queue applies to them.
 */
async function countAgainstQuota(deps: IngestDeps, upload: Upload, attempt: AttemptCount): Promise<RejectedUpload | undefined> {
  const { quota } = deps;
  if (!quota) return undefined;
  const day = attempt.quotaExceeded ?? utcDay(upload.createdAt);
  if (attempt.quotaExceeded === undefined) {
    if (attempt.quotaCounted !== undefined) return undefined;
    const { maxImagesPerDay } = await quota.limitsOf(upload.clientId);
    if (await quota.countUpload(upload, day, maxImagesPerDay)) return undefined;
    await quota.refuseUpload(upload, day);
    upload.log.add(`beyond the quota of ${maxImagesPerDay} images for ${day}`);
    return new RejectedUpload(quotaExceededMessage(maxImagesPerDay, day), { code: 'QuotaExceeded' });
  }
  const { maxImagesPerDay } = await quota.limitsOf(upload.clientId);
  return new RejectedUpload(quotaExceededMessage(maxImagesPerDay, day), { code: 'QuotaExceeded' });
}

// ---- 1. decode the key and place the upload in a batch of a known client ---------------------------------------

async function placeUpload(deps: IngestDeps, event: UploadEvent): Promise<Upload | IngestResult> {
  const key = safeDecode(event.encodedKey);
  const parsed = tryParseUploadKey(key);
  if (!parsed) return refuse(deps, { bucket: event.bucket, key, etag: event.etag }, invalidKeyDestination(key), 'InvalidKey');
  if (!(await deps.store.isRegisteredClient(parsed.clientId))) {
    return refuse(deps, { bucket: event.bucket, key, etag: event.etag }, restingKey('failed', parsed), 'UnknownClient');
  }
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
  if (!placed) return refuseBeyondBatches(deps, { bucket: event.bucket, key, etag: event.etag }, parsed.clientId, day);
  const { batch, opened } = placed;
  if (!deps.store.isLive(batch)) return discardErased(deps, { bucket: event.bucket, key, etag: event.etag }, {}, batch.deleting ? 'BatchErased' : 'BatchExpired');
  // The erasure deletes a batch's objects before its summary: a summary opened just now for an object gone since
  // belongs to a batch erased while this event was on its way (a stale event must not bring the batch back).
  if (opened && !(await uploadExists(deps.s3, event.bucket, key))) {
    await deps.store.dropOpenedBatch(parsed.clientId, parsed.batchId);
    return discardErased(deps, { bucket: event.bucket, key, etag: event.etag });
  }
  const log = new DebugLog(batch.debug, receivedAt);
  log.add(`received s3://${event.bucket}/${key} (${event.size ?? '?'} bytes, ETag ${event.etag ?? '?'})`);
  return { ...parsed, bucket: event.bucket, key, etag: event.etag, size: event.size, batch, expiresAt: batch.expiresAt, receivedAt, createdAt: event.eventTime ?? receivedAt, log };
}

/**
 * An upload into a batch being erased or expired (or erased while it was ingested): nothing of it is written, and its
 * object is deleted rather than moved under failed/, where it could land after the erasure's last pass over that prefix.
 */
async function discardErased(
  deps: IngestDeps,
  object: StoredUpload,
  left: { thumbnail?: string; rested?: string } = {},
  code: 'BatchErased' | 'BatchExpired' = 'BatchErased',
): Promise<IngestResult> {
  deps.logger.warn(`upload into a batch ${code === 'BatchExpired' ? 'past its retention' : 'being erased'}: deleted, nothing recorded`, { key: object.key, code });
  await removeUpload(deps.s3, object);
  // Written after the claim, they may have landed behind the erasure's pass over thumbnails/ and the resting prefix.
  for (const key of [left.thumbnail, left.rested]) if (key) await removeUpload(deps.s3, { bucket: object.bucket, key });
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
async function refuseBeyondBatches(deps: IngestDeps, object: StoredUpload, clientId: string, day: string): Promise<IngestResult> {
  deps.logger.warn("upload into a new batch beyond the client's batches of the day: deleted, no batch opened", { key: object.key, code: 'BatchQuotaExceeded' });
  await deps.quota?.countRefused?.(clientId, day);
  await removeUpload(deps.s3, object);
  return { outcome: 'refused', key: object.key, code: 'BatchQuotaExceeded' };
}

/** Nothing can record it: a log line, a metric, and the object under failed/. */
async function refuse(deps: IngestDeps, object: StoredUpload, to: string, code: RefusalCode): Promise<IngestResult> {
  deps.logger.error('upload refused: no batch of its uploader can hold it', { key: object.key, code });
  await moveUpload(deps.s3, object, to);
  return { outcome: 'refused', key: object.key, code };
}

// ---- 2. read the object (size cap; one buffer; this upload's bytes only) ---------------------------------------

async function readObject(deps: IngestDeps, upload: Upload): Promise<StoredUpload & { bytes: Buffer }> {
  const { maxUploadBytes } = deps.config;
  // The event already tells the size: refuse before reading anything.
  if (upload.size !== undefined && upload.size > maxUploadBytes) throw tooLarge(upload.size, maxUploadBytes);
  const object = await readUpload(deps.s3, upload.bucket, upload.key, maxUploadBytes);
  if (upload.etag !== undefined && object.etag !== undefined && object.etag !== upload.etag) {
    // S3 keeps only the newer object, which its own event will process: this upload's bytes are gone.
    throw new RejectedUpload(`the file was replaced by a newer upload (ETag ${object.etag}) before it could be read`, { code: 'Overwritten' });
  }
  upload.log.add(`read ${object.bytes.length} bytes`);
  return object;
}

// ---- 3. fingerprint: exact key + perceptual hint ----------------------------------------------------------------

async function fingerprintImage(deps: IngestDeps, upload: Upload, object: { bytes: Buffer }): Promise<Fingerprint> {
  const image = await detectableImage(object.bytes, { maxInputPixels: deps.config.maxInputPixels });
  upload.log.add(`fingerprint ${image.fprint} phash ${image.phash} ${image.format} ${image.width}x${image.height}`);
  upload.capture = readCapture(image.exif, upload.receivedAt);
  return image;
}

// ---- 4. claim (batch, fingerprint) ----------------------------------------------------------------------------

/** This run's claim, or the record of whoever claimed the image before. A closed batch takes no new upload. */
async function claimImage(deps: IngestDeps, upload: Upload, object: StoredUpload, image: Fingerprint): Promise<HeldClaim | { existing: Image }> {
  const claim: Claim = {
    clientId: upload.clientId,
    batchId: upload.batchId,
    fprint: image.fprint,
    claimId: randomUUID(),
    key: upload.key,
    etag: object.etag,
    fileName: upload.fileName,
    phash: image.phash,
    format: image.format,
    width: image.width,
    height: image.height,
    now: upload.receivedAt,
    leaseMs: deps.config.claimLeaseSeconds * 1000,
    expiresAt: upload.batch.expiresAt,
  };
  if (takesNoMoreUploads(upload.batch)) {
    // Only an upload already counted in the batch may go on: redelivered, or left claimed by a run that died, whose
    // expired lease the claim below takes over (settling it from the record would hand it back forever).
    const existing = await deps.store.getImage(upload.clientId, upload.batchId, image.fprint);
    if (!existing || !isSameUpload(existing, object)) {
      throw new RejectedUpload(`batch ${upload.batchId} was closed before this upload arrived`, { code: 'BatchClosed', decoded: image });
    }
  }
  let outcome;
  try {
    outcome = await deps.store.claim(claim, { note: noteNeeded(upload) ? upload : undefined, seen: upload.batch });
  } catch (err) {
    // Closed (and complete) after this upload read the batch: refused by the write that would have counted it.
    if (err instanceof BatchClosedError) throw new RejectedUpload(`batch ${upload.batchId} was closed before this upload arrived`, { code: 'BatchClosed', decoded: image });
    throw err;
  }
  if (!outcome.held) return { existing: outcome.existing };
  upload.log.add(outcome.takeover ? 'took over an expired claim' : 'claimed');
  return { claim, uploadedAt: outcome.uploadedAt, ...(outcome.takeover ? { takeover: true } : {}) };
}

/** Closed, and every file it was told of arrived: uploads still in flight when it closed are still taken. */
const takesNoMoreUploads = (batch: Batch): boolean => batch.closed && allArrived(batch);

const isSameUpload = (record: Image, object: StoredUpload): boolean =>
  record.key === object.key && (record.etag === undefined || object.etag === undefined || record.etag === object.etag);

/** The image is recorded already: by this very upload (a redelivered event) or by another (a duplicate). */
async function settleClaimed(deps: IngestDeps, upload: Upload, object: StoredUpload, existing: Image): Promise<IngestResult> {
  const { store, logger } = deps;
  if (isSameUpload(existing, object)) {
    if (existing.status === 'processing') {
      const retryAfterSeconds = leaseLeftSeconds(existing, (deps.now ?? Date.now)());
      logger.info('same upload is claimed by another run; trying again when its lease is over', { key: upload.key, retryAfterSeconds });
      return { outcome: 'deferred', key: upload.key, retryAfterSeconds };
    }
    // Recorded by an earlier delivery that stopped before deleting the source: it may have stopped short of its copy,
    // of counting or of settling.
    const repair = () => repairRedelivered(deps, upload);
    await (existing.restingKey ? restAround(deps, upload, object, existing.restingKey, repair) : repair());
    return redelivered(deps, upload);
  }
  await restAround(deps, upload, object, restingKey('duplicates', upload, existing.fprint), async () => {
    const counted = await store.addDuplicate(existing, upload.fileName, upload, { note: noteNeeded(upload), seen: upload.batch });
    if (!counted) await repairRedelivered(deps, upload);
  });
  upload.log.add(`duplicate of ${existing.fileName}`);
  logger.info('duplicate upload', { key: upload.key, original: existing.key, fprint: existing.fprint });
  return { outcome: 'duplicate', batchId: upload.batchId, fprint: existing.fprint };
}

/**
 * After finding its work recorded by an earlier delivery (docs/design.md §6). A batch being erased meanwhile makes
 * the upload a discard: what this run copied may have landed behind the erasure's pass, and nothing else removes it.
 */
async function repairRedelivered(deps: IngestDeps, upload: Upload): Promise<void> {
  const batch = await deps.store.repairAfterRedelivery(upload.clientId, upload.batchId);
  if (!deps.store.isLive(batch)) throw new BatchErasedError(`batch ${upload.batchId} is being erased`);
}

function redelivered(deps: IngestDeps, upload: Upload): IngestResult {
  deps.logger.info('upload already handled by an earlier delivery; nothing to do', { key: upload.key });
  return { outcome: 'redelivered', key: upload.key };
}

/** Whole seconds until the claim's lease is over, plus one so the retry never arrives a moment early; at least 1. */
export function leaseLeftSeconds(claimed: Image, now: number): number {
  return Math.max(1, Math.ceil(((claimed.leaseUntil ?? now) - now) / 1000) + 1);
}

// ---- 4b. the thumbnail, from the pixels the fingerprint decoded (no second decode) ----------------------------

/**
 * Stored once per record: a duplicate shows its original's. Never fails the image: without a thumbnail the upload
 * is still classified, recorded and moved, and the fault is logged and counted.
 */
async function storeImageThumbnail(deps: IngestDeps, upload: Upload, image: Fingerprint, fprint: string): Promise<void> {
  const key = thumbnailKey(upload, fprint);
  try {
    const webp = await image.thumbnail();
    await storeThumbnail(deps.s3, upload.bucket, key, webp);
    upload.thumbnail = key;
    upload.log.add(`thumbnail ${key} (${webp.length} bytes)`);
  } catch (err) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    deps.metrics.thumbnailFailed();
    deps.logger.error('thumbnail not stored; the image goes on without it', { key: upload.key, thumbnail: key, reason });
    upload.log.add(`thumbnail not stored: ${reason}`);
  }
}

// ---- 5. DetectLabels, unless the client had these pixels classified in another batch ----------------------------

/** The batch's cat threshold: the one it was re-thresholded to, else the configured one. */
const catThreshold = (deps: IngestDeps, batch: Batch): number => batch.catMinConfidence ?? deps.config.catMinConfidence;

/**
 * A copy of the client's earliest classification of the same pixels in another batch (labels, cat instances, the
 * other labels' boxes, its classification time), judged by this batch's threshold. Always the earliest, so every copy agrees with it.
 */
async function reuseEarlierResult(deps: IngestDeps, upload: Upload, image: Fingerprint, held: HeldClaim): Promise<SuccessResult | undefined> {
  let earlier: Image | undefined;
  try {
    earlier = await deps.store.findReusable(upload.clientId, upload.batchId, image.fprint);
  } catch (err) {
    await deps.store.release(held.claim);
    throw err;
  }
  if (!earlier) return undefined;
  deps.metrics.callSaved('reuse');
  upload.log.add(`reused the classification of batch ${earlier.batchId} (${new Date(earlier.classifiedAt ?? 0).toISOString()})`);
  const catConfidence = earlier.catConfidence ?? 0;
  return {
    status: 'success',
    isCat: isCatAt(catConfidence, catThreshold(deps, upload.batch)),
    catConfidence,
    cats: earlier.cats ?? [],
    labels: earlier.labels ?? [],
    // The other labels' boxes too: the MegaDetector file gives a reused image the original's detections.
    ...(earlier.detections ? { detections: earlier.detections } : {}),
    reusedFrom: earlier.classifiedAt ?? upload.receivedAt,
    // The client's own verdict on these pixels comes with them (docs/design.md §10).
    ...(earlier.review
      ? { review: { isCat: earlier.review.isCat, ...(earlier.review.note ? { note: earlier.review.note } : {}), reviewedAt: earlier.review.reviewedAt } }
      : {}),
  };
}

/** Classifies the claimed image; a transient failure gives the claim back so the retry can take it at once. */
async function detectInClaim(
  deps: IngestDeps,
  upload: Upload,
  object: { bytes: Buffer },
  image: Fingerprint,
  held: HeldClaim,
): Promise<SuccessResult> {
  const { config } = deps;
  try {
    deps.metrics.detectLabelsCall();
    const detection = await detectLabels(
      deps.rekognition,
      { bytes: object.bytes.length, format: image.format, width: image.width, height: image.height },
      object.bytes,
      {
        minConfidence: config.minConfidence,
        maxLabels: config.maxLabels,
        catMinConfidence: catThreshold(deps, upload.batch),
        maxInputPixels: config.maxInputPixels,
        ...(config.clientHint ? { clientHint: upload.clientId } : {}),
        onRequest: (outcome, ms) => deps.metrics.detectLabelsRequest(outcome, ms),
      },
    );
    upload.log.add(`DetectLabels by ${detection.sentAs}: ${detection.labels.slice(0, 5).map((l) => `${l.name} ${l.confidence}`).join(', ')}`);
    upload.log.add(detection.isCat ? 'a cat' : 'not a cat');
    const { isCat, catConfidence, cats, labels, trimmed, detections } = detection;
    return { status: 'success', isCat, catConfidence, cats, labels, detection: trimmed, detections };
  } catch (err) {
    if (err instanceof RejectedUpload) throw new RejectedUpload(err.message, { code: err.code, cause: err, claim: held });
    await deps.store.release(held.claim);
    throw err;
  }
}

// ---- 6 and 7. rest a copy, record, then delete the source ------------------------------------------------------

/**
 * The move around the record: the upload is copied to where it rests, then `record` writes what says so (and counts
 * it), then the source under uploads/ is deleted. A record never names an object that is not there yet, and until
 * the record is written the source stays for a redelivery or the sweep, which copy again (the same key) and finish.
 * A copy that fails gives the claim back (`held`), so the retry takes it at once; its source deleted by an erasure
 * meanwhile, it is a discard. `MoveLatency` is the copy and the delete, without the record between them.
 */
async function restAround<T>(deps: IngestDeps, upload: Upload, object: StoredUpload, to: string, record: () => Promise<T>, held?: HeldClaim): Promise<T> {
  const copyStart = performance.now();
  let copy;
  try {
    copy = await restCopy(deps.s3, object, to);
  } catch (err) {
    if (held) await deps.store.release(held.claim);
    const batch = await deps.store.getBatch(upload.clientId, upload.batchId);
    if (!deps.store.isLive(batch)) throw new BatchErasedError(`batch ${upload.batchId} was erased while its upload was classified`);
    throw err;
  }
  const copyMs = performance.now() - copyStart;
  if (copy.rests) upload.rested = to;
  const recorded = await record();
  const deleteStart = performance.now();
  if (copy.fromSource) await removeUpload(deps.s3, object);
  deps.metrics.stepLatency('Move', copyMs + performance.now() - deleteStart);
  return recorded;
}

async function recordResult(deps: IngestDeps, upload: Upload, held: HeldClaim, result: SuccessResult, processedKey: string): Promise<void> {
  let finished;
  try {
    finished = await deps.store.finish(held.claim, {
      result,
      uploadedAt: held.uploadedAt,
      now: (deps.now ?? Date.now)(),
      restingKey: processedKey,
      logs: upload.log.entries(),
      ...(upload.capture ? { capture: upload.capture } : {}),
    }, { seen: upload.batch });
  } catch (err) {
    // The answer is paid for: kept on the claim (its lease ended), the retry taking the claim over records it.
    if (!(err instanceof BatchErasedError)) await keepAnswer(deps, upload, held, result);
    throw err;
  }
  if (!finished) throw await lostClaim(deps, upload, held.claim);
}

/** Keeps the result on the claim for the run that takes it over; a failure to keep it only costs that run a call. */
async function keepAnswer(deps: IngestDeps, upload: Upload, held: HeldClaim, result: SuccessResult): Promise<void> {
  try {
    if (await deps.store.keepPaidResult(held.claim, result)) upload.log.add('record not written: the answer is kept on the claim for the next attempt');
  } catch (err) {
    deps.logger.warn('the answer could not be kept on the claim; the next attempt classifies the image again', { key: upload.key, error: err as Error });
  }
}

/** The answer a run before this one paid for and kept on the claim this run took over (no second DetectLabels). */
async function paidBefore(deps: IngestDeps, upload: Upload, held: HeldClaim): Promise<SuccessResult | undefined> {
  if (!held.takeover) return undefined;
  const paid = await deps.store.paidResult(held.claim);
  if (!paid) return undefined;
  upload.log.add('recorded the answer an earlier attempt paid for');
  return paid;
}

// ---- giving up: an upload whose attempts did not finish ---------------------------------------------------------

/**
 * Ends an upload whose attempts all failed (docs/design.md §6) as a `fail` record with code ProcessingFailed and its
 * object under failed/, doing none of the steps that failed before: no read, no decode, no DetectLabels. A claim an
 * earlier attempt left `processing` is finished as that record (pending becomes fail) once its lease is over; an
 * upload found recorded already (a late redelivery) or counted as a duplicate is settled as such. When the object
 * cannot even be looked at (AccessDenied), the record is written all the same and the object stays under uploads/.
 */
async function giveUp(deps: IngestDeps, upload: Upload, attempt: AttemptCount): Promise<IngestResult> {
  const failed = Math.min(attempt.attempts, deps.config.maxAttempts);
  const message = `gave up after ${failed} attempt${failed === 1 ? '' : 's'} that did not finish (the function timed out, ran out of memory, or met a fault that persisted)`;
  deps.logger.error('giving up on an upload', { key: upload.key, attempts: attempt.attempts });
  upload.log.add(`giving up after ${failed} attempts`);
  const source = await sourceState(deps.s3, upload);
  if (source === 'gone') return redelivered(deps, upload);
  const object: StoredUpload = upload;
  const existing = attempt.fprint === undefined ? undefined : await deps.store.getImage(upload.clientId, upload.batchId, attempt.fprint);
  if (existing && (existing.status !== 'processing' || !isSameUpload(existing, object))) return settleClaimed(deps, upload, object, existing);
  if (existing) {
    const now = (deps.now ?? Date.now)();
    if (existing.claimId !== upload.claimId && (existing.leaseUntil ?? 0) >= now) {
      return { outcome: 'deferred', key: upload.key, retryAfterSeconds: leaseLeftSeconds(existing, now) };
    }
    const claim = claimOfRecord(deps, upload, existing, now);
    const held = { claim, uploadedAt: existing.uploadedAt ?? upload.receivedAt };
    return recordRejection(deps, upload, new RejectedUpload(message, { code: 'ProcessingFailed', claim: held }), { move: source === 'present' });
  }
  if (source === 'overwritten') {
    return recordRejection(deps, upload, new RejectedUpload('the file was replaced by a newer upload before it could be read', { code: 'Overwritten' }));
  }
  return recordRejection(deps, upload, new RejectedUpload(message, { code: 'ProcessingFailed' }), { move: source === 'present' });
}

/** The claim an earlier attempt left on the record, as this run finishes it (conditionally on that very claim). */
function claimOfRecord(deps: IngestDeps, upload: Upload, record: Image, now: number): Claim {
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
  };
}

// ---- the one place a rejected upload becomes a `fail` record --------------------------------------------------

async function recordRejection(deps: IngestDeps, upload: Upload, err: RejectedUpload, opts: { move?: boolean } = {}): Promise<IngestResult> {
  const { store, logger } = deps;
  upload.log.add(`rejected: ${err.code}: ${err.message}`);
  logger.warn('upload rejected', { key: upload.key, code: err.code, reason: err.message });
  const failedKey = restingKey('failed', upload);
  const error = { code: err.code, message: err.message };
  const now = (deps.now ?? Date.now)();
  const fprint = err.claim?.claim.fprint ?? rejectionKey(upload.fileName, upload.etag);
  // A claimed image stored its thumbnail after the claim; an unclaimed one decoded before its rejection does it here.
  const decoded = err.claim ? undefined : err.decoded;
  if (decoded) await timed(deps.metrics, 'Thumbnail', () => storeImageThumbnail(deps, upload, decoded, fprint));
  const record = async (): Promise<void> => {
    const recorded = err.claim
      ? await store.finish(err.claim.claim, { result: { status: 'fail', error }, uploadedAt: err.claim.uploadedAt, now, restingKey: failedKey, logs: upload.log.entries() }, { seen: upload.batch })
      : await store.reject(rejectionRecord(upload, fprint, err.code === 'QuotaExceeded' ? undefined : failedKey, err, now), { seen: upload.batch });
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
    await removeUpload(deps.s3, upload);
  } else await restAround(deps, upload, upload, failedKey, record, err.claim);
  return { outcome: 'fail', batchId: upload.batchId, fprint, errorCode: err.code };
}

function rejectionRecord(upload: Upload, fprint: string, failedKey: string | undefined, err: RejectedUpload, now: number): Image {
  return {
    clientId: upload.clientId,
    batchId: upload.batchId,
    fprint,
    status: 'fail',
    key: upload.key,
    ...(upload.etag !== undefined ? { etag: upload.etag } : {}),
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

/**
 * A refused upload has no pixel fingerprint: its record is keyed by its name and ETag, so a later bad upload under
 * the same name gets a record of its own and a redelivery of the same one writes nothing.
 */
function rejectionKey(fileName: string, etag: string | undefined): string {
  return `fail-${XXHash128.hash(Buffer.from(etag === undefined ? fileName : `${fileName}\u0000${etag}`)).toString('hex')}`;
}

/**
 * The claim's record is gone or another's: erased with its batch meanwhile (the discard removes the copy), or taken
 * over by another run.
 */
async function lostClaim(deps: IngestDeps, upload: Upload, claim: Claim): Promise<Error> {
  const batch = await deps.store.getBatch(claim.clientId, claim.batchId);
  if (!deps.store.isLive(batch)) return new BatchErasedError(`batch ${claim.batchId} was erased while its upload was classified`);
  deps.logger.warn('claim was taken over while classifying; leaving the result to the new holder', { batchId: claim.batchId, fprint: claim.fprint });
  await dropUnsharedCopy(deps, upload, claim);
  return new Error(`claim on ${claim.batchId}/${claim.fprint} was lost`);
}

/**
 * The copy made before a lost claim stays where the new holder may rest its own upload: the same key is the same
 * upload, or the same pixels in the same format, which the holder copies there too (deleting it could delete the
 * holder's). Anywhere else nothing would ever remove it: this upload comes back as a duplicate of the holder's.
 */
async function dropUnsharedCopy(deps: IngestDeps, upload: Upload, claim: Claim): Promise<void> {
  if (!upload.rested) return;
  const holder = await deps.store.getImage(claim.clientId, claim.batchId, claim.fprint);
  if (holder) {
    const holderUpload = { clientId: claim.clientId, batchId: claim.batchId, fileName: holder.fileName ?? claim.fileName };
    const holderKeys = holder.restingKey
      ? [holder.restingKey]
      : [restingKey('processed', holderUpload, holder.fprint, holder.format), restingKey('failed', holderUpload)];
    if (holderKeys.includes(upload.rested)) return;
  }
  await removeUpload(deps.s3, { bucket: upload.bucket, key: upload.rested });
  upload.rested = undefined;
}

function safeDecode(encoded: string): string {
  try {
    return decodeS3Key(encoded);
  } catch {
    return encoded;
  }
}
