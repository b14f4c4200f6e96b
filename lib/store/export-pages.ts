// A batch's every image, a page at a time: what an export streams and what the near-duplicate groups are computed
// over. Apart from reader.ts so that a function bundles only this Query, not the listings' cursors.
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchResultsRequest } from './access-patterns';
import { IMAGE_ATTRIBUTES, toImage, type ImageAttribute } from './attributes';
import type { Image } from '../domain';
import { IN_PROGRESS_LISTING_ATTRIBUTES, nowSeconds, type ImageItem } from './schema';

export interface BatchPagesOptions {
  /** Items evaluated per Query (default 500); a page also ends at DynamoDB's 1 MB. */
  pageSize?: number;
  /** The image's fields to read, by their domain names (default: what a listing shows, the duplicates' names included). */
  attributes?: readonly ImageAttribute[];
}

/**
 * Every image of a batch, a page at a time (access pattern 1 on the table, LastEvaluatedKey carried internally).
 * Expired images are left out as every read does; the summary item never comes.
 */
export async function* batchImagePages(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string; now?: () => number },
  clientId: string,
  batchId: string,
  opts: BatchPagesOptions = {},
): AsyncGenerator<Image[]> {
  const nowS = nowSeconds((ctx.now ?? Date.now)());
  const plan = batchResultsRequest({ tableName: ctx.tableName, clientId, batchId, nowS }, opts.attributes?.map((name) => IMAGE_ATTRIBUTES[name]) ?? IN_PROGRESS_LISTING_ATTRIBUTES);
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await ctx.ddb.send(new QueryCommand({ ...plan.input, Limit: opts.pageSize ?? 500, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }));
    yield ((out.Items ?? []) as ImageItem[]).map(toImage);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}
