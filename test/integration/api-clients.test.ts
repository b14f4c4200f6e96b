// Clients of the local stack: `npm run --silent client:create -- <id>` prints only a working key, and the stack
// provisions the `demo` client with ICECAT_DEMO_API_KEY (docs/design.md §4).
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApiKeyAuthenticator, generateApiKey } from '../../lib/auth/api-keys';
import { localDynamoClient } from '../../local/dynamodb';
import { startTestStack, uniqueId } from '../helpers';
import { call } from '../helpers/api';

const ROOT = path.join(__dirname, '..', '..');

async function clientCreate(...args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'client:create', '--', ...args], { cwd: ROOT, env: process.env });
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
});

describe('the demo client', () => {
  it('gets ICECAT_DEMO_API_KEY when it is set', async () => {
    const demoKey = generateApiKey();
    process.env.ICECAT_DEMO_API_KEY = demoKey;
    const stack = await startTestStack().finally(() => delete process.env.ICECAT_DEMO_API_KEY);
    const ddb = localDynamoClient(stack.endpoints.dynamodb);
    try {
      const authenticator = new ApiKeyAuthenticator({ ddb: DynamoDBDocumentClient.from(ddb), tableName: stack.table });

      const clientId = await authenticator.authenticate(`Bearer ${demoKey}`);

      expect([stack.demoApiKey, clientId]).toEqual([demoKey, 'demo']);
    } finally {
      ddb.destroy();
      await stack.stop();
      await rm(stack.dataDir, { recursive: true, force: true });
    }
  });
});
