// `icecat upload` on a slow uplink, against an API whose upload forms live 2 seconds: the CLI asks for its forms
// ahead of the files, so by the time it reaches the later files their forms have expired, and S3 refuses them
// ("Policy expired"). It must renew them (POST …/uploads with renew) instead of losing those files.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stackEnv, waitForBridgeIdle } from '../helpers';
import { call, newClient } from '../helpers/api';
import { type ApiFrontEnd, type SlowS3, startApiFrontEnd, startSlowS3 } from '../helpers/bad-network';
import { icecat } from '../helpers/cli';

const FIXTURES = path.join(__dirname, '..', 'fixtures');
const FORM_SECONDS = 2;
/** Each upload waits this long before it reaches S3: at one at a time, the fourth file's form has expired. */
const UPLINK_DELAY_MS = 700;

let workDir: string;
let slowS3: SlowS3;
let api: ApiFrontEnd;

beforeAll(async () => {
  workDir = mkdtempSync(path.join(tmpdir(), 'icecat-renewal-'));
  slowS3 = await startSlowS3(stackEnv('AWS_ENDPOINT_URL_S3'), UPLINK_DELAY_MS);
  api = await startApiFrontEnd({ UPLOAD_EXPIRES_SECONDS: String(FORM_SECONDS), AWS_ENDPOINT_URL_S3: slowS3.url });
});

afterAll(async () => {
  await api?.close();
  await slowS3?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('icecat upload whose forms expire before their files go', () => {
  it('renews the forms and uploads every file, exiting 0', async () => {
    const client = await newClient('cli-renew');
    const folder = path.join(workDir, 'slow');
    mkdirSync(folder);
    for (let i = 0; i < 6; i++) copyFileSync(path.join(FIXTURES, i % 2 ? 'coffee.png' : 'chelsea.png'), path.join(folder, `p${i}.png`));

    const run = await icecat(['--api-url', api.url, 'upload', folder, '--concurrency', '1', '--json', '-q'], client.key);

    const result = JSON.parse(run.stdout);
    expect(result.notUploaded).toEqual([]);
    expect(run.code).toBe(0);
    expect(result.batch).toMatchObject({ closed: true, expected: 6 });
    await waitForBridgeIdle();
    const summary = await call('GET', `/v1/batches/${result.batch.batchId}`, { key: client.key });
    expect(summary.body).toMatchObject({ status: 'done', counts: { total: 6, fail: 0 } });
  }, 60_000);
});
