// A re-detection's requests (POST …:redetect, docs/api.md "Re-detect"), as pure builders: the plan's read of the
// batch, the mark on each image it owes an answer, the summary's run and what is left, an image's new answer with
// the answer it replaces kept as `prev`, the counter move, the end (done again, the callback owed again), and the
// Sent by lib/store/redetect/images.ts; the changes listing reads with lib/store/redetect/changes.ts.
import type { QueryCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Counts } from '../../domain/counts';
import type { CatInstance, Detections, Label, ModelVersion, TrimmedLabels } from '../../domain/detection';
import { type Image, machineIsCatOf } from '../../domain/image';
import { modelOfRecord } from '../../model-version';
import { liveBatch } from '../batch/summary';
import { IMAGE_ATTRIBUTES, type ImageAttribute, imageNames } from '../table/attributes';
import { encodeDetections } from '../table/detections';
import { BATCH_SK, batchKey, batchPartition, CALLBACK_DUE, imageKey, reviewKey } from '../table/schema';
import { batchWrite, WriteExpression } from '../table/update-expression';
import { RUN_PARTS, runWrite } from './run-state';

/** What the plan reads of each record: enough to choose it (its model facts) and count it (its duplicates). */
export function planPageQuery(table: string, clientId: string, batchId: string, limit: number, afterFprint?: string): QueryCommandInput {
  const [start, value] = afterFprint === undefined ? [':summary', BATCH_SK] : [':after', afterFprint];
  return {
    TableName: table,
    KeyConditionExpression: `#partition = :partition AND #fprint > ${start}`,
    ProjectionExpression:
      '#fprint, #status, #model, #detection.#lmv, #detections, #classifiedAt, #duplicates, #redetectRun, #rdAt, #rdClaim, #rdLast',
    ExpressionAttributeNames: {
      ...imageNames('partition', 'fprint', 'status', 'model', 'detection', 'detections', 'classifiedAt', 'duplicates', 'redetectRun'),
      '#lmv': 'model',
      ...IMAGE_RUN_NAMES,
    },
    ExpressionAttributeValues: { ':partition': batchPartition(clientId, batchId), [start]: value },
    ConsistentRead: true,
    Limit: limit,
  };
}

/** An image's attributes of a run beyond its mark (rd_run): when it was queued, its claim's lease, the run that answered it. */
const IMAGE_RUN_ATTRIBUTES = { rdAt: 'rd_at', rdClaim: 'rd_claim', rdLast: 'rd_last' } as const;

/** The same as the plan's projection names them. */
const IMAGE_RUN_NAMES = { '#rdAt': 'rd_at', '#rdClaim': 'rd_claim', '#rdLast': 'rd_last' } as const;

/** A write to an image that a run moves: its attributes and the run's (`#rdClaim` → rd_claim). */
export const imageRunWrite = (): WriteExpression<ImageAttribute | keyof typeof IMAGE_RUN_ATTRIBUTES> =>
  new WriteExpression({ ...IMAGE_ATTRIBUTES, ...IMAGE_RUN_ATTRIBUTES });

/**
 * Marks a classified image as owed an answer by the run that holds the batch (taken first: lib/store/redetect/run.ts),
 * queued at `now`; never one the run has answered already (a page started again after a crash, or by a slower pager).
 */
export function markImageRequest(
  table: string,
  clientId: string,
  batchId: string,
  fprint: string,
  run: string,
  nowMs: number,
): UpdateCommandInput {
  const w = imageRunWrite().set('redetectRun', ':run', run).set('rdAt', ':now', nowMs);
  w.when(w.is('status', '=', ':success', 'success'), w.or(w.notExists('rdLast'), w.is('rdLast', '<>', ':run', run)));
  return { TableName: table, Key: imageKey(clientId, batchId, fprint), ...w.update() };
}

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

/**
 * The model a record's answer came from (lib/model-version.ts modelOfRecord): the model it keeps; else, written before
 * records kept it, its boxes' LabelModelVersion or its labels' one, dated by its classification.
 */
export const answerModelOf = (image: Pick<Image, 'model' | 'detection' | 'detections' | 'classifiedAt'>): ModelVersion => {
  const detections = image.detections ?? image.detection;
  return modelOfRecord({
    ...(image.model ? { model: image.model } : {}),
    ...(detections ? { detections } : {}),
    ...(image.classifiedAt !== undefined ? { classifiedAt: image.classifiedAt } : {}),
  });
};

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
export function moveRequest(
  table: string,
  clientId: string,
  batchId: string,
  run: string,
  delta: Partial<Counts>,
  nowMs: number,
): UpdateCommandInput {
  const w = batchWrite().add('redetectLeft', ':minusOne', -1);
  for (const [name, n] of Object.entries(delta) as [keyof Counts, number][]) if (n !== 0) w.add(name, `:${name}`, n);
  w.when(liveBatch(w, nowMs), w.is('redetectRun', '=', ':run', run));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/** Sets what the run has left to what its images say, only if it did not move meanwhile. */
export function leftRequest(table: string, clientId: string, batchId: string, run: string, was: number, left: number): UpdateCommandInput {
  const w = runWrite().set('redetectLeft', ':left', left);
  w.when(w.is('redetectRun', '=', ':run', run), w.is('redetectLeft', '=', ':was', was), w.notExists('rdNext'));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}

/**
 * Ends the run: the batch is done again at `now`, and owes its completion callback again when it has one (the sweep
 * finds it by cb_due, as at the first done).
 */
export function endRequest(
  table: string,
  clientId: string,
  batchId: string,
  run: string,
  nowMs: number,
  withCallback: boolean,
): UpdateCommandInput {
  const w = runWrite().set('doneAt', ':now', nowMs);
  if (withCallback) w.set('callbackDue', ':due', CALLBACK_DUE);
  w.remove(...RUN_PARTS).when(liveBatch(w, nowMs), w.is('rdRun', '=', ':run', run), w.notExists('rdNext'));
  return { TableName: table, Key: batchKey(clientId, batchId), ...w.update(), ReturnValues: 'ALL_NEW' };
}
