// Answering a done batch again: a new threshold (:reclassify), a new model (:redetect), and what that changed.

import { reclassifyBodySchema, reclassifyResultSchema } from '../schemas/batches';
import { noQuerySchema } from '../schemas/common';
import { changeListSchema, changesQuerySchema, redetectBodySchema, redetectResultSchema } from '../schemas/redetect';
import { batchParams, type Route, route } from './route';

const reclassifyBatchRoute = route({
  function: 'batches',
  method: 'POST',
  path: '/v1/batches/{batchId}:reclassify',
  operationId: 'reclassifyBatch',
  summary: "Move a done batch's cat threshold: isCat, the cat index and counts.cats again from stored confidences",
  description:
    'No Rekognition call. The batch remembers the threshold (catMinConfidence). A batch not yet done answers 409. A ' +
    'batch larger than one request handles in time answers with a cursor: send the same body with it to go on.',
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  body: reclassifyBodySchema,
  status: 200,
  response: reclassifyResultSchema,
  errors: [400, 401, 404, 409, 429, 500],
  run: ({ service, clientId, params, body }) => service.reclassify(clientId, params.batchId, body),
});

const redetectBatchRoute = route({
  function: 'batches',
  method: 'POST',
  path: '/v1/batches/{batchId}:redetect',
  operationId: 'redetectBatch',
  summary: 'Classify a done batch again: its images answered by another model than the current one, or all of them',
  description:
    'DetectLabels once per distinct image chosen (duplicates follow their original), counted against the daily images ' +
    'quota. The batch is processing until every image has its new answer, then done again, and its callback is sent ' +
    "again. Each image keeps the answer it replaced as `previous`; a person's verdict stays the image's isCat. dryRun " +
    'only counts and prices. Asked again while it runs, it answers the running batch and starts nothing (newCalls 0). ' +
    'An open or processing batch, or one being erased, answers 409.',
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  body: redetectBodySchema,
  status: 200,
  response: redetectResultSchema,
  errors: [400, 401, 404, 409, 429, 500],
  run: ({ service, clientId, params, body }) => service.redetect(clientId, params.batchId, body),
});

const batchChangesRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches/{batchId}/changes',
  operationId: 'batchChanges',
  summary: 'The images whose machine verdict a re-detection changed, with both answers',
  description:
    "cat → not cat or not cat → cat between `previous` (the answer replaced) and `current`, the machine's verdicts at " +
    "the batch's threshold (a person's review changes neither). Read from the batch's own partition.",
  accessPatterns: ['1'],
  authenticated: true,
  params: batchParams,
  query: changesQuerySchema,
  status: 200,
  response: changeListSchema,
  errors: [400, 401, 404, 429, 500],
  run: ({ service, clientId, params, query }) => service.changes(clientId, params.batchId, query),
});

export const redetectRoutes: Route[] = [reclassifyBatchRoute, redetectBatchRoute, batchChangesRoute];
