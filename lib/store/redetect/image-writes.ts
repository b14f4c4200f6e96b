// A re-detection's requests (POST …:redetect, docs/api.md "Re-detect"), as pure builders: the plan's read of the
// batch, the mark on each image it owes an answer, the summary's run and what is left, an image's new answer with
// the answer it replaces kept as `prev`, the counter move, the end (done again, the callback owed again), and the
// changes listing's Query. Sent by lib/store/redetect/images.ts.
import type { QueryCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Counts } from '../../domain/counts';
import type { CatInstance, Detections, Label, ModelVersion, TrimmedLabels } from '../../domain/detection';
import { type Image, machineIsCatOf } from '../../domain/image';
import { modelOfRecord } from '../../model-version';
import { liveBatch } from '../batch/summary';
import { type BatchAttribute, batchNames, imageNames } from '../table/attributes';
import { encodeDetections } from '../table/detections';
import type { QueryPlan } from '../table/expressions';
import { BATCH_SK, batchKey, batchPartition, CALLBACK_DUE, imageKey, reviewKey } from '../table/schema';

import { RUN_NAMES, RUN_REMOVE } from './run-state';
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
export const IMAGE_RUN_NAMES = { '#rdAt': 'rd_at', '#rdClaim': 'rd_claim', '#rdLast': 'rd_last' } as const;

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
  return {
    TableName: table,
    Key: imageKey(clientId, batchId, fprint),
    UpdateExpression: 'SET #redetectRun = :run, #rdAt = :now',
    ConditionExpression: '#status = :success AND (attribute_not_exists(#rdLast) OR #rdLast <> :run)',
    ExpressionAttributeNames: { ...imageNames('redetectRun', 'status'), '#rdAt': 'rd_at', '#rdLast': 'rd_last' },
    ExpressionAttributeValues: { ':run': run, ':success': 'success', ':now': nowMs },
  };
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
  const set = [
    '#previous = :previous',
    '#isCat = :cat',
    '#catConfidence = :conf',
    '#cats = :cats',
    '#labels = :labels',
    '#detection = :detection',
    '#detections = :detections',
    '#model = :model',
    '#classifiedAt = :now',
    '#reviewKey = :reviewKey',
    '#rdLast = :run',
  ];
  const values: Record<string, unknown> = {
    ':previous': { model: answerModelOf(image), cat: machineIsCatOf(image) === true, conf: image.catConfidence ?? 0 },
    ':cat': isCat,
    ':conf': answer.catConfidence,
    ':cats': answer.cats,
    ':labels': answer.labels,
    ':detection': answer.trimmed,
    ':detections': encodeDetections(answer.detections),
    ':model': { name: answer.model.name, version: answer.model.version },
    ':now': nowMs,
    ':reviewKey': reviewKey(reviewed, answer.catConfidence),
    ':run': run,
  };
  if (reviewed) {
    set.push('#review.#mc = :mc');
    values[':mc'] = answer.isCat;
  }
  if (isCat) {
    set.push('#catAt = :uploadedAt');
    values[':uploadedAt'] = image.uploadedAt;
  }
  const remove = ['#redetectRun', '#rdAt', '#rdClaim', '#reused', ...(isCat ? [] : ['#catAt'])];
  return {
    TableName: table,
    Key: imageKey(image.clientId, image.batchId, image.fprint),
    UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
    ConditionExpression: '#redetectRun = :run',
    ExpressionAttributeNames: {
      ...imageNames(
        'previous',
        'isCat',
        'catConfidence',
        'cats',
        'labels',
        'detection',
        'detections',
        'model',
        'classifiedAt',
        'reviewKey',
      ),
      ...imageNames('redetectRun', 'reused', 'catAt', ...(reviewed ? (['review'] as const) : [])),
      ...(reviewed ? { '#mc': 'mc' } : {}),
      ...IMAGE_RUN_NAMES,
    },
    ExpressionAttributeValues: values,
  };
}

/** The run gives up an image DetectLabels refused outright: it keeps the answer it had, and is no longer owed one. */
export function forgoRequest(table: string, image: Pick<Image, 'clientId' | 'batchId' | 'fprint'>, run: string): UpdateCommandInput {
  return {
    TableName: table,
    Key: imageKey(image.clientId, image.batchId, image.fprint),
    UpdateExpression: 'SET #rdLast = :run REMOVE #redetectRun, #rdAt, #rdClaim',
    ConditionExpression: '#redetectRun = :run',
    ExpressionAttributeNames: { ...imageNames('redetectRun'), ...IMAGE_RUN_NAMES },
    ExpressionAttributeValues: { ':run': run },
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
  const live = liveBatch(nowMs);
  const moved = (Object.entries(delta) as [keyof Counts, number][]).filter(([, n]) => n !== 0);
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `ADD ${['#redetectLeft :minusOne', ...moved.map(([name]) => `#${name} :${name}`)].join(', ')}`,
    ConditionExpression: `${live.condition} AND #redetectRun = :run`,
    ExpressionAttributeNames: batchNames(...live.names, 'redetectLeft', 'redetectRun', ...moved.map(([name]) => name as BatchAttribute)),
    ExpressionAttributeValues: {
      ...live.values,
      ':minusOne': -1,
      ':run': run,
      ...Object.fromEntries(moved.map(([name, n]) => [`:${name}`, n])),
    },
    ReturnValues: 'ALL_NEW',
  };
}

/** Sets what the run has left to what its images say, only if it did not move meanwhile. */
export function leftRequest(table: string, clientId: string, batchId: string, run: string, was: number, left: number): UpdateCommandInput {
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: 'SET #redetectLeft = :left',
    ConditionExpression: '#redetectRun = :run AND #redetectLeft = :was AND attribute_not_exists(#rdNext)',
    ExpressionAttributeNames: { ...batchNames('redetectRun', 'redetectLeft'), '#rdNext': RUN_NAMES['#rdNext'] },
    ExpressionAttributeValues: { ':run': run, ':was': was, ':left': left },
    ReturnValues: 'ALL_NEW',
  };
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
  const live = liveBatch(nowMs);
  return {
    TableName: table,
    Key: batchKey(clientId, batchId),
    UpdateExpression: `SET #doneAt = :now${withCallback ? ', #callbackDue = :due' : ''} REMOVE ${RUN_REMOVE}`,
    ConditionExpression: `${live.condition} AND #rdRun = :run AND attribute_not_exists(#rdNext)`,
    ExpressionAttributeNames: {
      ...batchNames(...live.names, 'doneAt', ...(withCallback ? (['callbackDue'] as const) : [])),
      ...RUN_NAMES,
    },
    ExpressionAttributeValues: { ...live.values, ':now': nowMs, ':run': run, ...(withCallback ? { ':due': CALLBACK_DUE } : {}) },
    ReturnValues: 'ALL_NEW',
  };
}

/**
 * The images of a batch whose machine verdict a re-detection changed: `prev` there, and its verdict not the machine's
 * now (the review's `mc` where a person gave one, else the flag). The batch's own partition, paged by the reader.
 */
export function changesPlan(table: string, clientId: string, batchId: string, nowS: number): QueryPlan {
  const partition = batchPartition(clientId, batchId);
  const input: QueryCommandInput = {
    TableName: table,
    KeyConditionExpression: '#partition = :partition AND #fprint > :summary',
    FilterExpression:
      'attribute_exists(#previous) AND #expiresAt > :nowS AND ' +
      '((attribute_not_exists(#review) AND #isCat <> #previous.#cat) OR (attribute_exists(#review) AND #review.#mc <> #previous.#cat))',
    ExpressionAttributeNames: {
      ...imageNames('partition', 'fprint', 'previous', 'expiresAt', 'review', 'isCat'),
      '#cat': 'cat',
      '#mc': 'mc',
    },
    ExpressionAttributeValues: { ':partition': partition, ':summary': BATCH_SK, ':nowS': nowS },
  };
  return { pattern: '1 (changes)', scope: `changes\n${partition}`, keyAttributes: ['batch_id', 'img_fprint'], input };
}
