// Every write of the store as a pure request builder (unit-tested without a network); lib/store/batch-store.ts sends
// them. Expressions name attributes by their domain names through lib/store/attributes.ts (`#fileName`).
import type { DeleteCommandInput, PutCommandInput, QueryCommandInput, TransactWriteCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchNames, imageNames, toBatchItem, toImageItem, uploadNames, type BatchAttribute, type ImageAttribute } from './attributes';
import { ZERO_COUNTS, type Batch, type Claim, type Counts, type Finish, type Image, type ImageResult, type Review, type UploadRef } from '../domain';
import { encodeDetections } from './detections';
import { PAID_NAME, PAID_NAMES } from './paid-result';
import {
  BATCH_SK,
  CALLBACK_DUE,
  EXPIRY_DUE,
  INDEX,
  LIMITS,
  batchKey,
  batchPartition,
  imageKey,
  nowSeconds,
  purgeAt,
  reviewKey,
  statusTs,
  toStoredReview,
  ttlFor,
  uploadItemKey,
  type ImageItem,
} from './schema';

export type { Claim, Finish, ImageResult, UploadRef } from '../domain';

// ---- batches -------------------------------------------------------------------------------------------------

export interface NewBatch {
  clientId: string;
  batchId: string;
  now: number;
  debug: boolean;
  retentionDays: number;
  expected?: number;
  callbackUrl?: string;
  /** The cat threshold its images are classified at (the configured one), until a :reclassify moves it. */
  catMinConfidence?: number;
}

/** A batch as it starts: open, nothing counted. The one place a summary is made. */
export function newBatch(b: NewBatch): Batch {
  return {
    clientId: b.clientId,
    batchId: b.batchId,
    createdAt: b.now,
    debug: b.debug,
    retentionDays: b.retentionDays,
    expiresAt: ttlFor(b.now, b.retentionDays),
    ...(b.expected !== undefined ? { expected: b.expected } : {}),
    closed: false,
    counts: { ...ZERO_COUNTS },
    ...(b.callbackUrl !== undefined ? { callbackUrl: b.callbackUrl } : {}),
    ...(b.catMinConfidence !== undefined ? { catMinConfidence: b.catMinConfidence } : {}),
  };
}

/**
 * The write side of the one visibility rule (reads: isVisibleBatch in lib/domain.ts): a summary that exists, is not being
 * erased and has not expired. Every write into a batch made for a client's request or an upload holds only on it, so
 * an expired batch takes nothing more, whatever route or upload asks (docs/design.md §6, "A batch expires whole").
 */
function liveBatch(nowMs: number): { condition: string; names: BatchAttribute[]; values: Record<string, unknown> } {
  return {
    condition: 'attribute_exists(#partition) AND attribute_not_exists(#deleting) AND #expiresAt > :nowS',
    names: ['partition', 'deleting', 'expiresAt'],
    values: { ':nowS': nowSeconds(nowMs) },
  };
}

/** Creates a batch's summary unless the client already has a batch of that name. */
export function putBatchRequest(table: string, batch: Batch): PutCommandInput {
  return {
    TableName: table,
    Item: toBatchItem(batch),
    ConditionExpression: 'attribute_not_exists(#partition)',
    ExpressionAttributeNames: batchNames('partition'),
  };
}

/**
 * Moves counters by `delta` in one update, answering the summary after it; only on a live summary (liveBatch), so that
 * no write of an upload in flight recreates an erased batch's summary or counts into one being erased or expired.
 * With `takingUploads` (a new image's claim), only while the batch takes uploads: open, or closed with fewer arrived
 * than it was told of. A close that made the batch done between the upload's read of it and its claim so refuses the
 * claim in the very write that would count it (docs/design.md §6).
 */
export function countRequest(
  table: string,
  clientId: string,
  batchId: string,
  delta: Partial<Counts>,
  nowMs: number,
  opts: { takingUploads?: boolean; guard?: SummaryCondition } = {},
): UpdateCommandInput {
  const moved = (Object.entries(delta) as [keyof Counts, number][]).filter(([, n]) => n !== 0);
  const live = liveBatch(nowMs);
  const taking = opts.takingUploads === true;
  const guard = opts.guard;
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `ADD ${moved.map(([name]) => `#${name} :${name}`).join(', ')}`,
    ConditionExpression:
      live.condition +
      (taking ? ' AND (attribute_not_exists(#closed) OR #closed = :false OR #total < #expected)' : '') +
      (guard ? ` AND (${guard.condition})` : ''),
    ExpressionAttributeNames: batchNames(
      ...live.names,
      ...moved.map(([name]) => name),
      ...(taking ? (['closed', 'total', 'expected'] as const) : []),
      ...(guard?.names ?? []),
    ),
    ExpressionAttributeValues: {
      ...live.values,
      ...Object.fromEntries(moved.map(([name, n]) => [`:${name}`, n])),
      ...(taking ? { ':false': false } : {}),
      ...guard?.values,
    },
    ReturnValues: 'ALL_NEW',
    // In a transaction (which answers no values), a refused move answers the summary as it found it.
    ...(guard ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
  };
}

/** A condition on the summary, in the placeholders countRequest joins to its own. */
export interface SummaryCondition {
  condition: string;
  names: BatchAttribute[];
  values: Record<string, unknown>;
}

/**
 * Holds only on a summary that moving it by `delta` cannot make due to close by itself (shouldAutoClose) or to be
 * stamped done (shouldMarkDone), so the writer of a move it guarded has nothing to settle and need not read the
 * summary back (a transaction answers no values: docs/design.md §9). `seenExpected` is `expected` as the writer read
 * it: a condition cannot add, so "total + 1 < expected" is written "expected is still what was read and total <
 * expected - 1". Stricter than needed where that is simpler: a false alarm only costs the writer a second round.
 */
export function settledGuard(delta: Partial<Counts>, seenExpected: number | undefined): SummaryCondition {
  const arrives = (delta.total ?? 0) > 0;
  const pending = delta.pending ?? 0;
  const names: BatchAttribute[] = ['closed', 'expected'];
  const values: Record<string, unknown> = { ':guardTrue': true };
  // Not due to close by itself: closed already, nothing declared, or fewer arrived than declared once this counts.
  let closes: string;
  if (!arrives) {
    closes = '#closed = :guardTrue OR attribute_not_exists(#expected) OR #total < #expected';
    names.push('total');
  } else if (seenExpected === undefined) {
    closes = '#closed = :guardTrue OR attribute_not_exists(#expected)';
  } else {
    closes = '#closed = :guardTrue OR (#expected = :seenExpected AND #total < :lastBeforeExpected)';
    names.push('total');
    Object.assign(values, { ':seenExpected': seenExpected, ':lastBeforeExpected': seenExpected - 1 });
  }
  if (pending > 0) return { condition: closes, names, values };
  // Not due to be done: open, still something pending once this moves, or done already.
  names.push('pending', 'doneAt');
  values[':guardPending'] = pending < 0 ? 1 : 0;
  const done = 'attribute_not_exists(#closed) OR #closed <> :guardTrue OR #pending > :guardPending OR attribute_exists(#doneAt)';
  return { condition: `(${closes}) AND (${done})`, names, values };
}

/**
 * Holds only on a summary whose counters and lifecycle fields are exactly `b`'s: the writer then knows the summary its
 * move leaves (b moved by the delta) without reading it back.
 */
export function unchangedGuard(b: Batch): SummaryCondition {
  const parts: string[] = [];
  const names: BatchAttribute[] = ['closed', 'expected', 'doneAt'];
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(ZERO_COUNTS) as (keyof Counts)[]) {
    parts.push(`#${name} = :was_${name}`);
    names.push(name);
    values[`:was_${name}`] = b.counts[name];
  }
  parts.push(b.closed ? '#closed = :wasClosed' : '(attribute_not_exists(#closed) OR #closed = :wasClosed)');
  values[':wasClosed'] = b.closed;
  if (b.expected === undefined) parts.push('attribute_not_exists(#expected)');
  else {
    parts.push('#expected = :wasExpected');
    values[':wasExpected'] = b.expected;
  }
  parts.push(b.doneAt === undefined ? 'attribute_not_exists(#doneAt)' : 'attribute_exists(#doneAt)');
  return { condition: parts.join(' AND '), names, values };
}

/** The summary `b` moved by `delta`: what a move guarded by unchangedGuard(b) leaves. */
export const movedBy = (b: Batch, delta: Partial<Counts>): Batch => ({
  ...b,
  counts: Object.fromEntries((Object.keys(b.counts) as (keyof Counts)[]).map((k) => [k, b.counts[k] + (delta[k] ?? 0)])) as unknown as Counts,
});

/** Whether a new image may still count itself in the batch: the claim's condition of countRequest, read side. */
export const takesUploads = (b: Pick<Batch, 'closed' | 'expected' | 'counts'>): boolean =>
  !b.closed || (b.expected !== undefined && b.counts.total < b.expected);

/** Closes an open batch, optionally fixing how many files it gets in all (never below what arrived). */
export function closeRequest(table: string, clientId: string, batchId: string, now: number, expected?: number): UpdateCommandInput {
  const withExpected = expected !== undefined;
  const live = liveBatch(now);
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `SET #closed = :true, #closedAt = :now${withExpected ? ', #expected = :expected' : ''}`,
    ConditionExpression:
      `${live.condition} AND (attribute_not_exists(#closed) OR #closed = :false)` + (withExpected ? ' AND #total <= :expected' : ''),
    ExpressionAttributeNames: batchNames(...live.names, 'closed', 'closedAt', ...(withExpected ? (['expected', 'total'] as const) : [])),
    ExpressionAttributeValues: { ...live.values, ':true': true, ':false': false, ':now': now, ...(withExpected ? { ':expected': expected } : {}) },
    ReturnValues: 'ALL_NEW',
  };
}

/** Closes a batch by itself once as many uploads arrived as were declared. */
export function autoCloseRequest(table: string, clientId: string, batchId: string, now: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #closed = :true, #closedAt = :now',
    ConditionExpression: '(attribute_not_exists(#closed) OR #closed = :false) AND #expected <= #total',
    ExpressionAttributeNames: batchNames('closed', 'closedAt', 'expected', 'total'),
    ExpressionAttributeValues: { ':true': true, ':false': false, ':now': now },
    ReturnValues: 'ALL_NEW',
  };
}

/**
 * Stamps doneAt, once, and only while the batch is done (closed, nothing pending, every declared file arrived). A batch
 * with a callback is marked as owing it in the same write, so a callback whose first send is lost is still found.
 */
export function markDoneRequest(table: string, clientId: string, batchId: string, now: number, withCallback = false): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: withCallback ? 'SET #doneAt = :now, #callbackDue = :due' : 'SET #doneAt = :now',
    ConditionExpression:
      '#closed = :true AND #pending = :zero AND attribute_not_exists(#doneAt) AND attribute_not_exists(#deleting) AND ' +
      '(attribute_not_exists(#expected) OR #expected <= #total)',
    ExpressionAttributeNames: batchNames('closed', 'pending', 'doneAt', 'deleting', 'expected', 'total', ...(withCallback ? (['callbackDue'] as const) : [])),
    ExpressionAttributeValues: { ':true': true, ':zero': 0, ':now': now, ...(withCallback ? { ':due': CALLBACK_DUE } : {}) },
    ReturnValues: 'ALL_NEW',
  };
}

/** More files declared for an open batch: `expected` grows by their number (from 0 when none were declared). */
export function addExpectedRequest(table: string, clientId: string, batchId: string, files: number, nowMs: number): UpdateCommandInput {
  const live = liveBatch(nowMs);
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #expected = if_not_exists(#expected, :zero) + :files',
    ConditionExpression: `${live.condition} AND (attribute_not_exists(#closed) OR #closed = :false)`,
    ExpressionAttributeNames: batchNames(...live.names, 'expected', 'closed'),
    ExpressionAttributeValues: { ...live.values, ':zero': 0, ':files': files, ':false': false },
    ReturnValues: 'ALL_NEW',
  };
}

/**
 * Deletes a summary the ingest has just opened for an upload whose object turned out to be gone (erased with its
 * batch meanwhile), unless an upload counted into it since.
 */
export function dropOpenedBatchRequest(table: string, clientId: string, batchId: string): DeleteCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    ConditionExpression: '#total = :zero',
    ExpressionAttributeNames: batchNames('total'),
    ExpressionAttributeValues: { ':zero': 0 },
  };
}

/**
 * Marks an existing batch as being erased (DELETE); marking it again is harmless. Not once it has expired: it is gone
 * for its client then, and the expiry sweep erases it (markExpiredRequest).
 */
export function markDeletingRequest(table: string, clientId: string, batchId: string, nowMs: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #deleting = :true',
    ConditionExpression: 'attribute_exists(#partition) AND #expiresAt > :nowS',
    ExpressionAttributeNames: batchNames('partition', 'deleting', 'expiresAt'),
    ExpressionAttributeValues: { ':true': true, ':nowS': nowSeconds(nowMs) },
    ReturnValues: 'ALL_NEW',
  };
}

// ---- expiry: the sweep that erases what expired (docs/design.md §6) ------------------------------------------------

/** A page of the batches whose expiry (epoch s) is at or before `nowS`, soonest expired first; keys only. */
export function expiredBatchesQuery(table: string, nowS: number, limit: number, startKey?: Record<string, unknown>): QueryCommandInput {
  return {
    TableName: table,
    IndexName: INDEX.batchesExpiring,
    KeyConditionExpression: '#expiryDue = :due AND #expiresAt <= :nowS',
    ExpressionAttributeNames: batchNames('expiryDue', 'expiresAt'),
    ExpressionAttributeValues: { ':due': EXPIRY_DUE, ':nowS': nowS },
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

/**
 * Marks an expired batch as being erased and stamps when its erasure is queued: once, or again when the erasure queued
 * before `staleBefore` (epoch ms) has still not deleted the summary (its message lost). Fails (condition) otherwise,
 * so two sweeps never both queue it.
 */
export function markExpiredRequest(table: string, clientId: string, batchId: string, now: number, staleBefore: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #deleting = :true, #eraseQueuedAt = :now',
    ConditionExpression: 'attribute_exists(#partition) AND #expiresAt <= :nowS AND (attribute_not_exists(#eraseQueuedAt) OR #eraseQueuedAt < :stale)',
    ExpressionAttributeNames: batchNames('partition', 'deleting', 'eraseQueuedAt', 'expiresAt'),
    ExpressionAttributeValues: { ':true': true, ':now': now, ':nowS': nowSeconds(now), ':stale': staleBefore },
  };
}

/**
 * Records the completion callback's delivery state on a batch that still exists and is not being erased; a final
 * state (delivered, or given up) takes the batch out of the callbacks the sweep looks after.
 */
export function callbackStateRequest(table: string, clientId: string, batchId: string, state: object, final = false): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: final ? 'SET #callback = :state REMOVE #callbackDue' : 'SET #callback = :state',
    ConditionExpression: 'attribute_exists(#partition) AND attribute_not_exists(#deleting)',
    ExpressionAttributeNames: batchNames('partition', 'callback', 'deleting', ...(final ? (['callbackDue'] as const) : [])),
    ExpressionAttributeValues: { ':state': state },
  };
}

/**
 * A consistent read of a batch's own partition, images only: from the first record, or after `afterFprint` (paging
 * by hand). Projected to the named attributes.
 */
function batchRecordsQuery(
  table: string,
  clientId: string,
  batchId: string,
  projection: readonly ImageAttribute[],
  afterFprint?: string,
): QueryCommandInput {
  const [start, value] = afterFprint === undefined ? [':summary', BATCH_SK] : [':after', afterFprint];
  return {
    TableName: table,
    KeyConditionExpression: `#partition = :partition AND #fprint > ${start}`,
    ProjectionExpression: projection.map((a) => `#${a}`).join(', '),
    ExpressionAttributeNames: imageNames('partition', 'fprint', ...projection),
    ExpressionAttributeValues: { ':partition': batchPartition(clientId, batchId), [start]: value },
    ConsistentRead: true,
  };
}

/** What a recount reads of each record. */
const RECOUNT_ATTRIBUTES = ['status', 'isCat', 'duplicates', 'reused', 'review'] as const satisfies readonly ImageAttribute[];

/** What a recount reads: every record of the batch. */
export const recountQuery = (table: string, clientId: string, batchId: string): QueryCommandInput =>
  batchRecordsQuery(table, clientId, batchId, RECOUNT_ATTRIBUTES);

/** The counters the records add up to. */
export function countRecords(items: readonly Pick<ImageItem, 'op_status' | 'rek_iscat' | 'dup_count' | 'reused' | 'review'>[]): Counts {
  const counts = { ...ZERO_COUNTS };
  for (const item of items) {
    const duplicates = item.dup_count ?? 0;
    counts.total += 1 + duplicates;
    counts.duplicate += duplicates;
    if (item.op_status === 'processing') counts.pending++;
    else if (item.op_status === 'success') counts.success++;
    else counts.fail++;
    if (item.op_status === 'success' && item.rek_iscat === true) counts.cats++;
    if (item.op_status === 'success' && item.reused === true) counts.reused++;
    if (item.op_status === 'success' && item.review !== undefined) {
      counts.reviewed++;
      if (item.review.cat !== item.review.mc) counts.corrected++;
    }
  }
  return counts;
}

/** Sets the counters to a recount, only if they still hold what was read before counting. */
export function setCountsRequest(table: string, clientId: string, batchId: string, was: Counts, counts: Counts): UpdateCommandInput {
  const names = Object.keys(counts) as (keyof Counts)[];
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `SET ${names.map((n) => `#${n} = :${n}`).join(', ')}`,
    // A counter an older summary lacks reads as 0.
    ConditionExpression: names.map((n) => `(#${n} = :was_${n}${was[n] === 0 ? ` OR attribute_not_exists(#${n})` : ''})`).join(' AND '),
    ExpressionAttributeNames: batchNames(...names),
    ExpressionAttributeValues: {
      ...Object.fromEntries(names.map((n) => [`:${n}`, counts[n]])),
      ...Object.fromEntries(names.map((n) => [`:was_${n}`, was[n]])),
    },
    ReturnValues: 'ALL_NEW',
  };
}

// ---- images --------------------------------------------------------------------------------------------------


const CLAIM_SET =
  'SET #status = :processing, #claimId = :claim, #leaseUntil = :lease, #clientId = :client, #key = :key, ' +
  '#fileName = :file, #phash = :phash, #format = :format, #width = :w, #height = :h';
const CLAIM_NAMES = ['status', 'claimId', 'leaseUntil', 'clientId', 'key', 'fileName', 'phash', 'format', 'width', 'height'] as const;

function claimValues(c: Claim): Record<string, unknown> {
  return {
    ':processing': 'processing',
    ':claim': c.claimId,
    ':lease': c.now + c.leaseMs,
    ':client': c.clientId,
    ':key': c.key,
    ':file': c.fileName,
    ':phash': c.phash,
    ':format': c.format,
    ':w': c.width,
    ':h': c.height,
  };
}

/**
 * Claims a new image for classification. Of the index keys it writes only client_id (the image is findable by
 * fingerprint at once, through client-fprint); status_ts and upload_ts come with the result, so a claim costs one
 * index write instead of five. Until then the upload time waits in received_ts.
 */
export function claimRequest(table: string, c: Claim): UpdateCommandInput {
  const etag = c.etag !== undefined;
  return {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    UpdateExpression: `${CLAIM_SET}, #receivedAt = :now, #expiresAt = :ttl, #purgeAt = :purge${etag ? ', #etag = :etag' : ''}`,
    ConditionExpression: 'attribute_not_exists(#fprint)',
    ExpressionAttributeNames: imageNames(...CLAIM_NAMES, 'receivedAt', 'expiresAt', 'purgeAt', 'fprint', ...(etag ? (['etag'] as const) : [])),
    ExpressionAttributeValues: {
      ...claimValues(c),
      ':now': c.now,
      ':ttl': c.expiresAt,
      ':purge': purgeAt(c.expiresAt),
      ...(etag ? { ':etag': c.etag } : {}),
    },
  };
}

/** Takes over a claim left 'processing' by a run whose lease expired; keeps the first receipt time and expiry. */
export function takeoverRequest(table: string, c: Claim, previousClaimId: string): UpdateCommandInput {
  const etag = c.etag !== undefined;
  return {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    UpdateExpression: `${CLAIM_SET}${etag ? ', #etag = :etag' : ''}`,
    ConditionExpression: '#status = :processing AND #leaseUntil < :now AND #claimId = :previous',
    ExpressionAttributeNames: imageNames(...CLAIM_NAMES, ...(etag ? (['etag'] as const) : [])),
    ExpressionAttributeValues: { ...claimValues(c), ':now': c.now, ':previous': previousClaimId, ...(etag ? { ':etag': c.etag } : {}) },
  };
}

/** Ends a claim early so a retry of the same upload can take it at once (a transient failure). */
export function releaseRequest(table: string, c: Claim): UpdateCommandInput {
  return {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    UpdateExpression: 'SET #leaseUntil = :zero',
    ConditionExpression: '#claimId = :claim',
    ExpressionAttributeNames: imageNames('leaseUntil', 'claimId'),
    ExpressionAttributeValues: { ':zero': 0, ':claim': c.claimId },
  };
}


/** The final state of a claimed image, written only by the claim's holder; it writes the index keys. */
export function finishRequest(table: string, c: Claim, f: Finish): UpdateCommandInput {
  const set = ['#status = :status', '#uploadedAt = :uploadedAt', '#statusKey = :statusKey', '#classifiedAt = :now', '#restingKey = :resting'];
  const names: Parameters<typeof imageNames> = ['status', 'uploadedAt', 'statusKey', 'classifiedAt', 'restingKey', 'claimId', 'leaseUntil'];
  const values: Record<string, unknown> = {
    ':status': f.result.status,
    ':uploadedAt': f.uploadedAt,
    ':statusKey': statusTs(f.result.status, f.uploadedAt),
    ':now': f.result.status === 'success' && f.result.reusedFrom !== undefined ? f.result.reusedFrom : f.now,
    ':resting': f.restingKey,
    ':claim': c.claimId,
  };
  if (f.result.status === 'success') {
    const review = reviewOfResult(f.result);
    set.push('#isCat = :cat', '#catConfidence = :catConfidence', '#cats = :cats', '#labels = :labels', '#reviewKey = :reviewKey');
    names.push('isCat', 'catConfidence', 'cats', 'labels', 'reviewKey');
    Object.assign(values, {
      ':cat': review?.isCat ?? f.result.isCat,
      ':catConfidence': f.result.catConfidence,
      ':cats': f.result.cats,
      ':labels': f.result.labels,
      ':reviewKey': reviewKey(review !== undefined, f.result.catConfidence),
    });
    if (review) {
      set.push('#review = :review');
      names.push('review');
      values[':review'] = toStoredReview(review);
    }
    if (f.result.detection) {
      set.push('#detection = :detection');
      names.push('detection');
      values[':detection'] = f.result.detection;
    }
    if (f.result.detections) {
      set.push('#detections = :detections');
      names.push('detections');
      values[':detections'] = encodeDetections(f.result.detections);
    }
    const capture = f.capture;
    if (capture?.capturedAt) {
      set.push('#capturedAt = :capturedAt', '#capturedWall = :capturedWall');
      names.push('capturedAt', 'capturedWall');
      Object.assign(values, { ':capturedAt': capture.capturedAt, ':capturedWall': capture.capturedAt.slice(0, 19) });
    }
    if (capture?.camera) {
      set.push('#camera = :camera');
      names.push('camera');
      values[':camera'] = capture.camera;
    }
    if (capture?.location) {
      set.push('#location = :location');
      names.push('location');
      values[':location'] = capture.location;
    }
    if (f.result.reusedFrom !== undefined) {
      set.push('#reused = :reused');
      names.push('reused');
      values[':reused'] = true;
    }
    if (review?.isCat ?? f.result.isCat) {
      set.push('#catAt = :uploadedAt');
      names.push('catAt');
    }
  } else {
    set.push('#errorCode = :errorCode', '#errorMessage = :errorMessage');
    names.push('errorCode', 'errorMessage');
    Object.assign(values, { ':errorCode': f.result.error.code, ':errorMessage': f.result.error.message.slice(0, LIMITS.errMessageChars) });
  }
  if (f.logs?.length) {
    set.push('#logs = :logs', '#loggedAt = :uploadedAt');
    names.push('logs', 'loggedAt');
    values[':logs'] = f.logs;
  }
  return {
    TableName: table,
    Key: imageKey(c.clientId, c.batchId, c.fprint),
    // The answer a run kept on the claim (paid-result.ts) goes with the claim: the record holds the result itself.
    UpdateExpression: `SET ${set.join(', ')} REMOVE #claimId, #leaseUntil, ${PAID_NAME}`,
    ConditionExpression: '#claimId = :claim',
    ExpressionAttributeNames: { ...imageNames(...names), ...PAID_NAMES },
    ExpressionAttributeValues: values,
  };
}

/** The person's verdict a success result carries, beside the machine's (its isCat). */
function reviewOfResult(r: Extract<ImageResult, { status: 'success' }>): Review | undefined {
  return r.review ? { ...r.review, machineIsCat: r.isCat } : undefined;
}

/** What finishing moves on the counters: pending becomes success (and a cat, reviewed, corrected) or fail. */
export function finishCounts(r: ImageResult): Partial<Counts> {
  if (r.status !== 'success') return { pending: -1, fail: 1 };
  const review = reviewOfResult(r);
  return {
    pending: -1,
    success: 1,
    ...((review?.isCat ?? r.isCat) ? { cats: 1 } : {}),
    ...(r.reusedFrom !== undefined ? { reused: 1 } : {}),
    ...(review ? { reviewed: 1, ...(review.isCat !== review.machineIsCat ? { corrected: 1 } : {}) } : {}),
  };
}

/**
 * Counts another upload of an image already recorded in the batch. The file name set makes a redelivered event a
 * no-op; past LIMITS.dupFiles names only the count grows, and the upload's own item guards it (duplicateMarkRequest).
 */
export function duplicateRequest(table: string, original: Image, fileName: string): UpdateCommandInput {
  const key = imageKey(original.clientId, original.batchId, original.fprint);
  return keepsDuplicateName(original)
    ? {
        TableName: table,
        Key: key,
        UpdateExpression: 'ADD #duplicates :one, #duplicateFiles :name',
        ConditionExpression: 'attribute_exists(#fprint) AND NOT contains(#duplicateFiles, :file)',
        ExpressionAttributeNames: imageNames('duplicates', 'duplicateFiles', 'fprint'),
        ExpressionAttributeValues: { ':one': 1, ':name': new Set([fileName]), ':file': fileName },
      }
    : {
        TableName: table,
        Key: key,
        UpdateExpression: 'ADD #duplicates :one',
        ConditionExpression: 'attribute_exists(#fprint)',
        ExpressionAttributeNames: imageNames('duplicates', 'fprint'),
        ExpressionAttributeValues: { ':one': 1 },
      };
}

/** Whether a duplicate's name is kept on its original (and so guards its redelivery there). */
export const keepsDuplicateName = (original: Pick<Image, 'duplicateFiles'>): boolean => (original.duplicateFiles?.length ?? 0) < LIMITS.dupFiles;

// ---- an upload's own item: its attempts and what it was counted as ---------------------------------------------


/**
 * Counts an attempt at the upload as it starts, before any step that may never return (a timeout, running out of
 * memory): the count answered includes this attempt, and a later attempt sees it whatever became of this one.
 */
export function startAttemptRequest(table: string, u: UploadRef): UpdateCommandInput {
  return {
    TableName: table,
    Key: uploadItemKey(u),
    UpdateExpression: 'ADD #attempts :one SET #expiresAt = if_not_exists(#expiresAt, :ttl), #purgeAt = if_not_exists(#purgeAt, :purge)',
    ExpressionAttributeNames: uploadNames('attempts', 'expiresAt', 'purgeAt'),
    ExpressionAttributeValues: { ':one': 1, ':ttl': u.expiresAt, ':purge': purgeAt(u.expiresAt) },
    ReturnValues: 'ALL_NEW',
  };
}

/** Takes back an attempt that ended without failing (handed back until another run's lease is over). */
export function endAttemptRequest(table: string, u: UploadRef): UpdateCommandInput {
  return {
    TableName: table,
    Key: uploadItemKey(u),
    UpdateExpression: 'ADD #attempts :minus',
    ConditionExpression: '#attempts > :zero',
    ExpressionAttributeNames: uploadNames('attempts'),
    ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
  };
}

/** Remembers the fingerprint an attempt found, so that a later attempt can finish its record without decoding. */
export function noteFingerprintRequest(table: string, u: UploadRef, fprint: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: uploadItemKey(u),
    UpdateExpression: 'SET #fprint = :fprint',
    ExpressionAttributeNames: uploadNames('fprint'),
    ExpressionAttributeValues: { ':fprint': fprint },
  };
}

/**
 * Marks the upload as counted a duplicate of `fprint`, once: the redelivery guard of a duplicate whose name is not kept.
 * It notes the fingerprint too (noteFingerprintRequest), for an attempt that gives up later.
 */
export function duplicateMarkRequest(table: string, u: UploadRef, fprint: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: uploadItemKey(u),
    UpdateExpression:
      'SET #duplicateOf = :fprint, #fprint = :fprint, #expiresAt = if_not_exists(#expiresAt, :ttl), #purgeAt = if_not_exists(#purgeAt, :purge)',
    ConditionExpression: 'attribute_not_exists(#duplicateOf)',
    ExpressionAttributeNames: uploadNames('duplicateOf', 'fprint', 'expiresAt', 'purgeAt'),
    ExpressionAttributeValues: { ':fprint': fprint, ':ttl': u.expiresAt, ':purge': purgeAt(u.expiresAt) },
  };
}

export const DUPLICATE_COUNTS: Partial<Counts> = { total: 1, duplicate: 1 };
export const CLAIM_COUNTS: Partial<Counts> = { total: 1, pending: 1 };
export const REJECTION_COUNTS: Partial<Counts> = { total: 1, fail: 1 };

/** A `fail` record for an upload refused before any claim; conditional, so a redelivery writes nothing. */
export function rejectionRequest(table: string, image: Image): PutCommandInput {
  const uploadedAt = image.uploadedAt ?? image.classifiedAt ?? 0;
  const item: ImageItem = {
    ...toImageItem({ ...image, errorMessage: image.errorMessage?.slice(0, LIMITS.errMessageChars) }),
    status_ts: statusTs('fail', uploadedAt),
    ...(image.logs?.length ? { log_ts: uploadedAt } : {}),
  };
  return {
    TableName: table,
    Item: item,
    ConditionExpression: 'attribute_not_exists(#fprint)',
    ExpressionAttributeNames: imageNames('fprint'),
  };
}

/** Writes that must land together, as one TransactWriteItems. */
export function transaction(...writes: (UpdateCommandInput | PutCommandInput)[]): TransactWriteCommandInput {
  return {
    TransactItems: writes.map((w) => {
      const { ReturnValues: _ignored, ...rest } = w as UpdateCommandInput;
      return 'Item' in w ? { Put: rest as never } : { Update: rest as never };
    }),
  };
}

// ---- re-threshold ---------------------------------------------------------------------------------------------

/** Remembers a done batch's new cat threshold; fails (condition) when the batch is missing, gone (liveBatch) or not done. */
export function thresholdRequest(table: string, clientId: string, batchId: string, catMinConfidence: number, nowMs: number): UpdateCommandInput {
  const live = liveBatch(nowMs);
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #catMinConfidence = :threshold',
    // Done, and live (not being erased, not expired): an erasing batch is gone for its client (docs/design.md §6).
    ConditionExpression: `${live.condition} AND attribute_exists(#doneAt)`,
    ExpressionAttributeNames: batchNames(...live.names, 'catMinConfidence', 'doneAt'),
    ExpressionAttributeValues: { ...live.values, ':threshold': catMinConfidence },
    ReturnValues: 'ALL_NEW',
  };
}

/** One page of a batch's records, projected to what re-thresholding reads, after `afterFprint`. */
export const reclassifyPageQuery = (table: string, clientId: string, batchId: string, limit: number, afterFprint?: string): QueryCommandInput => ({
  ...batchRecordsQuery(table, clientId, batchId, ['fprint', 'status', 'isCat', 'catConfidence', 'uploadedAt', 'review'], afterFprint),
  Limit: limit,
});

/**
 * Flips one classified, unreviewed image's cat flag and its sparse client-cats key (cat_ts = upload_ts, or removed),
 * only if the flag is still what was read and no person has given a verdict meanwhile: a concurrent re-threshold never
 * moves the cat counter twice for one image, and never touches a person's verdict (docs/design.md §10).
 */
export function catFlagRequest(table: string, image: Pick<Image, 'clientId' | 'batchId' | 'fprint' | 'uploadedAt'>, isCat: boolean): UpdateCommandInput {
  return {
    TableName: table,
    Key: imageKey(image.clientId, image.batchId, image.fprint),
    UpdateExpression: isCat ? 'SET #isCat = :cat, #catAt = :uploadedAt' : 'SET #isCat = :cat REMOVE #catAt',
    ConditionExpression: '#status = :success AND #isCat = :was AND attribute_not_exists(#review)',
    ExpressionAttributeNames: imageNames('isCat', 'catAt', 'status', 'review'),
    ExpressionAttributeValues: { ':cat': isCat, ':was': !isCat, ':success': 'success', ...(isCat ? { ':uploadedAt': image.uploadedAt } : {}) },
  };
}

/**
 * A re-threshold of a reviewed image: only the machine's verdict kept beside the person's moves (isCat stays the
 * person's), and only if the review is still the one read.
 */
export function machineVerdictRequest(table: string, image: Pick<Image, 'clientId' | 'batchId' | 'fprint'>, review: Review, machineIsCat: boolean): UpdateCommandInput {
  return {
    TableName: table,
    Key: imageKey(image.clientId, image.batchId, image.fprint),
    UpdateExpression: 'SET #review.#mc = :mc',
    ConditionExpression: '#status = :success AND #review.#ts = :ts AND #review.#mc = :was',
    ExpressionAttributeNames: { ...imageNames('review', 'status'), '#mc': 'mc', '#ts': 'ts' },
    ExpressionAttributeValues: { ':mc': machineIsCat, ':was': review.machineIsCat, ':ts': review.reviewedAt, ':success': 'success' },
  };
}

// ---- a person's verdict (docs/design.md §10) ------------------------------------------------------------------

/**
 * Gives (review) or withdraws (undefined) a person's verdict on a classified image: the image's isCat becomes the
 * verdict (or the machine's again), its client-cats key follows, and its batch-review key moves between pending and
 * reviewed. Only if the image is still as read (its flag, and its review by time), so two reviews or a review and a
 * re-threshold never both count.
 */
export function reviewRequest(
  table: string,
  image: Pick<Image, 'clientId' | 'batchId' | 'fprint' | 'uploadedAt' | 'isCat' | 'catConfidence' | 'review'>,
  review: Review | undefined,
): UpdateCommandInput {
  const machine = image.review?.machineIsCat ?? image.isCat === true;
  const isCat = review ? review.isCat : machine;
  const set = ['#isCat = :cat', '#reviewKey = :reviewKey'];
  const remove: string[] = [];
  const names: ImageAttribute[] = ['isCat', 'reviewKey', 'status', 'review'];
  const values: Record<string, unknown> = {
    ':cat': isCat,
    ':reviewKey': reviewKey(review !== undefined, image.catConfidence ?? 0),
    ':success': 'success',
    ':was': image.isCat === true,
  };
  if (review) {
    set.push('#review = :review');
    values[':review'] = toStoredReview(review);
  } else remove.push('#review');
  names.push('catAt');
  if (isCat) {
    set.push('#catAt = :uploadedAt');
    values[':uploadedAt'] = image.uploadedAt;
  } else remove.push('#catAt');
  const condition = ['#status = :success', '#isCat = :was'];
  let extraNames: Record<string, string> = {};
  if (image.review) {
    condition.push('#review.#ts = :ts');
    values[':ts'] = image.review.reviewedAt;
    extraNames = { '#ts': 'ts' };
  } else condition.push('attribute_not_exists(#review)');
  return {
    TableName: table,
    Key: imageKey(image.clientId, image.batchId, image.fprint),
    UpdateExpression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
    ConditionExpression: condition.join(' AND '),
    ExpressionAttributeNames: { ...imageNames(...names), ...extraNames },
    ExpressionAttributeValues: values,
  };
}

/** What a review (or its withdrawal) moves on the counters: cats, reviewed and corrected, from before to after. */
export function reviewCounts(before: Pick<Image, 'isCat' | 'review'>, after: Review | undefined): Partial<Counts> {
  const machine = before.review?.machineIsCat ?? before.isCat === true;
  const isCatAfter = after ? after.isCat : machine;
  const corrected = (r: { isCat: boolean } | undefined) => (r !== undefined && r.isCat !== machine ? 1 : 0);
  return {
    cats: (isCatAfter ? 1 : 0) - (before.isCat === true ? 1 : 0),
    reviewed: (after ? 1 : 0) - (before.review ? 1 : 0),
    corrected: corrected(after) - corrected(before.review),
  };
}

// ---- completion callbacks the sweep looks after ---------------------------------------------------------------

/** A page of batches that owe their callback, done before `doneBefore` (epoch ms), oldest first. */
export function dueCallbacksQuery(table: string, doneBefore: number, limit: number, startKey?: Record<string, unknown>): QueryCommandInput {
  return {
    TableName: table,
    IndexName: INDEX.callbacksDue,
    KeyConditionExpression: '#callbackDue = :due AND #doneAt < :before',
    ExpressionAttributeNames: batchNames('callbackDue', 'doneAt'),
    ExpressionAttributeValues: { ':due': CALLBACK_DUE, ':before': doneBefore },
    Limit: limit,
    ...(startKey ? { ExclusiveStartKey: startKey } : {}),
  };
}

/**
 * Stamps that the sweep queues the callback again, only if it still owes it and nobody stamped it since `previous`
 * (so two sweeps never both queue it); the batch must exist and not be being erased.
 */
export function callbackRequeueRequest(table: string, clientId: string, batchId: string, now: number, previous: number | undefined): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #callbackRequeuedAt = :now',
    ConditionExpression:
      'attribute_exists(#callbackDue) AND attribute_not_exists(#deleting) AND ' +
      (previous === undefined ? 'attribute_not_exists(#callbackRequeuedAt)' : '#callbackRequeuedAt = :previous'),
    ExpressionAttributeNames: batchNames('callbackDue', 'deleting', 'callbackRequeuedAt'),
    ExpressionAttributeValues: { ':now': now, ...(previous === undefined ? {} : { ':previous': previous }) },
  };
}
