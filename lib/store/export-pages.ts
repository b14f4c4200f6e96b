// A batch's every image, a page at a time: what an export streams. Apart from reader.ts so that the function that
// exports (functions/batches) bundles only this Query.
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchResultsRequest } from './access-patterns';
import { toImage } from './attributes';
import type { Image } from './model';
import { LISTING_ATTRIBUTES, nowSeconds, type ImageItem } from './schema';

/** What an export reads of each image: what a listing shows, and the duplicates' file names. */
const EXPORT_ATTRIBUTES = [...LISTING_ATTRIBUTES, 'dup_files'] as const;

/**
 * Every image of a batch, a page at a time (access pattern 1 on the table, LastEvaluatedKey carried internally): what
 * an export streams. Expired images are left out as every read does.
 */
export async function* batchImagePages(
  ctx: { ddb: DynamoDBDocumentClient; tableName: string; now?: () => number },
  clientId: string,
  batchId: string,
  pageSize = 500,
): AsyncGenerator<Image[]> {
  const nowS = nowSeconds((ctx.now ?? Date.now)());
  const plan = batchResultsRequest({ tableName: ctx.tableName, clientId, batchId, nowS }, EXPORT_ATTRIBUTES);
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await ctx.ddb.send(new QueryCommand({ ...plan.input, Limit: pageSize, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }));
    yield ((out.Items ?? []) as ImageItem[]).map(toImage);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}
