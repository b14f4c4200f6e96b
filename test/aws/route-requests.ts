// One request for every route of the template, in an order a client could send them (reads of a classified batch,
// then its writes, its erasure last), each with the status its route answers (docs/api.md).
export interface RouteRequest {
  /** The route key API Gateway must match it to. */
  route: string;
  method: string;
  /** With {batchId}, {fprint} and {asset} filled in when sent. */
  path: string;
  body?: unknown;
  /** Sent without the API key (the routes that need none). */
  anonymous?: boolean;
  status: number;
}

// POST /v1/batches and POST …/uploads are sent before the upload (a batch whose declared files all arrived closes).
export const routeRequests = (): RouteRequest[] => [
  { route: 'GET /v1/openapi.json', method: 'GET', path: '/v1/openapi.json', anonymous: true, status: 200 },
  { route: 'GET /', method: 'GET', path: '/', anonymous: true, status: 200 },
  { route: 'GET /app/{asset}', method: 'GET', path: '/app/{asset}', anonymous: true, status: 200 },
  { route: 'GET /v1/batches', method: 'GET', path: '/v1/batches', status: 200 },
  { route: 'GET /v1/batches/{batchId}', method: 'GET', path: '/v1/batches/{batchId}', status: 200 },
  { route: 'GET /v1/batches/{batchId}/images', method: 'GET', path: '/v1/batches/{batchId}/images?limit=10', status: 200 },
  { route: 'GET /v1/batches/{batchId}/images/{fprint}', method: 'GET', path: '/v1/batches/{batchId}/images/{fprint}', status: 200 },
  {
    route: 'POST /v1/batches/{batchId}/{action}',
    method: 'POST',
    path: '/v1/batches/{batchId}/images:batchGet',
    body: { fprints: ['{fprint}'] },
    status: 200,
  },
  { route: 'GET /v1/batches/{batchId}/logs', method: 'GET', path: '/v1/batches/{batchId}/logs', status: 200 },
  { route: 'GET /v1/batches/{batchId}/similar', method: 'GET', path: '/v1/batches/{batchId}/similar', status: 200 },
  { route: 'GET /v1/batches/{batchId}/agreement', method: 'GET', path: '/v1/batches/{batchId}/agreement', status: 200 },
  { route: 'GET /v1/batches/{batchId}/accuracy', method: 'GET', path: '/v1/batches/{batchId}/accuracy', status: 200 },
  { route: 'GET /v1/batches/{batchId}/changes', method: 'GET', path: '/v1/batches/{batchId}/changes', status: 200 },
  { route: 'GET /v1/images', method: 'GET', path: '/v1/images?limit=5', status: 200 },
  { route: 'POST /v1/fingerprints:known', method: 'POST', path: '/v1/fingerprints:known', body: { fprints: ['{fprint}'] }, status: 200 },
  { route: 'GET /v1/usage', method: 'GET', path: '/v1/usage', status: 200 },
  { route: '$default', method: 'GET', path: '/v1/no-such-thing', status: 404 },
  { route: 'POST /v1/batches/{batchId}', method: 'POST', path: '/v1/batches/{batchId}:close', body: {}, status: 200 },
  {
    route: 'PUT /v1/batches/{batchId}/images/{fprint}/review',
    method: 'PUT',
    path: '/v1/batches/{batchId}/images/{fprint}/review',
    body: { isCat: false, note: 'checked on moto' },
    status: 200,
  },
  {
    route: 'DELETE /v1/batches/{batchId}/images/{fprint}/review',
    method: 'DELETE',
    path: '/v1/batches/{batchId}/images/{fprint}/review',
    status: 200,
  },
  { route: 'POST /v1/batches/{batchId}/audit', method: 'POST', path: '/v1/batches/{batchId}/audit', body: { size: 1 }, status: 200 },
  {
    route: 'POST /v1/batches/{batchId}',
    method: 'POST',
    path: '/v1/batches/{batchId}:reclassify',
    body: { catMinConfidence: 70 },
    status: 200,
  },
  { route: 'POST /v1/batches/{batchId}', method: 'POST', path: '/v1/batches/{batchId}:redetect', body: { dryRun: true }, status: 200 },
  { route: 'GET /v1/batches/{batchId}/export', method: 'GET', path: '/v1/batches/{batchId}/export?format=jsonl', status: 200 },
  // The batch is an upload, not an import: its report answers 404 (the import path's calls are driven by the task's drive).
  {
    route: 'GET /v1/batches/{batchId}/report',
    method: 'GET',
    path: '/v1/batches/{batchId}/report?format=s3-batch-operations',
    status: 404,
  },
  { route: 'DELETE /v1/batches/{batchId}', method: 'DELETE', path: '/v1/batches/{batchId}', status: 202 },
];

/** The request with its placeholders filled. */
export function filled<T>(value: T, vars: Record<string, string>): T {
  const text = JSON.stringify(value).replace(/\{(batchId|fprint|asset)\}/g, (whole, name: string) => vars[name] ?? whole);
  return JSON.parse(text) as T;
}
