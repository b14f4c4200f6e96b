// Counting uploads against clients' daily quotas, and setting clients' limits (docs/design.md §11): the writes beside
// client-limits.ts's reads, kept apart so that the API functions, which only read limits, bundle no write. An upload
// is counted on a mark: its own upload item records the day it was counted (quota_day), with the count, so that it
// counts exactly once whatever becomes of its attempts; an upload beyond the quota is marked too (quota_over), so that
// each of its attempts agrees.
//
// With transactions the mark and the count are one TransactWriteItems. Without them (dynalite) the count comes first
// and is idempotent for as long as the mark is missing: it adds the upload's id to the usage item's `counting` set,
// conditionally on the id not being there, and the id leaves the set only after the mark is written. A crash after the
// count leaves the id in the set, and the next attempt's count finds it (condition failed, the id there: counted
// already) and writes the mark; a crash after the mark leaves one stale id in a day's item, harmless. Attempts at one
// upload follow one another (the local queue never has one message in flight twice).
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { UploadRef } from '../../domain/upload';
import { IceCatError } from '../../errors';
import type { ClientLimits } from '../../quota/limits';
import { conditionFailed, conditionFailedAt } from '../table/condition';
import { clientKey, uploadItemKey } from '../table/schema';
import { transaction, transactWrite } from '../table/transact';
import { type Condition, uploadWrite, WriteExpression } from '../table/update-expression';
import { ClientLimitsReader, type ClientLimitsStoreOptions, type UsageAttribute, usageKey, usagePurgeAt, usageWrite } from './limits';

/** Limits set for a client never registered (client:create). */
export class UnregisteredClientError extends IceCatError {
  override name = 'UnregisteredClientError';
  readonly code = 'unregistered_client';
}

/** Sets (or, for null, removes: back to the default) a registered client's own limits. */
export function setClientLimitsRequest(
  table: string,
  clientId: string,
  limits: { [K in keyof ClientLimits]?: number | null },
): UpdateCommandInput {
  const w = new WriteExpression({
    ratePerSecond: 'rate_per_s',
    maxImagesPerDay: 'max_images_day',
    maxBatchesPerDay: 'max_batches_day',
    partition: 'batch_id',
  });
  for (const field of ['ratePerSecond', 'maxImagesPerDay', 'maxBatchesPerDay'] as const) {
    const value = limits[field];
    if (value === null) w.remove(field);
    else if (value !== undefined) w.set(field, `:${field}`, value);
  }
  return { TableName: table, Key: clientKey(clientId), ...w.when(w.exists('partition')).update() };
}

/** `counter` moved by one unless `limit` are counted already: the daily quotas' condition. */
function countUnder(w: WriteExpression<UsageAttribute>, counter: 'accepted' | 'batches', limit: number): Condition<UsageAttribute> {
  const limitValue = w.val(':limit', limit);
  return w.or(w.and(w.notExists(counter), w.compare(limitValue, '>', w.val(':zero', 0))), w.compare(counter, '<', limitValue));
}

/** Counts one upload of the day unless `limit` are counted already (then the condition fails). */
export function countUploadRequest(table: string, clientId: string, day: string, limit: number, nowMs: number): UpdateCommandInput {
  const w = usageWrite().add('accepted', ':one', 1).setIfNotExists('purgeAt', ':purge', usagePurgeAt(nowMs));
  return { TableName: table, Key: usageKey(clientId, day), ...w.when(countUnder(w, 'accepted', limit)).update() };
}

/**
 * The count of one upload without transactions: idempotent while its id (`upload`) stays in the usage item's
 * `counting` set (see the top of this file).
 */
export function countUploadOnceRequest(
  table: string,
  clientId: string,
  day: string,
  limit: number,
  upload: string,
  nowMs: number,
): UpdateCommandInput {
  const w = usageWrite()
    .add('accepted', ':one', 1)
    .add('counting', ':upload', new Set([upload]));
  w.setIfNotExists('purgeAt', ':purge', usagePurgeAt(nowMs)).when(
    w.not(w.contains('counting', w.val(':id', upload))),
    countUnder(w, 'accepted', limit),
  );
  return { TableName: table, Key: usageKey(clientId, day), ...w.update() };
}

/** The upload's id leaves the `counting` set once its mark is written. */
export function countedRequest(table: string, clientId: string, day: string, upload: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: usageKey(clientId, day),
    ...usageWrite()
      .delete('counting', ':upload', new Set([upload]))
      .update(),
  };
}

/** The mark of an upload counted against `day`'s quota; with transactions, only where no attempt counted it before. */
export function markCountedRequest(table: string, upload: UploadRef, day: string, once: boolean): UpdateCommandInput {
  const w = uploadWrite().setIfNotExists('quotaCounted', ':day', day);
  if (once) w.when(w.notExists('quotaCounted'));
  return { TableName: table, Key: uploadItemKey(upload), ...w.update() };
}

export function countRefusedRequest(table: string, clientId: string, day: string, nowMs: number): UpdateCommandInput {
  const w = usageWrite().add('rejected', ':one', 1).setIfNotExists('purgeAt', ':purge', usagePurgeAt(nowMs));
  return { TableName: table, Key: usageKey(clientId, day), ...w.update() };
}

export function markQuotaExceededRequest(table: string, upload: UploadRef, day: string): UpdateCommandInput {
  return { TableName: table, Key: uploadItemKey(upload), ...uploadWrite().setIfNotExists('quotaExceeded', ':day', day).update() };
}

/** Counts one batch created on the day unless `limit` are counted already (then the condition fails). */
export function countBatchRequest(table: string, clientId: string, day: string, limit: number, nowMs: number): UpdateCommandInput {
  const w = usageWrite().add('batches', ':one', 1).setIfNotExists('purgeAt', ':purge', usagePurgeAt(nowMs));
  return { TableName: table, Key: usageKey(clientId, day), ...w.when(countUnder(w, 'batches', limit)).update() };
}

/** Takes back a batch counted by countBatchRequest whose creation did not happen (its name was taken meanwhile). */
export function uncountBatchRequest(table: string, clientId: string, day: string): UpdateCommandInput {
  const w = usageWrite().add('batches', ':minusOne', -1);
  return { TableName: table, Key: usageKey(clientId, day), ...w.when(w.is('batches', '>', ':zero', 0)).update() };
}

export interface ClientQuotaStoreOptions extends ClientLimitsStoreOptions {
  /** The backend has transactions (DDB_TRANSACTIONS): the mark and the count are one write. Default false. */
  transactions?: boolean;
}

/** Reads limits, counts uploads against them, and sets them. */
export class ClientQuotaStore extends ClientLimitsReader {
  private readonly transactions: boolean;

  constructor(opts: ClientQuotaStoreOptions) {
    super(opts);
    this.transactions = opts.transactions ?? false;
  }

  /** Sets a client's own limits (null: back to the default). */
  async setLimits(clientId: string, limits: { [K in keyof ClientLimits]?: number | null }): Promise<void> {
    if (Object.values(limits).every((v) => v === undefined)) return;
    try {
      await this.opts.ddb.send(new UpdateCommand(setClientLimitsRequest(this.opts.tableName, clientId, limits)));
    } catch (err) {
      if (conditionFailed(err)) throw new UnregisteredClientError(`client ${clientId} is not registered`, { cause: err });
      throw err;
    }
    this.cache.delete(clientId);
  }

  /**
   * Counts the upload against the day's quota once, marking its item: true when it is counted (now, or by an earlier
   * attempt), false (nothing counted) when `limit` uploads are counted already.
   */
  async countUpload(upload: UploadRef, day: string, limit: number): Promise<boolean> {
    const { ddb, tableName } = this.opts;
    if (this.transactions) {
      try {
        await transactWrite(
          ddb,
          transaction(
            markCountedRequest(tableName, upload, day, true),
            countUploadRequest(tableName, upload.clientId, day, limit, this.now()),
          ),
        );
        return true;
      } catch (err) {
        if (conditionFailedAt(err, 0)) return true; // marked: counted by an earlier attempt
        if (conditionFailedAt(err, 1)) return false;
        throw err;
      }
    }
    const id = uploadItemKey(upload).img_fprint;
    try {
      await ddb.send(new UpdateCommand(countUploadOnceRequest(tableName, upload.clientId, day, limit, id, this.now())));
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      // The limit, or this upload's own count by an attempt that stopped before its mark.
      const usage = await ddb.send(
        new GetCommand({
          TableName: tableName,
          Key: usageKey(upload.clientId, day),
          ProjectionExpression: '#counting',
          ExpressionAttributeNames: { '#counting': 'counting' },
          ConsistentRead: true,
        }),
      );
      const counting = usage.Item?.counting as Set<string> | undefined;
      if (!counting?.has(id)) return false;
    }
    await ddb.send(new UpdateCommand(markCountedRequest(tableName, upload, day, false)));
    await ddb.send(new UpdateCommand(countedRequest(tableName, upload.clientId, day, id)));
    return true;
  }

  /** Counts a batch about to be created against the day's limit: false (nothing counted) when it is reached. */
  async countBatch(clientId: string, day: string, limit: number): Promise<boolean> {
    try {
      await this.opts.ddb.send(new UpdateCommand(countBatchRequest(this.opts.tableName, clientId, day, limit, this.now())));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  /** Takes back a batch countBatch counted that was not created after all. */
  async uncountBatch(clientId: string, day: string): Promise<void> {
    try {
      await this.opts.ddb.send(new UpdateCommand(uncountBatchRequest(this.opts.tableName, clientId, day)));
    } catch (err) {
      if (!conditionFailed(err)) throw err;
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
