// An import's own routes (docs/api.md "Imports"): its completion report and sending its failed images again.
import * as z from 'zod/mini';
import { noQuerySchema } from '../schemas/common';
import { reportQuerySchema, retryResultSchema } from '../schemas/imports';
import { BATCH_ERRORS, batchParams, type Route, route } from './route';

const importReportRoute = route({
  function: 'batches',
  method: 'GET',
  path: '/v1/batches/{batchId}/report',
  operationId: 'importReport',
  summary: "An import's completion report in S3 Batch Operations' CSV columns, one row per object it sent",
  description:
    'Bucket, Key (URL-encoded), VersionId, TaskStatus (succeeded | failed), ErrorCode (SourceChanged, SourceMissing, ' +
    'NotAnImage … or NotProcessedYet), HTTPStatusCode, ResultMessage (the verdict and its confidence; a duplicate names ' +
    'its original), no header row. Streamed as the exports are: inline, or a 303 to a presigned GET once large. A batch ' +
    'of uploads answers 404.',
  authenticated: true,
  params: batchParams,
  query: reportQuerySchema,
  status: 200,
  response: z.string().check(z.meta({ description: 'The report (text/csv), as an attachment.' })),
  otherAnswers: {
    200: { description: 'The report, as an attachment.', content: ['text/csv'], headers: ['Content-Disposition', 'X-Export-Rows'] },
    303: { description: 'The report was stored: Location is a presigned GET of it.', headers: ['Location', 'X-Export-Rows'] },
  },
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params }) => service.report(clientId, params.batchId),
});

const retryImportRoute = route({
  function: 'batches',
  method: 'POST',
  path: '/v1/batches/{batchId}:retry',
  operationId: 'retryImport',
  summary: "Send again exactly an import's failed images (SourceChanged, SourceMissing, …), read where they are",
  description:
    'Each failed imported image loses its fail record and is sent again, counted against the images quota (429 ' +
    'quota_exceeded when fewer are left today); the batch is processing until they have their new records. Nothing ' +
    'else is sent again. A batch still listing answers 409; a batch of uploads, 404.',
  authenticated: true,
  params: batchParams,
  query: noQuerySchema,
  status: 200,
  response: retryResultSchema,
  errors: [400, 401, 404, 409, 429, 500],
  run: ({ service, clientId, params }) => service.retry(clientId, params.batchId),
});

export const importRoutes: Route[] = [importReportRoute, retryImportRoute];
