// The batch view's actions in a real browser (Debian's Chromium) against the local stack the jest global setup
// started: closing a folder uploaded straight to S3, moving a done batch's cat threshold, deleting a batch behind the
// page's own confirmation.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createS3Client } from '../../lib/aws/clients';
import { loadAwsClientSettings } from '../../lib/config';
import { LOCAL_CAT_MIN_CONFIDENCE } from '../../local/contract';
import { launchChromium, phoneContext, type Recorder, screenshot, scrollWidth, signIn as signInAs } from './browser';
import { call, detectCalls, newClient, stackEnv, type TestClient, uniqueId, waitForBridgeIdle } from './stack-client';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const CAT = fixture('chelsea.png');
const COFFEE = fixture('coffee.png');

let apiUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let client: TestClient;
/** Uploaded with the AWS CLI's layout, closed from the page, re-thresholded, then deleted from the page. */
let folderBatch: string;
/** A batch that stays, so the list after a deletion is not simply empty. */
let keptBatch: string;
const recorder: Recorder = { urls: [], errors: [], failures: [] };

/** A folder put straight into the bucket as `aws s3 cp --recursive` lays it out: no API call, the batch stays open. */
async function putFolder(batchId: string, files: { key: string; body: Buffer }[]): Promise<void> {
  const s3 = createS3Client(loadAwsClientSettings());
  try {
    for (const f of files) {
      await s3.send(
        new PutObjectCommand({
          Bucket: stackEnv('BUCKET_NAME'),
          Key: `uploads/${client.clientId}/${batchId}/${f.key}`,
          Body: f.body,
          ContentType: 'image/png',
        }),
      );
    }
  } finally {
    s3.destroy();
  }
  await waitForBridgeIdle();
}

/** DetectLabels calls the local detector answered so far. */
const signIn = (key: string): Promise<void> => signInAs(page, apiUrl, key);

/** Screenshots at the phone's width and a desktop's; the page never scrolls sideways at 375 px. */
async function shoot(name: string): Promise<void> {
  await screenshot(page, name);
  expect([name, await scrollWidth(page)]).toEqual([name, expect.any(Number)]);
  expect(await scrollWidth(page)).toBeLessThanOrEqual(375);
  await page.setViewportSize({ width: 1280, height: 800 });
  await screenshot(page, `${name}-desktop`);
  await page.setViewportSize({ width: 375, height: 812 });
}

/** Until the grid of the current filter has read all its images; its cards' cat badges. */
/** Unfolds "Manage batch" (folded at first on a batch that is not open) and answers whether it was folded. */
async function unfoldActions(): Promise<boolean> {
  const panel = page.locator('.actions details');
  await panel.waitFor();
  const folded = !(await panel.evaluate((el) => (el as HTMLDetailsElement).open));
  if (folded) await page.getByText('Manage batch', { exact: true }).click();
  return folded;
}

async function gridBadges(label = 'All'): Promise<{ cards: number; cats: number }> {
  // An empty grid has no height: attached, not visible.
  await page.locator(`.grid[aria-label="${label} images"][aria-busy="false"]`).waitFor({ state: 'attached' });
  return { cards: await page.locator('a.card').count(), cats: await page.locator('a.card .badge-cat').count() };
}

const focusedText = () => page.evaluate(() => document.activeElement?.textContent ?? null);

beforeAll(async () => {
  apiUrl = stackEnv('ICECAT_API_URL');
  client = await newClient('web-actions');
  folderBatch = uniqueId('holiday');
  keptBatch = uniqueId('kept');
  await putFolder(folderBatch, [
    { key: 'chelsea.png', body: CAT },
    { key: 'beach/coffee.png', body: COFFEE },
  ]);
  await putFolder(keptBatch, [{ key: 'coffee.png', body: COFFEE }]);
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
  await signIn(client.key);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe("the batch view's actions", () => {
  it('closes a batch uploaded straight to S3: open, then done on the same page, no reload', async () => {
    await page.goto(`${apiUrl}/#/batches/${folderBatch}`);
    await page.locator('.title-row .chip-open').waitFor();
    const foldedAtFirst = await unfoldActions();
    const actions = page.getByRole('region', { name: 'Actions' });
    const close = actions.getByRole('button', { name: 'Close batch' });
    await close.waitFor();
    const hint = await page.locator('#close-hint').textContent();
    const describedBy = await close.getAttribute('aria-describedby');
    await page.evaluate(() => ((window as unknown as { samePage: boolean }).samePage = true));
    await shoot('actions-open');

    await close.focus();
    await page.keyboard.press('Enter');
    await page.locator('.title-row .chip-done').waitFor({ timeout: 30_000 });
    const told = await actions.getByRole('status').textContent();
    const summary = await call('GET', `/v1/batches/${folderBatch}`, client.key);

    expect(foldedAtFirst).toBe(false);
    expect(hint).toContain('uploads into it are refused');
    expect(describedBy).toBe('close-hint');
    expect(await page.evaluate(() => (window as unknown as { samePage?: boolean }).samePage)).toBe(true);
    expect(told).toBe('Closed: no more uploads are accepted.');
    expect(await actions.getByRole('button', { name: 'Close batch' }).count()).toBe(0);
    expect(summary.body).toMatchObject({ status: 'done', closed: true, counts: { total: 2, success: 2, cats: 1 } });
    expect(await page.locator('.summary .counts').textContent()).toContain('1 cat');
  }, 60_000);

  it('moves the cat threshold of a done batch: up to 99 and the cat is gone, back down and it returns, with no DetectLabels call', async () => {
    const calls = await detectCalls();
    const threshold = page.getByLabel('Cat threshold (%)');
    const apply = page.getByRole('button', { name: 'Apply' });
    const before = await gridBadges();
    // A batch opened by its first upload keeps the threshold it was classified at: the field shows it.
    const shownFirst = [await threshold.inputValue(), await threshold.getAttribute('placeholder')];

    await threshold.fill('99');
    await apply.click();
    await page.getByRole('status').filter({ hasText: 'Cat threshold 99%: 0 cats.' }).waitFor();
    await page.waitForFunction(
      () => document.querySelectorAll('a.card .badge-cat').length === 0 && document.querySelectorAll('a.card').length === 2,
    );
    const high = await gridBadges();
    const highCounts = await page.locator('.summary .counts').textContent();
    await shoot('actions-threshold');
    await page.getByRole('link', { name: 'Cats', exact: true }).click();
    const highCats = await gridBadges('Cats');
    const empty = await page.getByText('No images here.').count();
    const highSummary = (await call('GET', `/v1/batches/${folderBatch}`, client.key)).body;

    await threshold.fill(String(LOCAL_CAT_MIN_CONFIDENCE));
    await threshold.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: `Cat threshold ${LOCAL_CAT_MIN_CONFIDENCE}%: 1 cat.` })
      .waitFor();
    await page.locator('a.card .badge-cat').waitFor();
    const lowCats = await gridBadges('Cats');
    await page.getByRole('link', { name: 'All', exact: true }).click();
    const low = await gridBadges();
    const lowSummary = (await call('GET', `/v1/batches/${folderBatch}`, client.key)).body;

    expect(shownFirst).toEqual([String(LOCAL_CAT_MIN_CONFIDENCE), null]);
    expect(before).toEqual({ cards: 2, cats: 1 });
    expect(high).toEqual({ cards: 2, cats: 0 });
    expect(highCounts).toContain('0 cats');
    expect([highCats.cards, empty]).toEqual([0, 1]);
    expect(highSummary).toMatchObject({ catMinConfidence: 99, counts: { cats: 0, success: 2 } });
    expect(lowCats).toEqual({ cards: 1, cats: 1 });
    expect(low).toEqual({ cards: 2, cats: 1 });
    expect(await page.locator('.summary .counts').textContent()).toContain('1 cat');
    expect(await threshold.inputValue()).toBe(String(LOCAL_CAT_MIN_CONFIDENCE));
    expect(lowSummary).toMatchObject({ catMinConfidence: LOCAL_CAT_MIN_CONFIDENCE, counts: { cats: 1, success: 2 } });
    expect(await detectCalls()).toBe(calls);
  }, 60_000);

  it("shows the API's message when it refuses an action: the threshold of a batch deleted from elsewhere", async () => {
    const gone = uniqueId('gone');
    await putFolder(gone, [{ key: 'coffee.png', body: COFFEE }]);
    await call('POST', `/v1/batches/${gone}:close`, client.key, {});
    await page.goto(`${apiUrl}/#/batches/${gone}`);
    await page.locator('.title-row .chip-done').waitFor({ timeout: 30_000 });
    expect((await call('DELETE', `/v1/batches/${gone}`, client.key)).status).toBe(202);
    const refusal = await call('POST', `/v1/batches/${gone}:reclassify`, client.key, { catMinConfidence: 50 });

    expect(await unfoldActions()).toBe(true);
    await page.getByLabel('Cat threshold (%)').fill('50');
    await page.getByRole('button', { name: 'Apply' }).click();
    const alert = page.getByRole('region', { name: 'Actions' }).getByRole('alert');
    await alert.waitFor();

    expect(refusal.status).toBe(404);
    expect(await alert.textContent()).toBe(refusal.body.error.message);
  });

  it('deletes a batch only once confirmed in the page: Escape and Cancel keep it; by keyboard, Delete erases it and the list no longer shows it', async () => {
    await page.goto(`${apiUrl}/#/batches/${folderBatch}`);
    await page.locator('.title-row .chip-done').waitFor();
    const foldedOnDone = await unfoldActions();
    const opener = page.getByRole('button', { name: 'Delete batch…' });
    const dialog = page.getByRole('dialog', { name: `Delete batch ${folderBatch}?` });

    await opener.click();
    await dialog.waitFor();
    const firstFocus = await focusedText();
    const text = await dialog.textContent();
    await shoot('delete-confirm');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    const afterEscape = await focusedText();
    await opener.click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const kept = await call('GET', `/v1/batches/${folderBatch}`, client.key);

    await opener.focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Tab');
    const confirmFocus = await focusedText();
    await page.keyboard.press('Enter');
    await page.locator('#batches-title').waitFor();
    await page.locator(`.batch-row[data-batch="${keptBatch}"]`).waitFor();
    const notice = await page.getByRole('status').filter({ hasText: 'Deleted batch' }).textContent();
    const rows = await page.locator('.batch-row').evaluateAll((rs) => rs.map((r) => (r as HTMLElement).dataset.batch));
    await shoot('deleted');

    expect(foldedOnDone).toBe(true);
    expect(firstFocus).toBe('Cancel');
    expect(text).toContain('This erases its 2 files');
    expect(afterEscape).toBe('Delete batch…');
    expect(kept.status).toBe(200);
    expect(confirmFocus).toBe('Delete');
    expect(notice).toBe(`Deleted batch ${folderBatch}.`);
    expect(rows).toContain(keptBatch);
    expect(rows).not.toContain(folderBatch);
    expect(new URL(page.url()).hash).toBe('#/');
    expect((await call('GET', `/v1/batches/${folderBatch}`, client.key)).status).toBe(404);
    expect((await call('GET', `/v1/batches/${folderBatch}/images`, client.key)).status).toBe(404);
  }, 60_000);

  it('sends no request bound to fail and logs no console error (but the refused threshold of the batch deleted elsewhere)', () => {
    const refused = (u: string) => /\/v1\/batches\/gone-[^/]+:reclassify$/.test(new URL(u).pathname);

    expect(recorder.failures.filter((f) => !refused(f.url))).toEqual([]);
    expect(recorder.failures.map((f) => f.status)).toEqual([404]);
    expect(recorder.errors.filter((e) => !(/status of 404/.test(e.text) && refused(e.url)))).toEqual([]);
  });
});
