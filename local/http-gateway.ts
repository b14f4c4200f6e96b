// The local API Gateway HTTP API: each request becomes a payload version 2.0 event for the function its route
// integrates, and the function's result is written back as API Gateway would.
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
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
      cookies = values.flatMap((v) => v.split(';')).map((c) => c.trim()).filter(Boolean);
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
    typeof result === 'object' && result !== null && 'statusCode' in result
      ? (result as APIGatewayProxyStructuredResultV2)
      : undefined;
  if (!structured) {
    const body = typeof result === 'string' ? result : JSON.stringify(result);
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(body ?? '') };
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(structured.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (structured.cookies && structured.cookies.length > 0) headers['set-cookie'] = structured.cookies;
  const body = structured.body === undefined
    ? Buffer.alloc(0)
    : Buffer.from(structured.body, structured.isBase64Encoded ? 'base64' : 'utf8');
  if (!headers['content-type'] && body.length > 0) headers['content-type'] = 'application/json';
  return { statusCode: structured.statusCode ?? 200, headers, body };
}

function targetSelector(opts: HttpGatewayOptions): (method: string, rawPath: string) => HttpGatewayTarget {
  if (opts.selectFunction) return opts.selectFunction;
  if (!opts.handler) throw new TypeError('startHttpGateway needs a handler or selectFunction');
  const single: HttpGatewayTarget = { functionName: opts.functionName ?? 'icecat-api', handler: opts.handler };
  return () => single;
}

export async function startHttpGateway(opts: HttpGatewayOptions): Promise<HttpGateway> {
  const maxBodyBytes = opts.maxBodyBytes ?? 10 * 1024 * 1024;
  const select = targetSelector(opts);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const log = opts.log ?? ((line: string) => console.error(line));

  const server = createServer((req, res) => {
    void serve(req, res).catch((err: unknown) => {
      log(`[api] ${req.method} ${req.url} failed: ${err instanceof Error ? err.stack : String(err)}`);
      if (!res.headersSent) send(res, 500, { 'content-type': 'application/json' }, '{"message":"Internal Server Error"}');
      else res.destroy();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > maxBodyBytes) {
        send(res, 413, { 'content-type': 'application/json' }, '{"message":"Request Entity Too Large"}');
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const event = httpApiEvent({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: Buffer.concat(chunks),
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
