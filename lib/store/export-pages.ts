// A batch's every image, a page at a time: what an export streams. Apart from reader.ts so that the function that
// exports (functions/batches) bundles only this Query.
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { toImage } from './attributes';
import type { Image } from './model';
import { BATCH_SK, LISTING_ATTRIBUTES, batchPartition, nowSeconds, type ImageItem } from './schema';

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
  const names = Object.fromEntries(EXPORT_ATTRIBUTES.map((a, i) => [`#a${i}`, a]));
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await ctx.ddb
      .send(
        new QueryCommand({
          TableName: ctx.tableName,
          KeyConditionExpression: '#a0 = :pk AND #a1 > :summary',
          ProjectionExpression: Object.keys(names).join(', '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':pk': batchPartition(clientId, batchId), ':summary': BATCH_SK },
          Limit: pageSize,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
    const items = (out.Items ?? []) as ImageItem[];
    yield items.filter((item) => typeof item.ttl === 'number' && item.ttl > nowS).map(toImage);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
}
