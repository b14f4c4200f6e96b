// The web app's upload on a slow uplink, against an API whose upload forms live 2 seconds: the page asks for every
// form up front, so the files it reaches later find their forms expired (S3: 403 "Policy expired"). It must renew
// them (POST …/uploads with renew) and lose no file.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type ApiFrontEnd, type SlowS3, startApiFrontEnd, startSlowS3 } from '../helpers/bad-network';
import { launchChromium, phoneContext, type Recorder, screenshot, signIn } from './browser';
import { call, newClient, stackEnv, type TestClient, waitForBridgeIdle } from './stack-client';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const FORM_SECONDS = 3;
/**
 * Each request waits this long before it reaches S3, the upload's CORS preflight too: four files at a time, each
 * 1.4 s, so the third round starts as the forms expire.
 */
const UPLINK_DELAY_MS = 700;
const FILES = Array.from({ length: 12 }, (_, i) => ({
  name: `p${String(i).padStart(2, '0')}.png`,
  mimeType: 'image/png',
  buffer: fixture(i % 2 ? 'clock_motion.png' : 'brick.png'),
}));

let slowS3: SlowS3;
let api: ApiFrontEnd;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let client: TestClient;
const recorder: Recorder = { urls: [], errors: [], failures: [] };

beforeAll(async () => {
  slowS3 = await startSlowS3(stackEnv('AWS_ENDPOINT_URL_S3'), UPLINK_DELAY_MS);
  api = await startApiFrontEnd({ UPLOAD_EXPIRES_SECONDS: String(FORM_SECONDS), AWS_ENDPOINT_URL_S3: slowS3.url });
  client = await newClient('web-renew');
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await slowS3?.close();
});

describe('the web app uploading files whose forms expire before they go', () => {
  it('renews the forms and uploads every file', async () => {
    await signIn(page, api.url, client.key);
    await page.getByRole('link', { name: 'New batch' }).first().click();
    await page.setInputFiles('#file-input', FILES);

    await page.getByRole('button', { name: `Upload ${FILES.length} images` }).click();
    await page.locator('#batch-title, .notice').first().waitFor({ timeout: 60_000 });
    await screenshot(page, 'upload-renewal');

    const notice = (await page.locator('.notice').count()) ? await page.locator('.notice').textContent() : '';
    // A form that expired on the way despite the renewal margin (a loaded machine stretches the uplink) is refused by
    // S3 with no CORS headers, so the browser logs a blocked request to S3 and the page renews and sends again: that
    // is the renewal at work, and the only error allowed. Anything else the page logged fails the test.
    const s3Origin = new URL(slowS3.url).origin;
    const unexpected = recorder.errors.filter((e) => !(e.text.includes(s3Origin) || e.url.startsWith(s3Origin)));
    expect([notice, unexpected, recorder.failures]).toEqual(['', [], []]);
    const batchId = (await page.locator('#batch-title').textContent()) as string;
    await waitForBridgeIdle();
    const summary = await call('GET', `/v1/batches/${batchId}`, client.key);
    expect(summary.body).toMatchObject({ closed: true, expected: FILES.length, counts: { total: FILES.length, fail: 0 } });
  }, 90_000);
});
