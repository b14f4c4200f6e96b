// Clients of the local stack: `npm run --silent client:create -- <id>` prints only a working key, and the stack
// provisions the `demo` client with ICECAT_DEMO_API_KEY (docs/design.md §4).

import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ApiKeyAuthenticator, generateApiKey } from '../../lib/auth/api-keys';
import { ApiKeyStore } from '../../lib/store/client/keys';
import { localDynamoClient } from '../../local/dynamodb/dynamodb';
import { startTestStack, uniqueId } from '../helpers';
import { call } from '../helpers/api';

const ROOT = path.join(__dirname, '..', '..');

async function clientCreate(...args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'client:create', '--', ...args], {
      cwd: ROOT,
      env: process.env,
    });
    return { stdout, code: 0 };
  } catch (err) {
    const failed = err as { stdout: string; code: number };
    return { stdout: failed.stdout, code: failed.code };
  }
}

describe('npm run --silent client:create', () => {
  it('prints only the new key', async () => {
    const { stdout } = await clientCreate(uniqueId('cli'));

    expect(stdout).toMatch(/^icw_[A-Za-z0-9_-]{43}\n$/);
  });

  it('makes a key the API accepts', async () => {
    const { stdout } = await clientCreate(uniqueId('cli'));

    const res = await call('GET', '/v1/images', { key: stdout.trim() });

    expect([res.status, res.body]).toEqual([200, { items: [] }]);
  });

  it('refuses a client id outside the key-safe alphabet, printing nothing', async () => {
    const result = await clientCreate('not/a/client');

    expect(result).toEqual({ stdout: '', code: 2 });
  });

  it("sets the new client's own rate and daily images quota (docs/design.md §11), shown by GET /v1/usage", async () => {
    const { stdout } = await clientCreate(uniqueId('cli'), '--rate', '7', '--max-images-per-day', '250');

    const usage = await call('GET', '/v1/usage', { key: stdout.trim() });

    expect(usage.body.limits).toEqual({ requestsPerSecond: 7, burst: 14, imagesPerDay: 250 });
  });

  it("sets the new client's batches per UTC day: POST /v1/batches beyond them is 429 quota_exceeded", async () => {
    const { stdout, code } = await clientCreate(uniqueId('cli'), '--max-batches-per-day', '1');

    const statuses = [];
    for (const batchId of ['one', 'two'])
      statuses.push((await call('POST', '/v1/batches', { key: stdout.trim(), body: { batchId } })).status);

    expect(code).toBe(0);
    expect(statuses).toEqual([201, 429]);
  });

  it('refuses a limit that is not a number in range, naming it, and makes no client', async () => {
    const result = await clientCreate(uniqueId('cli'), '--max-images-per-day', '-3');

    expect(result).toEqual({ stdout: '', code: 2 });
  });
});

describe('npm run --silent client:limits', () => {
  const clientLimits = async (...args: string[]): Promise<{ stdout: string; code: number }> => {
    try {
      const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'client:limits', '--', ...args], {
        cwd: ROOT,
        env: process.env,
      });
      return { stdout, code: 0 };
    } catch (err) {
      const failed = err as { stdout: string; code: number };
      return { stdout: failed.stdout, code: failed.code };
    }
  };

  it("changes a client's limits later, keeping its key, and puts one back to the default", async () => {
    const id = uniqueId('cli');
    const key = (await clientCreate(id, '--rate', '7')).stdout.trim();

    const changed = await clientLimits(id, '--rate', 'default', '--max-images-per-day', '3', '--max-batches-per-day', '5');
    const usage = await call('GET', '/v1/usage', { key });

    expect(changed).toEqual({ stdout: `${id}: 1000 requests/s (bursts of 2000), 3 images per UTC day, 5 batches per UTC day\n`, code: 0 });
    expect(usage.body.limits).toEqual({ requestsPerSecond: 1000, burst: 2000, imagesPerDay: 3 });
  });

  it('refuses a client that was never made', async () => {
    expect(await clientLimits(uniqueId('nobody'), '--rate', '5')).toEqual({ stdout: '', code: 2 });
  });
});

describe('the demo client', () => {
  it('gets ICECAT_DEMO_API_KEY when it is set', async () => {
    const demoKey = generateApiKey();
    process.env.ICECAT_DEMO_API_KEY = demoKey;
    const stack = await startTestStack().finally(() => delete process.env.ICECAT_DEMO_API_KEY);
    const ddb = localDynamoClient(stack.endpoints.dynamodb);
    try {
      const authenticator = new ApiKeyAuthenticator({
        keys: new ApiKeyStore({ ddb: DynamoDBDocumentClient.from(ddb), tableName: stack.table }),
      });

      const clientId = await authenticator.authenticate(`Bearer ${demoKey}`);

      expect([stack.demoApiKey, clientId]).toEqual([demoKey, 'demo']);
    } finally {
      ddb.destroy();
      await stack.stop();
      await rm(stack.dataDir, { recursive: true, force: true });
    }
  });
});
