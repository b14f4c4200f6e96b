// The custom methods (`…:close`, `…:reclassify`, `…:redetect`, `…/images:batchGet`) with the events API Gateway builds
// for the routes that deploy them (serverless.yml): a path variable takes its whole segment, so for the route
// `POST /v1/batches/{batchId}` API Gateway hands `pathParameters: { batchId: "<id>:close" }`. The app must route and
// validate on the path as API Gateway hands it, splitting the custom method off, whatever pathParameters say.

import type { BatchLifecycleService } from '../../lib/api/batch-lifecycle';
import { apiRoutes } from '../../lib/api/routes';
import type { ApiService } from '../../lib/api/service';
import { InvalidApiKeyError } from '../../lib/auth/api-keys';
import { createApiHandler } from '../../lib/http/app';
import { apiEvent } from '../helpers/api-event';

const LIMITS = { maxRetentionDays: 365, defaultRetentionDays: 30, maxFilesPerBatch: 3, maxUploadBytes: 1000 };
const BATCH = '01HXYZABCDEFGHJKMNPQRSTVWX';
const FPRINT = 'a'.repeat(64);

function setup() {
  const calls: { op: string; args: unknown[] }[] = [];
  const record =
    (op: string) =>
    async (...args: unknown[]) => {
      calls.push({ op, args });
      return {};
    };
  const ops = ['closeBatch', 'reclassify', 'redetect', 'batchGetImages', 'knownFingerprints'];
  const service = Object.fromEntries(ops.map((op) => [op, record(op)]));
  const handler = createApiHandler({
    routes: apiRoutes(LIMITS),
    services: { api: service as unknown as ApiService, batches: service as unknown as BatchLifecycleService },
    authenticator: {
      authenticate: async (header: string | undefined) => {
        if (header !== 'Bearer test-key-0123456789') throw new InvalidApiKeyError('unknown API key');
        return 'acme';
      },
    },
  });
  return { handler, calls };
}

describe('custom methods behind API Gateway (routeKey and pathParameters as the deployed routes fill them)', () => {
  it.each([
    [':close', 'closeBatch', { expected: 2 }],
    [':reclassify', 'reclassify', { catMinConfidence: 80 }],
    [':redetect', 'redetect', { dryRun: true }],
  ])('routes POST /v1/batches/{batchId} with batchId "<id>%s" to %s with the batch id alone', async (suffix, op, body) => {
    const { handler, calls } = setup();

    const res = await handler(
      apiEvent('POST', `/v1/batches/${BATCH}${suffix}`, {
        routeKey: 'POST /v1/batches/{batchId}',
        pathParameters: { batchId: `${BATCH}${suffix}` },
        body,
      }),
    );

    expect([res.statusCode, calls]).toEqual([200, [{ op, args: ['acme', BATCH, body] }]]);
  });

  it('routes POST /v1/batches/{batchId}/{action} with action "images:batchGet" to batchGetImages', async () => {
    const { handler, calls } = setup();

    const res = await handler(
      apiEvent('POST', `/v1/batches/${BATCH}/images:batchGet`, {
        routeKey: 'POST /v1/batches/{batchId}/{action}',
        pathParameters: { batchId: BATCH, action: 'images:batchGet' },
        body: { fprints: [FPRINT] },
      }),
    );

    expect([res.statusCode, calls]).toEqual([200, [{ op: 'batchGetImages', args: ['acme', BATCH, [FPRINT]] }]]);
  });

  it('answers 404 not_found to a custom method the API does not have, on the same deployed route', async () => {
    const { handler, calls } = setup();

    const res = await handler(
      apiEvent('POST', `/v1/batches/${BATCH}:archive`, {
        routeKey: 'POST /v1/batches/{batchId}',
        pathParameters: { batchId: `${BATCH}:archive` },
        body: {},
      }),
    );

    expect([res.statusCode, JSON.parse(res.body ?? 'null').error.code, calls]).toEqual([404, 'not_found', []]);
  });
});
