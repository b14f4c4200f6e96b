// Runs a read access pattern's plan (each entity's listing builds its plan beside the function that runs it: batch/
// images.ts, client/images.ts, review/, audit/) a page at a time, and BatchGetItem to the end. Every read filters
// expired items (ttl) itself, since DynamoDB deletes them only within days, and list reads page with
// an opaque, tamper-evident cursor (cursor.ts) and are filled up to their limit even when a filter leaves pages short.

import { setTimeout as sleep } from 'node:timers/promises';
import { ProvisionedThroughputExceededException, RequestLimitExceeded, ThrottlingException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  type BatchGetCommandInput,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { type BackoffPolicy, backoffDelay } from '../../backoff';
import type { CursorCodec, StartKey } from './cursor';
import { QueryError, StoreThrottledError } from './errors';
import type { QueryPlan } from './expressions';
import { BATCH_SK, type ImageItem, nowSeconds, splitPartition } from './schema';

/** Most keys one BatchGetItem takes. */
export const BATCH_GET_MAX_KEYS = 100;

/** BatchGetItem requests reading these attributes of these items by key, at most BATCH_GET_MAX_KEYS keys each. */
export function byKeyRequests(
  tableName: string,
  keys: readonly { batch_id: string; img_fprint: string }[],
  projection: readonly string[],
): BatchGetCommandInput[] {
  const requests: BatchGetCommandInput[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_MAX_KEYS) {
    requests.push({
      RequestItems: {
        [tableName]: {
          Keys: keys.slice(i, i + BATCH_GET_MAX_KEYS).map((k) => ({ batch_id: k.batch_id, img_fprint: k.img_fprint })),
          ProjectionExpression: projection.map((a) => `#${a}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(projection.map((a) => [`#${a}`, a])),
        },
      },
    });
  }
  return requests;
}

/**
 * The batches a keys-only index of summaries lists (callbacks due, live batches, running re-detections), page by
 * page: `query` builds the Query from where the last page ended.
 */
export async function* batchKeysOf(
  ddb: DynamoDBDocumentClient,
  query: (startKey: Record<string, unknown> | undefined) => QueryCommandInput,
): AsyncGenerator<{ clientId: string; batchId: string }> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(new QueryCommand(query(start)));
    for (const key of page.Items ?? []) yield splitPartition(String(key.batch_id));
    start = page.LastEvaluatedKey;
  } while (start);
}

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

export async function fillPage<T extends object>(
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
