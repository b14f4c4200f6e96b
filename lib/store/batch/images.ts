// A batch's images as the API lists them: the plan of each read access pattern of docs/design.md §2 within one batch
// (numbers as in its table) as a pure function, unit-tested without a network, beside the function that runs it
// (through table/query.ts): 1, 2, 4, 7 and the capture-time listing (15).
import { type BatchGetCommandInput, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { isVisibleBatch } from '../../domain/batch';
import { IMAGE_STATUSES, type Image, type ImageStatus } from '../../domain/image';
import { imagesPage, toBatch } from '../table/attributes';
import type { StartKey } from '../table/cursor';
import { ExpressionBuilder, type QueryPlan, type TimeRange } from '../table/expressions';
import {
  batchGetAll,
  byKeyRequests,
  DEFAULT_RETRY,
  fillPage,
  isVisibleImage,
  type Page,
  type PageRequest,
  pageRequest,
  runQuery,
  type StoreContext,
  storeNowS,
  translate,
} from '../table/query';
import {
  BATCH_SK,
  type BatchItem,
  batchPartition,
  IMAGE_BY_KEY_ATTRIBUTES,
  type ImageItem,
  INDEX,
  LISTING_ATTRIBUTES,
  statusTs,
} from '../table/schema';
import { withUnprojected } from '../table/unprojected';
import { getBatch } from './read';

export { LISTING_ATTRIBUTES };

/** Upper bound of a time range in ms: statusTs pads upload_ts to 15 digits. */
const MAX_TS = 999_999_999_999_999;

/** Image statuses a batch listing can filter by: every one, since a claimed image is read from the batch's own partition. */
export const BATCH_IMAGE_STATUSES = IMAGE_STATUSES;

const TABLE_KEY = ['batch_id', 'img_fprint'] as const;
const lsiKey = (sortKey: string) => [...TABLE_KEY, sortKey] as const;
export const gsiKey = (hashKey: string, sortKey: string) => [hashKey, sortKey, ...TABLE_KEY] as const;

export interface BatchQuery {
  tableName: string;
  clientId: string;
  batchId: string;
  /** Epoch s. */
  nowS: number;
}

/**
 * What a listing read from the table shows: an image's fields as read by key, its model, the answer a re-detection
 * replaced and its audit draw included (docs/design.md §13: every answer names its model). The indexes cannot project
 * these three (docs/decisions/0016: their 100 projected attributes are spent).
 */
const TABLE_LISTING_ATTRIBUTES = IMAGE_BY_KEY_ATTRIBUTES;

function batchExpression(q: BatchQuery): ExpressionBuilder {
  const e = new ExpressionBuilder();
  e.keyIs('batch_id', '=', ':batch', batchPartition(q.clientId, q.batchId));
  return e;
}

/**
 * 1: a batch's results, by fingerprint. The key condition leaves out the summary item (#BATCH sorts first). Reads what
 * a listing shows, unless told other attributes (the export adds the duplicates' names).
 */
export function batchResultsRequest(
  q: BatchQuery & BatchImagesFilter,
  projection: readonly string[] = TABLE_LISTING_ATTRIBUTES,
): QueryPlan {
  const e = batchExpression(q);
  e.keyIs('img_fprint', '>', ':summary', BATCH_SK);
  addBatchFilters(e, q);
  return e.build({ pattern: 'batch-results', tableName: q.tableName, keyAttributes: TABLE_KEY, nowS: q.nowS, projection });
}

/**
 * 1 with the batch's summary in front: the whole partition from its start (#BATCH sorts first), reading of the summary
 * only what decides whether the batch is visible. A batch's first page and its existence in one Query.
 */
export function batchWithResultsRequest(q: BatchQuery): QueryPlan {
  const e = batchExpression(q);
  return e.build({
    pattern: 'batch-with-results',
    tableName: q.tableName,
    keyAttributes: TABLE_KEY,
    nowS: q.nowS,
    projection: [...TABLE_LISTING_ATTRIBUTES, 'deleting'],
  });
}

export function statusCondition(e: ExpressionBuilder, status: ImageStatus, range: TimeRange): string {
  const a = e.name('status_ts');
  if (range.from === undefined && range.to === undefined) {
    return `begins_with(${a}, ${e.value(':status', `${status}#`)})`;
  }
  return `${a} BETWEEN ${e.value(':lo', statusTs(status, range.from ?? 0))} AND ${e.value(':hi', statusTs(status, range.to ?? MAX_TS))}`;
}

/** 2: a batch by status (and optionally a time range), LSI batch-status. */
export function batchByStatusRequest(q: BatchQuery & BatchImagesFilter & { status: ImageStatus }): QueryPlan {
  const e = batchExpression(q);
  e.keyCondition(statusCondition(e, q.status, q));
  addBatchFilters(e, q);
  return e.build({
    pattern: 'batch-status',
    tableName: q.tableName,
    index: INDEX.batchStatus,
    keyAttributes: lsiKey('status_ts'),
    nowS: q.nowS,
  });
}

/** 7: a batch in a time range, LSI batch-time. */
export function batchTimeRangeRequest(q: BatchQuery & BatchImagesFilter): QueryPlan {
  const e = batchExpression(q);
  const range = e.range('upload_ts', q);
  if (range) e.keyCondition(range);
  addBatchFilters(e, q);
  return e.build({
    pattern: 'batch-time',
    tableName: q.tableName,
    index: INDEX.batchTime,
    keyAttributes: lsiKey('upload_ts'),
    nowS: q.nowS,
  });
}

/** 4: a batch's debug logs, sparse LSI batch-logs. */
export function batchLogsRequest(q: BatchQuery & TimeRange): QueryPlan {
  const e = batchExpression(q);
  const range = e.range('log_ts', q);
  if (range) e.keyCondition(range);
  return e.build({ pattern: 'batch-logs', tableName: q.tableName, index: INDEX.batchLogs, keyAttributes: lsiKey('log_ts'), nowS: q.nowS });
}

export interface BatchImagesFilter extends TimeRange {
  status?: (typeof BATCH_IMAGE_STATUSES)[number];
  /** true: cats; false: classified non-cats. A filter on whichever pattern the rest chose. */
  cat?: boolean;
  /** The name the image was uploaded as, or that of one of its duplicates (the first LIMITS.dupFiles kept). */
  fileName?: string;
  /** Any of these labels (case-insensitive) at or above minConfidence: matched on each page read (labelMatcher). */
  label?: string[];
  /** 0–100; with `label` (default: any stored confidence). */
  minConfidence?: number;
  /** Capture time's wall clock, `YYYY-MM-DDTHH:MM:SS`, inclusive: a key condition on batch-captured. */
  capturedFrom?: string;
  capturedTo?: string;
  /** `captured`: by capture time (batch-captured), only the images that have one. */
  order?: 'captured' | 'uncertain';
}

/**
 * Whether a stored image has any of the labels at or above the confidence. Labels live in a list of maps, which no
 * filter expression can compare case-insensitively, so the listing's pages are matched as they are read.
 */
export function labelMatcher(
  f: Pick<BatchImagesFilter, 'label' | 'minConfidence'>,
): ((item: { labels?: { name: string; confidence: number }[] }) => boolean) | undefined {
  if (!f.label?.length) return undefined;
  const names = new Set(f.label.map((l) => l.toLowerCase()));
  const min = f.minConfidence ?? 0;
  return (item) => (item.labels ?? []).some((l) => names.has(l.name.toLowerCase()) && l.confidence >= min);
}

/** The filters of a batch listing that no key condition serves: cat and fileName, on any of its patterns. */
function addBatchFilters(e: ExpressionBuilder, f: BatchImagesFilter): void {
  if (f.cat !== undefined) e.filter(`${e.name('rek_iscat')} = ${e.value(':cat', f.cat)}`);
  if (f.fileName !== undefined) {
    const name = e.value(':fileName', f.fileName);
    e.filter(`(${e.name('file_name')} = ${name} OR contains(${e.name('dup_files')}, ${name}))`);
  }
}

/**
 * 1 filtered: images still being classified. They get their status and time index keys only with their result, so
 * the batch's own partition is read, and the time range applies to when they were received.
 */
export function batchInProgressRequest(q: BatchQuery & BatchImagesFilter): QueryPlan {
  const e = batchExpression(q);
  e.keyIs('img_fprint', '>', ':summary', BATCH_SK);
  e.filter(`${e.name('op_status')} = ${e.value(':status', 'processing')}`);
  const range = e.range('received_ts', q);
  if (range) e.filter(range);
  addBatchFilters(e, q);
  return e.build({
    pattern: 'batch-in-progress',
    tableName: q.tableName,
    keyAttributes: TABLE_KEY,
    nowS: q.nowS,
    projection: TABLE_LISTING_ATTRIBUTES,
  });
}

/**
 * GET /v1/batches/{id}/images: processing → 1 filtered, another status → 2, a time range alone → 7, nothing → 1; cat and
 * fileName filter whichever was chosen.
 */
/**
 * A batch by capture time (sparse GSI batch-captured: cap_wall is written with a capture time only), optionally in a
 * range of wall-clock times, compared as the camera wrote them. The index projects keys and ttl only (the table's
 * quota of projected attributes is spent), so a page's items are then read by BatchGetItem (capturedItemsRequests)
 * and the other filters apply to them (matchesBatchFilter).
 */
export function batchCapturedRequest(q: BatchQuery & BatchImagesFilter): QueryPlan {
  const e = batchExpression(q);
  const a = q.capturedFrom !== undefined || q.capturedTo !== undefined ? e.name('cap_wall') : '';
  if (q.capturedFrom !== undefined && q.capturedTo !== undefined) {
    e.keyCondition(`${a} BETWEEN ${e.value(':capFrom', q.capturedFrom)} AND ${e.value(':capTo', q.capturedTo)}`);
  } else if (q.capturedFrom !== undefined) e.keyCondition(`${a} >= ${e.value(':capFrom', q.capturedFrom)}`);
  else if (q.capturedTo !== undefined) e.keyCondition(`${a} <= ${e.value(':capTo', q.capturedTo)}`);
  return e.build({
    pattern: 'batch-captured',
    tableName: q.tableName,
    index: INDEX.batchCaptured,
    keyAttributes: gsiKey('batch_id', 'cap_wall'),
    nowS: q.nowS,
  });
}

/** Whether the listing reads by capture time (batchCapturedRequest). */
export const byCaptureTime = (f: BatchImagesFilter): boolean =>
  f.capturedFrom !== undefined || f.capturedTo !== undefined || f.order === 'captured';

/** BatchGetItem of a capture-time page's items by key, as a listing shows them (and cap_wall, for the cursor). */
export const capturedItemsRequests = (
  tableName: string,
  keys: readonly { batch_id: string; img_fprint: string }[],
): BatchGetCommandInput[] => byKeyRequests(tableName, keys, [...TABLE_LISTING_ATTRIBUTES, 'cap_wall']);

/** The filters of a batch listing, on a whole item read by key (the capture-time listing's). */
export function matchesBatchFilter(item: Partial<ImageItem>, f: BatchImagesFilter): boolean {
  if (f.status !== undefined && item.op_status !== f.status) return false;
  if (f.cat !== undefined && item.rek_iscat !== f.cat) return false;
  if (f.fileName !== undefined && item.file_name !== f.fileName && ![...(item.dup_files ?? [])].includes(f.fileName)) return false;
  const uploaded = item.upload_ts ?? item.received_ts;
  if (f.from !== undefined && (uploaded === undefined || uploaded < f.from)) return false;
  if (f.to !== undefined && (uploaded === undefined || uploaded > f.to)) return false;
  return labelMatcher(f)?.(item) ?? true;
}

export function batchImagesRequest(q: BatchQuery & BatchImagesFilter): QueryPlan {
  if (byCaptureTime(q)) return batchCapturedRequest(q);
  if (q.status === 'processing') return batchInProgressRequest(q);
  if (q.status) return batchByStatusRequest({ ...q, status: q.status });
  if (q.from !== undefined || q.to !== undefined) return batchTimeRangeRequest(q);
  return batchResultsRequest(q);
}

/** 1, 2 or 7 as the filter asks. */
export async function queryBatchImages(
  ctx: StoreContext,
  clientId: string,
  batchId: string,
  filter: BatchImagesFilter,
  page: PageRequest,
): Promise<Page<Image>> {
  const plan = batchImagesRequest({ tableName: ctx.tableName, clientId, batchId, nowS: storeNowS(ctx), ...filter });
  if (byCaptureTime(filter)) return imagesPage(await runQuery<ImageItem>(ctx, plan, page, (keys) => capturedItems(ctx, keys, filter)));
  const matches = labelMatcher(filter);
  const read = await runQuery<ImageItem>(ctx, plan, page, matches && (async (items) => items.filter(matches)));
  // Read from an index (status, time range): what it cannot project is read by key for the page.
  return imagesPage(plan.input.IndexName === undefined ? read : { ...read, items: await withUnprojected(ctx, read.items) });
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
  return imagesPage(await fillPage(ctx, batchResultsRequest(q), page.limit, { items: items as ImageItem[], startKey, ended: !startKey }));
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
  imagesPage(await runQuery(ctx, batchLogsRequest({ tableName: ctx.tableName, clientId, batchId, nowS: storeNowS(ctx), ...range }), page));
