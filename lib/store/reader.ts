// Runs the read access patterns (access-patterns.ts, client-patterns.ts) and answers in domain terms (lib/domain.ts).
// Every read filters expired items (ttl) itself, since DynamoDB deletes them only within days, and list reads page with
// an opaque, tamper-evident cursor (cursor.ts) and are filled up to their limit even when a filter leaves pages short.
import { ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  GetCommand,
  QueryCommand,
  type BatchGetCommandInput,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay, type BackoffPolicy } from '../backoff';
import {
  batchGetRequests,
  batchImagesRequest,
  batchLogsRequest,
  batchResultsRequest,
  batchWithResultsRequest,
  batchSummariesRequest,
  batchSummaryRequest,
  batchVisibilityRequest,
  imageRequest,
  labelMatcher,
  byCaptureTime,
  capturedItemsRequests,
  matchesBatchFilter,
  type BatchImagesFilter,
} from './access-patterns';
import { toBatch, toImage } from './attributes';
import { clientBatchesRequest, clientImagesRequest, type ClientBatchesFilter, type ClientImagesFilter } from './client-patterns';
import type { CursorCodec, StartKey } from './cursor';
import { QueryError, StoreThrottledError } from './errors';
import type { QueryPlan, TimeRange } from './expressions';
import { isVisibleBatch, type Batch } from '../domain/batch';
import { type Image } from '../domain/image';
import { BATCH_SK, nowSeconds, type BatchItem, type ImageItem } from './schema';

export interface Page<T> {
  items: T[];
  /** Absent on the last page. */
  cursor?: string;
}

export interface PageRequest {
  limit: number;
  cursor?: string;
}

export interface StoreContext {
  ddb: DynamoDBDocumentClient;
  tableName: string;
  cursors: CursorCodec;
  /** Epoch ms; the clock that decides what has expired. */
  now?: () => number;
  /** Most stored items one list request examines (MAX_EXAMINED unless a test sets fewer). */
  maxExamined?: number;
}

/** The Query for one page: `limit` items evaluated from `startKey` on. */
export function pageRequest(plan: QueryPlan, limit: number, startKey?: StartKey): QueryCommandInput {
  return { ...plan.input, Limit: limit, ...(startKey ? { ExclusiveStartKey: startKey } : {}) };
}

/** An image item read by key is shown only when it is an image (not the summary) and has not expired. */
export function isVisibleImage(item: Partial<ImageItem> | undefined, nowS: number): item is ImageItem {
  return item !== undefined && item.img_fprint !== BATCH_SK && typeof item.ttl === 'number' && item.ttl > nowS;
}

/** The LastEvaluatedKey that resumes a Query right after `item`. */
export function startKeyAfter(plan: QueryPlan, item: Record<string, unknown>): StartKey {
  const key: StartKey = {};
  for (const attribute of plan.keyAttributes) {
    const value = item[attribute];
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new QueryError(`item lacks key attribute ${attribute} of ${plan.pattern}`);
    }
    key[attribute] = value;
  }
  return key;
}

const nowMs = (ctx: StoreContext) => (ctx.now ?? Date.now)();
export const storeNowS = (ctx: StoreContext) => nowSeconds(nowMs(ctx));

export function translate(err: unknown): never {
  if (err instanceof ProvisionedThroughputExceededException || err instanceof ThrottlingException || err instanceof RequestLimitExceeded) {
    throw new StoreThrottledError('the table is throttling reads', { cause: err });
  }
  throw err;
}

/** Most items one Query round evaluates when a filter leaves pages short. */
const MAX_ROUND_LIMIT = 1000;

/**
 * Most stored items one list request examines (docs/api.md, "Pages"): ten pages of the largest limit, one Query round.
 * A filter that matches little (a rare label, a capture-time range, expired items) answers a short or empty page with a
 * cursor once this many were read, rather than read a whole batch for one page.
 */
export const MAX_EXAMINED = 1000;

/**
 * Runs a plan for one page of `limit` stored items. A filter applied after Limit can leave DynamoDB pages short or
 * empty, so this keeps reading until it holds one item more than the page (proof that a next page exists), reaches
 * the end, or has examined `maxExamined` items. A full page's cursor resumes after its last item; a page cut short by
 * the bound (fewer items, even none) has a cursor that resumes right after the last item examined.
 * A cursor issued for another plan throws CursorError.
 */
export async function runQuery<T extends object>(
  ctx: StoreContext,
  plan: QueryPlan,
  page: PageRequest,
  keep?: KeepFilter<T>,
): Promise<Page<T>> {
  const startKey = page.cursor === undefined ? undefined : ctx.cursors.decode(page.cursor, plan.scope);
  return fillPage<T>(ctx, plan, page.limit, { items: [], startKey, ended: false }, keep);
}

/** What a read keeps of each Query round's items, beyond the Query's own filter (one that needs other items read). */
export type KeepFilter<T> = (items: T[]) => Promise<T[]>;

/** What the Query rounds so far read: their items, and where the next round starts (ended: nothing is left). */
interface Read<T> {
  items: T[];
  startKey: StartKey | undefined;
  ended: boolean;
  /** Stored items the rounds so far examined (the items read, when not given). */
  examined?: number;
}

async function fillPage<T extends object>(
  ctx: StoreContext,
  plan: QueryPlan,
  limit: number,
  read: Read<T>,
  keep?: KeepFilter<T>,
): Promise<Page<T>> {
  const want = limit + 1;
  const maxExamined = Math.max(want, ctx.maxExamined ?? MAX_EXAMINED);
  const items = [...read.items];
  let { startKey } = read;
  let ended = read.ended;
  let examined = read.examined ?? read.items.length;
  let roundLimit = want;
  while (items.length < want && !ended && examined < maxExamined) {
    const out = await ctx.ddb
      .send(new QueryCommand(pageRequest(plan, Math.min(roundLimit, maxExamined - examined), startKey)))
      .catch(translate);
    const round = (out.Items ?? []) as T[];
    examined += out.ScannedCount ?? round.length;
    items.push(...(keep ? await keep(round) : round));
    startKey = out.LastEvaluatedKey as StartKey | undefined;
    ended = !startKey;
    // Fewer matches than evaluated: widen the next round rather than creep through the filter.
    roundLimit = Math.min(MAX_ROUND_LIMIT, Math.max(want - items.length, roundLimit * 2));
  }

  // Cut short by the bound: what matched so far, and a cursor right after the last item examined.
  if (items.length <= limit && !ended && startKey) return { items, cursor: ctx.cursors.encode(startKey, plan.scope) };
  if (items.length <= limit) return { items };
  const shown = items.slice(0, limit);
  const last = shown[shown.length - 1] as Record<string, unknown>;
  return { items: shown, cursor: ctx.cursors.encode(startKeyAfter(plan, last), plan.scope) };
}

const images = (page: Page<ImageItem>): Page<Image> => ({ ...page, items: page.items.map(toImage) });

/** 1, 2 or 7 as the filter asks. */
export async function queryBatchImages(
  ctx: StoreContext,
  clientId: string,
  batchId: string,
  filter: BatchImagesFilter,
  page: PageRequest,
): Promise<Page<Image>> {
  const plan = batchImagesRequest({ tableName: ctx.tableName, clientId, batchId, nowS: storeNowS(ctx), ...filter });
  if (byCaptureTime(filter)) return images(await runQuery<ImageItem>(ctx, plan, page, (keys) => capturedItems(ctx, keys, filter)));
  const matches = labelMatcher(filter);
  return images(await runQuery<ImageItem>(ctx, plan, page, matches && (async (items) => items.filter(matches))));
}

/**
 * A batch's images as GET /v1/batches/{id}/images lists them, or undefined when the batch is missing, expired or being
 * erased (answered as missing). A first page of the unfiltered listing reads the summary in the same Query as the
 * images (it sorts first in the partition); any other page reads the summary first, then the images. Either way the
 * summary is read with the page, never cached: a batch marked for erasure is gone at once.
 */
export async function queryVisibleBatchImages(
  ctx: StoreContext,
  clientId: string,
  batchId: string,
  filter: BatchImagesFilter,
  page: PageRequest,
): Promise<Page<Image> | undefined> {
  const unfiltered = Object.values(filter).every((value) => value === undefined);
  if (!unfiltered || page.cursor !== undefined) {
    if (!(await getBatch(ctx, clientId, batchId))) return undefined;
    return queryBatchImages(ctx, clientId, batchId, filter, page);
  }
  const nowS = storeNowS(ctx);
  const q = { tableName: ctx.tableName, clientId, batchId, nowS };
  // The summary, then one page and one item more (proof of a next page).
  const out = await ctx.ddb.send(new QueryCommand(pageRequest(batchWithResultsRequest(q), page.limit + 2))).catch(translate);
  const [summary, ...items] = (out.Items ?? []) as Partial<BatchItem & ImageItem>[];
  if (summary?.img_fprint !== BATCH_SK || !isVisibleBatch(toBatch(summary as BatchItem), nowS)) return undefined;
  const startKey = out.LastEvaluatedKey as StartKey | undefined;
  // Later rounds (a ttl filter left the page short) and the cursor are those of the listing without its summary.
  return images(await fillPage(ctx, batchResultsRequest(q), page.limit, { items: items as ImageItem[], startKey, ended: !startKey }));
}

/** A capture-time page's items read whole by key, in the index's order, the listing's filters applied. */
async function capturedItems(ctx: StoreContext, keys: ImageItem[], filter: BatchImagesFilter): Promise<ImageItem[]> {
  const nowS = storeNowS(ctx);
  const found = new Map<string, ImageItem>();
  for (const request of capturedItemsRequests(ctx.tableName, keys)) {
    for (const item of await batchGetAll<Partial<ImageItem>>(ctx, request.RequestItems, DEFAULT_RETRY)) {
      if (isVisibleImage(item, nowS) && matchesBatchFilter(item, filter)) found.set(item.img_fprint, item);
    }
  }
  return keys.flatMap((k) => found.get(k.img_fprint) ?? []);
}

/** 4: a batch's debug logs. */
export const queryBatchLogs = async (ctx: StoreContext, clientId: string, batchId: string, range: TimeRange, page: PageRequest) =>
  images(await runQuery(ctx, batchLogsRequest({ tableName: ctx.tableName, clientId, batchId, nowS: storeNowS(ctx), ...range }), page));

/**
 * 3, 5b, 8 or 9 as the filter asks, leaving out the images of batches that are gone for their client: being erased
 * (the erasure deletes images for a while after the mark, and the client indexes know nothing of it) or expired.
 */
export async function queryClientImages(
  ctx: StoreContext,
  clientId: string,
  filter: ClientImagesFilter,
  page: PageRequest,
): Promise<Page<Image>> {
  const plan = clientImagesRequest({ tableName: ctx.tableName, clientId, nowS: storeNowS(ctx), ...filter });
  return images(await runQuery<ImageItem>(ctx, plan, page, visibleBatchesFilter(ctx)));
}

/**
 * Keeps the items whose batch is visible (isVisibleBatch): the summaries of each round's batches not seen yet, read with
 * one BatchGetItem (a page of 100 images spans at most 100 batches), strongly consistent so that a batch marked a moment
 * ago is already gone. Answers are kept for the rest of the one read.
 */
export function visibleBatchesFilter(ctx: StoreContext): KeepFilter<ImageItem> {
  const visible = new Map<string, boolean>();
  const nowS = storeNowS(ctx);
  return async (items) => {
    const unknown = [...new Set(items.map((i) => i.batch_id))].filter((b) => !visible.has(b));
    if (unknown.length > 0) {
      for (const b of unknown) visible.set(b, false);
      const found = await batchGetAll<BatchItem>(ctx, batchVisibilityRequest(ctx.tableName, unknown).RequestItems);
      for (const item of found) visible.set(item.batch_id, isVisibleBatch(toBatch(item), nowS));
    }
    return items.filter((i) => visible.get(i.batch_id) === true);
  };
}

/** A client's batches, newest first: a page of the client-batches index, then the summaries themselves. */
export async function queryClientBatches(
  ctx: StoreContext,
  clientId: string,
  filter: ClientBatchesFilter,
  page: PageRequest,
): Promise<Page<Batch>> {
  const keys = await runQuery<BatchItem>(
    ctx,
    clientBatchesRequest({ tableName: ctx.tableName, clientId, nowS: storeNowS(ctx), ...filter }),
    page,
  );
  const found = new Map<string, Batch>();
  if (keys.items.length > 0) {
    const items = await batchGetAll<BatchItem>(ctx, batchSummariesRequest(ctx.tableName, keys.items).RequestItems);
    for (const item of items) found.set(item.batch_id, toBatch(item));
  }
  // A batch being erased is already gone for its client.
  return { ...keys, items: keys.items.flatMap((k) => found.get(k.batch_id) ?? []).filter((b) => !b.deleting) };
}

/** 5: one image, or undefined when missing or expired. */
export async function getImage(ctx: StoreContext, clientId: string, batchId: string, fprint: string): Promise<Image | undefined> {
  if (fprint === BATCH_SK) return undefined;
  const out = await ctx.ddb.send(new GetCommand(imageRequest(ctx.tableName, clientId, batchId, fprint))).catch(translate);
  const item = out.Item as Partial<ImageItem> | undefined;
  return isVisibleImage(item, storeNowS(ctx)) ? toImage(item) : undefined;
}

/** The batch's summary, or undefined when missing, expired or being erased. */
export async function getBatch(ctx: StoreContext, clientId: string, batchId: string): Promise<Batch | undefined> {
  const out = await ctx.ddb.send(new GetCommand(batchSummaryRequest(ctx.tableName, clientId, batchId))).catch(translate);
  const batch = out.Item ? toBatch(out.Item as BatchItem) : undefined;
  return isVisibleBatch(batch, storeNowS(ctx)) ? batch : undefined;
}

export interface RetryOptions extends BackoffPolicy {
  /** Rounds of UnprocessedKeys before giving up with StoreThrottledError. */
  attempts: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 8, baseDelayMs: 25, maxDelayMs: 2000 };

/** One BatchGetItem request to the end: UnprocessedKeys are retried with jittered backoff. */
export async function batchGetAll<T>(
  ctx: Pick<StoreContext, 'ddb' | 'tableName'>,
  request: BatchGetCommandInput['RequestItems'],
  retry: RetryOptions = DEFAULT_RETRY,
): Promise<T[]> {
  const found: T[] = [];
  let pending = request;
  for (let round = 0; pending && Object.keys(pending).length > 0; round++) {
    if (round >= retry.attempts) throw new StoreThrottledError('BatchGetItem left keys unprocessed after retries');
    if (round > 0) await sleep(backoffDelay(round - 1, retry));
    const out = await ctx.ddb.send(new BatchGetCommand({ RequestItems: pending })).catch(translate);
    found.push(...((out.Responses?.[ctx.tableName] ?? []) as T[]));
    pending = out.UnprocessedKeys;
  }
  return found;
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
