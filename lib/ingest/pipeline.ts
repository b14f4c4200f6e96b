// One upload, start to end: the steps of DESIGN §1 in order. Every upload ends as a record and an object under
// processed/, duplicates/ or failed/; only transient faults (throttling past retries, network) escape as errors,
// for SQS to redeliver.
import { randomUUID } from 'node:crypto';
import { createXXHash128 } from 'hash-wasm';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { AwsClients } from '../aws/clients';
import type { Config } from '../config';
import { Records } from '../store/records';
import type { ImageItem } from '../store/schema';
import { DebugLog } from './debug-log';
import { REKOGNITION, detectLabels } from './detect';
import { RejectedUpload } from './errors';
import { fingerprint, type Fingerprint } from './fingerprint';
import { decodeS3Key, invalidKeyDestination, parseUploadKey, restingKey, type UploadKey } from './s3-key';
import { UploadGone, moveObject, readUpload, tooLarge } from './storage';

/** What the handler hands over from one S3 event record. */
export interface UploadEvent {
  bucket: string;
  /** As it arrives in the event: URL-encoded. */
  encodedKey: string;
  size?: number;
}

export type IngestResult =
  | { outcome: 'success' | 'fail' | 'duplicate'; batchId: string; fprint: string }
  /** Not recordable in any batch of the uploader's (outside the layout, or someone else's batch): under failed/. */
  | { outcome: 'invalid-key'; key: string }
  /** A redelivered event: the work was done, or is being done, by another delivery. */
  | { outcome: 'already-handled' | 'in-flight'; key: string };

export interface IngestDeps {
  clients: AwsClients;
  config: Config;
  logger: Logger;
  now?: () => number;
}

export async function processUpload(deps: IngestDeps, event: UploadEvent): Promise<IngestResult> {
  const { clients, config, logger } = deps;
  const now = deps.now ?? Date.now;
  const records = new Records(clients.ddb, config.tableName);
  const bucket = event.bucket;

  // 1. decode the key as AWS encodes it, and place it in the layout
  let key: string;
  let upload: UploadKey;
  try {
    key = decodeS3Key(event.encodedKey);
    upload = parseUploadKey(key);
  } catch (err) {
    if (!(err instanceof RejectedUpload)) throw err;
    const raw = safeDecode(event.encodedKey);
    logger.error('upload rejected: key outside the layout', { key: raw, code: err.code, reason: err.message });
    await moveObject(clients.s3, bucket, raw, invalidKeyDestination(raw));
    return { outcome: 'invalid-key', key: raw };
  }
  const started = now();
  const batch = await records.openBatch(upload.batchId, upload.clientId, started, config.defaultRetentionDays);
  const log = new DebugLog(batch.debug, started);
  log.add(`received s3://${bucket}/${key} (${event.size ?? '?'} bytes)`);

  const reject = async (err: RejectedUpload): Promise<IngestResult> => {
    log.add(`rejected: ${err.code}: ${err.message}`);
    logger.warn('upload rejected', { key, code: err.code, reason: err.message });
    const recordKey = await rejectionKey(upload.fileName);
    const failedKey = restingKey('failed', upload);
    const recorded = await records.reject({
      batchId: upload.batchId,
      recordKey,
      clientId: upload.clientId,
      key,
      fileName: upload.fileName,
      now: started,
      retentionDays: batch.retention_days,
      error: { code: err.code, message: err.message },
      processedKey: failedKey,
      logs: log.entries(),
    });
    if (recorded) await records.count(upload.batchId, { n_total: 1, n_fail: 1 });
    await moveObject(clients.s3, bucket, key, failedKey);
    return { outcome: 'fail', batchId: upload.batchId, fprint: recordKey };
  };

  if (batch.owner_id !== upload.clientId) {
    // Recording it would put a stranger's upload into the owner's batch: it rests under failed/ with a log line.
    logger.error('upload rejected: batch belongs to another client', { key, code: 'ForeignBatch' });
    await moveObject(clients.s3, bucket, key, restingKey('failed', upload));
    return { outcome: 'invalid-key', key };
  }

  // 2. read the object (size cap; one buffer)
  let image: Buffer;
  try {
    // The event already tells the size: refuse before reading anything.
    if (event.size !== undefined && event.size > config.maxUploadBytes) throw tooLarge(event.size, config.maxUploadBytes);
    image = await readUpload(clients.s3, bucket, key, config.maxUploadBytes);
  } catch (err) {
    if (err instanceof UploadGone) {
      logger.info('upload already moved by an earlier delivery; nothing to do', { key });
      return { outcome: 'already-handled', key };
    }
    if (err instanceof RejectedUpload) return reject(err);
    throw err;
  }
  log.add(`read ${image.length} bytes`);

  // 3. fingerprint: exact key + perceptual hint
  let fp: Fingerprint;
  try {
    fp = await fingerprint(image, { maxInputPixels: config.maxInputPixels });
    if (Math.min(fp.width, fp.height) < REKOGNITION.minSide) {
      throw new RejectedUpload('ImageTooSmall', `the image is ${fp.width}x${fp.height}; both sides must be at least ${REKOGNITION.minSide} px`);
    }
  } catch (err) {
    if (err instanceof RejectedUpload) return reject(err);
    throw err;
  }
  log.add(`fingerprint ${fp.fprint} phash ${fp.phash} ${fp.format} ${fp.width}x${fp.height}`);

  // 4. claim (batch_id, img_fprint)
  const claimId = randomUUID();
  const claim = await records.claim({
    batchId: upload.batchId,
    fprint: fp.fprint,
    clientId: upload.clientId,
    key,
    fileName: upload.fileName,
    phash: fp.phash,
    format: fp.format,
    width: fp.width,
    height: fp.height,
    claimId,
    now: started,
    leaseMs: config.claimLeaseSeconds * 1000,
    retentionDays: batch.retention_days,
  });
  if (!claim.won) return settleUnclaimed(deps, records, claim.existing, upload, key, bucket, log);
  if (claim.won === 'new') await records.count(upload.batchId, { n_total: 1 });
  log.add(claim.won === 'new' ? 'claimed' : 'took over an expired claim');

  // 5. DetectLabels
  const processedKey = restingKey('processed', upload, fp.fprint, fp.format);
  try {
    const detection = await detectLabels(
      clients.rekognition,
      { bucket, key, bytes: image.length, format: fp.format, width: fp.width, height: fp.height },
      () => image,
      {
        minConfidence: config.minConfidence,
        maxLabels: config.maxLabels,
        catMinConfidence: config.catMinConfidence,
        maxInputPixels: config.maxInputPixels,
      },
    );
    log.add(`DetectLabels by ${detection.sentAs}: ${detection.labels.slice(0, 5).map((l) => `${l.name} ${l.confidence}`).join(', ')}`);
    log.add(detection.isCat ? 'a cat' : 'not a cat');

    // 6. record
    const finished = await records.finish(upload.batchId, fp.fprint, claimId, {
      status: 'success',
      uploadTs: claim.receivedTs,
      now: now(),
      processedKey,
      isCat: detection.isCat,
      labels: detection.labels,
      trimmed: detection.trimmed,
      logs: log.entries(),
    });
    if (!finished) return lostClaim(logger, upload, fp);
    await records.count(upload.batchId, detection.isCat ? { n_success: 1, n_cats: 1 } : { n_success: 1 });
  } catch (err) {
    if (!(err instanceof RejectedUpload)) {
      await records.release(upload.batchId, fp.fprint, claimId);
      throw err;
    }
    log.add(`rejected: ${err.code}: ${err.message}`);
    const failedKey = restingKey('failed', upload);
    const finished = await records.finish(upload.batchId, fp.fprint, claimId, {
      status: 'fail',
      uploadTs: claim.receivedTs,
      now: now(),
      processedKey: failedKey,
      error: { code: err.code, message: err.message },
      logs: log.entries(),
    });
    if (!finished) return lostClaim(logger, upload, fp);
    await records.count(upload.batchId, { n_fail: 1 });
    await moveObject(clients.s3, bucket, key, failedKey);
    return { outcome: 'fail', batchId: upload.batchId, fprint: fp.fprint };
  }

  // 7. move to processed/
  await moveObject(clients.s3, bucket, key, processedKey);
  return { outcome: 'success', batchId: upload.batchId, fprint: fp.fprint };
}

/** The image is claimed already: by this very upload (a redelivered event) or by another (a duplicate). */
async function settleUnclaimed(
  deps: IngestDeps,
  records: Records,
  existing: ImageItem,
  upload: UploadKey,
  key: string,
  bucket: string,
  log: DebugLog,
): Promise<IngestResult> {
  const { clients, logger } = deps;
  if (existing.s3img_key === key) {
    if (existing.op_status === 'processing') {
      logger.info('same upload is being processed by another delivery', { key });
      return { outcome: 'in-flight', key };
    }
    // Recorded by an earlier delivery that stopped before the move: finish the move.
    if (existing.processed_key) await moveObject(clients.s3, bucket, key, existing.processed_key);
    return { outcome: 'already-handled', key };
  }
  const counted = await records.addDuplicate(upload.batchId, existing.img_fprint, upload.fileName, existing.dup_files?.length ?? 0);
  if (counted) await records.count(upload.batchId, { n_total: 1, n_duplicate: 1 });
  log.add(`duplicate of ${existing.file_name}`);
  logger.info('duplicate upload', { key, original: existing.s3img_key, fprint: existing.img_fprint });
  await moveObject(clients.s3, bucket, key, restingKey('duplicates', upload, existing.img_fprint));
  return { outcome: 'duplicate', batchId: upload.batchId, fprint: existing.img_fprint };
}

function lostClaim(logger: Logger, upload: UploadKey, fp: Fingerprint): never {
  logger.warn('claim was taken over while classifying; leaving the result to the new holder', {
    batchId: upload.batchId,
    fprint: fp.fprint,
  });
  throw new Error(`claim on ${upload.batchId}/${fp.fprint} was lost`);
}

/** Rejected uploads have no pixel fingerprint: their record is keyed by the file name instead. */
async function rejectionKey(fileName: string): Promise<string> {
  const h = await createXXHash128();
  h.init();
  h.update(fileName);
  return `fail-${h.digest('hex')}`;
}

function safeDecode(encoded: string): string {
  try {
    return decodeS3Key(encoded);
  } catch {
    return encoded;
  }
}
