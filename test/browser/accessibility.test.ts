// The web app's accessibility (issue 23), in Debian's Chromium against the local stack: axe-core on every page and
// state at a desktop's and a phone's width, and the keyboard paths (the skip link; focus and scroll across page changes).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import type { UploadForm } from '../../lib/api/schemas/batches';
import type { ImageAnswer } from '../../lib/api/schemas/images';
import { postForm } from '../helpers/upload-form';
import { accessibilityFindings, contrastAgainstPhoto, WIDTHS } from './a11y';
import { launchChromium, phoneContext, type Recorder, signIn } from './browser';
import { call, newClient, readAll, stackEnv, type TestClient, waitForBridgeIdle } from './stack-client';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

let apiUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let owner: TestClient;
let batchId: string;
let images: ImageAnswer[];
const recorder: Recorder = { urls: [], errors: [], failures: [] };

/** axe-core's violations of the page as it stands, at both widths (a screenshot of each); `name` says which state. */
async function expectNoViolations(name: string): Promise<void> {
  expect([name, await accessibilityFindings(page, name)]).toEqual([name, []]);
}

const focused = () =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return {
      tag: el?.tagName ?? null,
      id: el?.id ?? '',
      fprint: el?.dataset.fprint ?? null,
      inMain: !!el?.closest('#main'),
      text: el?.textContent ?? '',
    };
  });

/** Waits until the focused element is the card of `fprint`. */
const focusOnCard = (fprint: string) =>
  page.waitForFunction((f) => (document.activeElement as HTMLElement | null)?.dataset.fprint === f, fprint, { timeout: 30_000 });

/** Signs the owner in unless the page already is. */
async function signedIn(): Promise<void> {
  await page.goto(`${apiUrl}/`);
  await page.locator('#batches-title, #api-key').first().waitFor();
  if ((await page.locator('#api-key').count()) > 0) await signIn(page, apiUrl, owner.key);
}

async function openBatch(filter = ''): Promise<void> {
  await page.goto(`${apiUrl}/#/batches/${batchId}${filter ? `?filter=${filter}` : ''}`);
  await page.locator('#batch-title').waitFor();
}

beforeAll(async () => {
  apiUrl = stackEnv('ICECAT_API_URL');
  owner = await newClient('web-a11y');
  const cat = fixture('chelsea.png');
  // A tabby on a light floor, the same cat in the dark, dark photos, a file that is no image, an exact duplicate.
  const files = [
    { name: 'chelsea.png', type: 'image/png', body: cat },
    { name: 'cat_kitten_boxed.jpg', type: 'image/jpeg', body: await sharp(cat).jpeg({ quality: 80 }).toBuffer() },
    { name: 'dark_cat.png', type: 'image/png', body: await sharp(cat).linear(0.3, 0).png().toBuffer() },
    { name: 'camera.png', type: 'image/png', body: fixture('camera.png') },
    { name: 'brick.png', type: 'image/png', body: fixture('brick.png') },
    { name: 'gravel.png', type: 'image/png', body: fixture('gravel.png') },
    { name: 'neg_bus.jpg', type: 'image/jpeg', body: fixture('rocket.jpg') },
    { name: 'coffee.png', type: 'image/png', body: fixture('coffee.png') },
    { name: 'notes.png', type: 'image/png', body: Buffer.from('these are notes, not pixels') },
    { name: 'chelsea copy.png', type: 'image/png', body: cat },
  ];
  const created = await call('POST', '/v1/batches', owner.key, {
    debug: true,
    files: files.map((f) => ({ name: f.name, contentType: f.type, size: f.body.length })),
  });
  if (created.status !== 201 && created.status !== 200) throw new Error(`POST /v1/batches answered ${created.status}`);
  batchId = created.body.batchId as string;
  const forms = created.body.uploads as UploadForm[];
  for (const f of files) {
    const status = await postForm(forms.find((form) => form.file === f.name)!, f.body, f.type);
    if (status >= 300) throw new Error(`upload answered ${status}`);
    await waitForBridgeIdle(120_000);
  }
  images = await readAll<ImageAnswer>(`/v1/batches/${batchId}/images`, owner.key);
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
}, 240_000);

afterAll(async () => {
  await browser?.close();
});

describe('the sign-in page, by axe-core (WCAG 2.2 AA and best practice) at 1280 and 375 px', () => {
  it('sign-in, and sign-in with its error', async () => {
    await page.goto(`${apiUrl}/`);
    await page.getByLabel('API key').waitFor();
    const description = await page.locator('meta[name="description"]').getAttribute('content');
    await expectNoViolations('sign-in');
    await page.getByLabel('API key').fill('not-a-key-of-anyone');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#sign-in-error').waitFor({ timeout: 30_000 });
    await expectNoViolations('sign-in-error');

    expect(description).toMatch(/\bcats?\b/i);
  });
});

describe('the web app signed in, by axe-core (WCAG 2.2 AA and best practice) at 1280 and 375 px', () => {
  beforeAll(signedIn);

  it('the batch list', async () => {
    await page.goto(`${apiUrl}/#/`);
    await page.locator('.batch-row').first().waitFor();
    await expectNoViolations('batches');
  });

  it.each(['all', 'cats', 'not-cats', 'failed', 'duplicates'])('a batch under the filter %s', async (filter) => {
    await openBatch(filter === 'all' ? '' : filter);
    await page.locator('.grid[aria-busy="false"]').waitFor({ timeout: 30_000 });
    await page.locator('a.card').first().waitFor();
    await expectNoViolations(`batch-${filter}`);
  });

  it("a card's cat badge, at 3:1 or more against the photo around it", async () => {
    await openBatch('cats');
    await page.locator('.grid[aria-busy="false"]').waitFor({ timeout: 30_000 });
    await page.setViewportSize(WIDTHS[0]!);
    const measured: Record<string, number> = {};
    for (const card of await page.locator('a.card:has(.badge-cat)').all()) {
      await card.locator('.thumb img').evaluate((el: HTMLImageElement) => el.decode());
      const badge = card.locator('.badge-cat');
      measured[(await card.locator('.card-name').textContent())!] = await contrastAgainstPhoto(card, badge, badge, {
        sides: [6],
        margin: 4,
      });
    }

    expect(Object.keys(measured).length).toBeGreaterThanOrEqual(2);
    for (const [name, ratio] of Object.entries(measured)) expect([name, ratio >= 3]).toEqual([name, true]);
  });

  it('near-duplicates', async () => {
    await openBatch('near-duplicates');
    await page.locator('#near-title').waitFor({ timeout: 30_000 });
    await expectNoViolations('near-duplicates');
  });

  it('an image of a cat, its boxes drawn in two tones, at 3:1 or more against the photo on either side all round', async () => {
    const measured: Record<string, number> = {};
    for (const name of ['chelsea.png', 'cat_kitten_boxed.jpg', 'dark_cat.png']) {
      const image = images.find((i) => i.fileName === name || (name === 'chelsea.png' && i.fileName === 'chelsea copy.png'));
      if (!image?.isCat) continue;
      await page.goto(`${apiUrl}/#/batches/${batchId}/images/${image.fprint}`);
      await page.locator('#image-title').waitFor();
      await page.locator('.frame img:not(.preview)').evaluate((el: HTMLImageElement) => el.decode());
      await page.locator('.frame img.preview').waitFor({ state: 'detached' });
      await expectNoViolations(`image-${name.replace(/\W/g, '-')}`);
      await page.setViewportSize(WIDTHS[0]!);
      const boxes = page.locator('svg.boxes');
      measured[name] = await contrastAgainstPhoto(page.locator('.frame'), boxes, boxes.locator('rect.cat-box').first());
    }
    const dark = await page.locator('svg.boxes rect.cat-box-dark').count();
    const light = await page.locator('svg.boxes rect.cat-box').count();

    expect([dark, light >= 1]).toEqual([light, true]);
    expect(Object.keys(measured).length).toBeGreaterThanOrEqual(2);
    for (const [name, ratio] of Object.entries(measured)) expect([name, ratio >= 3]).toEqual([name, true]);
  });

  it('a failed image', async () => {
    const failed = images.find((i) => i.status === 'fail')!;
    await page.goto(`${apiUrl}/#/batches/${batchId}/images/${failed.fprint}`);
    await page.locator('#image-title').waitFor();
    await expectNoViolations('image-failed');
  });

  it('a new batch, with files chosen', async () => {
    await page.goto(`${apiUrl}/#/new`);
    await page.locator('#new-title').waitFor();
    await expectNoViolations('new-batch');
    await page.setInputFiles('#file-input', [{ name: 'cat_kitten_boxed.jpg', mimeType: 'image/png', buffer: fixture('chelsea.png') }]);
    await page.locator('.upload-list li').waitFor();
    await expectNoViolations('new-batch-chosen');
  });

  it('logs', async () => {
    await page.goto(`${apiUrl}/#/batches/${batchId}/logs`);
    await page.locator('.log-entry').first().waitFor({ timeout: 30_000 });
    await expectNoViolations('logs');
  });

  it('the manage panel and the delete dialog', async () => {
    await openBatch();
    await page.locator('.actions details').waitFor();
    if (!(await page.locator('.actions details').evaluate((el) => (el as HTMLDetailsElement).open)))
      await page.getByText('Manage batch', { exact: true }).click();
    await page.getByRole('button', { name: 'Delete batch…' }).waitFor();
    await expectNoViolations('manage');
    await page.getByRole('button', { name: 'Delete batch…' }).click();
    await page.getByRole('dialog').waitFor();
    await expectNoViolations('delete-dialog');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
  });

  it('finds what is planted: an image without a text alternative, at both widths (the check can fail)', async () => {
    // Arrange
    await openBatch();
    await page.evaluate(() => {
      (document.querySelector('#main') as HTMLElement).insertAdjacentHTML('beforeend', '<img id="planted-img" src="/favicon.ico">');
    });

    // Act
    const found = await accessibilityFindings(page, 'planted');

    // Assert
    expect(found).toEqual(['1280px image-alt: #planted-img', '375px image-alt: #planted-img']);
  });
});

describe('the web app by keyboard', () => {
  beforeAll(signedIn);

  it('skips to the content: focus moves into the main region, the route stays', async () => {
    // A fresh load: nothing focused yet.
    await page.goto('about:blank');
    await openBatch('cats');
    await page.locator('a.card').first().waitFor();
    const before = page.url();
    await page.keyboard.press('Tab');
    const skip = await focused();
    await page.keyboard.press('Enter');
    const after = await focused();

    expect(skip.text).toBe('Skip to content');
    expect(after.inMain).toBe(true);
    expect(page.url()).toBe(before);
    expect(await page.locator('#batch-title').count()).toBe(1);
    expect(await page.locator('#batches-title').count()).toBe(0);
  });

  it("focuses a new page's heading, and brings focus and scroll back to the card that opened it (Escape, breadcrumb, back button)", async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    await openBatch();
    await page.locator('.grid[aria-busy="false"]').waitFor({ timeout: 30_000 });
    const card = page.locator('a.card').last();
    const fprint = (await card.getAttribute('data-fprint'))!;
    const batchTitle = await page.title();
    const back = async (how: () => Promise<unknown>) => {
      await card.focus();
      const y = await page.evaluate(() => scrollY);
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.activeElement?.id === 'image-title', undefined, { timeout: 30_000 });
      const onImage = { focus: await focused(), title: await page.title(), y: await page.evaluate(() => scrollY) };
      await how();
      await focusOnCard(fprint);
      // The batch view restores its scroll once its grid has laid out again, a frame or more after focus lands on a
      // busy machine: wait for it (a page that never restores still fails below).
      await page.waitForFunction((was) => Math.abs(scrollY - was) <= 2, y, { timeout: 10_000 }).catch(() => undefined);
      return { y, onImage, after: { y: await page.evaluate(() => scrollY), title: await page.title() } };
    };

    const escape = await back(() => page.keyboard.press('Escape'));
    const crumb = await back(async () => {
      await page.locator('.crumbs a').nth(1).focus();
      await page.keyboard.press('Enter');
    });
    const browserBack = await back(() => page.goBack());
    await page.keyboard.press('Shift+Tab');
    const previous = await focused();

    for (const way of [escape, crumb, browserBack]) {
      expect(way.y).toBeGreaterThan(200);
      expect(way.onImage.focus.tag).toBe('H1');
      expect(way.onImage.title).not.toBe(batchTitle);
      expect(way.onImage.y).toBe(0);
      expect(Math.abs(way.after.y - way.y)).toBeLessThanOrEqual(2);
      expect(way.after.title).toBe(batchTitle);
    }
    // One key from the card it came back to: the card before it.
    expect(previous.fprint).toBe(await page.locator('a.card').nth(-2).getAttribute('data-fprint'));
  }, 120_000);

  it('draws the focus indicator at 3:1 or more against what surrounds it, in the header and on the page', async () => {
    await openBatch();
    await page.locator('a.card').first().waitFor();
    const selectors = [
      '.brand',
      '.top nav a',
      '.top nav button',
      '.crumbs a',
      '.toolbar button',
      '.actions summary',
      '.filters a',
      'a.card',
    ];
    const ratios: Record<string, number> = {};
    for (const selector of selectors) {
      await page.locator(selector).first().focus();
      ratios[selector] = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement;
        const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
        const lum = ([r, g, b]: number[]) =>
          [r!, g!, b!]
            .map((v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
            .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i]!, 0);
        let around = el.parentElement;
        while (
          around &&
          (rgb(getComputedStyle(around).backgroundColor)[3] === 0 || getComputedStyle(around).backgroundColor === 'transparent')
        )
          around = around.parentElement;
        const bg = lum(rgb(around ? getComputedStyle(around).backgroundColor : 'rgb(255, 255, 255)'));
        const style = getComputedStyle(el);
        if (!el.matches(':focus-visible') || style.outlineStyle === 'none' || parseFloat(style.outlineWidth) < 2) return 0;
        const fg = lum(rgb(style.outlineColor));
        return Math.round(((Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)) * 100) / 100;
      });
    }

    expect(Object.entries(ratios).filter(([, r]) => r < 3)).toEqual([]);
  });

  it('names each card once: its thumbnail adds no name of its own', async () => {
    await openBatch();
    await page.locator('.grid[aria-busy="false"]').waitFor({ timeout: 30_000 });
    const cards = await page.locator('a.card').evaluateAll((links) =>
      links.map((a) => ({
        alts: [...a.querySelectorAll('img')].map((i) => i.alt),
        named: a.querySelectorAll('[aria-label],[role="img"]').length,
        name: a.querySelector('.card-name')?.textContent ?? '',
      })),
    );
    const text = await page.locator('a.card').allTextContents();

    expect(cards.every((c) => c.alts.every((alt) => alt === '') && c.named === 0)).toBe(true);
    for (const [i, t] of text.entries()) expect(t.split(cards[i]!.name).length - 1).toBe(1);
    // A card badged a cat lists the Cat label.
    const catCards = await page.locator('a.card:has(.badge-cat) .card-labels').allTextContents();
    expect(catCards.length).toBeGreaterThan(0);
    expect(catCards.every((l) => l.split(', ')[0] === 'Cat')).toBe(true);
  });

  it('wraps file names only after / _ - or ., never inside a word', async () => {
    const image = images.find((i) => i.fileName === 'cat_kitten_boxed.jpg')!;
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${apiUrl}/#/batches/${batchId}/images/${image.fprint}`);
    await page.locator('#image-title').waitFor();
    const lines = await page.locator('#image-title').evaluate((h) => {
      // The heading squeezed to 8em: the name must wrap, and may only where a separator ends a part.
      (h as HTMLElement).style.width = '8em';
      const out: string[] = [];
      const walker = document.createTreeWalker(h, NodeFilter.SHOW_TEXT);
      let top: number | null = null;
      let line = '';
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (let i = 0; i < (n.textContent ?? '').length; i++) {
          const r = document.createRange();
          r.setStart(n, i);
          r.setEnd(n, i + 1);
          const t = Math.round(r.getBoundingClientRect().top);
          if (top !== null && t > top + 2) {
            out.push(line);
            line = '';
          }
          top = t;
          line += n.textContent![i];
        }
      }
      out.push(line);
      return out;
    });

    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join('')).toBe('cat_kitten_boxed.jpg');
    for (const l of lines.slice(0, -1)) expect(l).toMatch(/[/_.-]$/);
  });
});
