// The audit: draw a random sample to review, and the accuracy its reviews estimate.
import { accuracySchema, auditBodySchema, auditResultSchema } from '../schemas/audit';
import { noQuerySchema } from '../schemas/common';
import { BATCH_ERRORS, batchParams, type Route, route } from './route';

const auditBatchRoute = route({
  function: 'batches',
  method: 'POST',
  path: '/v1/batches/{batchId}/audit',
  operationId: 'auditBatch',
  summary: "Draw a random audit sample of the batch's classified images, stratified by the machine's verdict",
  description:
    "A seeded random sample without replacement of the batch's success images (duplicates counted once), stratified " +
    "by machineIsCat: proportional to each stratum's share, at least a quarter of the draw for each stratum with " +
    'images left. Each drawn image gains `audit` {drawnAt, stratum}. Drawing again adds to the sample, never draws ' +
    'an image twice; a size beyond what is left draws what is left. Review the drawn images (GET …/images?audit=' +
    'pending, PUT …/review) and read GET …/accuracy. A batch with no success image answers 409 nothing_to_audit.',
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  body: auditBodySchema,
  status: 200,
  response: auditResultSchema,
  errors: [400, 401, 404, 409, 429, 500],
  run: ({ service, clientId, params, body }) => service.audit(clientId, params.batchId, body),
});

const batchAccuracyRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches/{batchId}/accuracy',
  operationId: 'batchAccuracy',
  summary: "The machine's precision, recall, accuracy and the batch's cats, estimated from the audit sample's reviews",
  description:
    'Only reviews of audited images count (the review queue picks the least certain images and cannot estimate ' +
    "accuracy). Stratified estimator weighted by each stratum's share of the batch at the last draw, 95 % intervals " +
    'from the beta-binomial posterior predictive under a Jeffreys prior (docs/accuracy.md). An estimate nothing ' +
    'supports is null: every one on a batch never audited. After a re-detection, `models` gives each model’s ' +
    'estimates on the same audited reviews.',
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  status: 200,
  response: accuracySchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params }) => service.accuracy(clientId, params.batchId),
});

export const auditRoutes: Route[] = [auditBatchRoute, batchAccuracyRoute];
