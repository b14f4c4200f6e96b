// A person's verdict on an image (docs/design.md §10), and the re-threshold that moves the machine's.
import type { QueryCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchNames, imageNames, type ImageAttribute } from './attributes';
import type { Counts, Image, Review } from '../domain';
import { batchKey, imageKey, reviewKey, toStoredReview } from './schema';
import { liveBatch } from './batch-summary';
import { batchRecordsQuery } from './batch-counters';

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
