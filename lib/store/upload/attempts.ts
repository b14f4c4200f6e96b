// An upload's own item: its attempts and what it was counted as (docs/design.md §6).
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { UploadRef } from '../../domain/upload';
import type { TableAccess } from '../table/access';
import type { UploadAttribute } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { purgeAt, type UploadItem, uploadItemKey } from '../table/schema';
import { uploadWrite, type WriteExpression } from '../table/update-expression';

/**
 * Counts an attempt at the upload as it starts, before any step that may never return (a timeout, running out of
 * memory): the count answered includes this attempt, and a later attempt sees it whatever became of this one.
 */
export function startAttemptRequest(table: string, u: UploadRef): UpdateCommandInput {
  const w = kept(uploadWrite().add('attempts', ':one', 1), u);
  return { TableName: table, Key: uploadItemKey(u), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** The item's expiry, written by the first write to it and kept after. */
const kept = (w: WriteExpression<UploadAttribute>, u: UploadRef): WriteExpression<UploadAttribute> =>
  w.setIfNotExists('expiresAt', ':ttl', u.expiresAt).setIfNotExists('purgeAt', ':purge', purgeAt(u.expiresAt));

/** Takes back an attempt that ended without failing (handed back until another run's lease is over). */
export function endAttemptRequest(table: string, u: UploadRef): UpdateCommandInput {
  const w = uploadWrite().add('attempts', ':minus', -1);
  return { TableName: table, Key: uploadItemKey(u), ...w.when(w.is('attempts', '>', ':zero', 0)).update() };
}

/** Remembers the fingerprint an attempt found, so that a later attempt can finish its record without decoding. */
export function noteFingerprintRequest(table: string, u: UploadRef, fprint: string): UpdateCommandInput {
  return { TableName: table, Key: uploadItemKey(u), ...uploadWrite().set('fprint', ':fprint', fprint).update() };
}

/**
 * Marks the upload as counted a duplicate of `fprint`, once: the redelivery guard of a duplicate whose name is not kept.
 * It notes the fingerprint too (noteFingerprintRequest), for an attempt that gives up later.
 */
export function duplicateMarkRequest(table: string, u: UploadRef, fprint: string): UpdateCommandInput {
  const w = kept(uploadWrite().set('duplicateOf', ':fprint', fprint).set('fprint', ':fprint', fprint), u);
  return { TableName: table, Key: uploadItemKey(u), ...w.when(w.notExists('duplicateOf')).update() };
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
