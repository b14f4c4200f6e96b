// An image recorded already (step 4 finds it claimed): the same upload delivered again, or a duplicate.
import type { Image } from '../../domain/image';
import { BatchErasedError } from '../../store/table/errors';
import type { IngestDeps, IngestResult } from '../deps';
import { restingKey } from '../s3-key';
import type { StoredObject } from '../storage';
import { restAround } from './move';
import type { Placed } from './place';

export const isSameUpload = (record: Image, object: StoredObject): boolean =>
  record.key === object.key && (record.etag === undefined || object.etag === undefined || record.etag === object.etag);

/**
 * The image is recorded already: by this very upload (a redelivered event) or by another (a duplicate). `note`: the
 * upload's own item still lacks the fingerprint this run found, which the duplicate's count notes.
 */
export async function settleClaimed(
  deps: IngestDeps,
  upload: Placed,
  object: StoredObject,
  existing: Image,
  note: boolean,
): Promise<IngestResult> {
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
    const counted = await store.addDuplicate(existing, upload.fileName, upload, { note, seen: upload.batch });
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
export async function repairRedelivered(deps: IngestDeps, upload: Placed): Promise<void> {
  const batch = await deps.store.repairAfterRedelivery(upload.clientId, upload.batchId);
  if (!deps.store.isLive(batch)) throw new BatchErasedError(`batch ${upload.batchId} is being erased`);
}

export function redelivered(deps: IngestDeps, upload: Placed): IngestResult {
  deps.logger.info('upload already handled by an earlier delivery; nothing to do', { key: upload.key });
  return { outcome: 'redelivered', key: upload.key };
}

/** Whole seconds until the claim's lease is over, plus one so the retry never arrives a moment early; at least 1. */
export function leaseLeftSeconds(claimed: Image, now: number): number {
  return Math.max(1, Math.ceil(((claimed.leaseUntil ?? now) - now) / 1000) + 1);
}
