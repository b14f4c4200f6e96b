// The local HTTP API gateway: requests in as API Gateway HTTP API payload 2.0 events, structured results out.
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { apiFunctionSelector } from '../../local/api-functions';
import { startHttpGateway, type HttpGateway } from '../../local/http-gateway';

describe('local HTTP API gateway', () => {
  let gateway: HttpGateway;
  let seen: APIGatewayProxyEventV2[];
  let answer: APIGatewayProxyResultV2 | Error;

  beforeAll(async () => {
    gateway = await startHttpGateway({
      host: '127.0.0.1',
      port: 0,
      log: () => undefined,
      handler: async (event) => {
        seen.push(event);
        if (answer instanceof Error) throw answer;
        return answer;
      },
    });
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    seen = [];
    answer = { statusCode: 200, body: '{}' };
  });

  it('turns a GET into a payload 2.0 event: $default route, raw path and query, lower-cased headers', async () => {
    // Act
    await fetch(`${gateway.url}/v1/batches/b1/images?limit=2&status=success&status=fail`, {
      headers: { Authorization: 'Bearer k', 'X-Custom': 'v' },
    });

    // Assert
    const [event] = seen;
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/v1/batches/b1/images',
      rawQueryString: 'limit=2&status=success&status=fail',
      queryStringParameters: { limit: '2', status: 'success,fail' },
      headers: { authorization: 'Bearer k', 'x-custom': 'v' },
      isBase64Encoded: false,
      requestContext: {
        routeKey: '$default',
        stage: '$default',
        http: { method: 'GET', path: '/v1/batches/b1/images', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1' },
        requestId: expect.any(String),
        timeEpoch: expect.any(Number),
        time: expect.stringMatching(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/),
      },
    });
    expect(event?.body).toBeUndefined();
    expect(event?.queryStringParameters).toBeDefined();
  });

  it('leaves queryStringParameters out when there is no query string', async () => {
    await fetch(`${gateway.url}/v1/images`);

    expect(seen[0]).not.toHaveProperty('queryStringParameters');
  });

  it('passes a JSON body as text and a binary body base64-encoded', async () => {
    // Act
    await fetch(`${gateway.url}/v1/batches`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"debug":true}' });
    await fetch(`${gateway.url}/v1/raw`, { method: 'PUT', headers: { 'content-type': 'image/png' }, body: Buffer.from([0, 255, 1]) });

    // Assert
    expect(seen[0]).toMatchObject({ body: '{"debug":true}', isBase64Encoded: false, requestContext: { http: { method: 'POST' } } });
    expect(seen[1]).toMatchObject({ body: Buffer.from([0, 255, 1]).toString('base64'), isBase64Encoded: true });
  });

  it('moves Cookie headers into the cookies array', async () => {
    await fetch(`${gateway.url}/v1/images`, { headers: { cookie: 'a=1; b=2' } });

    expect(seen[0]?.cookies).toEqual(['a=1', 'b=2']);
    expect(seen[0]?.headers).not.toHaveProperty('cookie');
  });

  it('writes the structured result: status, headers, body and cookies', async () => {
    // Arrange
    answer = {
      statusCode: 201,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'r1' },
      body: '{"batchId":"b1"}',
      cookies: ['s=1; Path=/'],
    };

    // Act
    const res = await fetch(`${gateway.url}/v1/batches`, { method: 'POST' });

    // Assert
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toBe('r1');
    expect(res.headers.getSetCookie()).toEqual(['s=1; Path=/']);
    expect(await res.json()).toEqual({ batchId: 'b1' });
  });

  it('decodes a base64-encoded result body', async () => {
    answer = { statusCode: 200, headers: { 'content-type': 'image/png' }, body: Buffer.from([1, 2, 3]).toString('base64'), isBase64Encoded: true };

    const res = await fetch(`${gateway.url}/img`);

    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([1, 2, 3]));
  });

  it('answers a bare object result as 200 JSON, as payload 2.0 does', async () => {
    answer = { hello: 'world' } as unknown as APIGatewayProxyResultV2;

    const res = await fetch(`${gateway.url}/x`);

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ hello: 'world' });
  });

  it('answers 500 Internal Server Error when the handler throws', async () => {
    answer = new Error('bug');

    const res = await fetch(`${gateway.url}/x`);

    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ message: 'Internal Server Error' });
  });
});

describe('local HTTP API gateway with the API functions', () => {
  let gateway: HttpGateway;
  let reached: { functionName: string; path: string }[];

  beforeAll(async () => {
    const recorder = (name: string) => async (event: APIGatewayProxyEventV2, context: Context) => {
      reached.push({ functionName: context.functionName, path: `${name} ${event.requestContext.http.method} ${event.rawPath}` });
      return { statusCode: 200, body: '{}' };
    };
    gateway = await startHttpGateway({
      host: '127.0.0.1',
      port: 0,
      log: () => undefined,
      selectFunction: apiFunctionSelector(() => ({ api: recorder('api'), batches: recorder('batches') }), 'icecat-wrangler-local'),
    });
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    reached = [];
  });

  it('sends POST /v1/batches to the batches function, as the deployed route does', async () => {
    await fetch(`${gateway.url}/v1/batches`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

    expect(reached).toEqual([{ functionName: 'icecat-wrangler-local-batches', path: 'batches POST /v1/batches' }]);
  });

  it('sends a read route to the api function', async () => {
    await fetch(`${gateway.url}/v1/batches/b1/images?limit=2`);

    expect(reached).toEqual([{ functionName: 'icecat-wrangler-local-api', path: 'api GET /v1/batches/b1/images' }]);
  });

  it('sends a request no route matches to the api function ($default)', async () => {
    await fetch(`${gateway.url}/v1/batches`);

    expect(reached.map((r) => r.functionName)).toEqual(['icecat-wrangler-local-api']);
  });
});
