// Step 7 (docs/design.md §1), split around step 6: copy, then record, then delete the source (decision 0017).
import { BatchErasedError } from '../../store/table/errors';
import type { IngestDeps } from '../deps';
import type { HeldClaim } from '../errors';
import { removeUpload, restCopy, type StoredObject } from '../storage';
import type { Placed } from './place';

/**
 * The move around the record: the upload is copied to where it rests, then `record` writes what says so (and counts
 * it), then the source under uploads/ is deleted. A record never names an object that is not there yet, and until
 * the record is written the source stays for a redelivery or the sweep, which copy again (the same key) and finish.
 * A copy that fails gives the claim back (`held`), so the retry takes it at once; its source deleted by an erasure
 * meanwhile, it is a discard. `MoveLatency` is the copy and the delete, without the record between them.
 */
export async function restAround<T>(
  deps: IngestDeps,
  upload: Placed,
  object: StoredObject,
  to: string,
  record: () => Promise<T>,
  held?: HeldClaim,
): Promise<T> {
  // An imported image stays where it is: nothing to copy or delete, only the record (docs/design.md §16).
  if (upload.inPlace) return record();
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
  if (copy.rests) upload.written.rested(to);
  const recorded = await record();
  const deleteStart = performance.now();
  if (copy.fromSource) await removeUpload(deps.s3, object);
  deps.metrics.stepLatency('Move', copyMs + performance.now() - deleteStart);
  return recorded;
}
