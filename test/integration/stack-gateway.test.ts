// The local HTTP API gateway: requests in as API Gateway HTTP API payload 2.0 events, structured results out.

import { type IncomingHttpHeaders, request } from 'node:http';
import { connect } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, Context } from 'aws-lambda';
import { templateApiRouting } from '../../local/gateway/api-functions';
import { type HttpGateway, startHttpGateway } from '../../local/gateway/gateway';
import { ROOT } from '../../local/stack/services';

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
    answer = {
      statusCode: 200,
      headers: { 'content-type': 'image/png' },
      body: Buffer.from([1, 2, 3]).toString('base64'),
      isBase64Encoded: true,
    };

    const res = await fetch(`${gateway.url}/img`);

    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([1, 2, 3]));
  });

  it('answers a bare object result as 200 JSON, as payload 2.0 does', async () => {
    answer = { hello: 'world' } as unknown as APIGatewayProxyResultV2;

    const res = await fetch(`${gateway.url}/x`);

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ hello: 'world' });
  });

  it('answers 500 {"message":"Internal Server Error"} when the handler throws, as API Gateway answers a Lambda error', async () => {
    answer = new Error('bug');

    const res = await fetch(`${gateway.url}/x`);

    expect([res.status, await res.json()]).toEqual([500, { message: 'Internal Server Error' }]);
  });
});

describe('what the local gateway refuses itself: a body over its limit as API Gateway answers it, what Node cannot parse in the API error shape', () => {
  const MAX_BODY = 1024;
  let gateway: HttpGateway;
  let calls: number;

  beforeAll(async () => {
    gateway = await startHttpGateway({
      host: '127.0.0.1',
      port: 0,
      maxBodyBytes: MAX_BODY,
      log: () => undefined,
      handler: async () => {
        calls++;
        return { statusCode: 200, body: '{}' };
      },
    });
  });
  afterAll(() => gateway.close());
  beforeEach(() => {
    calls = 0;
  });

  /** One request over its own connection, as raw as node:http sends it; the answer's status, headers and body. */
  const raw = (opts: { headers?: Record<string, string>; body?: Buffer; chunked?: boolean }) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = request(`${gateway.url}/v1/batches`, { method: 'POST', headers: opts.headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      });
      req.on('error', reject);
      if (opts.chunked && opts.body) {
        // No Content-Length: the size is known only as the chunks arrive.
        for (let i = 0; i < opts.body.length; i += 4096) req.write(opts.body.subarray(i, i + 4096));
        req.end();
      } else req.end(opts.body);
    });

  /**
   * A client that sends its whole request before it reads a byte of the answer (as a slow uploader does): when the
   * server drops the connection with the body unread, this client sees a reset, not the answer.
   */
  const sendAllThenRead = (body: Buffer, chunked: boolean) =>
    new Promise<{ status: number; contentType: string | undefined; body: string }>((resolve, reject) => {
      const socket = connect(gateway.port, '127.0.0.1');
      let got = '';
      socket.pause();
      socket.on('data', (d: Buffer) => (got += d.toString('utf8')));
      socket.on('error', reject);
      socket.on('end', () => {
        const [head = '', text = ''] = got.split('\r\n\r\n');
        const [statusLine = '', ...lines] = head.split('\r\n');
        const header = (name: string) =>
          lines
            .find((l) => l.toLowerCase().startsWith(`${name}:`))
            ?.slice(name.length + 1)
            .trim();
        resolve({
          status: Number(statusLine.split(' ')[1]),
          contentType: header('content-type'),
          body: header('transfer-encoding') ? unchunk(text) : text,
        });
      });
      const length = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`;
      socket.write(
        `POST /v1/batches HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n${length}\r\n\r\n`,
      );
      let sent = 0;
      const step = (): void => {
        if (sent >= body.length) {
          if (chunked) socket.write('0\r\n\r\n');
          setTimeout(() => socket.resume(), 50);
          return;
        }
        const part = body.subarray(sent, sent + 64 * 1024);
        sent += part.length;
        socket.write(chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]) : part, () =>
          setTimeout(step, 1),
        );
      };
      step();
    });
  const unchunk = (text: string): string => {
    let out = '';
    for (let rest = text; ; ) {
      const eol = rest.indexOf('\r\n');
      const size = parseInt(rest.slice(0, eol), 16);
      if (!size) return out;
      out += rest.slice(eol + 2, eol + 2 + size);
      rest = rest.slice(eol + 4 + size);
    }
  };

  it.each([
    ['with a Content-Length', false],
    ['chunked, without one', true],
  ])("answers a body over the limit (%s) with API Gateway's 413, to a client still sending, and calls no function", async (_, chunked) => {
    const answer = await sendAllThenRead(Buffer.alloc(2 * 1024 * 1024, 0x20), chunked);

    expect(answer).toEqual({ status: 413, contentType: 'text; charset=utf-8', body: `HTTP content length exceeded ${MAX_BODY} bytes.` });
    expect(calls).toBe(0);
  });

  it("answers headers over the server's limit with 431 and an error body", async () => {
    const answer = await raw({ headers: { 'x-padding': 'p'.repeat(40 * 1024) } });

    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'headers_too_large', message: 'the request headers are too large' } });
    expect(calls).toBe(0);
  });

  it('keeps serving after each refusal', async () => {
    await raw({ body: Buffer.alloc(4 * MAX_BODY) });

    const ok = await fetch(`${gateway.url}/v1/batches`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

    expect([ok.status, calls]).toEqual([200, 1]);
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
      ...(await templateApiRouting(ROOT, () => ({ api: recorder('api'), batches: recorder('batches') }))),
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
