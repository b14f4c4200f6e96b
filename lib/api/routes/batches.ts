// The batch's own routes: create one, add upload forms, close it, list and read batches, erase one.
import {
  addUploadsBodySchema,
  batchListSchema,
  batchSummarySchema,
  clientBatchesQuerySchema,
  closeBatchBodySchema,
  createBatchBodySchema,
  createdBatchSchema,
  deletedBatchSchema,
  uploadFormsSchema,
} from '../schemas/batches';
import { noQuerySchema, type SchemaLimits } from '../schemas/common';
import { BATCH_ERRORS, batchParams, noParams, type Route, route } from './route';

const createBatchRoute = (limits: SchemaLimits): Route =>
  route({
    function: 'batches',
    method: 'POST',
    path: '/v1/batches',
    operationId: 'createBatch',
    summary: 'Create a batch and get one presigned upload form per declared file',
    description:
      'Each form is an S3 presigned POST restricted to uploads/{clientId}/{batchId}/{file name}, the declared ' +
      'image/* content type, 1 byte up to the declared size, and an expiry. Uploading with any S3 client to the ' +
      'same key is equally valid. The batch and everything in it expire retentionDays after now (its expiresAt). ' +
      'A batchId the client already has answers 409 batch_exists; the name of a batch that expired or was deleted ' +
      'answers 409 batch_erasing until its erasure is done, which this request starts for an expired one. With `source` ' +
      '(no files) the batch classifies images where they are: it lists the source, closes itself once listed and reports ' +
      'its progress as `import`; a source outside the client’s allowed ones answers 403 source_not_allowed.',
    authenticated: true,
    params: noParams,
    query: noQuerySchema,
    body: createBatchBodySchema(limits),
    status: 201,
    response: createdBatchSchema,
    errors: [400, 401, 403, 409, 413, 429, 500],
    run: ({ service, clientId, body }) => service.createBatch(clientId, body),
  });

const addUploadsRoute = (limits: SchemaLimits): Route =>
  route({
    function: 'batches',
    method: 'POST',
    path: '/v1/batches/{batchId}/uploads',
    operationId: 'addUploads',
    summary: 'More presigned upload forms for an open batch',
    description:
      "The batch's `expected` grows by the number of files; with `renew`, forms again for files already declared " +
      '(theirs expired or are about to) and `expected` stays. A closed batch answers 409.',
    authenticated: true,
    params: batchParams,
    query: noQuerySchema,
    body: addUploadsBodySchema(limits),
    status: 200,
    response: uploadFormsSchema,
    errors: [400, 401, 404, 409, 413, 429, 500],
    run: ({ service, clientId, params, body }) => service.addUploads(clientId, params.batchId, body),
  });

const closeBatchRoute = route({
  function: 'batches',
  method: 'POST',
  path: '/v1/batches/{batchId}:close',
  operationId: 'closeBatch',
  summary: 'Close a batch: no more uploads; it is done once nothing is pending',
  description:
    'Optionally says how many files were uploaded in all (`expected`), since uploads still in flight are not yet ' +
    'visible: the batch stays processing until that many arrived. Fewer than already arrived answers 409; ' +
    'closing a closed batch again answers its summary.',
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  body: closeBatchBodySchema,
  status: 200,
  response: batchSummarySchema,
  errors: [400, 401, 404, 409, 429, 500],
  run: ({ service, clientId, params, body }) => service.closeBatch(clientId, params.batchId, body),
});

const deleteBatchRoute = route({
  function: 'batches',
  method: 'DELETE',
  path: '/v1/batches/{batchId}',
  operationId: 'deleteBatch',
  summary: 'Erase a batch: every object it left in S3, its images and logs, then its summary',
  description:
    'Answers 202 once the batch is marked: from then on it answers 404 and uploads into it are refused (they rest ' +
    'under failed/). Asking again while the erasure runs answers 202 and resumes it; once erased, 404.',
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  status: 202,
  response: deletedBatchSchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params }) => service.deleteBatch(clientId, params.batchId),
});

const listBatchesRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches',
  operationId: 'listBatches',
  summary: "The client's batches, newest first, optionally by status and creation time, paged",
  description: 'Served by the sparse client-batches index (a key condition, never a Scan); the status filter applies on top.',
  authenticated: true,
  params: noParams,
  query: clientBatchesQuerySchema,
  status: 200,
  response: batchListSchema,
  errors: [400, 401, 429, 500],
  run: ({ service, clientId, query }) => service.listBatches(clientId, query),
});

const getBatchRoute = route({
  function: 'api',
  method: 'GET',
  path: '/v1/batches/{batchId}',
  operationId: 'getBatch',
  summary: "A batch's summary: counters and status (open / processing / done)",
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  status: 200,
  response: batchSummarySchema,
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params }) => service.getBatch(clientId, params.batchId),
});

export const batchRoutes = (limits: SchemaLimits): Route[] => [
  createBatchRoute(limits),
  addUploadsRoute(limits),
  closeBatchRoute,
  deleteBatchRoute,
  listBatchesRoute,
  getBatchRoute,
];
