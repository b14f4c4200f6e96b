// The web app's export of a batch too large to answer inline: the API answers 303 to a presigned S3 GET, which the
// browser follows across origins (the page's origin is the API's, the file is on the bucket's). It needs the bucket
// to allow GET from the web app's origin (CORS) and the page's Content-Security-Policy to allow the bucket.
// EXPORT_INLINE_MAX_BYTES is 4096 in tests (test/global-setup.ts), so 60 rows already redirect, as 1 MiB would on AWS.
// The MegaDetector results file takes the same way, from its own button.
import { readFileSync } from 'node:fs';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createDocumentClient } from '../../lib/aws/clients';
import { newBatch } from '../../lib/store/batch/summary';
import { toBatchItem } from '../../lib/store/table/attributes';
import { encodeDetections } from '../../lib/store/table/detections';
import { batchPartition, statusTs } from '../../lib/store/table/schema';
import { megadetectorProblems } from '../helpers/megadetector-rules';
import { launchChromium, phoneContext, type Recorder, screenshot, scrollWidth, signIn } from './browser';
import { newClient, stackEnv, type TestClient, uniqueId } from './stack-client';

let apiUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let client: TestClient;
const recorder: Recorder = { urls: [], errors: [], failures: [] };

beforeAll(async () => {
  apiUrl = stackEnv('ICECAT_API_URL');
  client = await newClient('web-export');
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

const catBox = { left: 0.1, top: 0.2, width: 0.3, height: 0.4 };
const dogBox = { left: 0.5, top: 0.5, width: 0.25, height: 0.25 };

/**
 * A done batch of `rows` classified images, written straight to the table (volume, not classification): every third
 * a cat with its box, every fourth a boxed dog as the ingest keeps the other labels' boxes.
 */
async function seedDoneBatch(clientId: string, rows: number): Promise<string> {
  const batchId = uniqueId('export');
  const table = stackEnv('TABLE_NAME');
  const now = Date.now();
  const ddb = createDocumentClient();
  try {
    const summary = toBatchItem(newBatch({ clientId, batchId, now, debug: false, retentionDays: 30 }));
    await ddb.send(
      new PutCommand({
        TableName: table,
        Item: { ...summary, n_total: rows, n_success: rows, closed: true, done_ts: Math.floor(now / 1000) },
      }),
    );
    const items = Array.from({ length: rows }, (_, i) => {
      const fprint = `f${String(i).padStart(5, '0')}`;
      const fileName = `IMG_${String(i).padStart(4, '0')}.jpg`;
      return {
        batch_id: batchPartition(clientId, batchId),
        img_fprint: fprint,
        client_id: clientId,
        s3img_key: `uploads/${clientId}/${batchId}/${fileName}`,
        file_name: fileName,
        op_status: 'success',
        status_ts: statusTs('success', now - i * 1000),
        upload_ts: now - i * 1000,
        ttl: Math.floor(now / 1000) + 30 * 86_400,
        processed_key: `processed/${clientId}/${batchId}/${fprint}.jpg`,
        rek_ts: now - i * 1000 + 500,
        rek_iscat: i % 3 === 0,
        labels: [
          { name: 'Cat', confidence: 91.5 },
          { name: 'Animal', confidence: 91.5 },
        ],
        ...(i % 3 === 0 ? { cat_conf: 91.5, rek_cats: [{ confidence: 91.5, box: catBox }] } : {}),
        ...(i % 4 === 0 ? { rek_dets: encodeDetections({ model: '3.0', boxes: [{ name: 'Dog', confidence: 88, box: dogBox }] }) } : {}),
        width: 640,
        height: 480,
      };
    });
    for (let i = 0; i < items.length; i += 25) {
      await ddb.send(
        new BatchWriteCommand({ RequestItems: { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
      );
    }
  } finally {
    ddb.destroy();
  }
  return batchId;
}

describe('the web app exporting a batch stored in S3 (a 303 to a presigned GET)', () => {
  it('downloads every row', async () => {
    const rows = 60;
    const batchId = await seedDoneBatch(client.clientId, rows);
    const direct = await fetch(`${apiUrl}/v1/batches/${batchId}/export?format=csv`, {
      headers: { authorization: `Bearer ${client.key}` },
      redirect: 'manual',
    });
    expect(direct.status).toBe(303);

    await signIn(page, apiUrl, client.key);
    await page.goto(`${apiUrl}/#/batches/${batchId}`);
    await page.locator('#batch-title').waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 20_000 }),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    await page.getByText(`Saved ${batchId}.csv.`).waitFor();
    await screenshot(page, 'export-redirect');

    const text = readFileSync((await download.path()) as string, 'utf8');
    const lines = text.trim().split(/\r?\n/);
    expect([download.suggestedFilename(), lines.length]).toEqual([`${batchId}.csv`, rows + 1]);
    expect(lines[0]).toMatch(/^file_name,status,is_cat/);
    expect(recorder.errors).toEqual([]);
  }, 60_000);
});

describe('the web app exporting a MegaDetector results file', () => {
  it('downloads a results file of the format from its own button, reached and pressed with the keyboard on a phone', async () => {
    const rows = 60;
    const batchId = await seedDoneBatch(client.clientId, rows);
    // A page of its own, signed in afresh: the test runs alone as well as after the one above.
    const page = await context.newPage();
    await signIn(page, apiUrl, client.key);
    await page.goto(`${apiUrl}/#/batches/${batchId}`);
    await page.locator('#batch-title').waitFor();
    const button = page.getByRole('button', { name: 'Export MegaDetector' });
    await button.waitFor();

    // It fits a 375 px phone: nothing scrolls sideways, the button inside the viewport.
    const box = await button.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(375);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(375);

    // Tab from the export before it, then Enter.
    await page.getByRole('button', { name: 'Export JSONL' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Export MegaDetector');
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 20_000 }), page.keyboard.press('Enter')]);
    await page.getByText(`Saved ${batchId}.json.`).waitFor();
    await screenshot(page, 'export-megadetector');

    const text = readFileSync((await download.path()) as string, 'utf8');
    expect(download.suggestedFilename()).toBe(`${batchId}.json`);
    expect(megadetectorProblems(text)).toEqual([]);
    const file = JSON.parse(text) as {
      info: { format_version: string };
      detection_categories: Record<string, string>;
      images: { file: string; detections: { category: string; conf: number; bbox: number[] }[] }[];
    };
    expect(file.info.format_version).toBe('1.6');
    expect(file.detection_categories).toEqual({ '1': 'cat', '2': 'dog' });
    expect(file.images).toHaveLength(rows);
    const first = file.images.find((x) => x.file === 'IMG_0000.jpg');
    expect(first?.detections).toEqual([
      { category: '1', conf: 0.915, bbox: [0.1, 0.2, 0.3, 0.4] },
      { category: '2', conf: 0.88, bbox: [0.5, 0.5, 0.25, 0.25] },
    ]);
    expect(file.images.find((x) => x.file === 'IMG_0001.jpg')?.detections).toEqual([]);
    expect(recorder.errors).toEqual([]);
  }, 60_000);
});
