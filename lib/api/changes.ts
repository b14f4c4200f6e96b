// GET /v1/batches/{batchId}/changes (docs/api.md "Re-detect"): the images whose machine verdict a re-detection changed.
import type { Batch } from '../domain/batch';
import { machineIsCatOf, type Image as StoredImage } from '../domain/image';
import { answerModelOf } from '../model-version';
import type { Page, PageRequest } from '../store/table/query';
import { BatchNotFoundError } from './errors';
import type { ChangesQuery, VerdictChange } from './schemas/redetect';

/** What the listing reads (lib/store/store-reads.ts StoreReads). */
export interface ChangesReader {
  batch(clientId: string, batchId: string): Promise<Batch | undefined>;
  changedImages(clientId: string, batchId: string, page: PageRequest): Promise<Page<StoredImage>>;
}
/** One image's change, as the listing shows it. */
export function presentChange(image: StoredImage): VerdictChange | undefined {
  const previous = image.previous;
  const isCat = machineIsCatOf(image) === true;
  if (!previous || previous.isCat === isCat) return undefined;
  return {
    fprint: image.fprint,
    fileName: image.fileName ?? null,
    change: previous.isCat ? 'cat → not cat' : 'not cat → cat',
    previous,
    current: { model: answerModelOf(image), isCat, catConfidence: image.catConfidence ?? 0 },
  };
}

/** GET …/changes: a page of the batch's images whose machine verdict changed; 404 for a batch the client cannot see. */
export async function changesPage(
  reads: ChangesReader,
  clientId: string,
  batchId: string,
  q: ChangesQuery,
): Promise<{ items: VerdictChange[]; cursor?: string }> {
  if (!(await reads.batch(clientId, batchId))) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
  const page = await reads.changedImages(clientId, batchId, { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) });
  const items = page.items.flatMap((image) => presentChange(image) ?? []);
  return { items, ...(page.cursor ? { cursor: page.cursor } : {}) };
}
