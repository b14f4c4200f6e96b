// Step 1 of an imported image (docs/design.md §16): its message names its batch, which the import opened; no key is
// parsed and no batch is opened. A batch gone or being erased takes nothing, and nothing at the source is touched.

import { sourceUri } from '../../import/enqueue';
import type { ImportMessage } from '../../import/message';
import { DebugLog } from '../debug-log';
import type { IngestDeps, IngestResult } from '../deps';
import type { Placed } from './place';
import { Written } from './written';

export async function placeImport(deps: IngestDeps, m: ImportMessage): Promise<Placed | IngestResult> {
  const key = sourceUri(m.source);
  const batch = await deps.store.getBatch(m.clientId, m.batchId);
  if (!batch?.import || !deps.store.isLive(batch)) {
    const code = batch?.deleting ? 'BatchErased' : batch ? 'BatchExpired' : 'BatchErased';
    deps.logger.warn('imported object of a batch gone, being erased or past its retention: nothing recorded', { key, code });
    return { outcome: 'refused', key, code };
  }
  const receivedAt = (deps.now ?? Date.now)();
  const log = new DebugLog(batch.debug, receivedAt);
  log.add(`import of ${key} (${m.source.size ?? '?'} bytes, ETag ${m.source.etag ?? '?'})`);
  return {
    clientId: m.clientId,
    batchId: m.batchId,
    fileName: m.source.key,
    bucket: deps.config.bucketName,
    key,
    ...(m.source.etag !== undefined ? { etag: m.source.etag } : {}),
    ...(m.source.size !== undefined ? { size: m.source.size } : {}),
    batch,
    expiresAt: batch.expiresAt,
    receivedAt,
    createdAt: m.listedAt,
    log,
    written: new Written(),
    inPlace: m.source,
  };
}
