// API Gateway HTTP API (payload 2.0) events for handler tests that need no network.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export interface EventOptions {
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
  authorization?: string | null;
  /** As API Gateway sets them for the matched route, e.g. `{ proxy }` for ANY /v1/{proxy+}. */
  pathParameters?: Record<string, string>;
  /** The route API Gateway matched (its route key, e.g. `POST /v1/batches/{batchId}`); `$default` when absent. */
  routeKey?: string;
}

export function apiEvent(method: string, path: string, opts: EventOptions = {}): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.authorization !== null) headers.authorization = opts.authorization ?? 'Bearer test-key-0123456789';
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  const rawQueryString = new URLSearchParams(opts.query ?? {}).toString();
  const routeKey = opts.routeKey ?? '$default';
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString,
    headers,
    ...(opts.query ? { queryStringParameters: opts.query } : {}),
    ...(opts.pathParameters ? { pathParameters: opts.pathParameters } : {}),
    ...(opts.body !== undefined ? { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'test',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'jest' },
      requestId: 'test',
      routeKey,
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
  };
}
