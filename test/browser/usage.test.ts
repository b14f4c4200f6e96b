// The client's usage on the web app's batch list, in a real browser (Debian's Chromium) against the local stack the
// jest global setup started: today's images against the quota, what is left, what went over it, the request rate.
// A client with a quota of 1 uploads two photos straight to S3: one is classified, one fails as QuotaExceeded.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { defaultClientLimits } from '../../functions/config';
import { createDocumentClient, createS3Client } from '../../lib/aws/clients';
import { loadAwsClientSettings } from '../../lib/config';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { launchChromium, phoneContext, type Recorder, screenshot, scrollWidth, signIn } from './browser';
import { newClient, stackEnv, type TestClient, uniqueId, waitForBridgeIdle } from './stack-client';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

let browser: Browser;
let context: BrowserContext;
let page: Page;
let client: TestClient;
const recorder: Recorder = { urls: [], errors: [], failures: [] };

beforeAll(async () => {
  client = await newClient('web-usage');
  const ddb = createDocumentClient();
  try {
    await new ClientQuotaStore({ ddb, tableName: stackEnv('TABLE_NAME'), defaults: defaultClientLimits(), cacheMs: 0 }).setLimits(
      client.clientId,
      {
        ratePerSecond: 20,
        maxImagesPerDay: 1,
      },
    );
  } finally {
    ddb.destroy();
  }
  const s3 = createS3Client(loadAwsClientSettings());
  const batchId = uniqueId('over');
  try {
    for (const name of ['chelsea.png', 'coffee.png']) {
      await s3.send(
        new PutObjectCommand({
          Bucket: stackEnv('BUCKET_NAME'),
          Key: `uploads/${client.clientId}/${batchId}/${name}`,
          Body: fixture(name),
          ContentType: 'image/png',
        }),
      );
    }
  } finally {
    s3.destroy();
  }
  await waitForBridgeIdle();
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
  await signIn(page, stackEnv('ICECAT_API_URL'), client.key);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe("the client's usage on the batch list", () => {
  it('shows the day’s images against the quota, that it is used up, what went over it, and the request rate', async () => {
    // Act
    await page.goto(`${stackEnv('ICECAT_API_URL')}/#/batches`);
    const usage = page.locator('[data-usage]');
    await usage.waitFor();
    await screenshot(page, 'usage-full');
    const width = await scrollWidth(page);
    await page.setViewportSize({ width: 1280, height: 800 });
    await screenshot(page, 'usage-full-desktop');

    // Assert
    const text = (await usage.textContent()) ?? '';
    expect(text).toContain('Today (UTC): 1 of 1 images');
    expect(text).toContain('quota used up: new uploads fail as QuotaExceeded until 00:00 UTC');
    expect(text).toContain('1 over the quota');
    expect(text).toContain('20 requests/s (bursts of 40)');
    expect(await usage.getAttribute('class')).toContain('usage-full');
    expect(width).toBeLessThanOrEqual(375);
    expect(recorder.errors).toEqual([]);
  });
});

describe('the estimate before an upload, at the quota', () => {
  it('says the quota is used up, so the chosen files will fail as QuotaExceeded, beside the most they could cost', async () => {
    // Act
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${stackEnv('ICECAT_API_URL')}/#/new`);
    await page.locator('#new-title').waitFor();
    await page.setInputFiles('#file-input', [
      { name: 'rocket.jpg', mimeType: 'image/jpeg', buffer: fixture('rocket.jpg') },
      { name: 'astronaut.png', mimeType: 'image/png', buffer: fixture('astronaut.png') },
    ]);
    const quota = page.locator('[data-estimate] .estimate-quota');
    await quota.waitFor();
    await screenshot(page, 'estimate-quota');

    // Assert
    expect(await quota.textContent()).toBe("Today's quota is used up: these 2 uploads will fail as QuotaExceeded until 00:00 UTC.");
    expect(await page.locator('[data-estimate]').textContent()).toContain('at most 2 DetectLabels calls');
    expect(await scrollWidth(page)).toBeLessThanOrEqual(375);
    expect(recorder.errors).toEqual([]);
  });
});
