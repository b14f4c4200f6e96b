// The ingest's writes to the table. Each request is built by a pure function (unit-tested) and sent by another.
// Without transactions (dynalite has none), every state change is a conditional write on the image item, and only
// the run whose write succeeded moves the batch counters, so counters stay exact under concurrency and redelivery.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type PutCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import {
  BATCH_SK,
  LIMITS,
  batchKey,
  imageKey,
  statusTs,
  ttlFor,
  type BatchItem,
  type ImageItem,
  type Label,
  type TrimmedLabels,
} from './schema';

export interface BatchSettings {
  debug: boolean;
  retentionDays: number;
}

export type Counter = 'n_total' | 'n_success' | 'n_fail' | 'n_duplicate' | 'n_cats';

// ---- request builders ------------------------------------------------------------------------------------

/** Creates the summary of a batch opened by its first upload (no POST /v1/batches before it). */
export function buildOpenBatch(table: string, batchId: string, clientId: string, now: number, retentionDays: number): PutCommandInput {
  const item: BatchItem = {
    ...batchKey(batchId),
    img_fprint: BATCH_SK,
    owner_id: clientId,
    created_ts: now,
    debug: false,
    retention_days: retentionDays,
    ttl: ttlFor(now, retentionDays),
    n_total: 0,
    n_success: 0,
    n_fail: 0,
    n_duplicate: 0,
    n_cats: 0,
  };
  return { TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(batch_id)' };
}

export function buildCount(table: string, batchId: string, counters: Partial<Record<Counter, number>>): UpdateCommandInput {
  const entries = Object.entries(counters).filter(([, n]) => n);
  return {
    TableName: table,
    Key: batchKey(batchId),
    UpdateExpression: `ADD ${entries.map(([name]) => `${name} :${name}`).join(', ')}`,
    ExpressionAttributeValues: Object.fromEntries(entries.map(([name, n]) => [`:${name}`, n])),
  };
}

export interface ClaimInput {
  batchId: string;
  fprint: string;
  clientId: string;
  key: string;
  fileName: string;
  phash: string;
  format: string;
  width: number;
  height: number;
  claimId: string;
  now: number;
  leaseMs: number;
  retentionDays: number;
}

/**
 * Claims (batch_id, img_fprint) for classification: creates the item, or takes over a 'processing' claim whose lease
 * has expired. Fails the condition when the image is already claimed or done. Of the index keys the claim writes
 * only client_id (the image is findable by fingerprint at once, through client-fprint); status_ts and upload_ts
 * come with the result, so a claim costs one index write instead of five and the result no index deletes.
 * While processing, an image is listed from the batch's own partition.
 */
export function buildClaim(table: string, c: ClaimInput): UpdateCommandInput {
  return {
    TableName: table,
    Key: imageKey(c.batchId, c.fprint),
    UpdateExpression:
      'SET op_status = :processing, claim_id = :claim, lease_until = :lease, client_id = :client, ' +
      's3img_key = :key, file_name = :file, phash = :phash, #format = :format, ' +
      'width = :w, height = :h, received_ts = if_not_exists(received_ts, :now), #ttl = if_not_exists(#ttl, :ttl)',
    ConditionExpression: 'attribute_not_exists(img_fprint) OR (op_status = :processing AND lease_until < :now)',
    ExpressionAttributeNames: { '#format': 'format', '#ttl': 'ttl' },
    ExpressionAttributeValues: {
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
      ':now': c.now,
      ':ttl': ttlFor(c.now, c.retentionDays),
    },
    ReturnValues: 'ALL_OLD',
  };
}

export interface Outcome {
  status: 'success' | 'fail';
  /** When the image was first received (the claim's received_ts): its upload time in every index. */
  uploadTs: number;
  now: number;
  processedKey: string;
  isCat?: boolean;
  labels?: Label[];
  trimmed?: TrimmedLabels;
  error?: { code: string; message: string };
  logs?: string[];
}

/** Final state of a claimed image; only the claim's holder may write it. */
export function buildFinish(table: string, batchId: string, fprint: string, claimId: string, o: Outcome): UpdateCommandInput {
  const set = [
    'op_status = :status',
    'upload_ts = :upload_ts',
    'status_ts = :status_ts',
    'rek_ts = :now',
    'processed_key = :processed',
  ];
  const values: Record<string, unknown> = {
    ':status': o.status,
    ':upload_ts': o.uploadTs,
    ':status_ts': statusTs(o.status, o.uploadTs),
    ':now': o.now,
    ':processed': o.processedKey,
    ':claim': claimId,
  };
  if (o.status === 'success') {
    set.push('rek_iscat = :cat', 'labels = :labels', 'rek_resp = :resp');
    Object.assign(values, { ':cat': o.isCat ?? false, ':labels': o.labels ?? [], ':resp': o.trimmed });
    if (o.isCat) set.push('cat_ts = :upload_ts');
  }
  if (o.error) {
    set.push('err_code = :err_code', 'err_msg = :err_msg');
    Object.assign(values, { ':err_code': o.error.code, ':err_msg': o.error.message.slice(0, LIMITS.errMessageChars) });
  }
  if (o.logs?.length) {
    set.push('logs = :logs', 'log_ts = :upload_ts');
    values[':logs'] = o.logs;
  }
  return {
    TableName: table,
    Key: imageKey(batchId, fprint),
    UpdateExpression: `SET ${set.join(', ')} REMOVE claim_id, lease_until`,
    ConditionExpression: 'claim_id = :claim',
    ExpressionAttributeValues: values,
  };
}

/** Ends a claim early so a retry of the same upload can take it at once (a transient failure). */
export function buildRelease(table: string, batchId: string, fprint: string, claimId: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: imageKey(batchId, fprint),
    UpdateExpression: 'SET lease_until = :zero',
    ConditionExpression: 'claim_id = :claim',
    ExpressionAttributeValues: { ':zero': 0, ':claim': claimId },
  };
}

/**
 * Counts another upload of an image already claimed in the batch. The file name set makes a redelivered
 * event a no-op; past LIMITS.dupFiles names only the count grows.
 */
export function buildDuplicate(table: string, batchId: string, fprint: string, fileName: string, keepName: boolean): UpdateCommandInput {
  return keepName
    ? {
        TableName: table,
        Key: imageKey(batchId, fprint),
        UpdateExpression: 'ADD dup_count :one, dup_files :name',
        ConditionExpression: 'attribute_exists(img_fprint) AND NOT contains(dup_files, :file)',
        ExpressionAttributeValues: { ':one': 1, ':name': new Set([fileName]), ':file': fileName },
      }
    : {
        TableName: table,
        Key: imageKey(batchId, fprint),
        UpdateExpression: 'ADD dup_count :one',
        ConditionExpression: 'attribute_exists(img_fprint)',
        ExpressionAttributeValues: { ':one': 1 },
      };
}

export interface RejectionInput {
  batchId: string;
  recordKey: string;
  clientId: string;
  key: string;
  fileName: string;
  now: number;
  retentionDays: number;
  error: { code: string; message: string };
  processedKey: string;
  logs?: string[];
}

/** A `fail` record for an upload rejected before any claim; conditional so a redelivery writes nothing. */
export function buildRejection(table: string, r: RejectionInput): PutCommandInput {
  const item: ImageItem & { processed_key: string } = {
    ...imageKey(r.batchId, r.recordKey),
    client_id: r.clientId,
    s3img_key: r.key,
    file_name: r.fileName,
    op_status: 'fail',
    status_ts: statusTs('fail', r.now),
    upload_ts: r.now,
    rek_ts: r.now,
    ttl: ttlFor(r.now, r.retentionDays),
    err_code: r.error.code,
    err_msg: r.error.message.slice(0, LIMITS.errMessageChars),
    processed_key: r.processedKey,
    ...(r.logs?.length ? { logs: r.logs, log_ts: r.now } : {}),
  };
  return { TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(img_fprint)' };
}

// ---- senders ---------------------------------------------------------------------------------------------

const conditionFailed = (err: unknown): boolean => err instanceof ConditionalCheckFailedException;

export class Records {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async getBatch(batchId: string): Promise<BatchItem | undefined> {
    const out = await this.ddb.send(new GetCommand({ TableName: this.table, Key: batchKey(batchId), ConsistentRead: true }));
    return out.Item as BatchItem | undefined;
  }

  /** The batch's summary, created when this is the batch's first upload. */
  async openBatch(batchId: string, clientId: string, now: number, retentionDays: number): Promise<BatchItem> {
    const existing = await this.getBatch(batchId);
    if (existing) return existing;
    const put = buildOpenBatch(this.table, batchId, clientId, now, retentionDays);
    try {
      await this.ddb.send(new PutCommand(put));
      return put.Item as BatchItem;
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      return (await this.getBatch(batchId))!; // opened concurrently by another upload
    }
  }

  async count(batchId: string, counters: Partial<Record<Counter, number>>): Promise<void> {
    await this.ddb.send(new UpdateCommand(buildCount(this.table, batchId, counters)));
  }

  async getImage(batchId: string, fprint: string): Promise<ImageItem | undefined> {
    const out = await this.ddb.send(new GetCommand({ TableName: this.table, Key: imageKey(batchId, fprint), ConsistentRead: true }));
    return out.Item as ImageItem | undefined;
  }

  /** 'new' or 'takeover', with the image's first receipt time, when this run holds the claim; otherwise the item that holds it. */
  async claim(
    c: ClaimInput,
  ): Promise<{ won: 'new' | 'takeover'; receivedTs: number } | { won: false; existing: ImageItem }> {
    try {
      const out = await this.ddb.send(new UpdateCommand(buildClaim(this.table, c)));
      const previous = out.Attributes as ImageItem | undefined;
      return previous ? { won: 'takeover', receivedTs: previous.received_ts ?? c.now } : { won: 'new', receivedTs: c.now };
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      const existing = await this.getImage(c.batchId, c.fprint);
      if (!existing) return this.claim(c); // removed between the two calls: try again
      return { won: false, existing };
    }
  }

  /** False when the claim was taken over meanwhile. */
  async finish(batchId: string, fprint: string, claimId: string, o: Outcome): Promise<boolean> {
    try {
      await this.ddb.send(new UpdateCommand(buildFinish(this.table, batchId, fprint, claimId, o)));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  async release(batchId: string, fprint: string, claimId: string): Promise<void> {
    try {
      await this.ddb.send(new UpdateCommand(buildRelease(this.table, batchId, fprint, claimId)));
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
  }

  /** False when this upload was already counted (a redelivered event). */
  async addDuplicate(batchId: string, fprint: string, fileName: string, knownNames: number): Promise<boolean> {
    try {
      await this.ddb.send(
        new UpdateCommand(buildDuplicate(this.table, batchId, fprint, fileName, knownNames < LIMITS.dupFiles)),
      );
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  /** False when the same rejection was already recorded (a redelivered event). */
  async reject(r: RejectionInput): Promise<boolean> {
    try {
      await this.ddb.send(new PutCommand(buildRejection(this.table, r)));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }
}
