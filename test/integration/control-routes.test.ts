// The bridge's control routes (pause, resume, redrive, reconcile) act on the whole stack: a webhook must not reach them,
// and a request without the data dir's control token must not move them.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { stackEnv, uniqueId, uploadFile, waitForBridgeIdle } from '../helpers';
import { call, newClient } from '../helpers/api';

const bridgeUrl = () => stackEnv('ICECAT_BRIDGE_URL');
const tokenFile = () => path.join(stackEnv('ICECAT_DATA_DIR'), 'control-token');
/** The operator's header, as `npm run dead-letters` sends it. */
const operator = (): Record<string, string> =>
  existsSync(tokenFile()) ? { authorization: `Bearer ${readFileSync(tokenFile(), 'utf8').trim()}` } : {};

afterAll(async () => {
  // Whatever a failing assertion left behind, the shared stack delivers again.
  await fetch(`${bridgeUrl()}/resume`, { method: 'POST', headers: operator() });
});

describe('a completion callback aimed at the stack itself', () => {
  it.each(['/pause', '/dead-letters/redrive', '/reconcile'])(
    'is refused at batch creation with 400 when it points at the bridge (%s)',
    async (route) => {
      const client = await newClient('cb-ctl');
      const callbackUrl = `${bridgeUrl()}${route}`;

      const res = await call('POST', '/v1/batches', { key: client.key, body: { batchId: uniqueId('p'), callbackUrl } });

      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_parameter', message: expect.stringContaining('CALLBACK_LOOPBACK_PORTS') });
    },
  );

  it('is refused when it points at the API, the S3 or the detector of the stack', async () => {
    const client = await newClient('cb-own');
    for (const variable of ['ICECAT_API_URL', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL_REKOGNITION']) {
      const res = await call('POST', '/v1/batches', { key: client.key, body: { callbackUrl: `${stackEnv(variable)}/x` } });
      expect([variable, res.status]).toEqual([variable, 400]);
    }
  });
});

describe('the bridge control routes', () => {
  it('answer 401 to a request without the control token, and pause nothing', async () => {
    const batchId = uniqueId('ctl');

    const refused = await fetch(`${bridgeUrl()}/pause`, { method: 'POST' });
    const wrong = await fetch(`${bridgeUrl()}/pause`, { method: 'POST', headers: { authorization: 'Bearer not-the-token' } });
    await uploadFile(`uploads/demo/${batchId}/after-pause.txt`, 'x');

    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(wrong.status).toBe(401);
    // Still delivering: the upload is handled.
    await expect(waitForBridgeIdle({ timeoutMs: 15_000 })).resolves.toMatchObject({ idle: true });
  }, 30_000);

  it('act with the token kept in the data dir, a file only its owner reads', async () => {
    expect(statSync(tokenFile()).mode & 0o777).toBe(0o600);

    const paused = await fetch(`${bridgeUrl()}/pause`, { method: 'POST', headers: operator() });
    const resumed = await fetch(`${bridgeUrl()}/resume`, { method: 'POST', headers: operator() });

    expect([paused.status, resumed.status]).toEqual([200, 200]);
  });
});
