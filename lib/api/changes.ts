// GET /v1/batches/{batchId}/changes (docs/api.md "Re-detect"): the images whose machine verdict a re-detection changed.
import { machineIsCatOf, type Image as StoredImage } from '../domain/image';
import { getBatch } from '../store/batch/read';
import { answerModelOf, changesPlan } from '../store/redetect/image-writes';
import { toImage } from '../store/table/attributes';
import { runQuery, type StoreContext } from '../store/table/query';
import { type ImageItem, nowSeconds } from '../store/table/schema';
import { BatchNotFoundError } from './errors';
import type { ChangesQuery, VerdictChange } from './schemas/redetect';
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
  ctx: StoreContext,
  clientId: string,
  batchId: string,
  q: ChangesQuery,
): Promise<{ items: VerdictChange[]; cursor?: string }> {
  if (!(await getBatch(ctx, clientId, batchId))) throw new BatchNotFoundError(`batch ${batchId} not found`, { batchId });
  const plan = changesPlan(ctx.tableName, clientId, batchId, nowSeconds((ctx.now ?? Date.now)()));
  const page = await runQuery<ImageItem>(ctx, plan, { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) });
  const items = page.items.flatMap((item) => presentChange(toImage(item)) ?? []);
  return { items, ...(page.cursor ? { cursor: page.cursor } : {}) };
}
