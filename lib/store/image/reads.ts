// An image read by key for the API: one (GetItem, pattern 5) or many of one batch (BatchGetItem, pattern 6), missing and
// expired ones left out, each request built beside the function that sends it.
import { type BatchGetCommandInput, GetCommand, type GetCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Image } from '../../domain/image';
import { toImage } from '../table/attributes';
import {
  BATCH_GET_MAX_KEYS,
  batchGetAll,
  DEFAULT_RETRY,
  isVisibleImage,
  type RetryOptions,
  type StoreContext,
  storeNowS,
  translate,
} from '../table/query';
import { BATCH_SK, IMAGE_BY_KEY_ATTRIBUTES, type ImageItem, imageKey } from '../table/schema';

/** 5: one image, GetItem. */
export function imageRequest(tableName: string, clientId: string, batchId: string, fprint: string): GetCommandInput {
  return {
    TableName: tableName,
    Key: imageKey(clientId, batchId, fprint),
    ProjectionExpression: IMAGE_BY_KEY_ATTRIBUTES.map((a) => `#${a}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(IMAGE_BY_KEY_ATTRIBUTES.map((a) => [`#${a}`, a])),
  };
}

/** 6: BatchGetItem requests of at most 100 distinct keys each; the summary key is never asked for. */
export function batchGetRequests(tableName: string, clientId: string, batchId: string, fprints: readonly string[]): BatchGetCommandInput[] {
  const distinct = [...new Set(fprints)].filter((f) => f !== BATCH_SK);
  const { ProjectionExpression, ExpressionAttributeNames } = imageRequest(tableName, clientId, batchId, '');
  const requests: BatchGetCommandInput[] = [];
  for (let i = 0; i < distinct.length; i += BATCH_GET_MAX_KEYS) {
    const keys = distinct.slice(i, i + BATCH_GET_MAX_KEYS).map((f) => imageKey(clientId, batchId, f));
    requests.push({ RequestItems: { [tableName]: { Keys: keys, ProjectionExpression, ExpressionAttributeNames } } });
  }
  return requests;
}

/** 5: one image, or undefined when missing or expired. */
export async function getImage(ctx: StoreContext, clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
  if (fprint === BATCH_SK) return undefined;
  const out = await ctx.ddb.send(new GetCommand(imageRequest(ctx.tableName, clientId, batchId, fprint))).catch(translate);
  const item = out.Item as Partial<ImageItem> | undefined;
  return isVisibleImage(item, storeNowS(ctx)) ? toImage(item) : undefined;
}

/** 6: many images of one batch by fingerprint, in the order asked; missing and expired ones are left out. */
export async function getImages(
  ctx: StoreContext,
  clientId: string,
  batchId: string,
  fprints: readonly string[],
  retry: RetryOptions = DEFAULT_RETRY,
): Promise<Image[]> {
  const found = new Map<string, Image>();
  const nowS = storeNowS(ctx);
  for (const request of batchGetRequests(ctx.tableName, clientId, batchId, fprints)) {
    for (const item of await batchGetAll<Partial<ImageItem>>(ctx, request.RequestItems, retry)) {
      if (isVisibleImage(item, nowS)) found.set(item.img_fprint, toImage(item));
    }
  }
  return [...new Set(fprints)].flatMap((f) => found.get(f) ?? []);
}
