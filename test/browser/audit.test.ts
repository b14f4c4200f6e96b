// Review mode's audit queue (DESIGN §13, issue 31) in Debian's Chromium against the local stack the jest global setup
// started: the queue chosen by keyboard beside "uncertain first", a random sample drawn from the page, its images
// judged by keyboard, and the accuracy's estimates with their 95 % intervals read again after each verdict; axe-core at
// a desktop's and a phone's width, with screenshots.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Accuracy, Image } from '../../lib/api/client-contract';
import type { UploadForm } from '../../lib/api/schemas/batches';
import { countText, shareText } from '../../web/accuracy';
import { postForm } from '../helpers/upload-form';
import { accessibilityFindings } from './a11y';
import { launchChromium, phoneContext, type Recorder, screenshot, signIn } from './browser';
import { call, newClient, readAll, stackEnv, type TestClient, waitForBridgeIdle } from './stack-client';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

let apiUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let owner: TestClient;
let batchId: string;
/** The detector's verdict of each image, by file name: the person agrees with each. */
const machine = new Map<string, boolean>();
/** The sample drawn from the page: fewer than the batch holds, so the estimates are not a census. */
const SAMPLE = 3;
const recorder: Recorder = { urls: [], errors: [], failures: [] };

const accuracy = async () => (await call<Accuracy>('GET', `/v1/batches/${batchId}/accuracy`, owner.key)).body;
const panel = () => page.locator('section.accuracy');
const shown = async () => (await page.locator('#review-current').textContent({ timeout: 30_000 }))!;
/** Until the panel says `n` of the sample reviewed (the estimates read again after the verdicts were stored). */
const reviewedShows = (n: number, of: number) =>
  panel()
    .locator('.audit-counts')
    .filter({ hasText: `${n} of ${of} sampled images reviewed.` })
    .waitFor({ timeout: 30_000 });
/** The estimates as the panel shows them, term by term. */
const estimatesShown = () =>
  panel()
    .locator('dd')
    .evaluateAll((dds) => dds.map((dd) => dd.firstChild?.textContent?.trim() ?? ''));

beforeAll(async () => {
  apiUrl = stackEnv('ICECAT_API_URL');
  owner = await newClient('web-audit');
  const files = ['chelsea.png', 'coffee.png', 'camera.png', 'astronaut.png'].map((name) => ({ name, body: fixture(name) }));
  const created = await call('POST', '/v1/batches', owner.key, {
    files: files.map((f) => ({ name: f.name, contentType: 'image/png', size: f.body.length })),
  });
  batchId = created.body.batchId as string;
  const forms = created.body.uploads as UploadForm[];
  for (const f of files) {
    const status = await postForm(forms.find((form) => form.file === f.name)!, f.body, 'image/png');
    if (status >= 300) throw new Error(`upload answered ${status}`);
  }
  await waitForBridgeIdle(120_000);
  await call('POST', `/v1/batches/${batchId}:close`, owner.key, {});
  for (const i of await readAll<Image>(`/v1/batches/${batchId}/images`, owner.key)) machine.set(i.fileName!, i.machineIsCat === true);
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
  await signIn(page, apiUrl, owner.key);
}, 240_000);

afterAll(async () => {
  await browser?.close();
});

describe('the audit queue in review mode', () => {
  it('is chosen by keyboard beside "uncertain first"; nothing drawn yet: the panel says so and offers the draw', async () => {
    await page.goto(`${apiUrl}/#/batches/${batchId}/review`);
    await page.locator('#review-current').waitFor({ timeout: 30_000 });
    const group = page.getByRole('group', { name: 'Queue' });
    await group.getByRole('radio', { name: /Uncertain first/ }).focus();
    await page.keyboard.press('ArrowDown');
    await page.locator('#review-end').waitFor({ timeout: 30_000 });
    await panel().locator('.audit-counts').waitFor();

    expect(await group.getByRole('radio', { name: /Audit/ }).isChecked()).toBe(true);
    expect(await page.locator('#review-end').textContent()).toBe('No sampled image left to review');
    expect(await panel().locator('.audit-counts').textContent()).toMatch(/^No sample drawn yet\./);
    expect(await page.getByLabel('Images to draw at random').inputValue()).toBe('50');
    expect([await accuracy()].map((a) => [a.sampled, a.precision])).toEqual([[0, null]]);
    expect(await accessibilityFindings(page, 'audit-none-drawn')).toEqual([]);
  });

  it("a size out of range is refused on the page; 3 are drawn and the queue shows them in the API's order", async () => {
    const size = page.locator('#audit-size');
    await size.fill('501');
    await size.press('Enter');
    const refusal = await page.getByRole('alert').filter({ hasText: '1 to 500' }).textContent({ timeout: 10_000 });
    await size.fill('3');
    await size.press('Enter');
    const drew = await panel().getByRole('status').textContent({ timeout: 30_000 });
    await reviewedShows(0, SAMPLE);
    const first = await shown();
    await page.locator('svg.review-frame').waitFor();
    await screenshot(page, 'review-audit-drawn');
    const pending = await call<{ items: Image[] }>('GET', `/v1/batches/${batchId}/images?audit=pending&limit=10`, owner.key);

    expect(refusal).toBe('Enter a whole number of images, 1 to 500.');
    expect(await size.getAttribute('aria-invalid')).toBeNull();
    expect(await page.getByLabel('More images to draw').inputValue()).toBe(String(SAMPLE));
    expect(drew).toBe(`Drew ${SAMPLE} images: ${SAMPLE} in the sample.`);
    expect(first).toBe(pending.body.items[0]!.fileName);
    expect(pending.body.items.map((i) => i.fileName)).toHaveLength(SAMPLE);
    // Nothing reviewed yet: no estimate, each in words.
    expect(await estimatesShown()).toEqual(Array(4).fill('not enough reviews yet'));
  });

  it('verdicts by keyboard go through the review routes; the estimates are read again and shown with their intervals', async () => {
    await page.keyboard.press('Tab'); // from the size field to its button: the verdict keys are not typing any more
    const judged: string[] = [];
    let said = '';
    for (let n = 1; n <= SAMPLE; n++) {
      const name = await shown();
      judged.push(name);
      await page.keyboard.press(machine.get(name) ? 'y' : 'n');
      await reviewedShows(n, SAMPLE);
      if (n === 1) said = (await page.locator('.review-said [role="status"]').textContent())!;
    }
    await page.locator('#review-end').waitFor();
    const estimates = await accuracy();
    const words = await estimatesShown();
    const [a, b] = judged as [string, string];

    expect(b).not.toBe(a);
    expect(said).toContain(`${a}: ${machine.get(a) ? 'cat' : 'not a cat'}.`);
    expect(new Set(judged).size).toBe(SAMPLE);
    expect([estimates.sampled, estimates.reviewed]).toEqual([SAMPLE, SAMPLE]);
    expect(words).toEqual([
      shareText(estimates.precision),
      shareText(estimates.recall),
      shareText(estimates.accuracy),
      countText(estimates.cats),
    ]);
    // Both strata reviewed: every estimate is there; the accuracy rests on the non-cats, one of which was left out of
    // the sample, so it has an interval of some width.
    expect(words.slice(0, 2)).toEqual(Array(2).fill(expect.stringMatching(/^\d+% \((exact|\d+–\d+%)\)$/)));
    expect(words[2]).toMatch(/^\d+% \(\d+–\d+%\)$/);
    expect(words[3]).toMatch(/^(≈ \d+ \(\d+–\d+\)|\d+ \(exact\))$/);
    expect(await accessibilityFindings(page, 'audit-estimates')).toEqual([]);
    expect(recorder.errors).toEqual([]);
  });
});
