// The local API Gateway HTTP API: each request goes to the route API Gateway would select from the template's route
// keys (serverless.yml's httpApi events, local/gateway/routes.ts), becomes the payload version 2.0 event API Gateway
// builds for that route, and the function's result is written back as API Gateway would. What API Gateway refuses
// before or around the function is answered as it answers it: a body over 10 MB (413), no route (404), the function
// failing, past its timeout or answering over Lambda's 6 MB (500), the integration past 30 s (503).

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createLambdaContext, LOCAL_ACCOUNT_ID } from '../contract';
import { listen } from '../listen';
import { buildHttpApiEvent, type HttpApiRoute, matchRoute } from './routes';

export type HttpApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;

/** A Lambda function behind a route: its deployed name (for the context), its handler and its timeout. */
export interface HttpGatewayTarget {
  functionName: string;
  handler: HttpApiHandler;
  /** The function's timeout (serverless.yml); a handler past it fails as Lambda's does. Default: the integration's. */
  timeoutMs?: number;
}

export interface HttpGatewayOptions {
  host: string;
  port: number;
  /** The template's routes (local/gateway/routes.ts); without them, one `$default` route to `handler`. */
  routes?: readonly HttpApiRoute[];
  /** The function a route integrates, by its name in the template. */
  target?: (templateFunction: string) => HttpGatewayTarget;
  /** The one function every request reaches, when no `routes`/`target` are given. */
  handler?: HttpApiHandler;
  functionName?: string;
  /** API Gateway's integration timeout for HTTP APIs: 30 s. */
  integrationTimeoutMs?: number;
  /** Largest request body accepted (API Gateway's payload limit is 10 MB). */
  maxBodyBytes?: number;
  /** Largest function response Lambda returns (a synchronous invocation's 6 MB). */
  maxResponseBytes?: number;
  log?: (line: string) => void;
}

export interface HttpGateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

const API_ID = 'icecatlocal';
/** API Gateway's payload limit, and Lambda's for a synchronous invocation's response (6 MB as Lambda counts it). */
export const MAX_REQUEST_BODY_BYTES = 10 * 1024 * 1024;
export const MAX_FUNCTION_RESPONSE_BYTES = 6_291_556;
export const INTEGRATION_TIMEOUT_MS = 30_000;

/**
 * The HTTP response API Gateway makes of a handler's result: a structured result as given; any other value
 * (a string, an object without statusCode) as a 200 JSON body, per the payload 2.0 format.
 */
export function httpResponseOf(result: APIGatewayProxyResultV2): {
  statusCode: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
} {
  const structured =
    typeof result === 'object' && result !== null && 'statusCode' in result ? (result as APIGatewayProxyStructuredResultV2) : undefined;
  if (!structured) {
    const body = typeof result === 'string' ? result : JSON.stringify(result);
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(body ?? '') };
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (structured.cookies && structured.cookies.length > 0) headers['set-cookie'] = structured.cookies;
  const body =
    structured.body === undefined ? Buffer.alloc(0) : Buffer.from(structured.body, structured.isBase64Encoded ? 'base64' : 'utf8');
  if (!headers['content-type'] && body.length > 0) headers['content-type'] = 'application/json';
  return { statusCode: structured.statusCode ?? 200, headers, body };
}

/** The routes and the function behind each: the template's, or one `$default` route to the one handler. */
function routing(opts: HttpGatewayOptions): { routes: readonly HttpApiRoute[]; target: (templateFunction: string) => HttpGatewayTarget } {
  if (opts.routes && opts.target) return { routes: opts.routes, target: opts.target };
  if (!opts.handler) throw new TypeError('startHttpGateway needs routes and target, or a handler');
  const single: HttpGatewayTarget = { functionName: opts.functionName ?? 'icecat-api', handler: opts.handler };
  return { routes: [{ routeKey: '$default', method: 'ANY', functionName: single.functionName }], target: () => single };
}

/** An error answer in the API's shape (docs/design.md §3), for what Node's HTTP parser refuses before any route. */
export function gatewayErrorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** API Gateway's own answers (its `{"message": ...}` JSON, or the text of its payload limit). */
export const GATEWAY_ANSWERS = {
  notFound: { status: 404, contentType: 'application/json', body: '{"message":"Not Found"}' },
  internalError: { status: 500, contentType: 'application/json', body: '{"message":"Internal Server Error"}' },
  unavailable: { status: 503, contentType: 'application/json', body: '{"message":"Service Unavailable"}' },
  tooLarge: (maxBytes: number) => ({
    status: 413,
    contentType: 'text; charset=utf-8',
    body: `HTTP content length exceeded ${maxBytes} bytes.`,
  }),
} as const;
type GatewayAnswer = { status: number; contentType: string; body: string };

/**
 * Bytes of an oversized body read and dropped before the 413, so that a client still sending reads the answer instead of
 * a reset (a server closing with bytes unread makes the kernel reset the connection); past it the connection is closed.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/** A request body within the limit, or its size when it was over (what was read of it is dropped, not kept). */
function readBody(req: IncomingMessage, maxBytes: number): Promise<{ body: Buffer } | { tooLarge: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const over = () => size > maxBytes;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (!over()) chunks.push(chunk);
      else if (chunks.length > 0) chunks.length = 0;
      if (size > maxBytes + DRAIN_LIMIT_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        resolve({ tooLarge: size });
      }
    });
    req.on('end', () => resolve(over() ? { tooLarge: size } : { body: Buffer.concat(chunks) }));
    req.on('error', reject);
  });
}

/** The answer Node's HTTP parser would give a request it cannot parse, in the API's error shape. */
function clientErrorAnswer(err: NodeJS.ErrnoException): { status: number; text: string; body: string } {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      text: 'Request Header Fields Too Large',
      body: gatewayErrorBody('headers_too_large', 'the request headers are too large'),
    };
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, text: 'Request Timeout', body: gatewayErrorBody('request_timeout', 'the request did not arrive in time') };
  }
  return { status: 400, text: 'Bad Request', body: gatewayErrorBody('bad_request', 'the request is not valid HTTP/1.1') };
}

/** How an invocation ended: the function's result, its failure (thrown, timed out, response too large), or no answer in time. */
type Outcome = { result: APIGatewayProxyResultV2 } | { failed: string } | { integrationTimeout: true };

/** The function run as Lambda runs it: failed past its timeout or with a response over Lambda's limit. */
async function invoke(
  target: HttpGatewayTarget,
  event: APIGatewayProxyEventV2,
  limits: { integrationTimeoutMs: number; maxResponseBytes: number },
): Promise<Outcome> {
  const timeoutMs = target.timeoutMs ?? limits.integrationTimeoutMs;
  const context = createLambdaContext(target.functionName, timeoutMs, randomUUID());
  const timers: NodeJS.Timeout[] = [];
  const after = (ms: number, outcome: Outcome) => new Promise<Outcome>((resolve) => timers.push(setTimeout(() => resolve(outcome), ms)));
  const run = target.handler(event, context).then(
    (result): Outcome => {
      const size = Buffer.byteLength(JSON.stringify(result) ?? '');
      if (size <= limits.maxResponseBytes) return { result };
      return { failed: `Response payload size (${size} bytes) exceeded maximum allowed payload size (${limits.maxResponseBytes} bytes).` };
    },
    (err: unknown): Outcome => ({ failed: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
  try {
    return await Promise.race([
      run,
      after(timeoutMs, { failed: `Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds` }),
      after(limits.integrationTimeoutMs, { integrationTimeout: true }),
    ]);
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
}

export async function startHttpGateway(opts: HttpGatewayOptions): Promise<HttpGateway> {
  const maxBodyBytes = opts.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES;
  const limits = {
    integrationTimeoutMs: opts.integrationTimeoutMs ?? INTEGRATION_TIMEOUT_MS,
    maxResponseBytes: opts.maxResponseBytes ?? MAX_FUNCTION_RESPONSE_BYTES,
  };
  const { routes, target } = routing(opts);
  const log = opts.log ?? ((line: string) => console.error(line));

  const server = createServer((req, res) => {
    void serve(req, res).catch((err: unknown) => {
      log(`[api] ${req.method} ${req.url} failed: ${err instanceof Error ? err.stack : String(err)}`);
      if (!res.headersSent) answer(res, GATEWAY_ANSWERS.internalError, '');
      else res.destroy();
    });
  });
  // Requests Node's parser refuses (headers over its limit, malformed HTTP) never reach `serve`: answered here, in the
  // API's error shape, reading on what the client still sends so that it gets the answer rather than a reset.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const refusal = clientErrorAnswer(err);
    socket.on('error', () => undefined);
    socket.resume();
    socket.end(
      `HTTP/1.1 ${refusal.status} ${refusal.text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(refusal.body)}\r\n` +
        `Connection: close\r\n\r\n${refusal.body}`,
    );
    setTimeout(() => socket.destroy(), 5_000).unref();
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const read = await readBody(req, maxBodyBytes);
    if ('tooLarge' in read) {
      const drained = read.tooLarge <= maxBodyBytes + DRAIN_LIMIT_BYTES;
      answer(res, GATEWAY_ANSWERS.tooLarge(maxBodyBytes), '', drained ? {} : { connection: 'close' });
      return;
    }
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const match = matchRoute(routes, method, url.split('?')[0] ?? url);
    if (!match) {
      answer(res, GATEWAY_ANSWERS.notFound, '');
      return;
    }
    const event = buildHttpApiEvent(
      {
        method,
        url,
        rawHeaders: req.rawHeaders,
        body: read.body,
        sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
        host: req.headers.host ?? `${opts.host}:${opts.port}`,
        protocol: `HTTP/${req.httpVersion}`,
      },
      match,
      { accountId: LOCAL_ACCOUNT_ID, apiId: API_ID },
    );
    const requestId = event.requestContext.requestId;
    const fn = target(match.route.functionName);
    const outcome = await invoke(fn, event, limits);
    if ('integrationTimeout' in outcome) {
      log(`[api] ${match.route.routeKey}: ${fn.functionName} gave no answer within the integration's ${limits.integrationTimeoutMs} ms`);
      answer(res, GATEWAY_ANSWERS.unavailable, requestId);
      return;
    }
    if ('failed' in outcome) {
      log(`[api] ${match.route.routeKey}: ${fn.functionName} failed: ${outcome.failed}`);
      answer(res, GATEWAY_ANSWERS.internalError, requestId);
      return;
    }
    const response = httpResponseOf(outcome.result);
    send(res, response.statusCode, { ...response.headers, 'apigw-requestid': requestId }, response.body);
  }

  return listen(server, opts.host, opts.port);
}

/** One of API Gateway's own answers, with its request id when a request got one. */
function answer(res: ServerResponse, what: GatewayAnswer, requestId: string, extra: Record<string, string> = {}): void {
  send(res, what.status, { 'content-type': what.contentType, ...(requestId ? { 'apigw-requestid': requestId } : {}), ...extra }, what.body);
}

function send(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: Buffer | string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
