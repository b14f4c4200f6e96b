// `icecat upload` when the answer to creating its batch is lost (the API made the batch, the client saw a dropped
// connection): retrying a plain create would make a second batch that stays open forever. The CLI names the batch
// itself, so its retry answers 409, and it takes over the batch it made.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stackEnv } from '../helpers';
import { call, newClient } from '../helpers/api';
import { type LossyApi, startLossyApi } from '../helpers/bad-network';
import { icecat } from '../helpers/cli';

const FIXTURES = path.join(__dirname, '..', 'fixtures');

let workDir: string;
let api: LossyApi;

beforeAll(async () => {
  workDir = mkdtempSync(path.join(tmpdir(), 'icecat-lost-'));
  api = await startLossyApi(stackEnv('ICECAT_API_URL'), 'POST', '/v1/batches');
});

afterAll(async () => {
  await api?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('icecat upload whose batch creation answer is lost', () => {
  it('makes one batch, uploads into it and closes it', async () => {
    const client = await newClient('cli-lost');
    const folder = path.join(workDir, 'trip');
    mkdirSync(folder);
    copyFileSync(path.join(FIXTURES, 'chelsea.png'), path.join(folder, 'chelsea.png'));
    copyFileSync(path.join(FIXTURES, 'coffee.png'), path.join(folder, 'coffee.png'));

    const run = await icecat(['--api-url', api.url, 'upload', folder, '--json', '-q'], client.key);

    expect(run.code).toBe(0);
    const batches = await call('GET', '/v1/batches', { key: client.key });
    expect(batches.body.items).toHaveLength(1);
    expect(batches.body.items[0]).toMatchObject({ batchId: JSON.parse(run.stdout).batch.batchId, closed: true, expected: 2 });
  });
});
