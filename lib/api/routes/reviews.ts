// A person's verdicts: give or withdraw one, and how far the machine agrees with them.

import { noQuerySchema } from '../schemas/common';
import { imageSchema } from '../schemas/images';
import { agreementSchema, reviewBodySchema } from '../schemas/reviews';
import { BATCH_ERRORS, batchParams, imageParams, type Route, route } from './route';

const reviewImageRoute = route({
  function: 'batches',
  method: 'PUT',
  path: '/v1/batches/{batchId}/images/{fprint}/review',
  operationId: 'reviewImage',
  summary: "Give a person's verdict on an image: it wins over the machine's everywhere",
  description:
    "The image's isCat becomes the verdict (counts.cats follows), machineIsCat keeps the detector's; counts.reviewed " +
    'and counts.corrected move with it. Its duplicates share it, a later batch of the client holding the same ' +
    'pixels carries it, and :reclassify never changes it. Giving it again replaces it. A fail image answers 409 ' +
    'image_failed; one still being classified 409 image_not_classified (try again once classified).',
  authenticated: true,
  params: imageParams,
  query: noQuerySchema,
  body: reviewBodySchema,
  status: 200,
  response: imageSchema,
  errors: [400, 401, 404, 409, 429, 500],
  run: ({ service, clientId, params, body }) => service.reviewImage(clientId, params.batchId, params.fprint, body),
});

const withdrawReviewRoute = route({
  function: 'batches',
  method: 'DELETE',
  path: '/v1/batches/{batchId}/images/{fprint}/review',
  operationId: 'withdrawReview',
  summary: "Withdraw a person's verdict: the image's isCat is the machine's again",
  description: 'Withdrawing a verdict that is not there answers the image as it is. A fail image answers 409 image_failed.',
  authenticated: true,
  params: imageParams,
  query: noQuerySchema,
  status: 200,
  response: imageSchema,
  errors: [400, 401, 404, 409, 429, 500],
  run: ({ service, clientId, params }) => service.withdrawReview(clientId, params.batchId, params.fprint),
});

const batchAgreementRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches/{batchId}/agreement',
  operationId: 'batchAgreement',
  summary: "How far the machine agrees with the batch's reviews, and the threshold that would agree most",
  description:
    "Over the reviewed images, at the batch's threshold now: agree, precision and recall of the machine's cats " +
    "against the people's; suggestedCatMinConfidence is the threshold at which the machine would have agreed with " +
    'the most reviews (ties: the lowest), ready for POST …:reclassify. Read from the sparse batch-review index.',
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  status: 200,
  response: agreementSchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params }) => service.agreement(clientId, params.batchId),
});

export const reviewRoutes: Route[] = [reviewImageRoute, withdrawReviewRoute, batchAgreementRoute];
