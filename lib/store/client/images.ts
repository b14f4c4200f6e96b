// A client's images and batches across its batches as the API lists them: the plan of each read access pattern of
// docs/design.md §2 (3, 5b, 8, 9, 10) as a pure function beside the function that runs it (through table/query.ts),
// leaving out what belongs to a batch that is gone for its client.
import { type Batch, type BatchStatus, isVisibleBatch } from '../../domain/batch';
import type { Image, ImageStatus } from '../../domain/image';
import { gsiKey, statusCondition } from '../batch/images';
import { batchSummariesRequest, batchVisibilityRequest } from '../batch/read';
import { imagesPage, toBatch } from '../table/attributes';
import { ExpressionBuilder, type QueryPlan, type TimeRange } from '../table/expressions';
import { batchGetAll, type KeepFilter, type Page, type PageRequest, runQuery, type StoreContext, storeNowS } from '../table/query';
import { type BatchItem, type ImageItem, INDEX } from '../table/schema';
import { withUnprojected } from '../table/unprojected';

/** Image statuses a client listing can filter by: only results enter the client-status index. */
export const CLIENT_IMAGE_STATUSES = ['success', 'fail'] as const satisfies readonly ImageStatus[];

export interface ClientQuery {
  tableName: string;
  clientId: string;
  nowS: number;
}

export interface ClientImagesFilter extends TimeRange {
  status?: (typeof CLIENT_IMAGE_STATUSES)[number];
  cat?: boolean;
  fprint?: string;
}

function clientExpression(q: ClientQuery, attribute = 'client_id'): ExpressionBuilder {
  const e = new ExpressionBuilder();
  e.keyIs(attribute, '=', ':client', q.clientId);
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
export function clientByStatusRequest(q: ClientQuery & ClientImagesFilter & { status: ImageStatus }): QueryPlan {
  const e = clientExpression(q);
  e.keyCondition(statusCondition(e, q.status, q));
  addFilters(e, q, { status: true, time: true });
  return e.build({
    pattern: 'client-status',
    tableName: q.tableName,
    index: INDEX.clientStatus,
    keyAttributes: gsiKey('client_id', 'status_ts'),
    nowS: q.nowS,
  });
}

/** 5b: one image (fingerprint) across the client's batches, GSI client-fprint. */
export function imageAcrossBatchesRequest(q: ClientQuery & ClientImagesFilter & { fprint: string }): QueryPlan {
  const e = clientExpression(q);
  e.keyIs('img_fprint', '=', ':fprint', q.fprint);
  addFilters(e, q, {});
  return e.build({
    pattern: 'client-fprint',
    tableName: q.tableName,
    index: INDEX.clientFprint,
    keyAttributes: gsiKey('client_id', 'img_fprint'),
    nowS: q.nowS,
  });
}

/** A client's images by one of its time-sorted indexes, in the query's time range (or all, oldest first). */
function clientRangeRequest(
  q: ClientQuery & ClientImagesFilter,
  by: { attribute: 'upload_ts' | 'cat_ts'; pattern: string; index: string; filters: { cat?: boolean; time: true } },
): QueryPlan {
  const e = clientExpression(q);
  const range = e.range(by.attribute, q);
  if (range) e.keyCondition(range);
  addFilters(e, q, by.filters);
  return e.build({
    pattern: by.pattern,
    tableName: q.tableName,
    index: by.index,
    keyAttributes: gsiKey('client_id', by.attribute),
    nowS: q.nowS,
  });
}

/** 8: a client's images in a time range (or all of them, oldest first), GSI client-time. */
export const clientTimeRangeRequest = (q: ClientQuery & ClientImagesFilter): QueryPlan =>
  clientRangeRequest(q, { attribute: 'upload_ts', pattern: 'client-time', index: INDEX.clientTime, filters: { time: true } });

/** 9: a client's cats in a time range, sparse GSI client-cats (cat_ts = upload_ts, written only for cats). */
export const clientCatsRequest = (q: ClientQuery & ClientImagesFilter): QueryPlan =>
  clientRangeRequest(q, { attribute: 'cat_ts', pattern: 'client-cats', index: INDEX.clientCats, filters: { cat: true, time: true } });

/** GET /v1/images: fprint → 5b, cat=true → 9, status → 3, otherwise 8; the other filters become filter expressions. */
export function clientImagesRequest(q: ClientQuery & ClientImagesFilter): QueryPlan {
  if (q.fprint !== undefined) return imageAcrossBatchesRequest({ ...q, fprint: q.fprint });
  if (q.cat === true) return clientCatsRequest(q);
  if (q.status) return clientByStatusRequest({ ...q, status: q.status });
  return clientTimeRangeRequest(q);
}

export interface ClientBatchesFilter extends TimeRange {
  status?: BatchStatus;
}

/**
 * A client's batches, newest first, sparse GSI client-batches (owner_id + created_ts: only batch summaries have
 * both). The status filter reads `closed` and `done_ts`, which change once per batch, so the index (which projects
 * them) is written when a batch opens, closes and finishes, never by its counters.
 */
export function clientBatchesRequest(q: ClientQuery & ClientBatchesFilter): QueryPlan {
  const e = clientExpression(q, 'owner_id');
  const range = e.range('created_ts', q);
  if (range) e.keyCondition(range);
  if (q.status === 'open') e.filter(`(attribute_not_exists(${e.name('closed')}) OR ${e.name('closed')} = ${e.value(':false', false)})`);
  if (q.status === 'processing') e.filter(`${e.name('closed')} = ${e.value(':true', true)} AND attribute_not_exists(${e.name('done_ts')})`);
  if (q.status === 'done') e.filter(`attribute_exists(${e.name('done_ts')})`);
  return e.build({
    pattern: 'client-batches',
    tableName: q.tableName,
    index: INDEX.clientBatches,
    keyAttributes: gsiKey('owner_id', 'created_ts'),
    nowS: q.nowS,
    newestFirst: true,
  });
}

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
  const read = await runQuery<ImageItem>(ctx, plan, page, visibleBatchesFilter(ctx));
  // Every client listing reads an index: what it cannot project is read by key for the page.
  return imagesPage({ ...read, items: await withUnprojected(ctx, read.items) });
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
