// The request of each read access pattern of docs/design.md §2 (numbers as in its table) within one batch or by key, as
// pure functions: the key condition, index and filters of each, unit-tested without a network. reader.ts runs them.
import type { BatchGetCommandInput, GetCommandInput } from '@aws-sdk/lib-dynamodb';
import { ExpressionBuilder, type QueryPlan, type TimeRange } from './expressions';
import { IMAGE_STATUSES, type ImageStatus } from '../domain/image';
import {
  BATCH_SK,
  INDEX,
  IMAGE_BY_KEY_ATTRIBUTES,
  LISTING_ATTRIBUTES,
  batchKey,
  batchPartition,
  imageKey,
  statusTs,
  type ImageItem,
} from './schema';

export { LISTING_ATTRIBUTES };

/** Upper bound of a time range in ms: statusTs pads upload_ts to 15 digits. */
const MAX_TS = 999_999_999_999_999;
/** Most keys one BatchGetItem takes. */
export const BATCH_GET_MAX_KEYS = 100;

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
  e.keyCondition(`${e.name('batch_id')} = ${e.value(':batch', batchPartition(q.clientId, q.batchId))}`);
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
  e.keyCondition(`${e.name('img_fprint')} > ${e.value(':summary', BATCH_SK)}`);
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
  e.keyCondition(`${e.name('img_fprint')} > ${e.value(':summary', BATCH_SK)}`);
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
export function capturedItemsRequests(
  tableName: string,
  keys: readonly { batch_id: string; img_fprint: string }[],
): BatchGetCommandInput[] {
  const projection = [...TABLE_LISTING_ATTRIBUTES, 'cap_wall'];
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

/** 5: one image, GetItem. */
export function imageRequest(tableName: string, clientId: string, batchId: string, fprint: string): GetCommandInput {
  return {
    TableName: tableName,
    Key: imageKey(clientId, batchId, fprint),
    ProjectionExpression: IMAGE_BY_KEY_ATTRIBUTES.map((a) => `#${a}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(IMAGE_BY_KEY_ATTRIBUTES.map((a) => [`#${a}`, a])),
  };
}

/** The batch summary, GetItem. */
export function batchSummaryRequest(tableName: string, clientId: string, batchId: string): GetCommandInput {
  return { TableName: tableName, Key: batchKey(clientId, batchId) };
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

/** BatchGetItem of whole batch summaries, by their keys (a page of client-batches). */
export function batchSummariesRequest(tableName: string, keys: readonly { batch_id: string; img_fprint: string }[]): BatchGetCommandInput {
  return { RequestItems: { [tableName]: { Keys: keys.map((k) => ({ batch_id: k.batch_id, img_fprint: k.img_fprint })) } } };
}

/**
 * BatchGetItem of batch summaries by partition (at most 100), projected to what decides whether a batch is visible
 * (isVisibleBatch: its expiry and the erasure mark), strongly consistent.
 */
export function batchVisibilityRequest(tableName: string, partitions: readonly string[]): BatchGetCommandInput {
  return {
    RequestItems: {
      [tableName]: {
        Keys: partitions.map((p) => ({ batch_id: p, img_fprint: BATCH_SK })),
        ProjectionExpression: '#partition, #sortKey, #ttl, #deleting',
        ExpressionAttributeNames: { '#partition': 'batch_id', '#sortKey': 'img_fprint', '#ttl': 'ttl', '#deleting': 'deleting' },
        ConsistentRead: true,
      },
    },
  };
}
