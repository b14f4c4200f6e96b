// GET …/changes' read (docs/api.md "Re-detect"): the images of a batch whose machine verdict a re-detection changed,
// the Query beside the function that pages it.
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Image } from '../../domain/image';
import { imageNames, toImage } from '../table/attributes';
import type { QueryPlan } from '../table/expressions';
import { type Page, type PageRequest, runQuery, type StoreContext, storeNowS } from '../table/query';
import { BATCH_SK, batchPartition, type ImageItem } from '../table/schema';

/**
 * The images of a batch whose machine verdict a re-detection changed: `prev` there, and its verdict not the machine's
 * now (the review's `mc` where a person gave one, else the flag). The batch's own partition, paged by the reader.
 */
export function changesPlan(table: string, clientId: string, batchId: string, nowS: number): QueryPlan {
  const partition = batchPartition(clientId, batchId);
  const input: QueryCommandInput = {
    TableName: table,
    KeyConditionExpression: '#partition = :partition AND #fprint > :summary',
    FilterExpression:
      'attribute_exists(#previous) AND #expiresAt > :nowS AND ' +
      '((attribute_not_exists(#review) AND #isCat <> #previous.#cat) OR (attribute_exists(#review) AND #review.#mc <> #previous.#cat))',
    ExpressionAttributeNames: {
      ...imageNames('partition', 'fprint', 'previous', 'expiresAt', 'review', 'isCat'),
      '#cat': 'cat',
      '#mc': 'mc',
    },
    ExpressionAttributeValues: { ':partition': partition, ':summary': BATCH_SK, ':nowS': nowS },
  };
  return { pattern: '1 (changes)', scope: `changes\n${partition}`, keyAttributes: ['batch_id', 'img_fprint'], input };
}

/** A page of the batch's changed images (the caller has checked that the client sees the batch). */
export async function queryChangedImages(ctx: StoreContext, clientId: string, batchId: string, page: PageRequest): Promise<Page<Image>> {
  const read = await runQuery<ImageItem>(ctx, changesPlan(ctx.tableName, clientId, batchId, storeNowS(ctx)), page);
  return { items: read.items.map(toImage), ...(read.cursor ? { cursor: read.cursor } : {}) };
}
