// The local API Gateway HTTP API: each request becomes a payload version 2.0 event for the function its route
// integrates, and the function's result is written back as API Gateway would.
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createLambdaContext, LOCAL_ACCOUNT_ID } from './env';
import { listen } from './listen';

export type HttpApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;

/** A Lambda function behind a route: its name (for the context) and its handler. */
export interface HttpGatewayTarget {
  functionName: string;
  handler: HttpApiHandler;
}

export interface HttpGatewayOptions {
  host: string;
  port: number;
  /** The function every request reaches, unless `selectFunction` picks one per request. */
  handler?: HttpApiHandler;
  functionName?: string;
  /** API Gateway's route selection: the function a request's method and raw path reach. */
  selectFunction?: (method: string, rawPath: string) => HttpGatewayTarget;
  timeoutMs?: number;
  /** Largest request body accepted (API Gateway's payload limit is 10 MB). */
  maxBodyBytes?: number;
  log?: (line: string) => void;
}

export interface HttpGateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

const API_ID = 'icecatlocal';
// API Gateway passes these content types to the function as text; anything else arrives base64-encoded.
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded|[\w.+-]*\+(json|xml)))/i;

/** The payload 2.0 event API Gateway would send for this request (route $default, stage $default). */
export function httpApiEvent(req: {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  sourceIp: string;
  host: string;
  now?: Date;
  requestId?: string;
}): APIGatewayProxyEventV2 {
  const now = req.now ?? new Date();
  const queryAt = req.url.indexOf('?');
  const rawPath = queryAt === -1 ? req.url : req.url.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : req.url.slice(queryAt + 1);

  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const values = Array.isArray(value) ? value : [value];
    if (lower === 'cookie') {
      cookies = values
        .flatMap((v) => v.split(';'))
        .map((c) => c.trim())
        .filter(Boolean);
      continue;
    }
    headers[lower] = values.join(',');
  }

  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    query[name] = name in query ? `${query[name]},${value}` : value;
  }

  const contentType = headers['content-type'] ?? '';
  const isBase64Encoded = req.body.length > 0 && !TEXT_TYPES.test(contentType);
  const requestId = req.requestId ?? randomBytes(8).toString('base64url');
  const path = safeDecodePath(rawPath);
  const domainName = req.host.replace(/:\d+$/, '');

  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: API_ID,
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method: req.method,
        path,
        protocol: 'HTTP/1.1',
        sourceIp: req.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded,
  };
  if (cookies && cookies.length > 0) event.cookies = cookies;
  if (Object.keys(query).length > 0) event.queryStringParameters = query;
  if (req.body.length > 0) event.body = req.body.toString(isBase64Encoded ? 'base64' : 'utf8');
  return event;
}

function safeDecodePath(rawPath: string): string {
  try {
    return decodeURI(rawPath);
  } catch {
    return rawPath;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** requestContext.time as API Gateway writes it: "12/Mar/2020:19:03:58 +0000". */
function clfTime(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`
  );
}

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

function targetSelector(opts: HttpGatewayOptions): (method: string, rawPath: string) => HttpGatewayTarget {
  if (opts.selectFunction) return opts.selectFunction;
  if (!opts.handler) throw new TypeError('startHttpGateway needs a handler or selectFunction');
  const single: HttpGatewayTarget = { functionName: opts.functionName ?? 'icecat-api', handler: opts.handler };
  return () => single;
}

/** An error answer in the API's shape (docs/design.md §3), for what the gateway refuses before any function runs. */
export function gatewayErrorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

const INTERNAL_ERROR = gatewayErrorBody('internal_error', 'internal error');

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

export async function startHttpGateway(opts: HttpGatewayOptions): Promise<HttpGateway> {
  const maxBodyBytes = opts.maxBodyBytes ?? 10 * 1024 * 1024;
  const select = targetSelector(opts);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const log = opts.log ?? ((line: string) => console.error(line));

  const server = createServer((req, res) => {
    void serve(req, res).catch((err: unknown) => {
      log(`[api] ${req.method} ${req.url} failed: ${err instanceof Error ? err.stack : String(err)}`);
      if (!res.headersSent) send(res, 500, { 'content-type': 'application/json' }, INTERNAL_ERROR);
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
    const answer = clientErrorAnswer(err);
    socket.on('error', () => undefined);
    socket.resume();
    socket.end(
      `HTTP/1.1 ${answer.status} ${answer.text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(answer.body)}\r\n` +
        `Connection: close\r\n\r\n${answer.body}`,
    );
    setTimeout(() => socket.destroy(), 5_000).unref();
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const read = await readBody(req, maxBodyBytes);
    if ('tooLarge' in read) {
      const drained = read.tooLarge <= maxBodyBytes + DRAIN_LIMIT_BYTES;
      send(
        res,
        413,
        { 'content-type': 'application/json', ...(drained ? {} : { connection: 'close' }) },
        gatewayErrorBody('body_too_large', `the request body is larger than ${maxBodyBytes} bytes`),
      );
      return;
    }
    const event = httpApiEvent({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: read.body,
      sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
      host: req.headers.host ?? `${opts.host}:${opts.port}`,
    });
    const target = select(event.requestContext.http.method, event.rawPath);
    const context = createLambdaContext(target.functionName, timeoutMs, event.requestContext.requestId);
    const result = await target.handler(event, context);
    const response = httpResponseOf(result);
    send(res, response.statusCode, response.headers, response.body);
  }

  return listen(server, opts.host, opts.port);
}

function send(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: Buffer | string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
