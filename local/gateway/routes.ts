// API Gateway HTTP API as the template deploys it, as pure functions: the routes of serverless.yml's httpApi events
// (the route keys that deploy), API Gateway's route selection, and the payload format 2.0 event it builds for the
// matched route. The local gateway (local/gateway/gateway.ts) serves requests with them; anything else that must invoke
// the handlers as API Gateway would (a test, a deploy check) can build the same events.

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { parse } from 'yaml';
import { LocalStackError } from '../errors';

export class TemplateRouteError extends LocalStackError {
  override name = 'TemplateRouteError';
  readonly code = 'invalid_template_route';
}

/** One route of the HTTP API, as API Gateway holds it. */
export interface HttpApiRoute {
  /** `GET /v1/batches/{batchId}`, `ANY /x`, or `$default`. */
  routeKey: string;
  /** An HTTP method or `ANY` (`$default` takes any method). */
  method: string;
  /** The resource path; absent for `$default`. */
  path?: string;
  /** The function integrated, by its name in serverless.yml (`api`, `batches`). */
  functionName: string;
}

/** A function of the template and what Lambda runs it with. */
export interface TemplateFunction {
  name: string;
  /** `timeout` of the function, else the provider's, else the framework's default of 6 s. */
  timeoutSeconds: number;
}

export interface HttpApiTemplate {
  routes: HttpApiRoute[];
  functions: TemplateFunction[];
}

/** The framework's function timeout when neither the function nor the provider sets one. */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 6;
const METHODS = new Set(['ANY', 'GET', 'POST', 'PUT', 'PATCH', 'OPTIONS', 'HEAD', 'DELETE']);

interface ServerlessDoc {
  provider?: { timeout?: unknown };
  functions?: Record<string, { timeout?: unknown; events?: { httpApi?: unknown }[] }>;
}

/** `${self:a.b}` looked up in the document itself; any other value as it is. */
function resolveSelf(value: unknown, doc: unknown): unknown {
  const ref = typeof value === 'string' ? /^\$\{self:([A-Za-z0-9_.]+)\}$/.exec(value) : null;
  if (!ref?.[1]) return value;
  return ref[1].split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
}

function timeoutOf(name: string, value: unknown, doc: unknown): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(resolveSelf(value, doc));
  if (!Number.isFinite(seconds) || seconds <= 0) throw new TemplateRouteError(`function ${name}: cannot resolve timeout ${String(value)}`);
  return seconds;
}

/** One httpApi event as the framework compiles it into a route key: `*` is `$default`, a `*` method is `ANY`. */
function routeOf(functionName: string, event: unknown): HttpApiRoute {
  let method: string | undefined;
  let routePath: string | undefined;
  if (typeof event === 'string') {
    if (event.trim() === '*') return { routeKey: '$default', method: 'ANY', functionName };
    const parts = /^\s*(\S+)\s+(\S+)\s*$/.exec(event);
    method = parts?.[1];
    routePath = parts?.[2];
  } else if (event && typeof event === 'object') {
    ({ method, path: routePath } = event as { method?: string; path?: string });
    if (routePath === '*') return { routeKey: '$default', method: 'ANY', functionName };
  }
  const verb = method === '*' ? 'ANY' : method?.toUpperCase();
  if (!verb || !METHODS.has(verb) || !routePath?.startsWith('/'))
    throw new TemplateRouteError(`function ${functionName}: cannot read the httpApi event ${JSON.stringify(event)}`);
  return { routeKey: `${verb} ${routePath}`, method: verb, path: routePath, functionName };
}

/** The HTTP API's routes and every function's timeout, from serverless.yml's text. */
export function templateFromServerlessYaml(serverlessYaml: string): HttpApiTemplate {
  // CloudFormation tags (!Sub, !Ref) elsewhere in the file do not matter here.
  const doc = parse(serverlessYaml, { logLevel: 'silent' }) as ServerlessDoc;
  const providerTimeout = timeoutOf('provider', doc?.provider?.timeout, doc);
  const routes: HttpApiRoute[] = [];
  const functions: TemplateFunction[] = [];
  for (const [name, fn] of Object.entries(doc?.functions ?? {})) {
    functions.push({ name, timeoutSeconds: timeoutOf(name, fn?.timeout, doc) ?? providerTimeout ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS });
    for (const event of fn?.events ?? []) if (event?.httpApi !== undefined) routes.push(routeOf(name, event.httpApi));
  }
  const keys = routes.map((r) => r.routeKey);
  const twice = keys.find((key, i) => keys.indexOf(key) !== i);
  if (twice) throw new TemplateRouteError(`route ${twice} is declared twice`);
  return { routes, functions };
}

/** The routes of serverless.yml's httpApi events: the route keys that deploy. */
export const routesFromTemplate = (serverlessYaml: string): HttpApiRoute[] => templateFromServerlessYaml(serverlessYaml).routes;

/** serverless.yml of the project at `projectDir`, read. */
export async function loadHttpApiTemplate(projectDir: string): Promise<HttpApiTemplate> {
  return templateFromServerlessYaml(await readFile(path.join(projectDir, 'serverless.yml'), 'utf8'));
}

export interface RouteMatch {
  route: HttpApiRoute;
  /** As API Gateway fills them from the route's path (decoded); absent when the route has no variable. */
  pathParameters?: Record<string, string>;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A route path's segments: a literal, a `{variable}` or the greedy `{name+}` (only last). */
type Segment = { literal: string } | { variable: string } | { greedy: string };
const compiled = new WeakMap<HttpApiRoute, Segment[]>();

function segmentsOf(route: HttpApiRoute & { path: string }): Segment[] {
  let segments = compiled.get(route);
  if (!segments) {
    const parts = route.path.split('/');
    segments = parts.map((w, i): Segment => {
      const greedy = /^\{([^{}]+)\+\}$/.exec(w);
      if (greedy && i === parts.length - 1) return { greedy: greedy[1] as string };
      const variable = /^\{([^{}+]+)\}$/.exec(w);
      return variable ? { variable: variable[1] as string } : { literal: w };
    });
    compiled.set(route, segments);
  }
  return segments;
}

/**
 * How a route's path matches: per segment, 2 for a literal, 1 for a `{variable}` (one whole, non-empty segment), 0
 * for the greedy `{name+}` (the rest of the path, at least one character); undefined when it does not match.
 */
function matchPath(want: readonly Segment[], got: readonly string[]): { rank: number[]; params: Record<string, string> } | undefined {
  const rank: number[] = [];
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as Segment;
    if ('greedy' in w) {
      const rest = got.slice(i).join('/');
      if (rest === '') return undefined;
      params[w.greedy] = decodeSegment(rest);
      rank.push(0);
      return { rank, params };
    }
    const g = got[i];
    if (g === undefined) return undefined;
    if ('variable' in w) {
      if (g === '') return undefined;
      params[w.variable] = decodeSegment(g);
      rank.push(1);
    } else if (w.literal === g) rank.push(2);
    else return undefined;
  }
  return got.length === want.length ? { rank, params } : undefined;
}

/** Is `a` a more specific match than `b`: no greedy variable first, then literal before variable segment by segment. */
function moreSpecific(a: number[], b: number[]): boolean {
  const greedyA = a.includes(0);
  if (greedyA !== b.includes(0)) return !greedyA;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? -1;
    const y = b[i] ?? -1;
    if (x !== y) return x > y;
  }
  return false;
}

/**
 * API Gateway's route selection: the most specific route whose method (or ANY, below a route with the method
 * itself) and path match, a route with a greedy variable only below those without, then `$default`; undefined when
 * nothing matches (API Gateway answers 404 {"message":"Not Found"}). `rawPath` is the request's path as sent.
 */
export function matchRoute(routes: readonly HttpApiRoute[], method: string, rawPath: string): RouteMatch | undefined {
  let best: { route: HttpApiRoute; rank: number[]; params: Record<string, string> } | undefined;
  const got = rawPath.split('/');
  for (const route of routes) {
    if (route.path === undefined || (route.method !== method && route.method !== 'ANY')) continue;
    const m = matchPath(segmentsOf(route as HttpApiRoute & { path: string }), got);
    if (!m) continue;
    const rank = [...m.rank, route.method === 'ANY' ? 0 : 1];
    if (!best || moreSpecific(rank, best.rank)) best = { route, rank, params: m.params };
  }
  if (best) return Object.keys(best.params).length > 0 ? { route: best.route, pathParameters: best.params } : { route: best.route };
  const fallback = routes.find((r) => r.routeKey === '$default');
  return fallback ? { route: fallback } : undefined;
}

/** A request as the gateway received it. */
export interface HttpApiRequest {
  method: string;
  /** The request target: path and query string, as sent. */
  url: string;
  /** Header names and values in arrival order (node's `rawHeaders`). */
  rawHeaders: readonly string[];
  body: Buffer;
  sourceIp: string;
  /** The Host the request was sent to. */
  host: string;
  protocol?: string;
  now?: Date;
  requestId?: string;
}

export interface HttpApiIdentity {
  accountId: string;
  apiId: string;
}

// API Gateway passes these content types to the function as text; anything else arrives base64-encoded.
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded|[\w.+-]*\+(json|xml)))/i;

/** requestContext.requestId as API Gateway HTTP APIs write it: 16 characters of base64, as `JKJaXmPLvHcESHA=`. */
export const newGatewayRequestId = (): string => randomBytes(11).toString('base64');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** requestContext.time as API Gateway writes it: "12/Mar/2020:19:03:58 +0000". */
export function clfTime(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`
  );
}

/** Lower-cased headers, a repeated one comma-joined, and the Cookie headers' cookies apart. */
function headersOf(rawHeaders: readonly string[]): { headers: Record<string, string>; cookies: string[] } {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = rawHeaders[i + 1] as string;
    if (name === 'cookie') {
      cookies.push(
        ...value
          .split(';')
          .map((c) => c.trim())
          .filter(Boolean),
      );
      continue;
    }
    headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  return { headers, cookies };
}

/**
 * The payload format 2.0 event API Gateway sends the integration of `match`'s route for this request (stage
 * `$default`): the fields of AWS's documented sample, in its order, without those this API has no use for
 * (`authorizer`, `authentication` (mutual TLS), `stageVariables`). The path arrives decoded, as HTTP APIs hand it.
 */
export function buildHttpApiEvent(req: HttpApiRequest, match: RouteMatch, identity: HttpApiIdentity): APIGatewayProxyEventV2 {
  const now = req.now ?? new Date();
  const queryAt = req.url.indexOf('?');
  const path = decodeSegment(queryAt === -1 ? req.url : req.url.slice(0, queryAt));
  const rawQueryString = queryAt === -1 ? '' : req.url.slice(queryAt + 1);
  const { headers, cookies } = headersOf(req.rawHeaders);
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) query[name] = name in query ? `${query[name]},${value}` : value;
  const isBase64Encoded = req.body.length > 0 && !TEXT_TYPES.test(headers['content-type'] ?? '');
  const domainName = req.host.replace(/:\d+$/, '');
  const routeKey = match.route.routeKey;

  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: identity.accountId,
      apiId: identity.apiId,
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method: req.method,
        path,
        protocol: req.protocol ?? 'HTTP/1.1',
        sourceIp: req.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: req.requestId ?? newGatewayRequestId(),
      routeKey,
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    ...(req.body.length > 0 ? { body: req.body.toString(isBase64Encoded ? 'base64' : 'utf8') } : {}),
    ...(match.pathParameters ? { pathParameters: match.pathParameters } : {}),
    isBase64Encoded,
  };
}

/** A template function's timeout in milliseconds. */
export function functionTimeoutMs(template: HttpApiTemplate, name: string): number {
  const fn = template.functions.find((f) => f.name === name);
  if (!fn) throw new TemplateRouteError(`no function ${name} in the template`);
  return fn.timeoutSeconds * 1000;
}
