// What no index projects (docs/decisions/0016: the table's 100 projected attributes are spent): an image's model, the
// answer a re-detection replaced and its audit draw. A listing read from an index reads these three for the page it
// answers, by key, one BatchGetItem per 100 images, so every listing names its model as the image read by key does
// (docs/design.md §13). A listing read from the table (or whole by key, as by capture time) has them already.
import type { BatchGetCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGetAll, byKeyRequests, type StoreContext } from './query';
import type { ImageItem } from './schema';

export const UNPROJECTED_ATTRIBUTES = ['rek_model', 'prev', 'audit'] as const;

/** BatchGetItem of the page's items' unprojected attributes (and their keys, to match them up). */
export const unprojectedRequests = (
  tableName: string,
  items: readonly Pick<ImageItem, 'batch_id' | 'img_fprint'>[],
): BatchGetCommandInput[] => byKeyRequests(tableName, items, ['batch_id', 'img_fprint', ...UNPROJECTED_ATTRIBUTES]);

/** The page's items with what no index projects, read by key (an item gone meanwhile stays as the index had it). */
export async function withUnprojected(ctx: StoreContext, items: ImageItem[]): Promise<ImageItem[]> {
  if (items.length === 0) return items;
  const read = new Map<string, Partial<ImageItem>>();
  for (const request of unprojectedRequests(ctx.tableName, items)) {
    for (const item of await batchGetAll<Partial<ImageItem>>(ctx, request.RequestItems))
      read.set(`${item.batch_id}\n${item.img_fprint}`, item);
  }
  return items.map((item) => ({ ...item, ...read.get(`${item.batch_id}\n${item.img_fprint}`) }));
}
