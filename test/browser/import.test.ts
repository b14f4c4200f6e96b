// An import on the web app (docs/design.md §16), in Debian's Chromium against the local stack the jest global setup
// started: a prefix of a second bucket (a cat twice, a mug, a note that is no image) imported through the API, its
// batch page showing the source, the listing's counts and done, the completion report saved from its button; a client
// whose quota of the day is smaller than the prefix seeing the import wait for the reset, and when; both states free of
// axe-core's findings at a desktop's and a phone's width; the batch list marking both as imports.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { defaultClientLimits } from '../../functions/config';
import { createDocumentClient, createS3Client } from '../../lib/aws/clients';
import { loadAwsClientSettings } from '../../lib/config';
import { ClientQuotaStore } from '../../lib/store/client/quota';
import { ClientSourcesStore } from '../../lib/store/client/sources';
import { accessibilityFindings } from './a11y';
import { launchChromium, phoneContext, type Recorder, signIn } from './browser';
import { call, newClient, stackEnv, type TestClient, uniqueId } from './stack-client';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const LIBRARY: Record<string, Buffer> = {
  'trip/chelsea.png': fixture('chelsea.png'),
  'trip/again/chelsea copy.png': fixture('chelsea.png'),
  'trip/coffee.png': fixture('coffee.png'),
  'trip/notes.txt': Buffer.from('not an image'),
};
const library = uniqueId('web-lib').toLowerCase().replace(/_/g, '-');

let apiUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let owner: TestClient;
let capped: TestClient;
const recorder: Recorder = { urls: [], errors: [], failures: [] };

async function allowAndCap(): Promise<void> {
  const ddb = createDocumentClient();
  try {
    const sources = new ClientSourcesStore({ ddb, tableName: stackEnv('TABLE_NAME') });
    for (const c of [owner, capped]) await sources.change(c.clientId, [`s3://${library}/trip/`], []);
    await new ClientQuotaStore({ ddb, tableName: stackEnv('TABLE_NAME'), defaults: defaultClientLimits(), cacheMs: 0 }).setLimits(
      capped.clientId,
      { maxImagesPerDay: 1 },
    );
  } finally {
    ddb.destroy();
  }
}

async function importTrip(client: TestClient, batchId: string): Promise<void> {
  const created = await call('POST', '/v1/batches', client.key, { batchId, source: { bucket: library, prefix: 'trip/' } });
  if (created.status !== 201) throw new Error(`POST /v1/batches answered ${created.status}: ${JSON.stringify(created.body)}`);
}

/** Signs `client` in, out of whoever was signed in (the key is the tab's, in sessionStorage). */
async function signInAs(client: TestClient): Promise<void> {
  await page.goto(`${apiUrl}/`);
  await page.evaluate(() => sessionStorage.clear());
  await signIn(page, apiUrl, client.key);
}

async function openBatch(client: TestClient, batchId: string): Promise<void> {
  await signInAs(client);
  await page.goto(`${apiUrl}/#/batches/${batchId}`);
  await page.locator('#batch-title').waitFor();
}

beforeAll(async () => {
  apiUrl = stackEnv('ICECAT_API_URL');
  [owner, capped] = [await newClient('web-imp'), await newClient('web-imp-capped')];
  const s3 = createS3Client(loadAwsClientSettings());
  try {
    await s3.send(new CreateBucketCommand({ Bucket: library }));
    for (const [key, body] of Object.entries(LIBRARY)) await s3.send(new PutObjectCommand({ Bucket: library, Key: key, Body: body }));
  } finally {
    s3.destroy();
  }
  await allowAndCap();
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe('an imported prefix on its batch page', () => {
  it('shows the source, the listing’s counts and done, free of axe-core’s findings at 1280 and 375 px', async () => {
    // Arrange
    await importTrip(owner, 'trip');

    // Act
    await openBatch(owner, 'trip');
    const panel = page.locator('section.import');
    await page.locator('section.import[data-import-state="listed"]').waitFor({ timeout: 60_000 });
    await page.locator('.title-row .chip-done').waitFor({ timeout: 60_000 });
    await page.locator('.card').first().waitFor();

    // Assert
    expect(await panel.locator('h2').textContent()).toBe('Import');
    expect(await panel.locator('.import-source').textContent()).toBe(
      `From s3://${library}/trip/, every key under it, read where they are: nothing copied, moved or deleted.`,
    );
    expect(await panel.locator('.import-state').textContent()).toBe('Every key listed and every image classified.');
    expect(await panel.getByRole('list', { name: 'Listing' }).locator('li').allTextContents()).toEqual([
      '4 listed',
      '3 sent to be classified',
      '1 skipped (not images by name)',
    ]);
    expect(await page.locator('.progress-text').first().textContent()).toBe('3 of 3 done');
    expect(await accessibilityFindings(page, 'import-done')).toEqual([]);
    expect(recorder.errors).toEqual([]);
  }, 120_000);

  it('saves the completion report from its button: one row per object sent, in S3 Batch Operations’ columns', async () => {
    // Act
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 20_000 }),
      page.getByRole('button', { name: 'Completion report (CSV)' }).click(),
    ]);

    // Assert
    const rows = readFileSync((await download.path()) as string, 'utf8')
      .trimEnd()
      .split('\n')
      .map((r) => r.split(','));
    expect(download.suggestedFilename()).toBe('trip-report.csv');
    expect(rows.map((r) => [r[0], r[1], r[3]]).sort()).toEqual([
      [library, 'trip/again/chelsea%20copy.png', 'succeeded'],
      [library, 'trip/chelsea.png', 'succeeded'],
      [library, 'trip/coffee.png', 'succeeded'],
    ]);
    expect(await page.locator('section.import [role="status"]').textContent()).toBe('Saved trip-report.csv.');
  });
});

describe('an import beyond the day’s images', () => {
  it('says it waits for the quota, and until when, free of axe-core’s findings; the batch list marks both imports', async () => {
    // Arrange
    await importTrip(capped, 'capped');
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);

    // Act
    await openBatch(capped, 'capped');
    const state = page.locator('section.import[data-import-state="waiting-for-quota"] .import-state');
    await state.waitFor({ timeout: 60_000 });
    const resumes = await page.evaluate(
      (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }),
      midnight.toISOString(),
    );
    const said = await state.textContent();
    const closeButtons = await page.getByRole('button', { name: 'Close batch', includeHidden: true }).count();
    const counts = await page.locator('section.import').getByRole('list', { name: 'Listing' }).locator('li').allTextContents();
    const findings = await accessibilityFindings(page, 'import-waiting');
    await page.goto(`${apiUrl}/#/`);
    await page.locator('.batch-row[data-batch="capped"]').waitFor();
    const chips = await page.locator('.batch-row[data-batch="capped"] .batch-head .chip').allTextContents();
    await signInAs(owner);
    await page.locator('.batch-row[data-batch="trip"]').waitFor();
    const ownerChips = await page.locator('.batch-row[data-batch="trip"] .batch-head .chip').allTextContents();

    // Assert
    expect(said).toBe(`Waiting for the quota: today's images are used up. The listing goes on at ${resumes}, losing nothing.`);
    expect(counts).toHaveLength(3);
    // An import closes itself once listed: no Close batch to press meanwhile.
    expect(closeButtons).toBe(0);
    expect(counts[2]).toMatch(/^[01] skipped \(not images by name\)$/);
    expect(findings).toEqual([]);
    expect(chips).toEqual(['open', 'import: waiting for quota']);
    expect(ownerChips).toEqual(['done', 'import']);
    expect(recorder.errors).toEqual([]);
  }, 120_000);
});
