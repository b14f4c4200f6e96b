import type { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import { apiRoutes } from '../../lib/api/routes';
import type { ApiService } from '../../lib/api/service';
import { InvalidApiKeyError } from '../../lib/auth/api-keys';
import { createApiHandler } from '../../lib/http/app';
import { apiEvent, type EventOptions } from '../helpers/api-event';

const LIMITS = { maxRetentionDays: 365, defaultRetentionDays: 30, maxFilesPerBatch: 3, maxUploadBytes: 1000 };
const BATCH = '01HXYZABCDEFGHJKMNPQRSTVWX';

/** The operations a request reached, with the input validation produced. */
function setup() {
  const calls: { op: string; args: unknown[] }[] = [];
  const record =
    (op: string, result: unknown) =>
    async (...args: unknown[]) => {
      calls.push({ op, args });
      return result;
    };
  const service = {
    createBatch: record('createBatch', { batchId: BATCH }),
    getBatch: record('getBatch', {}),
    listBatchImages: record('listBatchImages', { items: [] }),
    getBatchImage: record('getBatchImage', {}),
    batchGetImages: record('batchGetImages', { items: [], notFound: [] }),
    listBatchLogs: record('listBatchLogs', { items: [] }),
    listClientImages: record('listClientImages', { items: [] }),
    similarGroups: record('similarGroups', { groups: [] }),
  } as unknown as ApiService;
  const authenticator = {
    authenticate: async (header: string | undefined) => {
      if (header !== 'Bearer test-key-0123456789') throw new InvalidApiKeyError('unknown API key');
      return 'acme';
    },
  };
  const logged: unknown[] = [];
  const handler = createApiHandler({
    routes: apiRoutes(LIMITS),
    services: { api: service, batches: service as unknown as BatchLifecycleService },
    authenticator,
    logError: (m, d) => logged.push({ m, d }),
  });
  const call = async (method: string, path: string, opts?: EventOptions) => {
    const res = await handler(apiEvent(method, path, opts));
    return { status: res.statusCode, body: JSON.parse(res.body ?? 'null'), headers: res.headers ?? {} };
  };
  return { call, calls, logged };
}

describe('API validation', () => {
  it('passes from/to as epoch ms whether given as ISO-8601 or epoch seconds', async () => {
    const { call, calls } = setup();

    await call('GET', `/v1/batches/${BATCH}/images`, { query: { from: '2024-05-01T00:00:00Z', to: '1714608000' } });

    expect(calls[0]?.args[2]).toMatchObject({ from: Date.UTC(2024, 4, 1), to: 1714608000_000 });
  });

  it('defaults limit to 50', async () => {
    const { call, calls } = setup();

    await call('GET', '/v1/images');

    expect(calls[0]?.args[1]).toMatchObject({ limit: 50 });
  });

  it('turns cat=true into a boolean', async () => {
    const { call, calls } = setup();

    await call('GET', '/v1/images', { query: { cat: 'true' } });

    expect(calls[0]?.args[1]).toMatchObject({ cat: true });
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ status: 'done' }, 'status'],
    [{ cat: 'yes' }, 'cat'],
    [{ from: 'yesterday' }, 'from'],
    [{ to: '2024-13-45' }, 'to'],
    [{ from: '2000', to: '1000' }, 'from'],
    [{ fprint: 'a#b' }, 'fprint'],
    [{ cursor: '' }, 'cursor'],
    [{ stauts: 'fail' }, 'stauts'],
  ])('answers 400 naming the parameter for %p', async (query, parameter) => {
    const { call } = setup();

    const res = await call('GET', '/v1/images', { query });

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_parameter');
    expect(res.body.error.message).toMatch(new RegExp(`^${parameter}: `));
  });

  it.each([
    ['0', 'limit: Too small: expected number to be >=1'],
    ['101', 'limit: Too big: expected number to be <=100'],
  ])('says in words what is wrong with limit=%p', async (limit, message) => {
    const { call } = setup();

    const res = await call('GET', `/v1/batches/${BATCH}/images`, { query: { limit } });

    expect(res.body.error).toEqual({ code: 'invalid_parameter', message });
  });

  it.each([
    [undefined, undefined],
    ['0', 0],
    ['10', 10],
    ['24', 24],
  ])('passes maxDistance=%p on as %p bits', async (maxDistance, bits) => {
    const { call, calls } = setup();

    const res = await call('GET', `/v1/batches/${BATCH}/similar`, { query: maxDistance === undefined ? {} : { maxDistance } });

    expect(res.status).toBe(200);
    expect(calls[0]?.args[2]).toEqual(bits === undefined ? {} : { maxDistance: bits });
  });

  it.each(['25', '64', '65', '-1', 'abc', '1.5', '1e1', '', ' 5', '0x10'])(
    'answers 400 naming maxDistance for maxDistance=%p',
    async (maxDistance) => {
      const { call, calls } = setup();

      const res = await call('GET', `/v1/batches/${BATCH}/similar`, { query: { maxDistance } });

      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'invalid_parameter', message: 'maxDistance: must be a whole number of bits from 0 to 24' });
      expect(calls).toEqual([]);
    },
  );

  it('answers 400 naming a bad batch id in the path', async () => {
    const { call } = setup();

    const res = await call('GET', '/v1/batches/APIKEY%23x/images');

    expect(res.body.error.message).toMatch(/^batchId: /);
  });

  it.each([
    [{ retentionDays: 0 }, 'body.retentionDays'],
    [{ retentionDays: 366 }, 'body.retentionDays'],
    [{ debug: 'yes' }, 'body.debug'],
    [{ files: [{ name: 'a.jpg', contentType: 'text/plain', size: 1 }] }, 'body.files[0].contentType'],
    [{ files: [{ name: '../x.jpg', contentType: 'image/jpeg', size: 1 }] }, 'body.files[0].name'],
    [{ files: [{ name: 'a.jpg', contentType: 'image/jpeg', size: 0 }] }, 'body.files[0].size'],
    [
      {
        files: [
          { name: 'a.jpg', contentType: 'image/jpeg', size: 1 },
          { name: 'a.jpg', contentType: 'image/png', size: 1 },
        ],
      },
      'body.files[1].name',
    ],
    [{ files: Array.from({ length: 4 }, (_, i) => ({ name: `${i}.jpg`, contentType: 'image/jpeg', size: 1 })) }, 'body.files'],
    [{ colour: 'red' }, 'body.colour'],
  ])('answers 400 naming the body field for %j', async (body, parameter) => {
    const { call } = setup();

    const res = await call('POST', '/v1/batches', { body });

    expect(res.status).toBe(400);
    expect(res.body.error.message.startsWith(`${parameter}: `)).toBe(true);
  });

  it('accepts POST /v1/batches without a body', async () => {
    const { call } = setup();

    const res = await call('POST', '/v1/batches', { headers: {} });

    expect(res.status).toBe(201);
  });

  it('answers 400 malformed_body to a body that is not JSON', async () => {
    const { call } = setup();

    const res = await call('POST', '/v1/batches', { body: '{"debug": tru' });

    expect(res.body.error.code).toBe('malformed_body');
  });

  it('answers 400 to a batchGet of more than 100 fingerprints', async () => {
    const { call } = setup();

    const res = await call('POST', `/v1/batches/${BATCH}/images:batchGet`, {
      body: { fprints: Array.from({ length: 101 }, (_, i) => `f${i}`) },
    });

    expect(res.body.error.message).toMatch(/^body\.fprints: /);
  });

  it('authenticates before validating: a bad key on a bad request is 401', async () => {
    const { call } = setup();

    const res = await call('GET', '/v1/images', { query: { limit: '0' }, authorization: 'Bearer nope-nope-nope-nope' });

    expect(res.status).toBe(401);
  });

  it('routes an event from a catch-all API Gateway route (ANY /v1/{proxy+})', async () => {
    const { call, calls } = setup();

    const res = await call('GET', `/v1/batches/${BATCH}/images`, { pathParameters: { proxy: `batches/${BATCH}/images` } });

    expect([res.status, calls[0]?.args[1]]).toEqual([200, BATCH]);
  });

  it('answers 404 not_found to an unknown route', async () => {
    const { call } = setup();

    const res = await call('GET', '/v1/cats');

    expect(res).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

  it('answers JSON with no-store on errors too', async () => {
    const { call } = setup();

    const res = await call('GET', '/v1/images', { authorization: null });

    expect(res.headers).toMatchObject({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  });
});
