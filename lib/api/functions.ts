// The Lambda functions behind the HTTP API, named as in serverless.yml. The route table (routes/) says which one
// serves each route; API Gateway's $default route, and so every request that no route matches, goes to the default
// one, which answers it 404 in the API's error shape. POST /v1/batches has a function of its own because only it
// signs uploads: the S3 client and s3:PutObject stay out of the read function's bundle and role.

export const API_FUNCTIONS = ['api', 'batches'] as const;
export type ApiFunctionName = (typeof API_FUNCTIONS)[number];

export const DEFAULT_API_FUNCTION: ApiFunctionName = 'api';

/** The module exporting a function's `handler` (serverless.yml: handler: functions/<name>/handler.handler). */
export const apiHandlerModule = (name: ApiFunctionName): string => `functions/${name}/handler`;

/** Where API Gateway sends a request: method and OpenAPI path template of a route, and the function behind it. */
export interface RouteTarget {
  method: string;
  path: string;
  function: ApiFunctionName;
}

/**
 * API Gateway's matching: a {variable} is one whole, non-empty path segment; everything else matches literally. A
 * segment with a custom method (`{batchId}:close`) deploys as its variable alone, which takes the whole segment.
 */
export function pathMatches(template: string, path: string): boolean {
  const want = template.split('/');
  const got = path.split('/');
  return want.length === got.length && want.every((w, i) => (w.startsWith('{') ? got[i] !== '' : got[i] === w));
}

/** The function a request reaches: the one behind the matching route, else the $default one. */
export function functionFor(targets: readonly RouteTarget[], method: string, path: string): ApiFunctionName {
  return targets.find((t) => t.method === method && pathMatches(t.path, path))?.function ?? DEFAULT_API_FUNCTION;
}
