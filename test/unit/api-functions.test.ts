import type { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import { API_FUNCTIONS, DEFAULT_API_FUNCTION, functionFor, pathMatches } from '../../lib/api/functions';
import { apiRoutes, routeTargets } from '../../lib/api/routes';
import type { ApiService } from '../../lib/api/service';
import { ApiWiringError, createApiHandler } from '../../lib/http/app';
import { apiEvent } from '../helpers/api-event';

const LIMITS = { maxRetentionDays: 365, defaultRetentionDays: 30, maxFilesPerBatch: 3, maxUploadBytes: 1000 };
const BATCH = '01HXYZABCDEFGHJKMNPQRSTVWX';
const authenticator = { authenticate: async () => 'acme' };

describe('which function serves a request', () => {
  it.each([
    ['POST', '/v1/batches', 'batches'],
    ['POST', `/v1/batches/${BATCH}/uploads`, 'batches'],
    ['POST', `/v1/batches/${BATCH}:close`, 'batches'],
    ['GET', '/v1/batches', 'api'],
    ['GET', '/v1/openapi.json', 'api'],
    ['GET', `/v1/batches/${BATCH}`, 'api'],
    ['GET', `/v1/batches/${BATCH}/images`, 'api'],
    ['GET', `/v1/batches/${BATCH}/images/f00d`, 'api'],
    ['POST', `/v1/batches/${BATCH}/images:batchGet`, 'api'],
    ['GET', `/v1/batches/${BATCH}/logs`, 'api'],
    ['GET', '/v1/images', 'api'],
  ])('sends %s %s to %s', (method, path, expected) => {
    expect(functionFor(routeTargets(), method, path)).toBe(expected);
  });

  it.each([
    ['DELETE', '/v1/batches'],
    ['POST', '/v1/batches/'],
    ['GET', '/v1/cats'],
    ['GET', '/'],
  ])('sends %s %s, which no route matches, to the default function', (method, path) => {
    expect(functionFor(routeTargets(), method, path)).toBe(DEFAULT_API_FUNCTION);
  });

  it('matches a path variable only to a whole, non-empty segment', () => {
    expect([
      pathMatches('/v1/batches/{batchId}', '/v1/batches/b1'),
      pathMatches('/v1/batches/{batchId}', '/v1/batches/'),
      pathMatches('/v1/batches/{batchId}', '/v1/batches/b1/images'),
    ]).toEqual([true, false, false]);
  });

  it('gives every route one of the API functions', () => {
    expect(routeTargets().filter((t) => !API_FUNCTIONS.includes(t.function))).toEqual([]);
  });

  it('sends a custom method on a batch to the function of the route deployed for its whole segment', () => {
    // API Gateway routes POST /v1/batches/{batchId} (the :close route's deployed form) for any action; the
    // function's own router answers an unknown one 404.
    expect(functionFor(routeTargets(), 'POST', `/v1/batches/${BATCH}:open`)).toBe('batches');
  });

  it('gives the batches function the batch lifecycle writes, reviews and the S3 work (export, erasure) alone', () => {
    expect(
      routeTargets()
        .filter((t) => t.function === 'batches')
        .map((t) => `${t.method} ${t.path}`),
    ).toEqual([
      'POST /v1/batches',
      'POST /v1/batches/{batchId}/uploads',
      'POST /v1/batches/{batchId}:close',
      'DELETE /v1/batches/{batchId}',
      'GET /v1/batches/{batchId}/report',
      'POST /v1/batches/{batchId}:retry',
      'GET /v1/batches/{batchId}/export',
      'POST /v1/batches/{batchId}:reclassify',
      'POST /v1/batches/{batchId}:redetect',
      'PUT /v1/batches/{batchId}/images/{fprint}/review',
      'DELETE /v1/batches/{batchId}/images/{fprint}/review',
      'POST /v1/batches/{batchId}/audit',
    ]);
  });
});

describe('one function of the API', () => {
  const readOnly = () =>
    createApiHandler({
      routes: apiRoutes(LIMITS).filter((route) => route.function === 'api'),
      services: { api: { listClientImages: async () => ({ items: [] }) } as unknown as ApiService },
      authenticator,
      openApiDocument: () => ({ openapi: '3.1.0' }),
    });

  it('serves its own routes', async () => {
    const res = await readOnly()(apiEvent('GET', '/v1/images'));

    expect(res.statusCode).toBe(200);
  });

  it("answers 404 not_found to another function's route", async () => {
    const res = await readOnly()(apiEvent('POST', '/v1/batches', { body: {} }));

    expect([res.statusCode, JSON.parse(res.body ?? '').error.code]).toEqual([404, 'not_found']);
  });

  it('answers GET /v1/openapi.json with the document it was given', async () => {
    const res = await readOnly()(apiEvent('GET', '/v1/openapi.json', { authorization: null }));

    expect(JSON.parse(res.body ?? '')).toEqual({ openapi: '3.1.0' });
  });

  it('cannot be built without the service one of its routes runs on', () => {
    const build = () =>
      createApiHandler({
        routes: apiRoutes(LIMITS),
        services: { batches: {} as BatchLifecycleService },
        authenticator,
      });

    expect(build).toThrow(ApiWiringError);
  });
});
