// The web app in a real browser (Debian's Chromium) against the local stack the jest global setup started: real
// uploads through the presigned forms, the real ingest with the offline detector, the real API. Routes the API does
// not describe yet (its /v1/openapi.json) are expected to answer 404 and the page to do without them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import type { UploadForm } from '../../lib/api/schemas/batches';
import type { ImageAnswer } from '../../lib/api/schemas/images';
import type { SimilarGroups } from '../../lib/api/schemas/similar';
import { createS3Client } from '../../lib/aws/clients';
import { loadAwsClientSettings } from '../../lib/config';
import { photoWithExif } from '../helpers/exif-images';
import { postForm } from '../helpers/upload-form';
import { launchChromium, phoneContext, type Recorder, screenshot, scrollWidth, signIn as signInAs } from './browser';
import { call, newClient, readAll, stackEnv, type TestClient, uniqueId, waitForBridgeIdle } from './stack-client';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const CAT = fixture('chelsea.png');
const FILES = [
  { name: 'chelsea.png', mimeType: 'image/png', buffer: CAT },
  { name: 'coffee.png', mimeType: 'image/png', buffer: fixture('coffee.png') },
  { name: 'rocket.jpg', mimeType: 'image/jpeg', buffer: fixture('rocket.jpg') },
  { name: 'astronaut.png', mimeType: 'image/png', buffer: fixture('astronaut.png') },
  { name: 'chelsea copy.png', mimeType: 'image/png', buffer: CAT },
  { name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('these are notes, not pixels') },
];
const DISTINCT = 5;

let apiUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let owner: TestClient;
let stranger: TestClient;
/** Whose batch was uploaded straight to S3. */
let uploader: TestClient;
let batchId: string;
const recorder: Recorder = { urls: [], errors: [], failures: [] };
/** METHOD /path templates of the routes the API describes. */
let described: string[] = [];
/** Whether POST /v1/batches takes a batch name. */
let namesBatches = false;

const has = (method: string, template: string) => described.includes(`${method} ${template}`);

const signIn = (key: string): Promise<void> => signInAs(page, apiUrl, key);

async function expectFits(name: string): Promise<void> {
  await screenshot(page, name);
  expect([name, await scrollWidth(page)]).toEqual([name, expect.any(Number)]);
  expect(await scrollWidth(page)).toBeLessThanOrEqual(375);
}

/** The page again at a desktop's width, for a person to look at, then back at the phone's. */
async function desktopScreenshot(name: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 800 });
  await screenshot(page, `${name}-desktop`);
  await page.setViewportSize({ width: 375, height: 812 });
}

/** Waits for each image the locator finds to be decoded; their natural widths. */
const naturalWidths = (images: ReturnType<Page['locator']>): Promise<number[]> =>
  images.evaluateAll((imgs) =>
    Promise.all(
      imgs.map(async (i) => (await (i as HTMLImageElement).decode().catch(() => undefined), (i as HTMLImageElement).naturalWidth)),
    ),
  );

async function imagesOf(key: string, id: string): Promise<ImageAnswer[]> {
  return readAll<ImageAnswer>(`/v1/batches/${id}/images`, key);
}

/** A batch of the owner's, its files uploaded one after the other (so the first of equal pixels is the original); its id. */
async function uploadBatch(files: { name: string; type: string; body: Buffer }[]): Promise<string> {
  const created = await call('POST', '/v1/batches', owner.key, {
    files: files.map((f) => ({ name: f.name, contentType: f.type, size: f.body.length })),
  });
  const forms = created.body.uploads as UploadForm[];
  for (const f of files) {
    await postFormOk(forms.find((form) => form.file === f.name)!, f.body, f.type);
    await waitForBridgeIdle();
  }
  return created.body.batchId as string;
}

/** A presigned POST from outside the page, as another uploader would send it. */
async function postFormOk(form: UploadForm, body: Buffer, contentType: string): Promise<void> {
  const status = await postForm(form, body, contentType);
  if (status >= 300) throw new Error(`upload answered ${status}`);
}

beforeAll(async () => {
  apiUrl = stackEnv('ICECAT_API_URL');
  const doc = (await (await fetch(`${apiUrl}/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  described = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
  namesBatches = 'batchId' in (doc.components.schemas.CreateBatchRequest?.properties ?? {});
  [owner, stranger, uploader] = await Promise.all([newClient('web'), newClient('web-other'), newClient('web-s3')]);
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe('the web app', () => {
  it('is served at / with a strict Content-Security-Policy and no inline script', async () => {
    const res = await fetch(`${apiUrl}/`);
    const html = await res.text();

    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'.*script-src 'self'.*frame-ancestors 'none'/);
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('signs in with the API key, kept in sessionStorage and nowhere else', async () => {
    await page.goto(`${apiUrl}/`);
    await expectFits('sign-in');

    await signIn(owner.key);

    const storage = await page.evaluate(() => ({
      session: Object.values(sessionStorage),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: [owner.key], local: 0, cookie: '' });
    await expectFits('batches-empty');
  });

  it('uploads images chosen with the file input (the keyboard path), one progress bar per file, into a new debug batch', async () => {
    const name = uniqueId('web');
    await page.getByRole('link', { name: 'New batch' }).first().click();
    await page.setInputFiles('#file-input', FILES);
    // The name field is offered only by an API whose POST /v1/batches takes one.
    await page.getByLabel('Keep debug logs').waitFor();
    expect(await page.getByLabel('Batch name (optional)').count()).toBe(namesBatches ? 1 : 0);
    if (namesBatches) await page.getByLabel('Batch name (optional)').fill(name);
    await page.getByLabel('Keep debug logs').check();

    // Priced before it goes: every file but the exact copy of the cat, at the service's price (GET /v1/usage).
    const price = (await call('GET', '/v1/usage', owner.key)).body.pricePerImageUsd as number;
    const estimate = page.locator('[data-estimate]', { hasText: `at most ${FILES.length - 1} DetectLabels calls` });
    await estimate.waitFor();

    expect(await page.locator('.upload-list li progress').count()).toBe(FILES.length);
    expect(await estimate.textContent()).toBe(
      `Before you upload: at most ${FILES.length - 1} DetectLabels calls, about $${(FILES.length - 1) * price} (1 exact copy among the files, ` +
        'not charged). Images you have uploaded before cost nothing again; icecat upload --dry-run counts them exactly.',
    );
    await expectFits('new-batch');
    await page.getByRole('button', { name: `Upload ${FILES.length} images` }).click();

    await page.locator('#batch-title').waitFor({ timeout: 60_000 });
    batchId = (await page.locator('#batch-title').textContent()) as string;
    if (namesBatches) expect(batchId).toBe(name);
    await waitForBridgeIdle(120_000);
    await page.locator('.title-row .chip-done').waitFor({ timeout: 30_000 });
    const summary = await call('GET', `/v1/batches/${batchId}`, owner.key);
    expect(summary.body).toMatchObject({ status: 'done', counts: { total: FILES.length, fail: 1, duplicate: 1 }, debug: true });
    // What it cost: a call per classified image, the duplicate saved one.
    const { detectLabelsCalls, savedUsd } = summary.body.usage;
    await page.locator('.usage', { hasText: `${detectLabelsCalls} DetectLabels calls` }).waitFor();
    expect(await page.locator('.usage').textContent()).toBe(
      `Cost: ${detectLabelsCalls} DetectLabels calls, about $${detectLabelsCalls / 1000} · saved $${savedUsd} (0 reused, 1 duplicate)`,
    );
  }, 180_000);

  it('shows the batch as a grid: a card per distinct image, a cat badge per cat, a thumbnail or a placeholder of fixed size', async () => {
    const images = await imagesOf(owner.key, batchId);
    await page
      .locator('a.card')
      .nth(DISTINCT - 1)
      .waitFor();

    const cards = await page.locator('a.card').evaluateAll((links) =>
      links.map((a) => {
        const img = a.querySelector('.thumb img') as HTMLImageElement | null;
        const box = (a.querySelector('.thumb') as HTMLElement).getBoundingClientRect();
        return {
          fprint: (a as HTMLElement).dataset.fprint,
          cat: a.querySelector('.badge-cat') !== null,
          thumbnail: img ? { complete: img.complete, naturalWidth: img.naturalWidth, alt: img.alt } : null,
          placeholder: a.querySelector('.thumb.placeholder') !== null,
          square: Math.abs(box.width - box.height) < 1 && box.width > 100,
        };
      }),
    );
    await expectFits('batch-grid');

    expect(images).toHaveLength(DISTINCT);
    expect(cards.map((c) => c.fprint).sort()).toEqual(images.map((i) => i.fprint).sort());
    expect(cards.filter((c) => c.cat).length).toBe(images.filter((i) => i.isCat).length);
    // Either upload of the cat's pixels can be the one recorded first.
    expect(images.filter((i) => i.isCat).map((i) => i.fileName)).toEqual([expect.stringMatching(/^chelsea( copy)?\.png$/)]);
    expect(cards.every((c) => c.square)).toBe(true);
    // Every image whose pixels were decoded shows its thumbnail; the file that is no image, a placeholder.
    const decoded = images.filter((i) => i.status === 'success');
    // Either upload of the cat may be the original (the page uploads several files at once).
    expect(decoded.map((i) => i.fileName?.replace('chelsea copy.png', 'chelsea.png')).sort()).toEqual([
      'astronaut.png',
      'chelsea.png',
      'coffee.png',
      'rocket.jpg',
    ]);
    expect(images.filter((i) => !i.thumbnailUrl).map((i) => i.fileName)).toEqual(['notes.png']);
    for (const image of decoded) {
      const img = page.locator(`a.card[data-fprint="${image.fprint}"] .thumb img`);
      await img.evaluate((el: HTMLImageElement) => el.decode());
      const shown = await img.evaluate((el: HTMLImageElement) => ({
        natural: el.naturalWidth,
        alt: el.alt,
        loading: el.loading,
        src: el.currentSrc,
      }));
      // The card's text names the file and its labels: the thumbnail adds no name of its own.
      expect([image.fileName, shown.natural > 0 && shown.natural <= 256, shown.alt === '', shown.loading]).toEqual([
        image.fileName,
        true,
        true,
        expect.stringMatching(/^(lazy|eager)$/),
      ]);
      expect(new URL(shown.src).pathname).toMatch(new RegExp(`/thumbnails/${owner.clientId}/[^/]+/${image.fprint}\\.webp$`));
    }
    expect(cards.find((c) => c.fprint === images.find((i) => i.fileName === 'notes.png')!.fprint)?.placeholder).toBe(true);
    await screenshot(page, 'batch-grid-thumbnails');
  });

  it('keeps each thumbnail box the same size before and after its image loads (no layout shift)', async () => {
    await page.reload();
    await page
      .locator('a.card')
      .nth(DISTINCT - 1)
      .waitFor();
    const boxes = () =>
      page.locator('a.card .thumb').evaluateAll((thumbs) => thumbs.map((t) => JSON.stringify((t as HTMLElement).getBoundingClientRect())));
    const early = await boxes();
    await page.locator('a.card .thumb img').evaluateAll((imgs) => Promise.all(imgs.map((i) => (i as HTMLImageElement).decode())));

    expect(await boxes()).toEqual(early);
  });

  it('filters: cats, not cats, failed with their error, duplicates with their file names', async () => {
    const images = await imagesOf(owner.key, batchId);
    const shown = async (label: string) => {
      await page.getByRole('link', { name: label, exact: true }).click();
      await page.locator(`.grid[aria-label="${label} images"][aria-busy="false"]`).waitFor();
      await expectFits(`filter-${label.toLowerCase().replace(' ', '-')}`);
      return page
        .locator('a.card')
        .evaluateAll((links) => links.map((a) => ({ fprint: (a as HTMLElement).dataset.fprint, text: a.textContent ?? '' })));
    };
    const fprints = (pick: (i: ImageAnswer) => boolean) =>
      images
        .filter(pick)
        .map((i) => i.fprint)
        .sort();

    const cats = await shown('Cats');
    const notCats = await shown('Not cats');
    const failed = await shown('Failed');
    const duplicates = await shown('Duplicates');
    // Four unrelated photos and a file that is no image: no group.
    await page.getByRole('link', { name: 'Near-duplicates', exact: true }).click();
    await page.locator('#near-title', { hasText: 'No near-duplicates' }).waitFor();
    await expectFits('filter-near-duplicates-none');
    const all = await shown('All');

    expect(cats.map((c) => c.fprint).sort()).toEqual(fprints((i) => i.isCat === true));
    expect(notCats.map((c) => c.fprint).sort()).toEqual(fprints((i) => i.status === 'success' && i.isCat === false));
    expect(failed.map((c) => c.fprint)).toEqual(fprints((i) => i.status === 'fail'));
    expect(failed[0]?.text).toContain('NotAnImage');
    // The two uploads of the cat go up at once: either can be the one recorded first, the other its duplicate.
    const original = images.find((i) => i.duplicates > 0) as ImageAnswer;
    expect(['chelsea.png', 'chelsea copy.png']).toContain(original.fileName);
    expect(duplicates.map((c) => c.fprint)).toEqual([original.fprint]);
    expect(duplicates[0]?.text).toContain('1 duplicate');
    expect(duplicates[0]?.text).toContain(original.fileName === 'chelsea.png' ? 'chelsea copy.png' : 'chelsea.png');
    expect(all).toHaveLength(DISTINCT);
  });

  it("offers the done batch's labels as filters: a label's grid is the API's listing of it at the batch's threshold", async () => {
    const summary = (await call('GET', `/v1/batches/${batchId}`, owner.key)).body;
    const top = summary.labels[0] as { name: string; images: number };
    const chip = page.getByRole('navigation', { name: 'Filter by label' }).getByRole('link', { name: new RegExp(`^${top.name} \\(`) });

    await chip.click();
    await page.locator(`.grid[aria-label="${top.name} images"][aria-busy="false"]`).waitFor();
    const shown = await page.locator('a.card').evaluateAll((links) => links.map((a) => (a as HTMLElement).dataset.fprint));
    await expectFits('filter-label');
    await desktopScreenshot('filter-label');
    const query = new URLSearchParams({ label: top.name, minConfidence: String(summary.catMinConfidence), limit: '100' });
    const listed = await call('GET', `/v1/batches/${batchId}/images?${query}`, owner.key);

    expect(summary.labels.length).toBeGreaterThan(0);
    expect(await chip.getAttribute('aria-current')).toBe('page');
    expect(shown.sort()).toEqual(listed.body.items.map((i: ImageAnswer) => i.fprint).sort());
    expect(shown).toHaveLength(top.images);
    await page.getByRole('link', { name: 'All', exact: true }).click();
  });

  it('moves between the cards with the arrow keys', async () => {
    // The last test went back to All: wait until that grid has loaded, so focus lands on cards that stay.
    await page.locator('.grid[aria-label="All images"][aria-busy="false"]').waitFor();
    const all = await imagesOf(owner.key, batchId);
    await page.waitForFunction((n) => document.querySelectorAll('a.card').length === n, all.length);
    await page.locator('a.card').first().focus();
    await page.keyboard.press('ArrowRight');

    const focused = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.fprint);
    expect(focused).toBe(await page.locator('a.card').nth(1).getAttribute('data-fprint'));
  });

  it('opens one image: its labels with confidences, a box over each cat the API located, its duplicates', async () => {
    const cat = (await imagesOf(owner.key, batchId)).find((i) => i.isCat) as ImageAnswer & { cats?: { box?: unknown }[] };
    await page.locator(`a.card[data-fprint="${cat.fprint}"]`).click();
    await page.locator('#image-title', { hasText: cat.fileName as string }).waitFor();

    const labels = await page.locator('table.labels tbody tr').allTextContents();
    const boxes = await page
      .locator('svg.boxes rect.cat-box')
      .evaluateAll((rects) => rects.map((r) => ['x', 'y', 'width', 'height'].map((a) => Number(r.getAttribute(a)))));
    await expectFits('image');

    expect(labels.find((l) => l.startsWith('Cat'))).toMatch(/^Cat\s*\d+%$/);
    expect(labels).toHaveLength(cat.labels.length);
    expect(boxes).toHaveLength((cat.cats ?? []).filter((c) => c.box).length);
    for (const [x, y, w, h] of boxes) expect([x, y, w, h].every((v) => v! >= 0 && v! <= 100) && w! > 0 && h! > 0).toBe(true);
    expect(await page.locator('text=Uploaded 1 more time').count()).toBe(1);
  });

  it('shows the image itself, the cat box drawn over it', async () => {
    const img = page.locator('.frame img:not(.preview)');
    await img.evaluate((el: HTMLImageElement) => el.decode());
    await page.locator('.frame img.preview').waitFor({ state: 'detached' });
    const shown = await img.evaluate((el: HTMLImageElement) => {
      const r = el.getBoundingClientRect();
      const b = (document.querySelector('svg.boxes rect.cat-box') as SVGRectElement).getBoundingClientRect();
      return {
        natural: [el.naturalWidth, el.naturalHeight],
        src: el.currentSrc,
        image: [r.left, r.top, r.right, r.bottom],
        box: [b.left, b.top, b.right, b.bottom],
      };
    });
    await screenshot(page, 'image-with-cat-box');

    // The processed original (451x300), not its thumbnail, and the box inside it, not the whole of it.
    expect(shown.natural).toEqual([451, 300]);
    expect(new URL(shown.src).pathname).toMatch(/\/processed\/.+\.png$/);
    const [il, it, ir, ib] = shown.image as [number, number, number, number];
    const [bl, bt, br, bb] = shown.box as [number, number, number, number];
    expect([bl >= il - 2, bt >= it - 2, br <= ir + 2, bb <= ib + 2]).toEqual([true, true, true, true]);
    expect((br - bl) * (bb - bt)).toBeLessThan((ir - il) * (ib - it));
    expect((br - bl) * (bb - bt)).toBeGreaterThan(0);
  });

  it('exports the batch as CSV: one row per uploaded file (no export button where the API has no export)', async () => {
    await page.goto(`${apiUrl}/#/batches/${batchId}`);
    await page.locator('#batch-title').waitFor();

    if (has('GET', '/v1/batches/{batchId}/export')) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
      const text = readFileSync((await download.path()) as string, 'utf8');
      const rows = text.trim().split(/\r?\n/);
      expect([download.suggestedFilename(), rows.length]).toEqual([`${batchId}.csv`, FILES.length + 1]);
    } else {
      await page.locator('.filters').waitFor();
      expect(await page.getByRole('button', { name: 'Export CSV' }).count()).toBe(0);
    }
  });

  it("shows a debug batch's logs, by time, narrowed to one image on request", async () => {
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.locator('.log-entry').first().waitFor();
    const times = await page.locator('.log-entry time').evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime') ?? ''));
    await expectFits('logs');

    await page.getByLabel('Image').selectOption({ label: 'coffee.png' });
    const narrowed = await page.locator('.log-entry .log-head a').allTextContents();

    expect(times.length).toBeGreaterThanOrEqual(4);
    expect(times).toEqual([...times].sort());
    expect(narrowed).toEqual(['coffee.png']);
  });

  it('shows a batch turning from open to done in the batch list, live (no reload)', async () => {
    const coffee = fixture('coffee.png');
    const created = await call('POST', '/v1/batches', owner.key, {
      files: [
        { name: 'one.png', contentType: 'image/png', size: CAT.length },
        { name: 'two.png', contentType: 'image/png', size: coffee.length },
      ],
    });
    const live = created.body.batchId as string;
    const forms = created.body.uploads as UploadForm[];
    await postFormOk(forms[0]!, CAT, 'image/png');
    await waitForBridgeIdle();
    await page.goto(`${apiUrl}/#/`);
    // Opening it by name works whether or not the API lists batches.
    await page.getByLabel('Open a batch by name').fill(live);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page.locator('#batch-title', { hasText: live }).waitFor();
    await page.getByRole('link', { name: 'Batches', exact: true }).first().click();
    const row = page.locator(`.batch-row[data-batch="${live}"]`);
    await row.waitFor();
    const before = await row.getAttribute('data-status');
    await page.evaluate((id) => {
      const w = window as unknown as { seen: string[] };
      w.seen = [];
      const el = document.querySelector(`.batch-row[data-batch="${id}"]`) as HTMLElement;
      new MutationObserver(() => w.seen.push(el.dataset.status ?? '')).observe(el, { attributes: true, attributeFilter: ['data-status'] });
    }, live);
    await expectFits('batches-live');

    await postFormOk(forms[1]!, coffee, 'image/png');
    await page.locator(`.batch-row[data-batch="${live}"][data-status="done"]`).waitFor({ timeout: 60_000 });

    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(before).toBe('open');
    expect(seen[seen.length - 1]).toBe('done');
    expect(await row.locator('progress').getAttribute('value')).toBe('2');
  }, 90_000);

  it('uploads files dropped on the drop zone', async () => {
    await page.goto(`${apiUrl}/#/new`);
    const dropped = [
      { name: 'dropped cat.png', type: 'image/png', b64: CAT.toString('base64') },
      { name: 'rocket.jpg', type: 'image/jpeg', b64: fixture('rocket.jpg').toString('base64') },
    ];
    await page.locator('[data-testid=dropzone]').evaluate((zone, files) => {
      const data = new DataTransfer();
      for (const f of files) data.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }, dropped);
    await page.locator('.upload-list li').nth(1).waitFor();
    await page.getByRole('button', { name: 'Upload 2 images' }).click();

    await page.locator('.title-row .chip-done').waitFor({ timeout: 60_000 });
    const id = (await page.locator('#batch-title').textContent()) as string;
    await expectFits('dropped-batch');
    const images = await imagesOf(owner.key, id);
    expect(images.map((i) => i.fileName).sort()).toEqual(['dropped cat.png', 'rocket.jpg']);
  }, 90_000);

  it('shows near-duplicates as a view of their own, asked for only when chosen: an original and its JPEG re-encode as one group, an unrelated photo in none', async () => {
    const files = [
      { name: 'original.png', type: 'image/png', body: CAT },
      { name: 're-encoded.jpg', type: 'image/jpeg', body: await sharp(CAT).jpeg({ quality: 75 }).toBuffer() },
      { name: 'unrelated.jpg', type: 'image/jpeg', body: fixture('rocket.jpg') },
    ];
    const id = await uploadBatch(files);
    const expected = (await call('GET', `/v1/batches/${id}/similar`, owner.key)).body as SimilarGroups;
    const requestsBefore = recorder.urls.length;
    const asked = (route: string) =>
      recorder.urls.slice(requestsBefore).filter((u) => new URL(u).pathname === `/v1/batches/${id}${route}`).length;

    await page.goto(`${apiUrl}/#/batches/${id}`);
    await page.locator('.title-row .chip-done').waitFor();
    await page.locator('.grid[aria-busy="false"]').waitFor();
    const tab = page.locator('.filters a', { hasText: 'Near-duplicates' });
    await tab.waitFor();
    const tabBefore = await tab.textContent();
    const askedBefore = asked('/similar');
    // By keyboard: Tab from the filter before it, Enter. Thumbnails are held back until the placeholders are measured.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/images:batchGet', async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('link', { name: 'Duplicates', exact: true }).focus();
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.textContent);
    await page.keyboard.press('Enter');
    const group = page.locator('.near-group');
    await group.first().waitFor();
    const boxes = () =>
      page
        .locator('.near-view')
        .evaluate((v) => [...v.querySelectorAll('.thumb, .near-group')].map((t) => JSON.stringify(t.getBoundingClientRect())));
    const early = await boxes();
    const placeholders = await group.locator('.thumb.placeholder').count();
    release();
    await group.locator('img').nth(1).waitFor();
    const widths = await naturalWidths(group.locator('img'));
    const late = await boxes();
    await page.unroute('**/images:batchGet');

    const names = await group.locator('.card-name').allTextContents();
    const heading = await group.locator('.near-head').textContent();
    const viewText = await page.locator('.near-view').textContent();
    const counted = await page.getByRole('link', { name: 'Near-duplicates (1 group)', exact: true }).count();
    await expectFits('near-duplicates');
    await desktopScreenshot('near-duplicates');

    expect(expected.groups).toHaveLength(1);
    expect([tabBefore, askedBefore, focused]).toEqual(['Near-duplicates', 0, 'Near-duplicates']);
    expect(await page.locator('.filters a[aria-current="page"]').textContent()).toMatch(/^Near-duplicates/);
    expect(await group.count()).toBe(1);
    expect(names.sort()).toEqual(['original.png', 're-encoded.jpg']);
    expect(viewText).not.toContain('unrelated.jpg');
    expect(heading).toBe(`Group 1 · 2 images · max distance ${expected.groups[0]!.maxDistance}`);
    expect(counted).toBe(1);
    expect(await page.title()).toBe(`${id} (near duplicates) · IceCatWrangler`);
    expect(widths.map((w) => w > 0 && w <= 256)).toEqual([true, true]);
    expect(placeholders).toBe(2);
    expect(late).toEqual(early);
    expect([asked('/similar'), asked('/images:batchGet')]).toEqual([1, 1]);

    // Each member opens the image view; Escape leads back to the groups, read again from none of the API.
    await group.getByRole('link', { name: /re-encoded\.jpg/ }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#image-title', { hasText: 're-encoded.jpg' }).waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.near-group img').nth(1).waitFor();

    expect(page.url()).toMatch(/\?filter=near-duplicates$/);
    expect(asked('/similar')).toBe(1);
  }, 90_000);

  it('names a group by its distinct images (an exact duplicate is not one of them); the image view names its duplicate', async () => {
    const id = await uploadBatch([
      { name: 'tabby.png', type: 'image/png', body: CAT },
      { name: 'tabby again.png', type: 'image/png', body: CAT },
      { name: 'tabby.jpg', type: 'image/jpeg', body: await sharp(CAT).jpeg({ quality: 80 }).toBuffer() },
    ]);
    await page.goto(`${apiUrl}/#/batches/${id}?filter=near-duplicates`);
    const group = page.locator('.near-group');
    await group.locator('img').nth(1).waitFor();

    const names = await group.locator('.card-name').allTextContents();

    expect(await group.count()).toBe(1);
    expect(names.sort()).toEqual(['tabby.jpg', 'tabby.png']);

    await group.getByRole('link', { name: /tabby\.png/ }).click();
    await page.locator('#image-title', { hasText: 'tabby.png' }).waitFor();
    const duplicateFiles = await page.locator('.dup-files li').allTextContents();
    await page.locator('.frame img:not(.preview)').evaluate((el: HTMLImageElement) => el.decode());
    await expectFits('image-duplicates');
    await desktopScreenshot('image-duplicates');

    expect(await page.getByText('Uploaded 1 more time as:').count()).toBe(1);
    expect(duplicateFiles).toEqual(['tabby again.png']);
  }, 90_000);

  it('shows a folder uploaded straight to S3 (as aws s3 cp --recursive lays it out, no API call) as a gallery of thumbnails', async () => {
    const batch = uniqueId('holiday');
    const folder = [
      { key: 'chelsea.png', type: 'image/png', body: CAT },
      { key: 'beach/coffee.png', type: 'image/png', body: fixture('coffee.png') },
      { key: 'beach/rocket.jpg', type: 'image/jpeg', body: fixture('rocket.jpg') },
    ];
    const s3 = createS3Client(loadAwsClientSettings());
    try {
      await Promise.all(
        folder.map((f) =>
          s3.send(
            new PutObjectCommand({
              Bucket: stackEnv('BUCKET_NAME'),
              Key: `uploads/${uploader.clientId}/${batch}/${f.key}`,
              Body: f.body,
              ContentType: f.type,
            }),
          ),
        ),
      );
    } finally {
      s3.destroy();
    }
    await waitForBridgeIdle();
    await page.getByRole('button', { name: 'Sign out' }).click();

    await signIn(uploader.key);
    await page.locator(`.batch-row[data-batch="${batch}"]`).waitFor();
    await expectFits('s3-batches');
    await page.locator(`.batch-row[data-batch="${batch}"] a`).first().click();
    await page
      .locator('a.card')
      .nth(folder.length - 1)
      .waitFor();
    const widths = await naturalWidths(page.locator('a.card .thumb img'));
    const names = await page.locator('a.card .card-name').allTextContents();
    const cats = await page.locator('a.card .badge-cat').count();
    await expectFits('s3-gallery');
    await desktopScreenshot('s3-gallery');

    expect(names.sort()).toEqual(['beach/coffee.png', 'beach/rocket.jpg', 'chelsea.png']);
    expect(widths.map((w) => w > 0 && w <= 256)).toEqual([true, true, true]);
    expect(cats).toBe(1);
  }, 90_000);

  it("sorts a batch of camera-trap photos by capture time and shows an image's capture time, camera and place", async () => {
    const batch = uniqueId('trap');
    const photos = [
      {
        key: 'cam1/noon.jpg',
        body: await photoWithExif({ make: 'Reconyx', model: 'HC600', dateTimeOriginal: '2024:06:01 12:00:00' }, 160, '#a1'),
      },
      {
        key: 'cam1/dawn.jpg',
        body: await photoWithExif(
          {
            make: 'Reconyx',
            model: 'HC600',
            dateTimeOriginal: '2024:06:01 05:10:00',
            offsetTimeOriginal: '+02:00',
            lat: [47, 30, 0, 'N'],
            lon: [122, 15, 30, 'W'],
          },
          160,
          '#b2',
        ),
      },
      { key: 'cam2/night.jpg', body: await photoWithExif({ make: 'Browning', dateTimeOriginal: '2024:05:31 23:59:59' }, 160, '#c3') },
    ];
    const s3 = createS3Client(loadAwsClientSettings());
    try {
      for (const p of photos) {
        await s3.send(
          new PutObjectCommand({
            Bucket: stackEnv('BUCKET_NAME'),
            Key: `uploads/${uploader.clientId}/${batch}/${p.key}`,
            Body: p.body,
            ContentType: 'image/jpeg',
          }),
        );
      }
    } finally {
      s3.destroy();
    }
    await waitForBridgeIdle();
    await page.goto(`${apiUrl}/#/batches/${batch}?filter=captured`);
    await page.locator('.grid[aria-label="By capture time images"][aria-busy="false"]').waitFor();
    const names = await page.locator('a.card .card-name').allTextContents();
    const times = await page.locator('a.card .card-captured').allTextContents();
    await expectFits('captured-order');
    await desktopScreenshot('captured-order');
    await page.locator('a.card').nth(1).click();
    await page.locator('#image-title', { hasText: 'cam1/dawn.jpg' }).waitFor();
    const details = await page.locator('dl.details').textContent();
    await expectFits('captured-image');

    expect(names).toEqual(['cam2/night.jpg', 'cam1/dawn.jpg', 'cam1/noon.jpg']);
    expect(times).toEqual(['2024-05-31 23:59:59', '2024-06-01 05:10:00 (UTC+02:00)', '2024-06-01 12:00:00']);
    expect(details).toContain('Captured2024-06-01 05:10:00 (UTC+02:00)');
    expect(details).toContain('CameraReconyx HC600');
    expect(details).toContain('Place47.50000° N, 122.25833° W');
  }, 90_000);

  it("shows another client's key none of the first client's batches", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await signIn(stranger.key);
    const listed = await page.locator('.batch-row').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.batch));
    await page.goto(`${apiUrl}/#/batches/${batchId}`);
    await page.getByText(`No batch named ${batchId} for this key.`).waitFor();
    await expectFits('stranger');

    expect(listed).toEqual([]);
    expect(await page.locator('a.card').count()).toBe(0);
  });

  it('never puts a key in a URL', () => {
    const leaks = recorder.urls.filter((u) =>
      [owner.key, stranger.key, uploader.key].some((k) => u.includes(k) || u.includes(encodeURIComponent(k))),
    );

    expect(recorder.urls.length).toBeGreaterThan(20);
    expect(leaks).toEqual([]);
  });

  it('sends no request bound to fail and logs no console error (but the stranger’s 404, which the page explains)', () => {
    // The summary and the first page of images, asked for at once.
    const strangers = (u: string) => [`/v1/batches/${batchId}`, `/v1/batches/${batchId}/images`].includes(new URL(u).pathname);

    expect(recorder.failures.filter((f) => !strangers(f.url))).toEqual([]);
    expect(recorder.errors.filter((e) => !(/status of 404/.test(e.text) && strangers(e.url)))).toEqual([]);
    expect(recorder.failures.filter((f) => strangers(f.url)).map((f) => f.status)).toEqual([404, 404]);
  });
});
