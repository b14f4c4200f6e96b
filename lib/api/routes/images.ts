// Reading images: a batch's, one, many by fingerprint, a debug batch's logs, near-duplicates, the client's across batches.

import { noQuerySchema } from '../schemas/common';
import { batchImagesQuerySchema, clientImagesQuerySchema } from '../schemas/image-queries';
import { batchGetBodySchema, batchGetResultSchema, imageListSchema, imageSchema } from '../schemas/images';
import { logListSchema, logsQuerySchema } from '../schemas/logs';
import { similarGroupsSchema, similarQuerySchema } from '../schemas/similar';
import { BATCH_ERRORS, batchParams, imageParams, noParams, type Route, route } from './route';

const listBatchImagesRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches/{batchId}/images',
  operationId: 'listBatchImages',
  summary: "A batch's images, optionally by status and upload time, or its review queue, paged",
  description:
    "With review=pending: the review queue, classified images no person has reviewed, nearest the batch's " +
    'threshold first (the sparse batch-review index walked both ways from the threshold, never a Scan). With ' +
    'audit=pending: the audit queue, drawn images no person has reviewed, in random order (the sparse batch-audit index).',
  accessPatterns: ['1', '2', '7', 'review queue', 'audit queue'],
  authenticated: true,
  params: batchParams,
  query: batchImagesQuerySchema,
  status: 200,
  response: imageListSchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params, query }) => service.listBatchImages(clientId, params.batchId, query),
});

const getImageRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches/{batchId}/images/{fprint}',
  operationId: 'getImage',
  summary: "One image's result",
  accessPatterns: ['5'],
  authenticated: true,
  params: imageParams,
  query: noQuerySchema,
  status: 200,
  response: imageSchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params }) => service.getBatchImage(clientId, params.batchId, params.fprint),
});

const batchGetImagesRoute = route({
  function: 'api',
  method: 'POST',
  path: '/v1/batches/{batchId}/images:batchGet',
  operationId: 'batchGetImages',
  summary: 'Many images of a batch by fingerprint (at most 100)',
  accessPatterns: ['6'],
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  body: batchGetBodySchema,
  status: 200,
  response: batchGetResultSchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params, body }) => service.batchGetImages(clientId, params.batchId, body.fprints),
});

const listBatchLogsRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches/{batchId}/logs',
  operationId: 'listBatchLogs',
  summary: "A debug batch's per-image processing logs, paged",
  accessPatterns: ['4'],
  authenticated: true,
  params: batchParams,
  query: logsQuerySchema,
  status: 200,
  response: logListSchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params, query }) => service.listBatchLogs(clientId, params.batchId, query),
});

const similarImagesRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches/{batchId}/similar',
  operationId: 'similarImages',
  summary: "Groups of the batch's near-duplicate images: perceptual hashes at most maxDistance bits apart",
  description:
    'Over the distinct images recorded so far (a batch still processing answers for those fingerprinted until now). ' +
    'Linked images group transitively; flat images (solid colours, smooth gradients) are never grouped; an image ' +
    'near no other is in no group. Re-encodings and resizes group at the default; mirrored copies do not.',
  accessPatterns: ['1'],
  authenticated: true,
  params: batchParams,
  query: similarQuerySchema,
  status: 200,
  response: similarGroupsSchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params, query }) => service.similarGroups(clientId, params.batchId, query),
});

const listImagesRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/images',
  operationId: 'listImages',
  summary: "The client's images across batches: by status, cats, fingerprint or upload time, paged",
  description:
    'fprint selects one image across batches; cat=true the cats; status one status; otherwise all images by ' +
    'upload time. Filters combine.',
  accessPatterns: ['3', '5b', '8', '9'],
  authenticated: true,
  params: noParams,
  query: clientImagesQuerySchema,
  status: 200,
  response: imageListSchema,
  errors: [400, 401, 429, 500],
  run: ({ service, clientId, query }) => service.listClientImages(clientId, query),
});

export const imageRoutes: Route[] = [
  listBatchImagesRoute,
  getImageRoute,
  batchGetImagesRoute,
  listBatchLogsRoute,
  similarImagesRoute,
  listImagesRoute,
];
