// A person's verdict on an image (docs/design.md §10), and the re-threshold that moves the machine's.

import { setTimeout as sleep } from 'node:timers/promises';
import { QueryCommand, type QueryCommandInput, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { backoffDelay } from '../../backoff';
import type { Batch } from '../../domain/batch';
import type { Counts } from '../../domain/counts';
import { type Image, isCatAt, machineIsCatOf } from '../../domain/image';
import type { Review } from '../../domain/review';
import { type BatchCounters, batchRecordsQuery, countRequest } from '../batch/counters';
import { liveBatch } from '../batch/summary';
import { getImageRecord } from '../image/record';
import { type ImageAttribute, toImage } from '../table/attributes';
import { conditionFailed } from '../table/condition';
import { BatchErasedError, ReviewConflictError } from '../table/errors';
import { auditKey, batchKey, type ImageItem, imageKey, nowSeconds, reviewKey, toStoredReview } from '../table/schema';
import { batchWrite, type Condition, imageWrite, type WriteExpression } from '../table/update-expression';

/** Remembers a done batch's new cat threshold; fails (condition) when the batch is missing, gone (liveBatch) or not done. */
export function thresholdRequest(
  table: string,
  clientId: string,
  batchId: string,
  catMinConfidence: number,
  nowMs: number,
): UpdateCommandInput {
  const w = batchWrite().set('catMinConfidence', ':threshold', catMinConfidence);
  // Done, and live (not being erased, not expired): an erasing batch is gone for its client (docs/design.md §6).
  w.when(liveBatch(w, nowMs), w.exists('doneAt'));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** One page of a batch's records, projected to what re-thresholding reads, after `afterFprint`. */
export const reclassifyPageQuery = (
  table: string,
  clientId: string,
  batchId: string,
  limit: number,
  afterFprint?: string,
): QueryCommandInput => ({
  ...batchRecordsQuery(table, clientId, batchId, ['fprint', 'status', 'isCat', 'catConfidence', 'uploadedAt', 'review'], afterFprint),
  Limit: limit,
});

/**
 * Flips one classified, unreviewed image's cat flag and its sparse client-cats key (cat_ts = upload_ts, or removed),
 * only if the flag is still what was read and no person has given a verdict meanwhile: a concurrent re-threshold never
 * moves the cat counter twice for one image, and never touches a person's verdict (docs/design.md §10).
 */
export function catFlagRequest(
  table: string,
  image: Pick<Image, 'clientId' | 'batchId' | 'fprint' | 'uploadedAt'>,
  isCat: boolean,
): UpdateCommandInput {
  const w = imageWrite().set('isCat', ':cat', isCat);
  if (isCat) w.set('catAt', ':uploadedAt', image.uploadedAt);
  else w.remove('catAt');
  w.when(w.is('status', '=', ':success', 'success'), w.is('isCat', '=', ':was', !isCat), w.notExists('review'));
  return { TableName: table, Key: imageKey(image.clientId, image.batchId, image.fprint), ...w.update() };
}

/**
 * A re-threshold of a reviewed image: only the machine's verdict kept beside the person's moves (isCat stays the
 * person's), and only if the review is still the one read.
 */
export function machineVerdictRequest(
  table: string,
  image: Pick<Image, 'clientId' | 'batchId' | 'fprint'>,
  review: Review,
  machineIsCat: boolean,
): UpdateCommandInput {
  const w = imageWrite().set(['review', 'mc'], ':mc', machineIsCat);
  w.when(
    w.is('status', '=', ':success', 'success'),
    w.is(['review', 'ts'], '=', ':ts', review.reviewedAt),
    w.is(['review', 'mc'], '=', ':was', review.machineIsCat),
  );
  return { TableName: table, Key: imageKey(image.clientId, image.batchId, image.fprint), ...w.update() };
}

/**
 * Gives (review) or withdraws (undefined) a person's verdict on a classified image: the image's isCat becomes the
 * verdict (or the machine's again), its client-cats key follows, and its batch-review key moves between pending and
 * reviewed. Only if the image is still as read (its flag, and its review by time), so two reviews or a review and a
 * re-threshold never both count.
 */
export function reviewRequest(
  table: string,
  image: Pick<Image, 'clientId' | 'batchId' | 'fprint' | 'uploadedAt' | 'isCat' | 'catConfidence' | 'review' | 'audit'>,
  review: Review | undefined,
): UpdateCommandInput {
  const machine = image.review?.machineIsCat ?? image.isCat === true;
  const isCat = review ? review.isCat : machine;
  const w = imageWrite()
    .set('isCat', ':cat', isCat)
    .set('reviewKey', ':reviewKey', reviewKey(review !== undefined, image.catConfidence ?? 0));
  if (review) w.set('review', ':review', toStoredReview(review));
  else w.remove('review');
  if (isCat) w.set('catAt', ':uploadedAt', image.uploadedAt);
  else w.remove('catAt');
  w.when(w.is('status', '=', ':success', 'success'), w.is('isCat', '=', ':was', image.isCat === true));
  // An audited image's batch-audit key follows the verdict; one not audited must still not be when this is written
  // (a draw reads the verdict too), so a review and a draw racing never leave the key behind the verdict.
  if (image.audit) w.set('auditKey', ':auditKey', auditKey(image.audit, review));
  else w.when(w.notExists('audit'));
  w.when(reviewAsRead(w, image));
  return { TableName: table, Key: imageKey(image.clientId, image.batchId, image.fprint), ...w.update() };
}

/** Holds a write to the image's verdict as it was read: the same review (by its time), or none. */
export const reviewAsRead = (w: WriteExpression<ImageAttribute>, image: Pick<Image, 'review'>): Condition<ImageAttribute> =>
  image.review ? w.is(['review', 'ts'], '=', ':ts', image.review.reviewedAt) : w.notExists('review');

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

export type ReclassifyOutcome =
  | { outcome: 'missing' }
  /** Still open or processing: its flags would be set by the ingest too. */
  | { outcome: 'not-done' }
  /** `after`: the last fingerprint handled when the time budget ran out before the batch's end. */
  | { outcome: 'reclassified'; batch: Batch; after?: string };

export type ReviewOutcome =
  /** No such image in the batch (or the batch is gone, or being erased). */
  | { outcome: 'missing' }
  /** The image is a `fail` record: there is no verdict to review. */
  | { outcome: 'failed'; image: Image }
  /** The image is still being classified: no machine verdict yet. */
  | { outcome: 'not-classified'; image: Image }
  | { outcome: 'reviewed'; image: Image };

/** A person's verdict as given: isCat and an optional note. */
export interface Verdict {
  isCat: boolean;
  note?: string;
}

/** Rounds of read-then-write a review makes while other writes (reviews, a re-threshold) change the image under it. */
const REVIEW_ROUNDS = 12;

/** Waits between those rounds: many reviews of one image at once spread out instead of colliding again. */
const REVIEW_BACKOFF = { baseDelayMs: 10, maxDelayMs: 400 };

export interface ReclassifyOptions {
  /** Continue after this fingerprint (an earlier request's `after`). */
  after?: string;
  /** Epoch ms: no new page is started after it. */
  deadline: number;
  pageSize?: number;
}

/** Records read per re-threshold page, and cat flags written at once. */
const RECLASSIFY_PAGE = 500;

const RECLASSIFY_PARALLEL = 16;

/**
 * Re-thresholds a done batch from its stored cat confidences, no Rekognition call: remembers the threshold, then
 * pages through its records flipping the cat flags (and sparse cat keys) that change, moving `cats` by what flipped,
 * until the batch's end or the deadline (then `after` says where to go on).
 */
export async function reclassifyBatch(
  store: BatchCounters,
  clientId: string,
  batchId: string,
  catMinConfidence: number,
  opts: ReclassifyOptions,
): Promise<ReclassifyOutcome> {
  try {
    await store.ddb.send(new UpdateCommand(thresholdRequest(store.table, clientId, batchId, catMinConfidence, store.now())));
  } catch (err) {
    if (!conditionFailed(err)) throw err;
    return { outcome: store.batches.isLive(await store.batches.getBatch(clientId, batchId)) ? 'not-done' : 'missing' };
  }
  let after = opts.after;
  do {
    const out = await store.ddb.send(
      new QueryCommand(reclassifyPageQuery(store.table, clientId, batchId, opts.pageSize ?? RECLASSIFY_PAGE, after)),
    );
    const changes = ((out.Items ?? []) as ImageItem[])
      .map((item) => ({ ...toImage(item), clientId, batchId }))
      .filter(
        (i) => i.status === 'success' && i.catConfidence !== undefined && isCatAt(i.catConfidence, catMinConfidence) !== machineIsCatOf(i),
      );
    const moved: Partial<Counts> = { cats: 0, corrected: 0 };
    for (let i = 0; i < changes.length; i += RECLASSIFY_PARALLEL) {
      const deltas = await Promise.all(
        changes.slice(i, i + RECLASSIFY_PARALLEL).map((image) => rethreshold(store, image, catMinConfidence)),
      );
      for (const d of deltas) {
        moved.cats! += d.cats ?? 0;
        moved.corrected! += d.corrected ?? 0;
      }
    }
    // Its condition fails only for a batch being erased or expired meanwhile: it is gone, nothing is left to count
    // for, and no later page is read.
    if (
      (moved.cats !== 0 || moved.corrected !== 0) &&
      !(await store.batches.conditionalUpdate(countRequest(store.table, clientId, batchId, moved, store.now())))
    ) {
      return { outcome: 'missing' };
    }
    after = out.LastEvaluatedKey ? String(out.LastEvaluatedKey.img_fprint) : undefined;
  } while (after !== undefined && store.now() < opts.deadline);
  const batch = await store.batches.getBatch(clientId, batchId);
  if (!batch || !store.batches.isLive(batch)) return { outcome: 'missing' };
  return { outcome: 'reclassified', batch, ...(after !== undefined ? { after } : {}) };
}

/**
 * One image at a new threshold: an unreviewed image's cat flag flips (±1 cats); a reviewed one keeps the person's
 * verdict and only its machine verdict moves (±1 corrected). When another write changed the image since it was read
 * (another re-threshold, a review given or withdrawn) it is read again and judged as it is now.
 */
async function rethreshold(store: BatchCounters, read: Image, threshold: number): Promise<Partial<Counts>> {
  let image: Image | undefined = read;
  for (let round = 0; image && round < REVIEW_ROUNDS; round++) {
    const machine = isCatAt(image.catConfidence ?? 0, threshold);
    if (image.status !== 'success' || machine === machineIsCatOf(image)) return {};
    const review = image.review;
    try {
      if (review) {
        await store.ddb.send(new UpdateCommand(machineVerdictRequest(store.table, image, review, machine)));
        return { corrected: (review.isCat !== machine ? 1 : 0) - (review.isCat !== review.machineIsCat ? 1 : 0) };
      }
      await store.ddb.send(new UpdateCommand(catFlagRequest(store.table, image, machine)));
      return { cats: machine ? 1 : -1 };
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
    image = await getImageRecord(store, image.clientId, image.batchId, image.fprint);
  }
  return {};
}

/**
 * Gives a person's verdict on a classified image (or withdraws it: `verdict` undefined), moving the batch's cats,
 * reviewed and corrected counters with it, in one transaction or as two writes (as every record write). Read, then
 * written only if the image is still as read; when a re-threshold or another review changed it meanwhile, again.
 * A batch being erased or gone answers missing, and nothing is counted into it.
 */
export async function reviewImage(
  store: BatchCounters,
  clientId: string,
  batchId: string,
  fprint: string,
  verdict: Verdict | undefined,
): Promise<ReviewOutcome> {
  if (!store.batches.isLive(await store.batches.getBatch(clientId, batchId))) return { outcome: 'missing' };
  for (let round = 0; round < REVIEW_ROUNDS; round++) {
    const image = await getImageRecord(store, clientId, batchId, fprint);
    if (!image || image.expiresAt <= nowSeconds(store.now())) return { outcome: 'missing' };
    if (image.status === 'fail') return { outcome: 'failed', image };
    if (image.status !== 'success') return { outcome: 'not-classified', image };
    const review: Review | undefined = verdict && {
      isCat: verdict.isCat,
      ...(verdict.note ? { note: verdict.note } : {}),
      reviewedAt: Math.max(store.now(), (image.review?.reviewedAt ?? 0) + 1),
      machineIsCat: machineIsCatOf(image) === true,
    };
    if (!review && !image.review) return { outcome: 'reviewed', image };
    const request = reviewRequest(store.table, image, review);
    const delta = Object.fromEntries(Object.entries(reviewCounts(image, review)).filter(([, n]) => n !== 0)) as Partial<Counts>;
    try {
      const written =
        Object.keys(delta).length > 0
          ? await store.recordWithCounts(request, { clientId, batchId }, delta)
          : await writeIfLive(store, request, clientId, batchId);
      if (!written) {
        await sleep(backoffDelay(round, REVIEW_BACKOFF));
        continue;
      }
    } catch (err) {
      if (err instanceof BatchErasedError) return { outcome: 'missing' };
      throw err;
    }
    const after = await getImageRecord(store, clientId, batchId, fprint);
    return after ? { outcome: 'reviewed', image: after } : { outcome: 'missing' };
  }
  throw new ReviewConflictError(`other writes kept changing image ${fprint} while it was reviewed; try again`);
}

/** A record write that moves no counter (a review's note alone): only while the batch is live. */
async function writeIfLive(store: BatchCounters, request: UpdateCommandInput, clientId: string, batchId: string): Promise<boolean> {
  if (!store.batches.isLive(await store.batches.getBatch(clientId, batchId)))
    throw new BatchErasedError(`batch ${batchId} is being erased`);
  try {
    await store.ddb.send(new UpdateCommand(request));
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
}
