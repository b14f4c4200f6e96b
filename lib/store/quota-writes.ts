// Counting uploads against clients' daily quotas, and setting clients' limits (docs/design.md §11): the writes beside
// client-limits.ts's reads, kept apart so that the API functions, which only read limits, bundle no write. An upload
// beyond the quota is marked on its own upload item, so that each of its attempts agrees.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { IceCatError } from '../errors';
import type { ClientLimits } from '../quota/limits';
import { uploadNames } from './attributes';
import { ClientLimitsReader, usageKey } from './client-limits';
import { clientKey, nowSeconds, uploadItemKey } from './schema';
import type { UploadRef } from './writes';

/** A day's usage item stays this long after the day (GET /v1/usage reads today's only). */
const USAGE_KEEP_DAYS = 40;

/** Limits set for a client never registered (client:create). */
export class UnregisteredClientError extends IceCatError {
  override name = 'UnregisteredClientError';
  readonly code = 'unregistered_client';
}

/** Sets (or, for null, removes: back to the default) a registered client's own limits. */
export function setClientLimitsRequest(table: string, clientId: string, limits: { [K in keyof ClientLimits]?: number | null }): UpdateCommandInput {
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  const set: string[] = [];
  const remove: string[] = [];
  for (const [field, attribute] of [['ratePerSecond', 'rate_per_s'], ['maxImagesPerDay', 'max_images_day'], ['maxBatchesPerDay', 'max_batches_day']] as const) {
    const value = limits[field];
    if (value === undefined) continue;
    names[`#${field}`] = attribute;
    if (value === null) remove.push(`#${field}`);
    else {
      values[`:${field}`] = value;
      set.push(`#${field} = :${field}`);
    }
  }
  const update = [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : ''].filter(Boolean).join(' ');
  return {
    TableName: table,
    Key: clientKey(clientId),
    UpdateExpression: update,
    ConditionExpression: 'attribute_exists(batch_id)',
    ExpressionAttributeNames: names,
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}

/** Counts one upload of the day unless `limit` are counted already (then the condition fails). */
export function countUploadRequest(table: string, clientId: string, day: string, limit: number, nowMs: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: usageKey(clientId, day),
    UpdateExpression: 'ADD #accepted :one SET #purgeAt = if_not_exists(#purgeAt, :purge)',
    ConditionExpression: '(attribute_not_exists(#accepted) AND :limit > :zero) OR #accepted < :limit',
    ExpressionAttributeNames: { '#accepted': 'accepted', '#purgeAt': 'purge_at' },
    ExpressionAttributeValues: { ':one': 1, ':zero': 0, ':limit': limit, ':purge': nowSeconds(nowMs) + USAGE_KEEP_DAYS * 86400 },
  };
}

export function countRefusedRequest(table: string, clientId: string, day: string, nowMs: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: usageKey(clientId, day),
    UpdateExpression: 'ADD #rejected :one SET #purgeAt = if_not_exists(#purgeAt, :purge)',
    ExpressionAttributeNames: { '#rejected': 'rejected', '#purgeAt': 'purge_at' },
    ExpressionAttributeValues: { ':one': 1, ':purge': nowSeconds(nowMs) + USAGE_KEEP_DAYS * 86400 },
  };
}

export function markQuotaExceededRequest(table: string, upload: UploadRef, day: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: uploadItemKey(upload),
    UpdateExpression: 'SET #quotaExceeded = if_not_exists(#quotaExceeded, :day)',
    ExpressionAttributeNames: uploadNames('quotaExceeded'),
    ExpressionAttributeValues: { ':day': day },
  };
}

/** Counts one batch created on the day unless `limit` are counted already (then the condition fails). */
export function countBatchRequest(table: string, clientId: string, day: string, limit: number, nowMs: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: usageKey(clientId, day),
    UpdateExpression: 'ADD #batches :one SET #purgeAt = if_not_exists(#purgeAt, :purge)',
    ConditionExpression: '(attribute_not_exists(#batches) AND :limit > :zero) OR #batches < :limit',
    ExpressionAttributeNames: { '#batches': 'batches', '#purgeAt': 'purge_at' },
    ExpressionAttributeValues: { ':one': 1, ':zero': 0, ':limit': limit, ':purge': nowSeconds(nowMs) + USAGE_KEEP_DAYS * 86400 },
  };
}

/** Takes back a batch counted by countBatchRequest whose creation did not happen (its name was taken meanwhile). */
export function uncountBatchRequest(table: string, clientId: string, day: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: usageKey(clientId, day),
    UpdateExpression: 'ADD #batches :minusOne',
    ConditionExpression: '#batches > :zero',
    ExpressionAttributeNames: { '#batches': 'batches' },
    ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
  };
}

/** Reads limits, counts uploads against them, and sets them. */
export class ClientQuotaStore extends ClientLimitsReader {
  /** Sets a client's own limits (null: back to the default). */
  async setLimits(clientId: string, limits: { [K in keyof ClientLimits]?: number | null }): Promise<void> {
    if (Object.values(limits).every((v) => v === undefined)) return;
    try {
      await this.opts.ddb.send(new UpdateCommand(setClientLimitsRequest(this.opts.tableName, clientId, limits)));
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) throw new UnregisteredClientError(`client ${clientId} is not registered`, { cause: err });
      throw err;
    }
    this.cache.delete(clientId);
  }

  /** Counts an upload against the day's quota: false (nothing counted) when `limit` uploads are counted already. */
  async countUpload(clientId: string, day: string, limit: number): Promise<boolean> {
    try {
      await this.opts.ddb.send(new UpdateCommand(countUploadRequest(this.opts.tableName, clientId, day, limit, this.now())));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Counts a batch about to be created against the day's limit: false (nothing counted) when it is reached. */
  async countBatch(clientId: string, day: string, limit: number): Promise<boolean> {
    try {
      await this.opts.ddb.send(new UpdateCommand(countBatchRequest(this.opts.tableName, clientId, day, limit, this.now())));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Takes back a batch countBatch counted that was not created after all. */
  async uncountBatch(clientId: string, day: string): Promise<void> {
    try {
      await this.opts.ddb.send(new UpdateCommand(uncountBatchRequest(this.opts.tableName, clientId, day)));
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  /** Counts an upload refused on the day that no batch records (a new batch beyond the day's batches). */
  async countRefused(clientId: string, day: string): Promise<void> {
    await this.opts.ddb.send(new UpdateCommand(countRefusedRequest(this.opts.tableName, clientId, day, this.now())));
  }

  /** Marks the upload beyond the quota (every later attempt reads it from startAttempt) and counts it refused. */
  async refuseUpload(upload: UploadRef, day: string): Promise<void> {
    await this.opts.ddb.send(new UpdateCommand(markQuotaExceededRequest(this.opts.tableName, upload, day)));
    await this.opts.ddb.send(new UpdateCommand(countRefusedRequest(this.opts.tableName, upload.clientId, day, this.now())));
  }

}
