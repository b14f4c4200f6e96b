import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { BatchNotFoundError, FileTooLargeError, ImageNotFoundError, InvalidParameterError } from '../../lib/api/errors';
import { apiRoutes } from '../../lib/api/routes';
import type { ApiService } from '../../lib/api/service';
import { InvalidApiKeyError, MissingApiKeyError } from '../../lib/auth/api-keys';
import { createApiHandler } from '../../lib/http/app';
import { toHttpError } from '../../lib/http/middleware';
import { CursorError } from '../../lib/store/table/cursor';
import { StoreThrottledError } from '../../lib/store/table/errors';
import { apiEvent } from '../helpers/api-event';

const LIMITS = { maxRetentionDays: 365, defaultRetentionDays: 30, maxFilesPerBatch: 10, maxUploadBytes: 1000 };

function handlerThrowing(err: unknown) {
  const logged: { message: string; details: Record<string, unknown> }[] = [];
  const service = { listClientImages: async () => Promise.reject(err) } as unknown as ApiService;
  const handler = createApiHandler({
    routes: apiRoutes(LIMITS).filter((route) => route.function === 'api'),
    services: { api: service },
    authenticator: { authenticate: async () => 'acme' },
    logError: (message, details) => logged.push({ message, details }),
  });
  return { handler, logged };
}

describe('toHttpError', () => {
  it.each([
    [new InvalidParameterError('too big', { parameter: 'limit' }), 400, 'invalid_parameter'],
    [new CursorError('forged'), 400, 'invalid_cursor'],
    [new MissingApiKeyError('no key'), 401, 'unauthorized'],
    [new InvalidApiKeyError('bad key'), 401, 'unauthorized'],
    [new BatchNotFoundError(`batch B not found`, { batchId: 'B' }), 404, 'not_found'],
    [new ImageNotFoundError(`image f not found in batch B`, { batchId: 'B', fprint: 'f' }), 404, 'not_found'],
    [
      new FileTooLargeError(`${10} bytes is more than the ${5} bytes accepted per file`, { parameter: 'files[0].size', size: 10, max: 5 }),
      413,
      'file_too_large',
    ],
    [new StoreThrottledError('slow down'), 429, 'throttled'],
    [new Error('boom'), 500, 'internal_error'],
    ['a string', 500, 'internal_error'],
  ])('maps %p to %i %s', (err, status, code) => {
    expect(toHttpError(err)).toMatchObject({ status, code });
  });

  it('answers 507 when the store refused a write for lack of disk space (the local DynamoDB on a full disk), 500 for its other faults', () => {
    const fault = (message: string) => Object.assign(new Error(message), { name: 'InternalServerError' });
    expect(toHttpError(fault('Internal server error: IO error: /data/dynamodb/000005.ldb: No space left on device'))).toEqual({
      status: 507,
      code: 'insufficient_storage',
      message: expect.stringMatching(/out of storage space/),
    });
    expect(toHttpError(fault('Internal server error'))).toMatchObject({ status: 500, code: 'internal_error' });
  });

  it('gives a foreign batch and a missing one the same answer', () => {
    expect(toHttpError(new BatchNotFoundError(`batch B not found`, { batchId: 'B' }))).toEqual(
      toHttpError(new BatchNotFoundError(`batch B not found`, { batchId: 'B' })),
    );
  });
});

describe('API error answers', () => {
  it('never shows the message of an unexpected error', async () => {
    const { handler } = handlerThrowing(new Error('connect ECONNREFUSED 10.0.0.7:8000 table IceCatWrangler'));

    const res = await handler(apiEvent('GET', '/v1/images'));

    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body ?? '')).toEqual({ error: { code: 'internal_error', message: 'internal error' } });
  });

  it('logs an unexpected error with its stack', async () => {
    const { handler, logged } = handlerThrowing(new Error('boom'));

    await handler(apiEvent('GET', '/v1/images'));

    expect(logged[0]?.details).toMatchObject({ path: '/v1/images', error: { name: 'Error', message: 'boom' } });
  });

  it('answers 429 when DynamoDB throttling outlasts the retries', async () => {
    const throttled = new StoreThrottledError('the table is throttling reads', {
      cause: new ProvisionedThroughputExceededException({ message: 'throttled', $metadata: {} }),
    });
    const { handler } = handlerThrowing(throttled);

    const res = await handler(apiEvent('GET', '/v1/images'));

    expect(res.statusCode).toBe(429);
  });
});
