// The reads of review (docs/design.md §10), on the sparse batch-review index (resources/table.yml): the queue of a
// batch's classified images no person has reviewed, nearest the batch's threshold first, and the reviewed images'
// verdicts that agreement is computed from. Key conditions only: never a Scan, never a filter over the batch.
//
// The index's sort key is the image's cat confidence, not its distance to the threshold, so a re-threshold rewrites
// nothing: a page walks two key ranges away from the threshold (up from it ascending, down from it descending) and
// merges them by distance. The index holds keys only (and the verdict), so the page's images are then read by one
// consistent BatchGetItem, which also leaves out an image reviewed a moment ago that the index still lists.
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Image } from '../../domain/image';
import type { Review } from '../../domain/review';
import { batchGetRequests } from '../image/reads';
import { imageNames, toImage } from '../table/attributes';
import type { StartKey } from '../table/cursor';
import { batchGetAll, isVisibleImage, type Page, type PageRequest, type StoreContext } from '../table/query';
import {
  batchPartition,
  confidenceDigits,
  confidenceOfReviewKey,
  digitsBelow,
  fromStoredReview,
  type ImageItem,
  INDEX,
  nowSeconds,
  REVIEW_DONE,
  REVIEW_PENDING,
  type StoredReview,
} from '../table/schema';
/** One side of the queue: up from the threshold (confidence ≥ it, ascending) or down from it (below, descending). */
export type QueueSide = 'up' | 'down';

/** Where each side goes on: after this index key, or nowhere more (`ended`). */
export interface QueueSideStart {
  ended: boolean;
  /** The index key (batch_id, img_fprint, review_key) of the last image shown from this side. */
  after?: { batch_id: string; img_fprint: string; review_key: string };
}

/** The Query of one side of the queue, at most `limit` keys, from its start; undefined when the side is empty. */
export function reviewQueueSideRequest(
  tableName: string,
  clientId: string,
  batchId: string,
  threshold: number,
  side: QueueSide,
  limit: number,
  after?: QueueSideStart['after'],
): QueryCommandInput | undefined {
  const at = confidenceDigits(threshold);
  const below = digitsBelow(threshold);
  if (side === 'down' && below === undefined) return undefined;
  const [lo, hi] =
    side === 'up' ? [REVIEW_PENDING + at, REVIEW_PENDING + '999999999'] : [REVIEW_PENDING + '000000000', REVIEW_PENDING + below];
  return {
    TableName: tableName,
    IndexName: INDEX.batchReview,
    KeyConditionExpression: '#partition = :partition AND #reviewKey BETWEEN :lo AND :hi',
    ExpressionAttributeNames: imageNames('partition', 'reviewKey'),
    ExpressionAttributeValues: { ':partition': batchPartition(clientId, batchId), ':lo': lo, ':hi': hi },
    ScanIndexForward: side === 'up',
    Limit: limit,
    ...(after ? { ExclusiveStartKey: after } : {}),
  };
}

type IndexKey = NonNullable<QueueSideStart['after']>;

/** The keys of the page: from both sides, nearest the threshold first (a tie: the one at or above it). */
export function mergeByDistance(threshold: number, up: IndexKey[], down: IndexKey[], limit: number): { key: IndexKey; side: QueueSide }[] {
  const out: { key: IndexKey; side: QueueSide }[] = [];
  let u = 0;
  let d = 0;
  while (out.length < limit && (u < up.length || d < down.length)) {
    const du = u < up.length ? confidenceOfReviewKey(up[u]!.review_key) - threshold : Infinity;
    const dd = d < down.length ? threshold - confidenceOfReviewKey(down[d]!.review_key) : Infinity;
    if (du <= dd) out.push({ key: up[u++]!, side: 'up' });
    else out.push({ key: down[d++]!, side: 'down' });
  }
  return out;
}

/** The cursor of the queue: both sides' starts, as a flat key the cursor codec seals. */
const toCursorKey = (up: QueueSideStart, down: QueueSideStart): StartKey => {
  const key: StartKey = { ue: up.ended ? 1 : 0, de: down.ended ? 1 : 0 };
  if (up.after) Object.assign(key, { uf: up.after.img_fprint, uk: up.after.review_key });
  if (down.after) Object.assign(key, { df: down.after.img_fprint, dk: down.after.review_key });
  return key;
};

function fromCursorKey(key: StartKey, partition: string): { up: QueueSideStart; down: QueueSideStart } {
  const side = (ended: unknown, fprint: unknown, reviewKey: unknown): QueueSideStart => ({
    ended: ended === 1,
    ...(typeof fprint === 'string' && typeof reviewKey === 'string'
      ? { after: { batch_id: partition, img_fprint: fprint, review_key: reviewKey } }
      : {}),
  });
  return { up: side(key.ue, key.uf, key.uk), down: side(key.de, key.df, key.dk) };
}

/**
 * A page of the batch's classified images no person has reviewed, nearest `threshold` first (GET …/images?review=
 * pending&order=uncertain). The cursor is bound to the batch and the threshold: after a re-threshold the queue starts
 * over. Each side reads one key more than the page, so a page with a cursor is never followed by an empty one.
 */
export async function queryReviewQueue(
  ctx: StoreContext,
  clientId: string,
  batchId: string,
  threshold: number,
  page: PageRequest,
): Promise<Page<Image>> {
  const partition = batchPartition(clientId, batchId);
  const scope = JSON.stringify(['review-queue', partition, threshold]);
  const start =
    page.cursor === undefined
      ? { up: { ended: false }, down: { ended: false } }
      : fromCursorKey(ctx.cursors.decode(page.cursor, scope), partition);
  const read = async (side: QueueSide, from: QueueSideStart): Promise<{ keys: IndexKey[]; more: boolean }> => {
    const request = from.ended
      ? undefined
      : reviewQueueSideRequest(ctx.tableName, clientId, batchId, threshold, side, page.limit + 1, from.after);
    if (!request) return { keys: [], more: false };
    const out = await ctx.ddb.send(new QueryCommand(request));
    return { keys: (out.Items ?? []) as IndexKey[], more: out.LastEvaluatedKey !== undefined };
  };
  const [up, down] = await Promise.all([read('up', start.up), read('down', start.down)]);
  const shown = mergeByDistance(threshold, up.keys, down.keys, page.limit);
  const next = (side: QueueSide, from: QueueSideStart, got: { keys: IndexKey[]; more: boolean }): QueueSideStart => {
    const taken = shown.filter((s) => s.side === side);
    const after = taken.length > 0 ? taken[taken.length - 1]!.key : from.after;
    const ended = from.ended || (taken.length === got.keys.length && !got.more);
    return { ended, ...(after ? { after: { batch_id: after.batch_id, img_fprint: after.img_fprint, review_key: after.review_key } } : {}) };
  };
  const nextUp = next('up', start.up, up);
  const nextDown = next('down', start.down, down);
  const images = await readImages(
    ctx,
    clientId,
    batchId,
    shown.map((s) => s.key.img_fprint),
  );
  const cursor = nextUp.ended && nextDown.ended ? undefined : ctx.cursors.encode(toCursorKey(nextUp, nextDown), scope);
  return { items: images.filter((i) => i.review === undefined && i.status === 'success'), ...(cursor ? { cursor } : {}) };
}

/** The images of one batch by fingerprint, consistent, in the order asked; those gone or expired are left out. */
export async function readImages(ctx: StoreContext, clientId: string, batchId: string, fprints: string[]): Promise<Image[]> {
  if (fprints.length === 0) return [];
  const nowS = nowSeconds((ctx.now ?? Date.now)());
  const found = new Map<string, Image>();
  for (const request of batchGetRequests(ctx.tableName, clientId, batchId, fprints)) {
    const keys = request.RequestItems?.[ctx.tableName];
    if (!keys) continue;
    for (const item of await batchGetAll<Partial<ImageItem>>(ctx, { [ctx.tableName]: { ...keys, ConsistentRead: true } })) {
      if (isVisibleImage(item, nowS)) found.set(item.img_fprint, toImage(item));
    }
  }
  return fprints.flatMap((f) => found.get(f) ?? []);
}

/** A reviewed image as agreement sees it: its cat confidence (from the index key) and the person's verdict. */
export interface ReviewedVerdict {
  fprint: string;
  catConfidence: number;
  review: Review;
}

/** A page of the batch's reviewed images from the batch-review index (their key range R#). */
export function reviewedRequest(tableName: string, clientId: string, batchId: string, after?: Record<string, unknown>): QueryCommandInput {
  return {
    TableName: tableName,
    IndexName: INDEX.batchReview,
    KeyConditionExpression: '#partition = :partition AND begins_with(#reviewKey, :reviewed)',
    ExpressionAttributeNames: imageNames('partition', 'reviewKey'),
    ExpressionAttributeValues: { ':partition': batchPartition(clientId, batchId), ':reviewed': REVIEW_DONE },
    ...(after ? { ExclusiveStartKey: after } : {}),
  };
}

/** Every reviewed image of the batch with its verdict: as many pages of the index as they fill (keys and verdicts). */
export async function reviewedVerdicts(ctx: StoreContext, clientId: string, batchId: string): Promise<ReviewedVerdict[]> {
  const out: ReviewedVerdict[] = [];
  let after: Record<string, unknown> | undefined;
  do {
    const page = await ctx.ddb.send(new QueryCommand(reviewedRequest(ctx.tableName, clientId, batchId, after)));
    for (const item of (page.Items ?? []) as { img_fprint: string; review_key: string; review?: StoredReview }[]) {
      if (item.review)
        out.push({ fprint: item.img_fprint, catConfidence: confidenceOfReviewKey(item.review_key), review: fromStoredReview(item.review) });
    }
    after = page.LastEvaluatedKey;
  } while (after);
  return out;
}
