// An image's new answer in a re-detection (docs/api.md "Re-detect", docs/decisions/0033-redetect.md): its requests
// beside the methods that send them. The answer replaces the image's one (kept as `prev`) only while the run still
// owes it; the answer and its counter move (rd_left − 1, cats, corrected, reused) are one transaction where the
// backend has them; without (dynalite) they are two writes, and a crash between them is repaired when the image's
// message comes again and finds its answer written: the batch is recounted from its records (counters and what the run
// has left), as an upload's redelivery is. The last answer ends the run: done again, callback owed again.
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Batch } from '../../domain/batch';
import type { Counts } from '../../domain/counts';
import type { CatInstance, Detections, Label, ModelVersion, TrimmedLabels } from '../../domain/detection';
import { type Image, machineIsCatOf } from '../../domain/image';
import { answerModelOf } from '../../model-version';
import type { BatchCounters } from '../batch/counters';
import { liveBatch } from '../batch/summary';
import { conditionFailed, conditionFailedAt } from '../table/condition';
import { encodeDetections } from '../table/detections';
import { batchKey, CALLBACK_DUE, imageKey, reviewKey } from '../table/schema';
import { transaction, transactWrite } from '../table/transact';
import { batchWrite } from '../table/update-expression';
import { imageRunWrite, RUN_PARTS, runWrite } from './run-state';

/** A new answer of DetectLabels, as the re-detection writes it. */
export interface NewAnswer {
  isCat: boolean;
  catConfidence: number;
  cats: CatInstance[];
  labels: Label[];
  trimmed: TrimmedLabels;
  detections: Detections;
  model: ModelVersion;
}

/** How an image's answer went: written (and counted), written before (a message delivered again), or the run is over. */
export type AnswerOutcome = 'answered' | 'answered-before' | 'run-over';

/**
 * The image's new answer, only while the run still owes it one: the answer it replaces goes to `prev`; a person's
 * verdict stays the image's isCat and only the machine's beside it moves (docs/design.md §10); a reused copy becomes
 * the image's own answer.
 */
export function answerRequest(table: string, image: Image, run: string, answer: NewAnswer, nowMs: number): UpdateCommandInput {
  const reviewed = image.review !== undefined;
  const isCat = reviewed ? (image.review?.isCat ?? false) : answer.isCat;
  const w = imageRunWrite()
    .set('previous', ':previous', { model: answerModelOf(image), cat: machineIsCatOf(image) === true, conf: image.catConfidence ?? 0 })
    .set('isCat', ':cat', isCat)
    .set('catConfidence', ':conf', answer.catConfidence)
    .set('cats', ':cats', answer.cats)
    .set('labels', ':labels', answer.labels)
    .set('detection', ':detection', answer.trimmed)
    .set('detections', ':detections', encodeDetections(answer.detections))
    .set('model', ':model', { name: answer.model.name, version: answer.model.version })
    .set('classifiedAt', ':now', nowMs)
    .set('reviewKey', ':reviewKey', reviewKey(reviewed, answer.catConfidence))
    .set('rdLast', ':run', run);
  if (reviewed) w.set(['review', 'mc'], ':mc', answer.isCat);
  if (isCat) w.set('catAt', ':uploadedAt', image.uploadedAt);
  w.remove('redetectRun', 'rdAt', 'rdClaim', 'reused', ...(isCat ? [] : (['catAt'] as const)));
  w.when(w.is('redetectRun', '=', ':run', run));
  return { TableName: table, Key: imageKey(image.clientId, image.batchId, image.fprint), ...w.update() };
}

/** The run gives up an image DetectLabels refused outright: it keeps the answer it had, and is no longer owed one. */
export function forgoRequest(table: string, image: Pick<Image, 'clientId' | 'batchId' | 'fprint'>, run: string): UpdateCommandInput {
  const w = imageRunWrite().set('rdLast', ':run', run).remove('redetectRun', 'rdAt', 'rdClaim');
  return {
    TableName: table,
    Key: imageKey(image.clientId, image.batchId, image.fprint),
    ...w.when(w.is('redetectRun', '=', ':run', run)).update(),
  };
}

/** What an image's new answer moves on the counters: cats (an unreviewed image's flag), corrected, reused. */
export function answerCounts(image: Image, answer: Pick<NewAnswer, 'isCat'>): Partial<Counts> {
  const delta: Partial<Counts> = {};
  if (image.reused === true) delta.reused = -1;
  if (image.review) {
    const wasCorrected = image.review.isCat !== image.review.machineIsCat;
    const corrected = image.review.isCat !== answer.isCat;
    if (wasCorrected !== corrected) delta.corrected = corrected ? 1 : -1;
  } else if ((image.isCat === true) !== answer.isCat) delta.cats = answer.isCat ? 1 : -1;
  return delta;
}

/** Moves the counters by `delta` and counts one image answered, only on the live batch still running `run`. */
function moveRequest(table: string, image: Image, run: string, delta: Partial<Counts>, nowMs: number): UpdateCommandInput {
  const w = batchWrite().add('redetectLeft', ':minusOne', -1);
  for (const [name, n] of Object.entries(delta) as [keyof Counts, number][]) if (n !== 0) w.add(name, `:${name}`, n);
  w.when(liveBatch(w, nowMs), w.is('redetectRun', '=', ':run', run));
  return { TableName: table, Key: batchKey(image.clientId, image.batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** Sets what the run has left to what its images say, only if it did not move meanwhile. */
function leftRequest(table: string, batch: Batch, run: string, left: number): UpdateCommandInput {
  const w = runWrite().set('redetectLeft', ':left', left);
  w.when(w.is('redetectRun', '=', ':run', run), w.is('redetectLeft', '=', ':was', batch.redetecting?.left ?? 0), w.notExists('rdNext'));
  return { TableName: table, Key: batchKey(batch.clientId, batch.batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/**
 * Ends the run: the batch is done again at `now`, and owes its completion callback again when it has one (the sweep
 * finds it by cb_due, as at the first done).
 */
function endRequest(table: string, batch: Batch, run: string, nowMs: number): UpdateCommandInput {
  const w = runWrite().set('doneAt', ':now', nowMs);
  if (batch.callbackUrl !== undefined) w.set('callbackDue', ':due', CALLBACK_DUE);
  w.remove(...RUN_PARTS).when(liveBatch(w, nowMs), w.is('rdRun', '=', ':run', run), w.notExists('rdNext'));
  return { TableName: table, Key: batchKey(batch.clientId, batch.batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** The answers of a run's images, and the run's end once it owes none. */
export class RedetectAnswers {
  constructor(
    private readonly store: BatchCounters,
    /** The images the run still owes an answer, from their marks (lib/store/redetect/images.ts). */
    private readonly owedImages: (clientId: string, batchId: string, run: string) => Promise<string[]>,
    /** The completion hook (callback, event) of a batch done again. */
    private readonly onDone?: (batch: Batch) => Promise<void>,
  ) {}

  /**
   * Writes the image's new answer and counts it, then ends the run when it was the last. Without an answer (DetectLabels
   * refused the image outright) the image keeps the one it had and is counted as done.
   */
  async answer(image: Image, run: string, answer: NewAnswer | undefined): Promise<AnswerOutcome> {
    const { table } = this.store;
    const record = answer ? answerRequest(table, image, run, answer, this.store.now()) : forgoRequest(table, image, run);
    const move = moveRequest(table, image, run, answer ? answerCounts(image, answer) : {}, this.store.now());
    let left: number | undefined;
    if (this.store.transactions) {
      try {
        await transactWrite(this.store.ddb, transaction(record, move));
      } catch (err) {
        if (conditionFailedAt(err, 0)) return 'answered-before';
        if (conditionFailedAt(err, 1)) return 'run-over';
        throw err;
      }
    } else {
      try {
        await this.store.ddb.send(new UpdateCommand(record));
      } catch (err) {
        if (conditionFailed(err)) return 'answered-before';
        throw err;
      }
      // A crash here leaves the move undone: the message comes again, finds the answer written, and settle() recounts.
      const after = await this.store.batches.conditionalUpdate(move);
      if (!after) return 'run-over';
      left = after.redetecting?.left;
    }
    if (left === undefined || left <= 0) await this.settle(image.clientId, image.batchId, run);
    return 'answered';
  }

  /**
   * Ends the run once it owes no image an answer. Without transactions the records are the truth: the batch is recounted
   * (a counter move a crash lost) and what the run has left is set from the marks still there, before it may end.
   */
  async settle(clientId: string, batchId: string, run: string): Promise<Batch | undefined> {
    const { batches } = this.store;
    const batch = await batches.getBatch(clientId, batchId);
    if (!batch || !batches.isLive(batch) || batch.redetecting?.run !== run) return batch;
    if (!this.store.transactions) {
      await this.store.recount(clientId, batchId);
      const left = (await this.owedImages(clientId, batchId, run)).length;
      if (left !== batch.redetecting.left) {
        const set = await batches.conditionalUpdate(leftRequest(this.store.table, batch, run, left));
        if (!set) return batches.getBatch(clientId, batchId); // moved meanwhile: the image that moved it settles
      }
      if (left > 0) return batch;
    } else if (batch.redetecting.left > 0) return batch;
    const done = await batches.conditionalUpdate(endRequest(this.store.table, batch, run, this.store.now()));
    if (done) await this.onDone?.(done);
    return done ?? (await batches.getBatch(clientId, batchId));
  }
}
