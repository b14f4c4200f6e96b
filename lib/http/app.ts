// The API as one middy handler: errors mapped in one place around @middy/http-router, and per route the
// authentication, JSON body parsing and zod validation its definition asks for. Each API function (lib/api/functions.ts)
// builds it with the routes it serves and only their services; any other request answers 404.
import middy from '@middy/core';
import httpErrorHandler from '@middy/http-error-handler';
import httpRouterHandler, { type Method } from '@middy/http-router';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { RouteNotFoundError } from '../api/errors';
import { HttpAnswer } from '../api/http-answer';
import type { ApiServices, Route, WebPages } from '../api/routes/route';
import { IceCatError } from '../errors';
import {
  API_HEADERS,
  type ApiContext,
  type Authenticator,
  authenticate,
  type ErrorLogger,
  errorHeaders,
  JSON_CONTENT_TYPE,
  jsonBody,
  mapErrors,
  type RateLimiter,
  rateCost,
  rateLimit,
  validate,
} from './middleware';

interface ApiDeps {
  /** The routes this function serves. */
  routes: Route[];
  /** The operations behind them, by the function each route names. */
  services: Partial<ApiServices>;
  authenticator: Authenticator;
  /** Per-client request rate of the authenticated routes (docs/design.md §11); none without it. */
  rateLimiter?: RateLimiter;
  /** What GET /v1/openapi.json answers, when this function serves it (the document describes every route). */
  openApiDocument?: () => unknown;
  /** The web app (GET / and /app/*), when this function serves it. */
  webSite?: () => Promise<WebPages>;
  logError?: ErrorLogger;
}

export class ApiWiringError extends IceCatError {
  override name = 'ApiWiringError';
  readonly code: string = 'api_wiring';
}

export type ApiHandler = (event: APIGatewayProxyEventV2, context?: Partial<ApiContext>) => Promise<APIGatewayProxyStructuredResultV2>;

const lowerCased = (headers: APIGatewayProxyEventV2['headers'] | undefined): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));

/** A route's result as API Gateway takes it: its JSON document, or the HttpAnswer it made, with the API's headers. */
function toResult(result: unknown, status: number): APIGatewayProxyStructuredResultV2 {
  if (!(result instanceof HttpAnswer)) {
    return { statusCode: status, headers: { 'Content-Type': JSON_CONTENT_TYPE, ...API_HEADERS }, body: JSON.stringify(result) };
  }
  return {
    statusCode: result.statusCode,
    headers: result.apiHeaders ? { ...result.headers, ...API_HEADERS } : result.headers,
    body: result.body,
    ...(result.isBase64Encoded ? { isBase64Encoded: true } : {}),
  };
}

/**
 * The event as the router should see it: without API Gateway's pathParameters. Those are filled from the deployed
 * route key, whose variables take whole segments (`POST /v1/batches/{batchId}` hands `batchId: "<id>:close"`,
 * `{proxy+}` hands `proxy`), and @middy/http-router lets them override its own match. The route's own template
 * (`/v1/batches/{batchId}:close`), matched against the path API Gateway hands (requestContext.http.path), is what
 * splits the custom method off and names the parameters validation reads.
 */
function withOwnPathParameters(event: APIGatewayProxyEventV2): APIGatewayProxyEventV2 {
  if (event.pathParameters === undefined) return event;
  const { pathParameters: _deployed, ...rest } = event;
  return rest;
}

export function createApiHandler(deps: ApiDeps): ApiHandler {
  let openApi: unknown;
  const openApiDocument = () => {
    if (!deps.openApiDocument) throw new ApiWiringError('this function has no OpenAPI document');
    return (openApi ??= deps.openApiDocument());
  };
  const webSite = () => {
    if (!deps.webSite) throw new ApiWiringError('this function does not serve the web app');
    return deps.webSite();
  };

  const routes = deps.routes.map((route) => {
    const service = deps.services[route.function];
    if (!service) throw new ApiWiringError(`${route.method} ${route.path} needs the ${route.function} function's service`);
    const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, ApiContext>();
    if (route.authenticated) handler.use(authenticate(deps.authenticator));
    if (route.authenticated && deps.rateLimiter) handler.use(rateLimit(deps.rateLimiter));
    if (route.body) handler.use(jsonBody());
    handler.use(validate(route));
    if (route.authenticated && deps.rateLimiter && route.rateCost) handler.use(rateCost(deps.rateLimiter, route));
    return {
      method: route.method as Method,
      path: route.path,
      handler: handler.handler(async (event, context) => {
        const input = context.input as NonNullable<ApiContext['input']>;
        const result = await route.run({
          service,
          clientId: context.clientId ?? '',
          params: input.params as never,
          query: input.query as never,
          body: input.body as never,
          headers: lowerCased(event.headers),
          openApiDocument,
          webSite,
        });
        return toResult(result, route.status);
      }),
    };
  });

  const router = httpRouterHandler<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>({
    routes,
    notFoundResponse: ({ method, path }) => {
      throw new RouteNotFoundError(`no route ${method} ${path}`, { method, path });
    },
  }) as unknown as (event: APIGatewayProxyEventV2, context: ApiContext) => Promise<APIGatewayProxyStructuredResultV2>;
  const app = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, ApiContext>()
    .use(errorHeaders())
    .use(httpErrorHandler({ logger: false }))
    .use(mapErrors(deps.logError))
    .handler((event, context) => router(withOwnPathParameters(event), context));
  return (event, context) => app(event, (context ?? {}) as ApiContext);
}
