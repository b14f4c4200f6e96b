// The route table of docs/design.md §3: for each route its schemas (validation and the OpenAPI document both read them),
// its success status, the errors it can answer, the operation it runs, and the Lambda function that serves it
// (serverless.yml's routes and the local gateway both follow it; test/deploy checks the former).
import * as z from 'zod/mini';
import type { BatchLifecycleService } from './batch-lifecycle';
import type { ApiFunctionName, RouteTarget } from './functions';
import type { ApiService } from './service';
import type { HttpAnswer } from './http-answer';
import {
  addUploadsBodySchema,
  agreementSchema,
  batchGetBodySchema,
  batchGetResultSchema,
  batchIdSchema,
  batchImagesQuerySchema,
  batchListSchema,
  batchSummarySchema,
  clientBatchesQuerySchema,
  clientImagesQuerySchema,
  closeBatchBodySchema,
  createBatchBodySchema,
  createdBatchSchema,
  deletedBatchSchema,
  exportQuerySchema,
  fprintSchema,
  imageListSchema,
  imageSchema,
  knownFingerprintsBodySchema,
  knownFingerprintsSchema,
  logListSchema,
  logsQuerySchema,
  noQuerySchema,
  reclassifyBodySchema,
  reclassifyResultSchema,
  reviewBodySchema,
  similarGroupsSchema,
  similarQuerySchema,
  uploadFormsSchema,
  usageSchema,
  type SchemaLimits,
} from './schemas';
import { accuracySchema, auditBodySchema, auditResultSchema } from './audit-schemas';
import { changeListSchema, changesQuerySchema, redetectBodySchema, redetectResultSchema } from './redetect-schemas';
import { reportQuerySchema, retryResultSchema } from './import-schemas';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The web app's files as the routes serve them (lib/web/site.ts, on the function that serves them). */
export interface WebPages {
  page(request: { headers: Readonly<Record<string, string | undefined>> }): HttpAnswer;
  asset(name: string, request: { headers: Readonly<Record<string, string | undefined>> }): HttpAnswer;
}

/** Error statuses a route may answer; 400, 401 (when authenticated), 429 and 500 apply to every route. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500;

/** The operations each function's handler builds, by function. */
export interface ApiServices {
  api: ApiService;
  batches: BatchLifecycleService;
}

export interface RouteInput<S, P, Q, B> {
  service: S;
  /** Absent only on routes without authentication. */
  clientId: string;
  params: P;
  query: Q;
  body: B;
  /** Lower-cased request headers (only the web app's routes read them). */
  headers: Readonly<Record<string, string | undefined>>;
  openApiDocument: () => unknown;
  /** The web app's files, on the function that serves them. */
  webSite: () => Promise<WebPages>;
}

type AnySchema = z.ZodMiniType;
type ObjectSchema = z.ZodMiniObject;

export interface Route<
  F extends ApiFunctionName = ApiFunctionName,
  P extends ObjectSchema = ObjectSchema,
  Q extends ObjectSchema = ObjectSchema,
  B extends AnySchema = AnySchema,
> {
  /** The Lambda function serving the route (serverless.yml). */
  function: F;
  method: HttpMethod;
  /** OpenAPI path template; the router matches the same template. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Access patterns of docs/design.md §2 this route serves. */
  accessPatterns?: string[];
  authenticated: boolean;
  params: P;
  query: Q;
  body?: B;
  status: 200 | 201 | 202;
  response: AnySchema;
  /** Media type of the success answer (default application/json); other types are answered as an HttpAnswer. */
  mediaType?: string;
  /** Answers that are not the JSON `response` (an export's file, a redirect), by status: what the OpenAPI document shows. */
  otherAnswers?: Record<number, { description: string; content?: string[]; headers?: string[] }>;
  errors: ErrorStatus[];
  /** Rate-limit tokens the request costs in all, from its valid body; 1 (the token taken on arrival) when absent. */
  rateCost?: (body: B extends AnySchema ? z.output<B> : undefined) => number;
  run(input: RouteInput<ApiServices[F], z.output<P>, z.output<Q>, B extends AnySchema ? z.output<B> : undefined>): Promise<unknown>;
}

/** Keeps each route's schema types tied to its operation, then erases them for the table. */
const route = <F extends ApiFunctionName, P extends ObjectSchema, Q extends ObjectSchema, B extends AnySchema>(
  r: Route<F, P, Q, B>,
): Route => r as unknown as Route;

const noParams = z.strictObject({});

/** Fingerprints of POST /v1/fingerprints:known one rate-limit token pays for (a call of 1,000 costs 200 tokens). */
export const KNOWN_FINGERPRINTS_PER_TOKEN = 5;
const batchParams = z.strictObject({ batchId: batchIdSchema });
const imageParams = z.strictObject({ batchId: batchIdSchema, fprint: fprintSchema });

const assetParams = z.strictObject({
  asset: z.string().check(z.regex(/^[A-Za-z0-9_-]{1,64}\.(js|css|svg)$/, 'must name a file of the web app')),
});

const BATCH_ERRORS: ErrorStatus[] = [400, 401, 404, 429, 500];

export function apiRoutes(limits: SchemaLimits): Route[] {
  return [
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
    }),
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
      response: z
        .string()
        .check(z.meta({ description: 'The export (text/csv, application/x-ndjson or application/json), as an attachment.' })),
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
      function: 'api',
      method: 'GET',
      path: '/v1/usage',
      operationId: 'getUsage',
      summary: "The client's limits (requests per second, images per UTC day) and today's use of them",
      description:
        'API requests beyond the rate answer 429 rate_limited with Retry-After (a token bucket per client: the rate, bursts ' +
        "of twice it). Uploads beyond the day's images quota are kept under failed/ as fail records with code " +
        'QuotaExceeded, never classified; they count as rejected here.',
      authenticated: true,
      params: noParams,
      query: noQuerySchema,
      status: 200,
      response: usageSchema,
      errors: [400, 401, 429, 500],
      run: ({ service, clientId }) => service.usage(clientId),
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
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
    }),
    route({
      function: 'api',
      method: 'POST',
      path: '/v1/fingerprints:known',
      operationId: 'knownFingerprints',
      summary: 'Which of these fingerprints the client already has answers for: what an upload would not pay for',
      description:
        "For estimates before an upload (icecat upload --dry-run): each fingerprint is looked up by key among the caller's " +
        "own known-fingerprint items (access pattern 5b), so another client's images never answer; a batch being erased " +
        'or expired answers nothing. A known fingerprint is reused by the ingest, not sent to DetectLabels. The call ' +
        `costs one rate-limit token per ${KNOWN_FINGERPRINTS_PER_TOKEN} fingerprints asked (rounded up).`,
      accessPatterns: ['5b'],
      authenticated: true,
      params: noParams,
      query: noQuerySchema,
      body: knownFingerprintsBodySchema,
      status: 200,
      response: knownFingerprintsSchema,
      errors: [400, 401, 413, 429, 500],
      rateCost: (body) => Math.ceil(body.fprints.length / KNOWN_FINGERPRINTS_PER_TOKEN),
      run: ({ service, clientId, body }) => service.knownFingerprints(clientId, body.fprints),
    }),
    route({
      function: 'api',
      method: 'GET',
      path: '/v1/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This document',
      authenticated: false,
      params: noParams,
      query: noQuerySchema,
      status: 200,
      response: z.looseObject({ openapi: z.string() }).check(z.meta({ description: 'OpenAPI 3.1 document.' })),
      errors: [400, 500],
      run: async ({ openApiDocument }) => openApiDocument(),
    }),
    route({
      function: 'api',
      method: 'GET',
      path: '/',
      operationId: 'getWebApp',
      summary: 'The web app: sign in with an API key, batches, thumbnails, uploads (DESIGN §7)',
      authenticated: false,
      params: noParams,
      // Links may carry tracking or other parameters; the page reads none.
      query: z.looseObject({}),
      status: 200,
      mediaType: 'text/html',
      response: z.string().check(z.meta({ description: 'The page; its script and stylesheet are under /app/.' })),
      errors: [500],
      run: async ({ webSite, headers }) => (await webSite()).page({ headers }),
    }),
    route({
      function: 'api',
      method: 'GET',
      path: '/app/{asset}',
      operationId: 'getWebAppFile',
      summary: "The web app's script, stylesheet and icon (content-hashed names are cached for good)",
      authenticated: false,
      params: assetParams,
      query: noQuerySchema,
      status: 200,
      mediaType: 'text/javascript',
      response: z.string(),
      errors: [400, 404, 500],
      run: async ({ webSite, params, headers }) => (await webSite()).asset(params.asset, { headers }),
    }),
  ];
}

// Limits shape only the schemas, never where a route goes.
const ANY_LIMITS: SchemaLimits = { maxRetentionDays: 1, defaultRetentionDays: 1, maxFilesPerBatch: 1, maxUploadBytes: 1 };

/** Method, path and function of every route: what API Gateway and the local gateway route requests by. */
export const routeTargets = (): RouteTarget[] =>
  apiRoutes(ANY_LIMITS).map(({ method, path, function: fn }) => ({ method, path, function: fn }));
