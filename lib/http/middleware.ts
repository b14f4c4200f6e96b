// The API's middy middlewares: what turns API Gateway v2 events into validated input for lib/api and errors into
// HTTP answers. Operations themselves never see an event.
import type { MiddlewareObj, Request } from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { createError } from '@middy/util';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import { InvalidParameterError, MalformedBodyError } from '../api/errors';
import type { Route } from '../api/routes/route';
import { IceCatError } from '../errors';

interface ValidInput {
  params: unknown;
  query: unknown;
  body: unknown;
}

/** The Lambda context plus what the middlewares established for the operation. */
export interface ApiContext extends Context {
  clientId?: string;
  input?: ValidInput;
}

type ApiRequest = Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, ApiContext>;
type ApiMiddleware = MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, ApiContext>;

const header = (event: APIGatewayProxyEventV2, name: string): string | undefined =>
  event.headers?.[name] ?? Object.entries(event.headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1];

/** What resolves an Authorization header to a client id (lib/auth's ApiKeyAuthenticator). */
export interface Authenticator {
  authenticate(authorization: string | undefined): Promise<string>;
}

/** Authorization: Bearer <key> → the key's client, or 401. */
export function authenticate(authenticator: Authenticator): ApiMiddleware {
  return {
    name: 'authenticate',
    before: async (request: ApiRequest) => {
      request.context.clientId = await authenticator.authenticate(header(request.event, 'authorization'));
    },
  };
}

/** What admits a client's request or throws RateLimitedError (lib/quota/rate-limiter.ts). */
export interface RateLimiter {
  admit(clientId: string): Promise<void>;
  /** Charges an admitted request's cost beyond its one token. */
  charge(clientId: string, tokens: number): void;
}

/** After authentication: the client's token bucket takes the request, or it answers 429 with Retry-After. */
export function rateLimit(limiter: RateLimiter): ApiMiddleware {
  return {
    name: 'rateLimit',
    before: async (request: ApiRequest) => {
      if (request.context.clientId !== undefined) await limiter.admit(request.context.clientId);
    },
  };
}

/**
 * After validation, for a route that costs more than one token (Route.rateCost): the tokens beyond the one the request
 * took on arrival are charged, into debt if need be, so that the client's next request waits until they are paid.
 */
export function rateCost(limiter: RateLimiter, route: Route): ApiMiddleware {
  return {
    name: 'rateCost',
    before: async (request: ApiRequest) => {
      const { clientId, input } = request.context;
      if (clientId === undefined || input === undefined || !route.rateCost) return;
      const extra = route.rateCost(input.body) - 1;
      if (extra > 0) limiter.charge(clientId, extra);
    },
  };
}

/** JSON bodies through @middy/http-json-body-parser; an absent body is `{}`; anything unparsable is a 400. */
export function jsonBody(): ApiMiddleware {
  const parser = httpJsonBodyParser();
  return {
    name: 'jsonBody',
    before: async (request: ApiRequest) => {
      const body = request.event.body;
      if (body === undefined || body === null || body === '') {
        (request.event as { body: unknown }).body = {};
        return;
      }
      try {
        await parser.before?.(request as never);
      } catch (cause) {
        throw new MalformedBodyError('body must be a JSON document sent with Content-Type: application/json', { cause });
      }
    },
  };
}

function describeIssue(issue: z.core.$ZodIssue): { where: string[]; message: string } {
  if (issue.code === 'unrecognized_keys') return { where: issue.keys.slice(0, 1), message: 'is not a known field' };
  return { where: issue.path.map(String), message: issue.message };
}

/** The first problem in zod's terms, naming the parameter: `limit`, `body.files[2].size`. */
function firstIssue(error: z.core.$ZodError, location: 'path' | 'query' | 'body'): InvalidParameterError {
  const issue = error.issues[0] as z.core.$ZodIssue;
  const { where, message } = describeIssue(issue);
  const path = where.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('');
  const parameter = location === 'body' ? `body${path}` : path.replace(/^\./, '') || location;
  const known = location === 'query' && issue.code === 'unrecognized_keys' ? 'is not a known query parameter' : message;
  return new InvalidParameterError(known, { parameter, cause: error });
}

function parse(schema: z.ZodMiniType, value: unknown, location: 'path' | 'query' | 'body'): unknown {
  const result = schema.safeParse(value);
  if (!result.success) throw firstIssue(result.error, location);
  return result.data;
}

/** Only the route's own path parameters: a catch-all API Gateway route (ANY /v1/{proxy+}) adds `proxy`. */
function declaredParams(route: Route, given: APIGatewayProxyEventV2['pathParameters']): Record<string, string | undefined> {
  return Object.fromEntries(Object.keys(route.params.shape).map((name) => [name, given?.[name]]));
}

/** Path parameters, query string and body checked against the route's schemas. */
export function validate(route: Route): ApiMiddleware {
  return {
    name: 'validate',
    before: async (request: ApiRequest) => {
      const { event } = request;
      request.context.input = {
        params: parse(route.params, declaredParams(route, event.pathParameters), 'path'),
        query: parse(route.query, event.queryStringParameters ?? {}, 'query'),
        body: route.body ? parse(route.body, (event as { body: unknown }).body, 'body') : undefined,
      };
    },
  };
}

// ---- errors to HTTP answers: the one place -----------------------------------------------------------------------

interface HttpErrorAnswer {
  status: number;
  code: string;
  message: string;
  /** Headers the answer carries: Retry-After of a rate_limited 429. */
  headers?: Record<string, string>;
}

/**
 * The status each error code of the family (lib/errors.ts) is answered with, and its message when not the error's
 * own. A code not listed is a bug: 500 with a fixed message, the error logged, its internals never shown.
 */
const HTTP_ANSWERS: Readonly<Record<string, { status: number; message?: (own: string) => string }>> = {
  invalid_parameter: { status: 400 },
  malformed_body: { status: 400 },
  invalid_cursor: { status: 400, message: (own) => `cursor: ${own}` },
  unauthorized: { status: 401 },
  source_not_allowed: { status: 403 },
  invalid_source: { status: 400 },
  imports_not_configured: { status: 400 },
  invalid_import_source: { status: 400 },
  not_found: { status: 404 },
  batch_exists: { status: 409 },
  batch_erasing: { status: 409 },
  batch_closed: { status: 409 },
  batch_not_done: { status: 409 },
  nothing_to_audit: { status: 409 },
  expected_below_total: { status: 409 },
  image_failed: { status: 409 },
  image_not_classified: { status: 409 },
  review_conflict: { status: 409 },
  file_too_large: { status: 413 },
  throttled: { status: 429, message: () => 'too many requests; retry later' },
  rate_limited: { status: 429 },
  quota_exceeded: { status: 429 },
};

const INTERNAL_ERROR: HttpErrorAnswer = { status: 500, code: 'internal_error', message: 'internal error' };

export const OUT_OF_STORAGE: HttpErrorAnswer = {
  status: 507,
  code: 'insufficient_storage',
  message: 'the service is out of storage space: nothing was changed; retry once space is freed',
};

export function toHttpError(err: unknown): HttpErrorAnswer {
  if (err instanceof IceCatError) {
    const answer = HTTP_ANSWERS[err.code];
    if (answer) {
      // An error that knows when to come back (lib/quota's RateLimitedError) says so in Retry-After.
      const retryAfter = (err as { retryAfterSeconds?: unknown }).retryAfterSeconds;
      return {
        status: answer.status,
        code: err.code,
        message: answer.message ? answer.message(err.message) : err.message,
        ...(typeof retryAfter === 'number' ? { headers: { 'Retry-After': String(retryAfter) } } : {}),
      };
    }
  }
  if (isOutOfStorage(err)) return OUT_OF_STORAGE;
  return INTERNAL_ERROR;
}

/**
 * A store that refused a write for lack of disk space: the one-machine stack's DynamoDB (dynalite) answers
 * InternalServerError saying so (docs/design.md, "A full disk"); AWS's never does.
 */
function isOutOfStorage(err: unknown): boolean {
  const { name, message } = (err ?? {}) as { name?: unknown; message?: unknown };
  return name === 'InternalServerError' && typeof message === 'string' && /no space left on device|out of disk space/i.test(message);
}

const errorBody = (answer: HttpErrorAnswer): string => JSON.stringify({ error: { code: answer.code, message: answer.message } });

export type ErrorLogger = (message: string, details: Record<string, unknown>) => void;

const defaultLogger: ErrorLogger = (message, details) => console.error(JSON.stringify({ level: 'ERROR', message, ...details }));

/**
 * Maps any error to a middy HTTP error carrying the JSON body, for @middy/http-error-handler to answer with.
 * Internals of a 500 are logged, never returned.
 */
export function mapErrors(log: ErrorLogger = defaultLogger): ApiMiddleware {
  return {
    name: 'mapErrors',
    onError: async (request: ApiRequest) => {
      const answer = toHttpError(request.error);
      if (answer.status >= 500) {
        const err = request.error;
        log('unhandled error', {
          method: request.event.requestContext?.http?.method,
          path: request.event.rawPath,
          error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
        });
      }
      const error = createError(answer.status, errorBody(answer), { expose: true });
      // @middy/http-error-handler answers with the error's own headers (Retry-After of a 429).
      if (answer.headers) Object.assign(error, { headers: answer.headers });
      request.error = error;
    },
  };
}

/** Headers every API answer carries, errors included; the web app's files bring their own instead. */
export const API_HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } as const;
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Errors are answered as JSON documents, with the API's headers (a route's own answers get theirs in app.ts). */
export function errorHeaders(): ApiMiddleware {
  return {
    name: 'errorHeaders',
    onError: (request) => {
      if (!request.response) return;
      request.response.headers = { ...request.response.headers, 'Content-Type': JSON_CONTENT_TYPE, ...API_HEADERS };
    },
  };
}
