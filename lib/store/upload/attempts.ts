// An upload's own item: its attempts and what it was counted as (docs/design.md §6).
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { UploadRef } from '../../domain/upload';
import type { TableAccess } from '../table/access';
import { uploadNames } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { purgeAt, type UploadItem, uploadItemKey } from '../table/schema';

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

/** The attempts counted on an upload's item, the one starting included, and the fingerprint one of them noted. */
export interface AttemptCount {
  attempts: number;
  fprint?: string;
  /** The UTC day whose images quota the upload was beyond, when its first attempt found it so (docs/design.md §11). */
  quotaExceeded?: string;
  /** The UTC day whose images quota the upload was counted against, once counted. */
  quotaCounted?: string;
}

/** Counts an attempt as it starts; answers the attempts so far (this one included) and the fingerprint one found. */
export async function startAttempt(store: TableAccess, upload: UploadRef): Promise<AttemptCount> {
  const out = await store.ddb.send(new UpdateCommand(startAttemptRequest(store.table, upload)));
  const item = (out.Attributes ?? {}) as Partial<UploadItem>;
  return {
    attempts: typeof item.attempts === 'number' ? item.attempts : 1,
    ...(typeof item.seen_fprint === 'string' ? { fprint: item.seen_fprint } : {}),
    ...(typeof item.quota_over === 'string' ? { quotaExceeded: item.quota_over } : {}),
    ...(typeof item.quota_day === 'string' ? { quotaCounted: item.quota_day } : {}),
  };
}

/** Takes back an attempt that ended without failing (handed back until another run's lease is over). */
export async function endAttempt(store: TableAccess, upload: UploadRef): Promise<void> {
  try {
    await store.ddb.send(new UpdateCommand(endAttemptRequest(store.table, upload)));
  } catch (err) {
    if (!conditionFailed(err)) throw err;
  }
}

/** Remembers the fingerprint an attempt found, for an attempt that gives up without decoding. */
export async function noteFingerprint(store: TableAccess, upload: UploadRef, fprint: string): Promise<void> {
  await store.ddb.send(new UpdateCommand(noteFingerprintRequest(store.table, upload, fprint)));
}
