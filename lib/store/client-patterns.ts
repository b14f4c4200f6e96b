// The request of each read access pattern of docs/design.md §2 across a client's batches (3, 5b, 8, 9, its batches,
// and the 5b lookups of its classified pixels), as pure functions like access-patterns.ts. reader.ts runs them.
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { gsiKey, statusCondition } from './access-patterns';
import { imageNames } from './attributes';
import { ExpressionBuilder, type QueryPlan, type TimeRange } from './expressions';
import type { BatchStatus } from '../domain/batch';
import type { ImageStatus } from '../domain/image';
import { INDEX } from './schema';

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
  e.keyCondition(`${e.name(attribute)} = ${e.value(':client', q.clientId)}`);
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
  e.keyCondition(`${e.name('img_fprint')} = ${e.value(':fprint', q.fprint)}`);
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

/** Records of one fingerprint a reuse lookup reads at most: one per batch of the client that holds the same pixels. */
export const REUSE_LOOKUP_LIMIT = 10;

/**
 * 5b for the ingest: the client's classified record of these pixels in another batch, within retention. One eventually
 * consistent Query of the client-fprint index (it projects what a copy needs), never another client's partition.
 */
export function reusableResultRequest(tableName: string, clientId: string, fprint: string, nowS: number): QueryCommandInput {
  return {
    TableName: tableName,
    IndexName: INDEX.clientFprint,
    KeyConditionExpression: '#clientId = :client AND #fprint = :fprint',
    FilterExpression: '#status = :success AND #expiresAt > :now',
    ProjectionExpression: '#partition, #fprint, #status, #labels, #catConfidence, #cats, #classifiedAt, #expiresAt, #review, #reused',
    ExpressionAttributeNames: imageNames(
      'clientId',
      'fprint',
      'status',
      'expiresAt',
      'partition',
      'labels',
      'catConfidence',
      'cats',
      'classifiedAt',
      'review',
      'reused',
    ),
    ExpressionAttributeValues: { ':client': clientId, ':fprint': fprint, ':success': 'success', ':now': nowS },
    Limit: REUSE_LOOKUP_LIMIT,
  };
}

/**
 * 5b for an estimate: whether the client holds a classified record of these pixels, within retention, in any batch
 * (what the ingest would reuse). Keys only; a page of REUSE_LOOKUP_LIMIT records, paged on while none matched.
 */
export function knownFingerprintRequest(tableName: string, clientId: string, fprint: string, nowS: number): QueryCommandInput {
  return {
    TableName: tableName,
    IndexName: INDEX.clientFprint,
    KeyConditionExpression: '#clientId = :client AND #fprint = :fprint',
    FilterExpression: '#status = :success AND #expiresAt > :now AND attribute_exists(#labels)',
    ProjectionExpression: '#partition, #fprint',
    ExpressionAttributeNames: imageNames('clientId', 'fprint', 'status', 'expiresAt', 'partition', 'labels'),
    ExpressionAttributeValues: { ':client': clientId, ':fprint': fprint, ':success': 'success', ':now': nowS },
    Limit: REUSE_LOOKUP_LIMIT,
  };
}
