// The local gateway's events against API Gateway's: AWS's documented payload 2.0 sample (events/) for the same
// request, the routeKey and pathParameters of every route of serverless.yml (custom methods included), and what API
// Gateway answers itself: no route, a body over 10 MB, a function failing, past its timeout or answering over
// Lambda's 6 MB, an integration past 30 s. Over loopback, with recording functions: no stack.

import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { awsHttpApiSampleEvent } from '../../events';
import { templateApiRouting } from '../../local/gateway/api-functions';
import { type HttpApiHandler, type HttpGateway, startHttpGateway } from '../../local/gateway/gateway';
import { type HttpApiRoute, routesFromTemplate } from '../../local/gateway/routes';
import { ROOT } from '../../local/stack/services';

const BATCH = '01HXYZABCDEFGHJKMNPQRSTVWX';
const FPRINT = 'ab'.repeat(32);

/** One request as raw as node:http sends it (repeated headers as separate lines); the answer. */
function send(
  url: string,
  opts: { method?: string; headers?: Record<string, string | string[]>; body?: Buffer | string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Every value replaced by its type, arrays by their elements' shapes: what two events must share. */
const shapeOf = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shapeOf(v)]));
  return typeof value;
};

const CLF_TIME = /^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/;

describe("the local gateway's event against AWS's documented payload 2.0 sample", () => {
  let gateway: HttpGateway;
  let seen: APIGatewayProxyEventV2[];
  const sample = awsHttpApiSampleEvent();

  beforeAll(async () => {
    // The sample's route: $default (its pathParameters go with a route that has a variable, below).
    gateway = await startHttpGateway({
      host: '127.0.0.1',
      port: 0,
      log: () => undefined,
      handler: async (event) => {
        seen.push(event);
        return { statusCode: 200, body: '{}' };
      },
    });
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    seen = [];
  });

  /** The sample's request: its method, path, query, cookies, headers (Header2 sent twice) and body. */
  const sendSample = async () => {
    const before = Date.now();
    await send(`${gateway.url}${sample.rawPath}?${sample.rawQueryString}`, {
      method: sample.requestContext.http.method,
      headers: {
        Header1: 'value1',
        Header2: ['value1', 'value2'],
        Cookie: (sample.cookies ?? []).join('; '),
        'User-Agent': sample.requestContext.http.userAgent,
        'Content-Type': 'text/plain',
      },
      body: sample.body,
    });
    return { event: seen[0] as APIGatewayProxyEventV2, before, after: Date.now() };
  };

  it('has the same fields, in the same order, with the same types (less those this API has no use for)', async () => {
    const { event } = await sendSample();

    // Present only for mutual TLS, an authorizer and stage variables; pathParameters only on a route with a variable.
    const { stageVariables: _s, pathParameters: _p, ...expected } = sample;
    const {
      authentication: _a,
      authorizer: _z,
      ...context
    } = sample.requestContext as typeof sample.requestContext & { authorizer?: unknown };
    const want = { ...expected, requestContext: context };
    expect(Object.keys(event)).toEqual(Object.keys(want));
    expect(Object.keys(event.requestContext)).toEqual(Object.keys(context));
    expect(shapeOf({ ...event, headers: {} })).toEqual(shapeOf({ ...want, headers: {} }));
    expect(Object.values(event.headers).every((v) => typeof v === 'string')).toBe(true);
  });

  it('has the same values where they follow from the request: path, query, cookies, headers, body, route', async () => {
    const { event } = await sendSample();

    expect({
      version: event.version,
      routeKey: event.routeKey,
      rawPath: event.rawPath,
      rawQueryString: event.rawQueryString,
      cookies: event.cookies,
      queryStringParameters: event.queryStringParameters,
      body: event.body,
      isBase64Encoded: event.isBase64Encoded,
      http: { ...event.requestContext.http, sourceIp: 'IP' },
      stage: event.requestContext.stage,
      contextRouteKey: event.requestContext.routeKey,
    }).toEqual({
      version: sample.version,
      routeKey: sample.routeKey,
      rawPath: sample.rawPath,
      rawQueryString: sample.rawQueryString,
      cookies: sample.cookies,
      queryStringParameters: sample.queryStringParameters,
      body: sample.body,
      isBase64Encoded: sample.isBase64Encoded,
      http: sample.requestContext.http,
      stage: sample.requestContext.stage,
      contextRouteKey: sample.requestContext.routeKey,
    });
    // "All header names are lowercase"; a repeated header comma-joined, as the sample's Header2.
    const lowered = Object.fromEntries(Object.entries(sample.headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect(event.headers).toMatchObject(lowered);
  });

  it('has, where values must differ, the formats of API Gateway: request id, time, account, domain, source IP', async () => {
    const { event, before, after } = await sendSample();
    const ctx = event.requestContext;

    expect([CLF_TIME.test(sample.requestContext.time), CLF_TIME.test(ctx.time)]).toEqual([true, true]);
    expect(ctx.timeEpoch).toBeGreaterThanOrEqual(before);
    expect(ctx.timeEpoch).toBeLessThanOrEqual(after);
    expect(ctx.requestId).toMatch(/^[A-Za-z0-9+/]{15}=$/);
    expect([sample.requestContext.accountId, ctx.accountId].every((id) => /^\d{12}$/.test(id))).toBe(true);
    expect([ctx.domainName, ctx.domainPrefix, ctx.http.sourceIp]).toEqual(['127.0.0.1', '127', '127.0.0.1']);
    expect(sample.requestContext.domainPrefix).toBe(sample.requestContext.domainName.split('.')[0]);
  });
});

// Every route of serverless.yml once: a request, the route API Gateway selects, its pathParameters, its function.
const ROUTE_TABLE: [method: string, path: string, routeKey: string, pathParameters: Record<string, string> | undefined, fn: string][] = [
  ['GET', '/v1/openapi.json', 'GET /v1/openapi.json', undefined, 'api'],
  ['GET', '/v1/batches', 'GET /v1/batches', undefined, 'api'],
  ['GET', `/v1/batches/${BATCH}`, 'GET /v1/batches/{batchId}', { batchId: BATCH }, 'api'],
  ['GET', `/v1/batches/${BATCH}/images`, 'GET /v1/batches/{batchId}/images', { batchId: BATCH }, 'api'],
  ['GET', `/v1/batches/${BATCH}/images/${FPRINT}`, 'GET /v1/batches/{batchId}/images/{fprint}', { batchId: BATCH, fprint: FPRINT }, 'api'],
  [
    'POST',
    `/v1/batches/${BATCH}/images:batchGet`,
    'POST /v1/batches/{batchId}/{action}',
    { batchId: BATCH, action: 'images:batchGet' },
    'api',
  ],
  ['GET', `/v1/batches/${BATCH}/logs`, 'GET /v1/batches/{batchId}/logs', { batchId: BATCH }, 'api'],
  ['GET', `/v1/batches/${BATCH}/similar`, 'GET /v1/batches/{batchId}/similar', { batchId: BATCH }, 'api'],
  ['GET', `/v1/batches/${BATCH}/agreement`, 'GET /v1/batches/{batchId}/agreement', { batchId: BATCH }, 'api'],
  ['GET', `/v1/batches/${BATCH}/accuracy`, 'GET /v1/batches/{batchId}/accuracy', { batchId: BATCH }, 'api'],
  ['GET', `/v1/batches/${BATCH}/changes`, 'GET /v1/batches/{batchId}/changes', { batchId: BATCH }, 'api'],
  ['GET', '/v1/images?cat=true', 'GET /v1/images', undefined, 'api'],
  ['POST', '/v1/fingerprints:known', 'POST /v1/fingerprints:known', undefined, 'api'],
  ['GET', '/v1/usage', 'GET /v1/usage', undefined, 'api'],
  ['GET', '/', 'GET /', undefined, 'api'],
  ['GET', '/app/app.1a2b.js', 'GET /app/{asset}', { asset: 'app.1a2b.js' }, 'api'],
  ['DELETE', '/v1/batches', '$default', undefined, 'api'],
  ['POST', '/v1/batches', 'POST /v1/batches', undefined, 'batches'],
  ['POST', `/v1/batches/${BATCH}/uploads`, 'POST /v1/batches/{batchId}/uploads', { batchId: BATCH }, 'batches'],
  ['GET', `/v1/batches/${BATCH}/export?format=csv`, 'GET /v1/batches/{batchId}/export', { batchId: BATCH }, 'batches'],
  ['GET', `/v1/batches/${BATCH}/report?format=s3-batch-operations`, 'GET /v1/batches/{batchId}/report', { batchId: BATCH }, 'batches'],
  ['DELETE', `/v1/batches/${BATCH}`, 'DELETE /v1/batches/{batchId}', { batchId: BATCH }, 'batches'],
  [
    'PUT',
    `/v1/batches/${BATCH}/images/${FPRINT}/review`,
    'PUT /v1/batches/{batchId}/images/{fprint}/review',
    { batchId: BATCH, fprint: FPRINT },
    'batches',
  ],
  [
    'DELETE',
    `/v1/batches/${BATCH}/images/${FPRINT}/review`,
    'DELETE /v1/batches/{batchId}/images/{fprint}/review',
    { batchId: BATCH, fprint: FPRINT },
    'batches',
  ],
  ['POST', `/v1/batches/${BATCH}/audit`, 'POST /v1/batches/{batchId}/audit', { batchId: BATCH }, 'batches'],
  ['POST', `/v1/batches/${BATCH}:close`, 'POST /v1/batches/{batchId}', { batchId: `${BATCH}:close` }, 'batches'],
  ['POST', `/v1/batches/${BATCH}:reclassify`, 'POST /v1/batches/{batchId}', { batchId: `${BATCH}:reclassify` }, 'batches'],
  ['POST', `/v1/batches/${BATCH}:redetect`, 'POST /v1/batches/{batchId}', { batchId: `${BATCH}:redetect` }, 'batches'],
];

describe("every route of serverless.yml: the event's routeKey and pathParameters as API Gateway fills them", () => {
  let gateway: HttpGateway;
  let reached: { fn: string; functionName: string; event: APIGatewayProxyEventV2 }[];

  beforeAll(async () => {
    const recorder =
      (fn: string): HttpApiHandler =>
      async (event: APIGatewayProxyEventV2, context: Context) => {
        reached.push({ fn, functionName: context.functionName, event });
        return { statusCode: 200, body: '{}' };
      };
    gateway = await startHttpGateway({
      host: '127.0.0.1',
      port: 0,
      log: () => undefined,
      ...(await templateApiRouting(ROOT, () => ({ api: recorder('api'), batches: recorder('batches') }))),
    });
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    reached = [];
  });

  it('has a row for each route the template deploys', () => {
    const template: HttpApiRoute[] = routesFromTemplate(readFileSync(path.join(ROOT, 'serverless.yml'), 'utf8'));

    expect(new Set(ROUTE_TABLE.map((row) => row[2]))).toEqual(new Set(template.map((r) => r.routeKey)));
  });

  it.each(ROUTE_TABLE)('%s %s reaches route %s with pathParameters %j, on the %s function', async (method, url, routeKey, params, fn) => {
    await send(`${gateway.url}${url}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(method === 'GET' ? {} : { body: '{}' }),
    });

    const [hit] = reached;
    expect({
      fn: hit?.fn,
      functionName: hit?.functionName,
      routeKey: hit?.event.routeKey,
      context: hit?.event.requestContext.routeKey,
    }).toEqual({
      fn,
      functionName: `icecat-wrangler-local-${fn}`,
      routeKey,
      context: routeKey,
    });
    if (params) expect(hit?.event.pathParameters).toEqual(params);
    else expect(hit?.event).not.toHaveProperty('pathParameters');
  });
});

describe('what API Gateway answers itself', () => {
  const started: HttpGateway[] = [];
  afterAll(() => Promise.all(started.map((g) => g.close())));

  /** A gateway whose one route `ANY /x` (and no $default) reaches `handler`, held to these limits. */
  const gatewayWith = async (handler: HttpApiHandler, limits: { timeoutMs?: number; integrationTimeoutMs?: number } = {}) => {
    const routes: HttpApiRoute[] = [{ routeKey: 'ANY /x', method: 'ANY', path: '/x', functionName: 'f' }];
    const g = await startHttpGateway({
      host: '127.0.0.1',
      port: 0,
      log: () => undefined,
      routes,
      target: () => ({ functionName: 'f', handler, ...(limits.timeoutMs ? { timeoutMs: limits.timeoutMs } : {}) }),
      ...(limits.integrationTimeoutMs ? { integrationTimeoutMs: limits.integrationTimeoutMs } : {}),
    });
    started.push(g);
    return g;
  };
  const ok: HttpApiHandler = async () => ({ statusCode: 200, body: 'ok' });
  const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

  it('answers a route the template does not have 404 {"message":"Not Found"}, reaching no function', async () => {
    let calls = 0;
    const g = await gatewayWith(async () => {
      calls++;
      return { statusCode: 200 };
    });

    const res = await send(`${g.url}/y`);

    expect([res.status, JSON.parse(res.body), calls]).toEqual([404, { message: 'Not Found' }, 0]);
  });

  it('takes a body of 10 MB and answers one byte more 413, as API Gateway does', async () => {
    const g = await gatewayWith(ok);
    const tenMb = 10 * 1024 * 1024;

    const [fits, over] = [
      await send(`${g.url}/x`, { method: 'POST', body: Buffer.alloc(tenMb) }),
      await send(`${g.url}/x`, { method: 'POST', body: Buffer.alloc(tenMb + 1) }),
    ];

    expect([fits.status, over.status, over.body]).toEqual([200, 413, `HTTP content length exceeded ${tenMb} bytes.`]);
  });

  it('answers 500 {"message":"Internal Server Error"} when the function runs past its template\'s timeout', async () => {
    const g = await gatewayWith(() => after(2_000, { statusCode: 200 }), { timeoutMs: 200 });
    const t0 = Date.now();

    const res = await send(`${g.url}/x`);

    expect([res.status, JSON.parse(res.body)]).toEqual([500, { message: 'Internal Server Error' }]);
    expect(Date.now() - t0).toBeLessThan(1_500);
  });

  it('answers 503 {"message":"Service Unavailable"} when the integration gets no answer in its time', async () => {
    const g = await gatewayWith(() => after(2_000, { statusCode: 200 }), { timeoutMs: 5_000, integrationTimeoutMs: 200 });

    const res = await send(`${g.url}/x`);

    expect([res.status, JSON.parse(res.body)]).toEqual([503, { message: 'Service Unavailable' }]);
  });

  it("answers a response over Lambda's 6 MB 500, one under it whole", async () => {
    const big =
      (bytes: number): HttpApiHandler =>
      async (): Promise<APIGatewayProxyResultV2> => ({ statusCode: 200, body: 'x'.repeat(bytes) });
    const under = await gatewayWith(big(6_000_000));
    const over = await gatewayWith(big(6_300_000));

    const [a, b] = [await send(`${under.url}/x`), await send(`${over.url}/x`)];

    expect([a.status, a.body.length, b.status, JSON.parse(b.body)]).toEqual([200, 6_000_000, 500, { message: 'Internal Server Error' }]);
  });

  it("answers with API Gateway's request id, the event's", async () => {
    let requestId = '';
    const g = await gatewayWith(async (event) => {
      requestId = event.requestContext.requestId;
      return { statusCode: 204 };
    });

    const res = await send(`${g.url}/x`);

    expect(res.headers['apigw-requestid']).toBe(requestId);
  });
});
