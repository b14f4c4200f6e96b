// An upload's own item: its attempts and what it was counted as (docs/design.md §6).
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { uploadNames } from './attributes';
import type { UploadRef } from '../domain';
import { purgeAt, uploadItemKey } from './schema';

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
