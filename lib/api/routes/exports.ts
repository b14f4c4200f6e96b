// A batch's export: one row per uploaded file as CSV, JSON Lines or a MegaDetector results file.
import * as z from 'zod/mini';
import { exportQuerySchema } from '../schemas/exports';
import { BATCH_ERRORS, batchParams, type Route, route } from './route';

const exportBatchRoute = route({
  function: 'batches',
  method: 'GET',
  path: '/v1/batches/{batchId}/export',
  operationId: 'exportBatch',
  summary: 'One row per uploaded file, duplicates and failures included, as CSV, JSON Lines or a MegaDetector results file',
  description:
    'Columns: file_name, status, is_cat, cat_confidence, labels (Name:confidence|…), fprint, duplicate_of, error_code, ' +
    "uploaded_at, classified_at, machine_is_cat, reviewed, review_note (is_cat is a person's verdict where one was given), " +
    'captured_at, camera, lat, lon. format=megadetector answers a MegaDetector results file (format 1.6): one entry per ' +
    'uploaded file with every box the detector drew (category "1" cat, then the batch\'s other boxed labels in lower ' +
    'case), `detections: null` and `failure` (the error code, or NotProcessedYet) for a file without a result; its ' +
    '`images` come first, `detection_categories` and `info` after them. A small export is the answer itself; a larger ' +
    'one is stored and answered with a 303 to a presigned GET (EXPORT_URL_SECONDS). X-Export-Rows says how many rows ' +
    '(entries) it has.',
  authenticated: true,
  params: batchParams,
  query: exportQuerySchema,
  status: 200,
  response: z.string().check(z.meta({ description: 'The export (text/csv, application/x-ndjson or application/json), as an attachment.' })),
  otherAnswers: {
    200: {
      description: 'The export, as an attachment.',
      content: ['text/csv', 'application/x-ndjson', 'application/json'],
      headers: ['Content-Disposition', 'X-Export-Rows'],
    },
    303: { description: 'The export was stored: Location is a presigned GET of it.', headers: ['Location', 'X-Export-Rows'] },
  },
  errors: BATCH_ERRORS,
  run: ({ service, clientId, params, query }) => service.exportBatch(clientId, params.batchId, query.format),
});

export const exportRoutes: Route[] = [exportBatchRoute];
