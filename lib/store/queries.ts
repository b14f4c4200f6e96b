// Reads for every access pattern of DESIGN §2. Each pattern builds its request in a pure function (unit-tested
// without network) and sends it in another. Every read filters expired items (ttl) itself, since DynamoDB deletes
// them only within days, and list reads page with an opaque cursor (lib/store/cursor.ts).
import {
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  GetCommand,
  QueryCommand,
  type BatchGetCommandInput,
  type DynamoDBDocumentClient,
  type GetCommandInput,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CursorCodec, StartKey } from './cursor';
import { QueryError, StoreThrottledError } from './errors';
import { BATCH_SK, INDEX, batchKey, imageKey, nowSeconds, statusTs, type BatchItem, type ImageItem, type OpStatus } from './schema';

export { QueryError, StoreThrottledError };

/** What a listing shows of an image: the attributes every index projects (resources/table.yml). */
export type ImageListing = Pick<ImageItem, 'batch_id' | 'img_fprint' | 'op_status' | 'ttl'> &
  Partial<
    Pick<
      ImageItem,
      | 'client_id'
      | 'file_name'
      | 'rek_iscat'
      | 'labels'
      | 'upload_ts'
      | 'received_ts'
      | 'rek_ts'
      | 'dup_count'
      | 'err_code'
      | 'err_msg'
    >
  >;

/** What the batch-logs index holds of an image. */
export type LogListing = Pick<ImageItem, 'batch_id' | 'img_fprint' | 'ttl'> &
  Partial<Pick<ImageItem, 'file_name' | 'op_status' | 'logs' | 'log_ts'>>;

export const LISTING_ATTRIBUTES = [
  'batch_id',
  'img_fprint',
  'client_id',
  'file_name',
  'op_status',
  'rek_iscat',
  'labels',
  'upload_ts',
  'received_ts',
  'rek_ts',
  'ttl',
  'dup_count',
  'err_code',
  'err_msg',
] as const;

/** Upper bound of a time range in ms: statusTs pads upload_ts to 15 digits. */
const MAX_TS = 999_999_999_999_999;
/** Most keys one BatchGetItem takes. */
export const BATCH_GET_MAX_KEYS = 100;

export interface TimeRange {
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, inclusive. */
  to?: number;
}

/**
 * A Query without its page position: the request builders' output. `scope` is what a cursor is bound to (index,
 * partition, key condition, filters; not the clock), `keyAttributes` what makes up a LastEvaluatedKey on that index.
 */
export interface QueryPlan {
  pattern: string;
  scope: string;
  keyAttributes: readonly string[];
  input: Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey'>;
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
}

// ---------------------------------------------------------------------------------------------------------------
// Request builders (pure)

/** Collects a key condition, filters and their placeholders; attribute names always go through placeholders. */
class ExpressionBuilder {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private readonly key: string[] = [];
  private readonly filters: string[] = [];

  name(attribute: string): string {
    const placeholder = `#${attribute}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(placeholder: string, value: unknown): string {
    this.values[placeholder] = value;
    return placeholder;
  }

  keyCondition(expression: string): this {
    this.key.push(expression);
    return this;
  }

  filter(expression: string): this {
    this.filters.push(expression);
    return this;
  }

  /** A number range on `attribute` as a key condition or filter; nothing when the range is open on both ends. */
  range(attribute: string, range: TimeRange): string | undefined {
    if (range.from === undefined && range.to === undefined) return undefined;
    const a = this.name(attribute);
    if (range.from !== undefined && range.to !== undefined) {
      return `${a} BETWEEN ${this.value(':from', range.from)} AND ${this.value(':to', range.to)}`;
    }
    if (range.from !== undefined) return `${a} >= ${this.value(':from', range.from)}`;
    return `${a} <= ${this.value(':to', range.to)}`;
  }

  /** The plan; `now` (epoch s) becomes the ttl filter and stays out of the scope. */
  build(
    pattern: string,
    tableName: string,
    index: string | undefined,
    keyAttributes: readonly string[],
    nowS: number,
    projection?: readonly string[],
  ): QueryPlan {
    const scope = JSON.stringify([pattern, index ?? '', this.key, this.filters, this.values]);
    const filter = [...this.filters, `${this.name('ttl')} > :now`].join(' AND ');
    const projectionExpression = projection?.map((a) => this.name(a)).join(', ');
    const input: QueryPlan['input'] = {
      TableName: tableName,
      ...(index ? { IndexName: index } : {}),
      KeyConditionExpression: this.key.join(' AND '),
      FilterExpression: filter,
      ExpressionAttributeNames: { ...this.names },
      ExpressionAttributeValues: { ...this.values, ':now': nowS },
      ...(projectionExpression ? { ProjectionExpression: projectionExpression } : {}),
    };
    return { pattern, scope, keyAttributes, input };
  }
}

const TABLE_KEY = ['batch_id', 'img_fprint'] as const;
const lsiKey = (sortKey: string) => [...TABLE_KEY, sortKey] as const;
const gsiKey = (sortKey: string) => ['client_id', sortKey, ...TABLE_KEY] as const;

export interface BatchQuery {
  tableName: string;
  batchId: string;
  /** Owner of the batch: items of any other client are filtered out (defence in depth; the API checks the batch). */
  clientId: string;
  /** Epoch s. */
  nowS: number;
}

function batchExpression(q: BatchQuery): ExpressionBuilder {
  const e = new ExpressionBuilder();
  e.keyCondition(`${e.name('batch_id')} = ${e.value(':batch', q.batchId)}`);
  e.filter(`${e.name('client_id')} = ${e.value(':client', q.clientId)}`);
  return e;
}

/** 1: a batch's results, by fingerprint. The key condition leaves out the summary item (#BATCH sorts first). */
export function batchResultsRequest(q: BatchQuery): QueryPlan {
  const e = batchExpression(q);
  e.keyCondition(`${e.name('img_fprint')} > ${e.value(':summary', BATCH_SK)}`);
  return e.build('batch-results', q.tableName, undefined, TABLE_KEY, q.nowS, LISTING_ATTRIBUTES);
}

function statusCondition(e: ExpressionBuilder, status: OpStatus, range: TimeRange): string {
  const a = e.name('status_ts');
  if (range.from === undefined && range.to === undefined) {
    return `begins_with(${a}, ${e.value(':status', `${status}#`)})`;
  }
  return `${a} BETWEEN ${e.value(':lo', statusTs(status, range.from ?? 0))} AND ${e.value(':hi', statusTs(status, range.to ?? MAX_TS))}`;
}

/** 2: a batch by status (and optionally a time range), LSI batch-status. */
export function batchByStatusRequest(q: BatchQuery & { status: OpStatus } & TimeRange): QueryPlan {
  const e = batchExpression(q);
  e.keyCondition(statusCondition(e, q.status, q));
  return e.build('batch-status', q.tableName, INDEX.batchStatus, lsiKey('status_ts'), q.nowS);
}

/** 7: a batch in a time range, LSI batch-time. */
export function batchTimeRangeRequest(q: BatchQuery & TimeRange): QueryPlan {
  const e = batchExpression(q);
  const range = e.range('upload_ts', q);
  if (range) e.keyCondition(range);
  return e.build('batch-time', q.tableName, INDEX.batchTime, lsiKey('upload_ts'), q.nowS);
}

/** 4: a batch's debug logs, sparse LSI batch-logs (it projects no client_id: the caller checks the batch's owner). */
export function batchLogsRequest(q: Omit<BatchQuery, 'clientId'> & TimeRange): QueryPlan {
  const e = new ExpressionBuilder();
  e.keyCondition(`${e.name('batch_id')} = ${e.value(':batch', q.batchId)}`);
  const range = e.range('log_ts', q);
  if (range) e.keyCondition(range);
  return e.build('batch-logs', q.tableName, INDEX.batchLogs, lsiKey('log_ts'), q.nowS);
}

export interface BatchImagesFilter extends TimeRange {
  status?: OpStatus;
}

/**
 * 1 filtered: images not yet classified. They get their status and time index keys only with their result, so
 * the batch's own partition is read, and the time range applies to when they were received.
 */
export function batchInProgressRequest(q: BatchQuery & { status: OpStatus } & TimeRange): QueryPlan {
  const e = batchExpression(q);
  e.keyCondition(`${e.name('img_fprint')} > ${e.value(':summary', BATCH_SK)}`);
  e.filter(`${e.name('op_status')} = ${e.value(':status', q.status)}`);
  const range = e.range('received_ts', q);
  if (range) e.filter(range);
  return e.build('batch-in-progress', q.tableName, undefined, TABLE_KEY, q.nowS, LISTING_ATTRIBUTES);
}

const IN_PROGRESS: ReadonlySet<OpStatus> = new Set(['pending', 'processing']);

/** GET /v1/batches/{id}/images: pending/processing → 1 filtered, another status → 2, a time range alone → 7, nothing → 1. */
export function batchImagesRequest(q: BatchQuery & BatchImagesFilter): QueryPlan {
  if (q.status && IN_PROGRESS.has(q.status)) return batchInProgressRequest({ ...q, status: q.status });
  if (q.status) return batchByStatusRequest({ ...q, status: q.status });
  if (q.from !== undefined || q.to !== undefined) return batchTimeRangeRequest(q);
  return batchResultsRequest(q);
}

export interface ClientQuery {
  tableName: string;
  clientId: string;
  nowS: number;
}

export interface ClientImagesFilter extends TimeRange {
  status?: OpStatus;
  cat?: boolean;
  fprint?: string;
}

function clientExpression(q: ClientQuery): ExpressionBuilder {
  const e = new ExpressionBuilder();
  e.keyCondition(`${e.name('client_id')} = ${e.value(':client', q.clientId)}`);
  return e;
}

function addFilters(e: ExpressionBuilder, f: ClientImagesFilter, skip: { status?: boolean; cat?: boolean; time?: boolean }) {
  if (f.status && !skip.status) e.filter(`${e.name('op_status')} = ${e.value(':status', f.status)}`);
  if (f.cat !== undefined && !skip.cat) e.filter(`${e.name('rek_iscat')} = ${e.value(':cat', f.cat)}`);
  if (!skip.time) {
    const range = e.range('upload_ts', f);
    if (range) e.filter(range);
  }
}

/** 3: a client's images by status (optionally in a time range), GSI client-status. */
export function clientByStatusRequest(q: ClientQuery & ClientImagesFilter & { status: OpStatus }): QueryPlan {
  const e = clientExpression(q);
  e.keyCondition(statusCondition(e, q.status, q));
  addFilters(e, q, { status: true, time: true });
  return e.build('client-status', q.tableName, INDEX.clientStatus, gsiKey('status_ts'), q.nowS);
}

/** 5b: one image (fingerprint) across the client's batches, GSI client-fprint. */
export function imageAcrossBatchesRequest(q: ClientQuery & ClientImagesFilter & { fprint: string }): QueryPlan {
  const e = clientExpression(q);
  e.keyCondition(`${e.name('img_fprint')} = ${e.value(':fprint', q.fprint)}`);
  addFilters(e, q, {});
  return e.build('client-fprint', q.tableName, INDEX.clientFprint, gsiKey('img_fprint'), q.nowS);
}

/** 8: a client's images in a time range (or all of them, oldest first), GSI client-time. */
export function clientTimeRangeRequest(q: ClientQuery & ClientImagesFilter): QueryPlan {
  const e = clientExpression(q);
  const range = e.range('upload_ts', q);
  if (range) e.keyCondition(range);
  addFilters(e, q, { time: true });
  return e.build('client-time', q.tableName, INDEX.clientTime, gsiKey('upload_ts'), q.nowS);
}

/** 9: a client's cats in a time range, sparse GSI client-cats (cat_ts = upload_ts, written only for cats). */
export function clientCatsRequest(q: ClientQuery & ClientImagesFilter): QueryPlan {
  const e = clientExpression(q);
  const range = e.range('cat_ts', q);
  if (range) e.keyCondition(range);
  addFilters(e, q, { cat: true, time: true });
  return e.build('client-cats', q.tableName, INDEX.clientCats, gsiKey('cat_ts'), q.nowS);
}

/** GET /v1/images: fprint → 5b, cat=true → 9, status → 3, otherwise 8; the other filters become filter expressions. */
export function clientImagesRequest(q: ClientQuery & ClientImagesFilter): QueryPlan {
  if (q.fprint !== undefined) return imageAcrossBatchesRequest({ ...q, fprint: q.fprint });
  if (q.cat === true) return clientCatsRequest(q);
  if (q.status) return clientByStatusRequest({ ...q, status: q.status });
  return clientTimeRangeRequest(q);
}

/** The Query for one page: `limit` items evaluated from `startKey` on. */
export function pageRequest(plan: QueryPlan, limit: number, startKey?: StartKey): QueryCommandInput {
  return { ...plan.input, Limit: limit, ...(startKey ? { ExclusiveStartKey: startKey } : {}) };
}

/** 5: one image, GetItem. */
export function imageRequest(tableName: string, batchId: string, fprint: string): GetCommandInput {
  return {
    TableName: tableName,
    Key: imageKey(batchId, fprint),
    ProjectionExpression: LISTING_ATTRIBUTES.map((a) => `#${a}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(LISTING_ATTRIBUTES.map((a) => [`#${a}`, a])),
  };
}

/** The batch summary, GetItem. */
export function batchSummaryRequest(tableName: string, batchId: string): GetCommandInput {
  return { TableName: tableName, Key: batchKey(batchId) };
}

/** 6: BatchGetItem requests of at most 100 distinct keys each; the summary key is never asked for. */
export function batchGetRequests(tableName: string, batchId: string, fprints: readonly string[]): BatchGetCommandInput[] {
  const distinct = [...new Set(fprints)].filter((f) => f !== BATCH_SK);
  const requests: BatchGetCommandInput[] = [];
  for (let i = 0; i < distinct.length; i += BATCH_GET_MAX_KEYS) {
    const keys = distinct.slice(i, i + BATCH_GET_MAX_KEYS).map((f) => imageKey(batchId, f));
    const { ProjectionExpression, ExpressionAttributeNames } = imageRequest(tableName, batchId, '');
    requests.push({ RequestItems: { [tableName]: { Keys: keys, ProjectionExpression, ExpressionAttributeNames } } });
  }
  return requests;
}

/** An item read by key is shown only when it is an image of this client and has not expired. */
export function isVisibleImage(item: Partial<ImageListing> | undefined, clientId: string, nowS: number): item is ImageListing {
  return (
    item !== undefined &&
    item.img_fprint !== BATCH_SK &&
    item.client_id === clientId &&
    typeof item.ttl === 'number' &&
    item.ttl > nowS
  );
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

// ---------------------------------------------------------------------------------------------------------------
// Senders

const nowMs = (ctx: StoreContext) => (ctx.now ?? Date.now)();

function translate(err: unknown): never {
  if (
    err instanceof ProvisionedThroughputExceededException ||
    err instanceof ThrottlingException ||
    err instanceof RequestLimitExceeded
  ) {
    throw new StoreThrottledError('the table is throttling reads', { cause: err });
  }
  throw err;
}

/** Most items one Query round evaluates when a filter leaves pages short. */
const MAX_ROUND_LIMIT = 1000;

/**
 * Runs a plan for one page of `limit` items. A filter applied after Limit can leave DynamoDB pages short or empty,
 * so this keeps reading until it holds one item more than the page (proof that a next page exists) or reaches the
 * end. The next cursor resumes after the page's last item: a page with a cursor is never followed by an empty one.
 * A cursor issued for another plan throws CursorError.
 */
export async function runQuery<T extends Record<string, unknown>>(
  ctx: StoreContext,
  plan: QueryPlan,
  page: PageRequest,
): Promise<Page<T>> {
  let startKey = page.cursor === undefined ? undefined : ctx.cursors.decode(page.cursor, plan.scope);
  const want = page.limit + 1;
  const items: T[] = [];
  let roundLimit = want;
  do {
    const input = pageRequest(plan, roundLimit, startKey);
    const out = await ctx.ddb.send(new QueryCommand(input)).catch(translate);
    items.push(...((out.Items ?? []) as T[]));
    startKey = out.LastEvaluatedKey as StartKey | undefined;
    // Fewer matches than evaluated: widen the next round rather than creep through the filter.
    roundLimit = Math.min(MAX_ROUND_LIMIT, Math.max(want - items.length, roundLimit * 2));
  } while (items.length < want && startKey);

  if (items.length <= page.limit) return { items };
  const shown = items.slice(0, page.limit);
  const last = shown[shown.length - 1] as T;
  return { items: shown, cursor: ctx.cursors.encode(startKeyAfter(plan, last), plan.scope) };
}

const storeNowS = (ctx: StoreContext) => nowSeconds(nowMs(ctx));

/** 1: a batch's results. */
export const queryBatchResults = (ctx: StoreContext, batchId: string, clientId: string, page: PageRequest) =>
  runQuery<ImageListing>(ctx, batchResultsRequest({ tableName: ctx.tableName, batchId, clientId, nowS: storeNowS(ctx) }), page);

/** 2: a batch by status. */
export const queryBatchByStatus = (
  ctx: StoreContext,
  batchId: string,
  clientId: string,
  status: OpStatus,
  range: TimeRange,
  page: PageRequest,
) =>
  runQuery<ImageListing>(
    ctx,
    batchByStatusRequest({ tableName: ctx.tableName, batchId, clientId, nowS: storeNowS(ctx), status, ...range }),
    page,
  );

/** 7: a batch in a time range. */
export const queryBatchTimeRange = (ctx: StoreContext, batchId: string, clientId: string, range: TimeRange, page: PageRequest) =>
  runQuery<ImageListing>(
    ctx,
    batchTimeRangeRequest({ tableName: ctx.tableName, batchId, clientId, nowS: storeNowS(ctx), ...range }),
    page,
  );

/** 1, 2 or 7 as the filter asks. */
export const queryBatchImages = (
  ctx: StoreContext,
  batchId: string,
  clientId: string,
  filter: BatchImagesFilter,
  page: PageRequest,
) =>
  runQuery<ImageListing>(
    ctx,
    batchImagesRequest({ tableName: ctx.tableName, batchId, clientId, nowS: storeNowS(ctx), ...filter }),
    page,
  );

/** 4: a batch's debug logs. */
export const queryBatchLogs = (ctx: StoreContext, batchId: string, range: TimeRange, page: PageRequest) =>
  runQuery<LogListing>(ctx, batchLogsRequest({ tableName: ctx.tableName, batchId, nowS: storeNowS(ctx), ...range }), page);

/** 3: a client's images by status. */
export const queryClientByStatus = (
  ctx: StoreContext,
  clientId: string,
  status: OpStatus,
  filter: Omit<ClientImagesFilter, 'status'>,
  page: PageRequest,
) =>
  runQuery<ImageListing>(
    ctx,
    clientByStatusRequest({ tableName: ctx.tableName, clientId, nowS: storeNowS(ctx), ...filter, status }),
    page,
  );

/** 5b: one image across the client's batches. */
export const queryImageAcrossBatches = (
  ctx: StoreContext,
  clientId: string,
  fprint: string,
  filter: Omit<ClientImagesFilter, 'fprint'>,
  page: PageRequest,
) =>
  runQuery<ImageListing>(
    ctx,
    imageAcrossBatchesRequest({ tableName: ctx.tableName, clientId, nowS: storeNowS(ctx), ...filter, fprint }),
    page,
  );

/** 8: a client's images in a time range. */
export const queryClientTimeRange = (ctx: StoreContext, clientId: string, filter: ClientImagesFilter, page: PageRequest) =>
  runQuery<ImageListing>(ctx, clientTimeRangeRequest({ tableName: ctx.tableName, clientId, nowS: storeNowS(ctx), ...filter }), page);

/** 9: a client's cats in a time range. */
export const queryClientCats = (ctx: StoreContext, clientId: string, filter: ClientImagesFilter, page: PageRequest) =>
  runQuery<ImageListing>(ctx, clientCatsRequest({ tableName: ctx.tableName, clientId, nowS: storeNowS(ctx), ...filter }), page);

/** 3, 5b, 8 or 9 as the filter asks. */
export const queryClientImages = (ctx: StoreContext, clientId: string, filter: ClientImagesFilter, page: PageRequest) =>
  runQuery<ImageListing>(ctx, clientImagesRequest({ tableName: ctx.tableName, clientId, nowS: storeNowS(ctx), ...filter }), page);

/** 5: one image of this client, or undefined when missing, expired or another client's. */
export async function getImage(
  ctx: StoreContext,
  batchId: string,
  fprint: string,
  clientId: string,
): Promise<ImageListing | undefined> {
  if (fprint === BATCH_SK) return undefined;
  const out = await ctx.ddb.send(new GetCommand(imageRequest(ctx.tableName, batchId, fprint))).catch(translate);
  const item = out.Item as Partial<ImageListing> | undefined;
  return isVisibleImage(item, clientId, storeNowS(ctx)) ? item : undefined;
}

/** The batch summary, or undefined when missing or expired. */
export async function getBatchSummary(ctx: StoreContext, batchId: string): Promise<BatchItem | undefined> {
  const out = await ctx.ddb.send(new GetCommand(batchSummaryRequest(ctx.tableName, batchId))).catch(translate);
  const item = out.Item as BatchItem | undefined;
  if (!item || typeof item.ttl !== 'number' || item.ttl <= storeNowS(ctx)) return undefined;
  return item;
}

export interface RetryOptions {
  /** Rounds of UnprocessedKeys before giving up with StoreThrottledError. */
  attempts: number;
  /** First backoff ceiling in ms; doubles each round (full jitter). */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 8, baseDelayMs: 25, maxDelayMs: 2000 };

/** Full-jitter exponential backoff: a random wait below min(max, base·2^round). */
export const backoffDelay = (round: number, opts: RetryOptions, random: () => number = Math.random): number =>
  Math.floor(random() * Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** round));

/**
 * 6: many images of one batch by fingerprint, in the order asked; missing, expired and other clients' items are
 * left out. UnprocessedKeys are retried with jittered backoff.
 */
export async function getImages(
  ctx: StoreContext,
  batchId: string,
  fprints: readonly string[],
  clientId: string,
  retry: RetryOptions = DEFAULT_RETRY,
): Promise<ImageListing[]> {
  const found = new Map<string, ImageListing>();
  const nowS = storeNowS(ctx);
  for (const request of batchGetRequests(ctx.tableName, batchId, fprints)) {
    let pending: BatchGetCommandInput['RequestItems'] | undefined = request.RequestItems;
    for (let round = 0; pending && Object.keys(pending).length > 0; round++) {
      if (round >= retry.attempts) throw new StoreThrottledError('BatchGetItem left keys unprocessed after retries');
      if (round > 0) await sleep(backoffDelay(round - 1, retry));
      const out = await ctx.ddb.send(new BatchGetCommand({ RequestItems: pending })).catch(translate);
      for (const item of (out.Responses?.[ctx.tableName] ?? []) as Partial<ImageListing>[]) {
        if (isVisibleImage(item, clientId, nowS)) found.set(item.img_fprint, item);
      }
      pending = out.UnprocessedKeys;
    }
  }
  return [...new Set(fprints)].flatMap((f) => {
    const item = found.get(f);
    return item ? [item] : [];
  });
}
