// Review mode (DESIGN §10, issue 17) in Debian's Chromium against the local stack the jest global setup started: a
// person goes through a batch by keyboard alone — the queue uncertain first, y / n / u / →, progress, announcements —
// then re-thresholds from the agreement in one click; by touch at 375 px; on an image's own page; with axe-core, the
// boxes' contrast against the photo, and screenshots at a desktop's and a phone's width.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import type { Agreement, Image } from '../../lib/api/client-contract';
import type { UploadForm } from '../../lib/api/schemas/batches';
import { postForm } from '../helpers/upload-form';
import { accessibilityFindings, contrastAgainstPhoto, WIDTHS } from './a11y';
import { launchChromium, phoneContext, type Recorder, screenshot, scrollWidth, signIn } from './browser';
import { call, detectCalls, newClient, readAll, stackEnv, type TestClient, waitForBridgeIdle } from './stack-client';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let apiUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let owner: TestClient;
const recorder: Recorder = { urls: [], errors: [], failures: [] };

interface Summary {
  status: string;
  catMinConfidence: number | null;
  counts: { success: number; cats: number; reviewed: number; corrected: number; duplicate: number; fail: number };
}

/**
 * The photos again with other pixels (a column wider) for each batch after the first: a verdict is carried to the
 * client's later batches holding the same pixels (§10), which would then have nothing to review.
 */
let generation = 0;
const fresh = async (files: { name: string; type: string; body: Buffer }[]) => {
  const n = generation++;
  if (n === 0) return files;
  return Promise.all(
    files.map(async (f) => ({
      ...f,
      type: 'image/png',
      body: await sharp(f.body).extend({ right: n, background: '#808080' }).png().toBuffer(),
    })),
  );
};

/** A batch of the owner's, uploaded through its presigned forms one file after the other, and done; its id. */
async function uploadBatch(photos: { name: string; type: string; body: Buffer }[]): Promise<string> {
  const files = await fresh(photos);
  const created = await call('POST', '/v1/batches', owner.key, {
    files: files.map((f) => ({ name: f.name, contentType: f.type, size: f.body.length })),
  });
  if (created.status !== 201) throw new Error(`POST /v1/batches answered ${created.status}`);
  const forms = created.body.uploads as UploadForm[];
  for (const f of files) {
    const status = await postForm(forms.find((form) => form.file === f.name)!, f.body, f.type);
    if (status >= 300) throw new Error(`upload answered ${status}`);
    await waitForBridgeIdle(120_000);
  }
  return created.body.batchId as string;
}

const images = (batchId: string) => readAll<Image>(`/v1/batches/${batchId}/images`, owner.key);
const summary = async (batchId: string) => (await call<Summary>('GET', `/v1/batches/${batchId}`, owner.key)).body;
const agreement = async (batchId: string) => (await call<Agreement>('GET', `/v1/batches/${batchId}/agreement`, owner.key)).body;
const imageOf = async (batchId: string, fprint: string) =>
  (await call<Image>('GET', `/v1/batches/${batchId}/images/${fprint}`, owner.key)).body;
/** The review queue as the API lists it, every page. */
async function queueOrder(batchId: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const query = `review=pending&order=uncertain&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await call<{ items: Image[]; cursor?: string }>('GET', `/v1/batches/${batchId}/images?${query}`, owner.key);
    names.push(...page.body.items.map((i) => i.fileName!));
    cursor = page.body.cursor;
  } while (cursor);
  return names;
}

/** The file name review mode shows now (its heading), once the queue has one. */
const shown = async () => (await page.locator('#review-current').textContent({ timeout: 30_000 }))!;
const progressText = () => page.locator('.review-progress .progress-text').textContent();
const said = () => page.locator('.review-said [role="status"]').textContent();
const focused = () =>
  page.evaluate(() => ({
    id: document.activeElement?.id ?? '',
    tag: document.activeElement?.tagName ?? '',
    inMain: !!document.activeElement?.closest('#main'),
  }));
/** Until the page shows another image than `name` (or the end of the queue). */
const movedFrom = (name: string) =>
  page.waitForFunction(
    (n) => document.querySelector('#review-end') !== null || document.querySelector('#review-current')?.textContent !== n,
    name,
    { timeout: 30_000 },
  );
/** Until every verdict sent has been answered and the counts read again: the progress says `n` of all. */
const reviewedShows = (n: number) =>
  page
    .locator('.review-progress[aria-busy="false"] .progress-text')
    .filter({ hasText: new RegExp(`^${n} of \\d+ reviewed$`) })
    .waitFor({ timeout: 30_000 });

/** Screenshots at the phone's width and a desktop's; at 375 px the page never scrolls sideways. */
async function shoot(name: string): Promise<void> {
  await page.setViewportSize(WIDTHS[1]!);
  await screenshot(page, `review-${name}`);
  expect([name, await scrollWidth(page)]).toEqual([name, expect.any(Number)]);
  expect(await scrollWidth(page)).toBeLessThanOrEqual(375);
  await page.setViewportSize(WIDTHS[0]!);
  await screenshot(page, `review-${name}-desktop`);
  await page.setViewportSize(WIDTHS[1]!);
}

/** Review mode of the batch, read afresh (by way of the batch: the same address again would not reload it). */
async function openReview(batchId: string): Promise<void> {
  await page.goto(`${apiUrl}/#/batches/${batchId}`);
  await page.locator('#batch-title').waitFor();
  await page.goto(`${apiUrl}/#/batches/${batchId}/review`);
  await page.locator('#review-current, #review-end').first().waitFor({ timeout: 30_000 });
}

beforeAll(async () => {
  apiUrl = stackEnv('ICECAT_API_URL');
  owner = await newClient('web-review');
  browser = await launchChromium();
  context = await phoneContext(browser, recorder);
  page = await context.newPage();
  await signIn(page, apiUrl, owner.key);
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe('review mode by keyboard alone', () => {
  let batchId: string;
  /** Each distinct image's verdict: the detector's, but for its least sure cat, which the person says is not one. */
  const verdicts = new Map<string, boolean>();
  let doubtful: Image;
  let classified: number;
  let order: string[];

  beforeAll(async () => {
    const cat = fixture('chelsea.png');
    batchId = await uploadBatch([
      { name: 'chelsea.png', type: 'image/png', body: cat },
      { name: 'dark_cat.png', type: 'image/png', body: await sharp(cat).linear(0.3, 0).png().toBuffer() },
      { name: 'grey_cat.png', type: 'image/png', body: await sharp(cat).greyscale().png().toBuffer() },
      { name: 'coffee.png', type: 'image/png', body: fixture('coffee.png') },
      { name: 'camera.png', type: 'image/png', body: fixture('camera.png') },
      { name: 'astronaut.png', type: 'image/png', body: fixture('astronaut.png') },
      { name: 'notes.png', type: 'image/png', body: Buffer.from('these are notes, not pixels') },
      { name: 'chelsea copy.png', type: 'image/png', body: cat },
    ]);
    await call('POST', `/v1/batches/${batchId}:close`, owner.key, {});
    const all = (await images(batchId)).filter((i) => i.status === 'success');
    const cats = all.filter((i) => i.machineIsCat).sort((a, b) => (a.catConfidence ?? 0) - (b.catConfidence ?? 0));
    doubtful = cats[0]!;
    for (const i of all) verdicts.set(i.fileName!, i.fprint === doubtful.fprint ? false : i.machineIsCat === true);
    classified = all.length;
    order = await queueOrder(batchId);
  }, 240_000);

  it('opens from the batch: focus on its heading, "0 of N reviewed", the image nearest the threshold first, large, its boxes drawn', async () => {
    const batch = await summary(batchId);
    await page.goto(`${apiUrl}/#/batches/${batchId}`);
    const link = page.getByRole('link', { name: 'Review', exact: true });
    await link.focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'review-title', undefined, { timeout: 30_000 });
    const first = await shown();
    await page.locator('svg.review-frame').waitFor();
    const frame = await page.locator('svg.review-frame').boundingBox();
    const boxes = await page.locator('svg.review-frame rect.cat-box').count();
    const title = await page.title();
    await shoot('first');

    expect([batch.status, batch.counts.success, batch.counts.reviewed]).toEqual(['done', classified, 0]);
    expect(classified).toBeGreaterThanOrEqual(5);
    expect(order.length).toBe(classified);
    expect(first).toBe(order[0]);
    expect(await progressText()).toBe(`0 of ${classified} reviewed`);
    expect(title).toBe(`Review ${batchId} · IceCatWrangler`);
    // One image large: the full width of the phone's content column.
    expect(frame!.width).toBeGreaterThanOrEqual(340);
    expect(boxes).toBe((await images(batchId)).find((i) => i.fileName === first)!.cats!.filter((c) => c.box).length);
  });

  it('y and n give verdicts, stored by the API: the next image, progress and an announcement, focus kept', async () => {
    const a = await shown();
    await page.keyboard.press(verdicts.get(a) ? 'y' : 'n');
    await movedFrom(a);
    const b = await shown();
    const afterA = await said();
    await page.keyboard.press(verdicts.get(b) ? 'y' : 'n');
    await movedFrom(b);
    await reviewedShows(2);
    const fprints = new Map((await images(batchId)).map((i) => [i.fileName, i.fprint]));
    const [reviewA, reviewB] = await Promise.all([imageOf(batchId, fprints.get(a)!), imageOf(batchId, fprints.get(b)!)]);

    expect([a, b, await shown()]).toEqual(order.slice(0, 3));
    expect(afterA).toMatch(
      new RegExp(
        `^${esc(a)}: ${verdicts.get(a) ? 'cat' : 'not a cat'}\\. 1 of ${classified} reviewed\\. Now: ${esc(b)}, the detector says (a cat|not a cat)`,
      ),
    );
    expect([reviewA.review?.isCat, reviewB.review?.isCat]).toEqual([verdicts.get(a), verdicts.get(b)]);
    expect([reviewA.isCat, reviewB.isCat]).toEqual([verdicts.get(a), verdicts.get(b)]);
    expect((await summary(batchId)).counts.reviewed).toBe(2);
    expect(await focused()).toMatchObject({ id: 'review-title' });
  });

  it('u takes the last verdict back: that image is shown again and unreviewed in the API', async () => {
    const next = await shown();
    await page.keyboard.press('u');
    await page.locator('#review-current').filter({ hasText: order[1]! }).waitFor();
    await reviewedShows(1);
    const fprint = (await images(batchId)).find((i) => i.fileName === order[1])!.fprint;
    const undone = await imageOf(batchId, fprint);

    expect(next).toBe(order[2]);
    expect(await said()).toMatch(
      new RegExp(
        `^Undone: ${esc(order[1]!)} is unreviewed again\\. 1 of ${classified} reviewed\\. Now: ${esc(order[1]!)}, the detector says`,
      ),
    );
    expect(undone.review).toBeNull();
    expect(undone.isCat).toBe(undone.machineIsCat);
    expect((await summary(batchId)).counts.reviewed).toBe(1);
  });

  it('single-letter keys can be turned off (WCAG 2.1.4): y then judges nothing; → still skips', async () => {
    const toggle = page.getByLabel('Single-letter keys (Y, N, U)');
    await toggle.focus();
    await page.keyboard.press('Space');
    await page.keyboard.press('y');
    const still = await shown();
    const off = await toggle.isChecked();
    await toggle.focus();
    await page.keyboard.press('Space');
    const on = await toggle.isChecked();
    await page.locator('#review-title').focus();

    expect([off, on]).toEqual([false, true]);
    expect(still).toBe(order[1]);
    expect((await summary(batchId)).counts.reviewed).toBe(1);
  });

  it('→ skips: the image stays unreviewed, and is offered again once the rest are judged', async () => {
    const skipped = await shown();
    await page.keyboard.press('ArrowRight');
    await movedFrom(skipped);
    const skipSaid = await said();
    // The rest, each by its key, to the end of the queue; the last by its button, which the end of the queue removes.
    const seen: string[] = [];
    for (let left = order.length - 2; left > 0; left--) {
      const name = await shown();
      seen.push(name);
      if (left > 1) {
        await page.keyboard.press(verdicts.get(name) ? 'y' : 'n');
      } else {
        await page.getByRole('button', { name: verdicts.get(name) ? 'Cat' : 'Not a cat', exact: true }).focus();
        await page.keyboard.press('Enter');
      }
      await movedFrom(name);
    }
    await page.locator('#review-end').waitFor();
    await reviewedShows(classified - 1);
    await page.waitForFunction(() => document.activeElement !== document.body, undefined, { timeout: 30_000 });
    const endFocus = await focused();
    const endTitle = await page.locator('#review-end').textContent();
    const endSaid = await said();
    await shoot('skipped-left');
    await page.getByRole('button', { name: 'Review the 1 skipped image' }).focus();
    await page.keyboard.press('Enter');
    const again = await shown();
    await page.keyboard.press(verdicts.get(again) ? 'y' : 'n');
    await page.locator('#review-end').filter({ hasText: 'Every image is reviewed' }).waitFor();
    await reviewedShows(classified);

    expect(skipped).toBe(order[1]);
    expect(skipSaid).toMatch(new RegExp(`^Skipped ${skipped.replace('.', '\\.')}\\. 1 of ${classified} reviewed\\.`));
    expect(seen).toEqual(order.slice(2));
    expect(endTitle).toBe('Only skipped images left');
    expect(endFocus.id).toBe('review-end');
    expect(endSaid).toMatch(/ Only the skipped image is left\.$/);
    expect(again).toBe(skipped);
    // Focus follows the last verdict's image out of the page to the end's heading.
    expect(
      await page.waitForFunction(() => document.activeElement?.id === 'review-end', undefined, { timeout: 30_000 }).then(() => true),
    ).toBe(true);
    expect(await queueOrder(batchId)).toEqual([]);
  }, 120_000);

  it("shows the API's agreement and re-thresholds at the suggested threshold in one click, with no DetectLabels call", async () => {
    const before = await agreement(batchId);
    const batchBefore = await summary(batchId);
    const calls = await detectCalls();
    const panel = page.getByRole('region', { name: 'Agreement' });
    const suggested = `${Math.round(before.suggestedCatMinConfidence! * 100) / 100}%`;
    const button = panel.getByRole('button', { name: `Re-threshold at ${suggested}` });
    await button.waitFor();
    const text = await panel.textContent();
    await shoot('agreement');
    await button.focus();
    await page.keyboard.press('Enter');
    await panel
      .getByRole('status')
      .filter({ hasText: `Cat threshold ${suggested}` })
      .waitFor({ timeout: 30_000 });
    const after = await summary(batchId);
    const agreed = await agreement(batchId);
    await panel.getByText('The threshold already agrees best with the reviews.').waitFor();
    const focusAfter = await focused();
    await shoot('rethresholded');
    const doubtfulAfter = await imageOf(batchId, doubtful.fprint);

    // The hand count: one correction among the reviews, the machine agreeing with all the others.
    expect(before).toMatchObject({ reviewed: classified, agree: classified - 1 });
    expect(batchBefore.counts).toMatchObject({ reviewed: classified, corrected: 1 });
    expect(before.suggestedCatMinConfidence).not.toBe(batchBefore.catMinConfidence);
    expect(before.suggestedCatMinConfidence!).toBeGreaterThan(doubtful.catConfidence!);
    expect(text).toContain(`The detector agreed with ${classified - 1} of ${classified} reviews`);
    expect(after.catMinConfidence).toBe(before.suggestedCatMinConfidence);
    expect(agreed).toMatchObject({ reviewed: classified, agree: classified });
    expect(after.counts).toMatchObject({ reviewed: classified, corrected: 0 });
    expect(doubtfulAfter).toMatchObject({ isCat: false, machineIsCat: false, review: { isCat: false } });
    expect(focusAfter.id).toBe('agreement-title');
    expect(await detectCalls()).toBe(calls);
  }, 60_000);

  it('Escape leads back to the batch, focus on the Review link that opened it; the counts say reviewed and corrected', async () => {
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.activeElement?.textContent === 'Review', undefined, { timeout: 30_000 });

    expect(new URL(page.url()).hash).toBe(`#/batches/${batchId}`);
    // The batch view first shows the summary it last read (so the page keeps its place), then the fresh one.
    const counts = `${classified} reviewed, 0 corrected`;
    await page.waitForFunction((want) => document.querySelector('.summary .counts')?.textContent?.includes(want), counts, {
      timeout: 30_000,
    });
    expect(await page.locator('.summary .counts').textContent()).toContain(counts);
  });
});

describe('review mode by touch, at 375 px', () => {
  let batchId: string;

  beforeAll(async () => {
    batchId = await uploadBatch([
      { name: 'chelsea.png', type: 'image/png', body: fixture('chelsea.png') },
      { name: 'coffee.png', type: 'image/png', body: fixture('coffee.png') },
      { name: 'rocket.png', type: 'image/png', body: fixture('rocket.jpg') },
    ]);
    await call('POST', `/v1/batches/${batchId}:close`, owner.key, {});
  }, 120_000);

  it('the buttons give, undo and skip verdicts, each at least 44 px tall', async () => {
    await page.setViewportSize(WIDTHS[1]!);
    await openReview(batchId);
    const verdicts = page.getByRole('group', { name: 'Verdict' });
    const heights = await verdicts.getByRole('button').evaluateAll((bs) => bs.map((b) => Math.round(b.getBoundingClientRect().height)));
    const first = await shown();
    await verdicts.getByRole('button', { name: 'Cat', exact: true }).click();
    await movedFrom(first);
    const second = await shown();
    await verdicts.getByRole('button', { name: 'Skip' }).click();
    await movedFrom(second);
    await verdicts.getByRole('button', { name: 'Undo' }).click();
    await page.locator('#review-current').filter({ hasText: first }).waitFor();
    await verdicts.getByRole('button', { name: 'Not a cat' }).click();
    await movedFrom(first);
    await reviewedShows(1);
    await shoot('touch');
    const reviewed = (await images(batchId)).filter((i) => i.review).map((i) => [i.fileName, i.review!.isCat]);

    expect(heights.length).toBe(4);
    expect(heights.every((h) => h >= 44)).toBe(true);
    expect(reviewed).toEqual([[first, false]]);
  }, 60_000);
});

describe("an image's own page", () => {
  it("gives, changes and withdraws the person's verdict; the batch's review queue follows", async () => {
    const batchId = await uploadBatch([
      { name: 'chelsea.png', type: 'image/png', body: fixture('chelsea.png') },
      { name: 'coffee.png', type: 'image/png', body: fixture('coffee.png') },
    ]);
    const coffee = (await images(batchId)).find((i) => i.fileName === 'coffee.png')!;
    await page.goto(`${apiUrl}/#/batches/${batchId}/images/${coffee.fprint}`);
    const panel = page.getByRole('region', { name: 'Verdict' });
    await panel.waitFor({ timeout: 30_000 });
    const before = await panel.textContent();
    await panel.getByRole('button', { name: 'Cat', exact: true }).click();
    await panel.getByRole('status').filter({ hasText: 'Your verdict: a cat.' }).waitFor();
    const given = await imageOf(batchId, coffee.fprint);
    const pendingWhileGiven = await queueOrder(batchId);
    const pressed = await panel.getByRole('button', { name: 'Cat', exact: true }).getAttribute('aria-pressed');
    const badge = await page.locator('.title-row .badge-cat').textContent();
    await shoot('image-verdict');
    await panel.getByRole('button', { name: 'Not a cat' }).click();
    await panel.getByRole('status').filter({ hasText: 'Your verdict: not a cat.' }).waitFor();
    const changed = await imageOf(batchId, coffee.fprint);
    await panel.getByRole('button', { name: 'Withdraw my verdict' }).click();
    await panel.getByRole('status').filter({ hasText: 'Verdict withdrawn' }).waitFor();
    const withdrawn = await imageOf(batchId, coffee.fprint);

    expect(before).toContain('No person’s verdict yet.');
    expect(given).toMatchObject({ isCat: true, machineIsCat: false, review: { isCat: true } });
    expect(pressed).toBe('true');
    expect(badge).toBe('Cat, reviewed');
    expect(changed).toMatchObject({ isCat: false, review: { isCat: false } });
    expect(pendingWhileGiven).not.toContain('coffee.png');
    expect(withdrawn).toMatchObject({ isCat: false, review: null });
    expect(await queueOrder(batchId)).toContain('coffee.png');
    expect(await focused()).toMatchObject({ id: 'verdict-title' });
  }, 120_000);
});

describe('review mode, by axe-core (WCAG 2.2 AA and best practice) at 1280 and 375 px', () => {
  let batchId: string;

  beforeAll(async () => {
    const cat = fixture('chelsea.png');
    batchId = await uploadBatch([
      { name: 'chelsea.png', type: 'image/png', body: cat },
      { name: 'dark_cat.png', type: 'image/png', body: await sharp(cat).linear(0.3, 0).png().toBuffer() },
      { name: 'coffee.png', type: 'image/png', body: fixture('coffee.png') },
    ]);
    await call('POST', `/v1/batches/${batchId}:close`, owner.key, {});
  }, 120_000);

  it('each state: an image with its boxes, after a verdict with the agreement, the end of the queue', async () => {
    await openReview(batchId);
    await page.locator('svg.review-frame').waitFor();
    const first = await accessibilityFindings(page, 'review-image');
    const name = await shown();
    await page.keyboard.press('n');
    await movedFrom(name);
    await reviewedShows(1);
    await page.getByRole('region', { name: 'Agreement' }).getByText('The detector agreed').waitFor();
    const judged = await accessibilityFindings(page, 'review-agreement');
    while ((await page.locator('#review-current').count()) > 0) {
      const next = await shown();
      await page.keyboard.press('y');
      await movedFrom(next);
    }
    await page.locator('#review-end').waitFor();
    const end = await accessibilityFindings(page, 'review-end');

    expect({ first, judged, end }).toEqual({ first: [], judged: [], end: [] });
  }, 60_000);

  it('draws the cat boxes in two tones, at 3:1 or more against the photo on either side all round', async () => {
    const measured: Record<string, number> = {};
    const boxed = (await images(batchId)).filter((i) => i.status === 'success' && i.cats?.some((c) => c.box));
    const boxedNames = new Set(boxed.map((i) => i.fileName));
    for (const image of boxed) await call('DELETE', `/v1/batches/${batchId}/images/${image.fprint}/review`, owner.key);
    await openReview(batchId);
    await page.setViewportSize(WIDTHS[0]!);
    while ((await page.locator('#review-current').count()) > 0) {
      const name = await shown();
      const boxes = page.locator('svg.review-frame g.review-boxes');
      // An image the API answers with boxes has them drawn once its photo is in: waited for, not counted at once.
      if (boxedNames.has(name)) await boxes.locator('rect.cat-box').first().waitFor();
      if ((await boxes.locator('rect.cat-box').count()) > 0) {
        measured[name] = await contrastAgainstPhoto(page.locator('svg.review-frame'), boxes, boxes.locator('rect.cat-box').first());
      }
      await page.keyboard.press('y');
      await movedFrom(name);
    }

    expect(Object.keys(measured).sort()).toEqual(boxed.map((i) => i.fileName).sort());
    expect(Object.keys(measured)).toContain('chelsea.png');
    for (const [name, ratio] of Object.entries(measured)) expect([name, ratio >= 3]).toEqual([name, true]);
  }, 60_000);
});

describe('a batch erased while it is reviewed', () => {
  let erased: string;

  it('says so: the verdict refused, the page names the batch gone, nothing left that would fail again', async () => {
    erased = await uploadBatch([
      { name: 'chelsea.png', type: 'image/png', body: fixture('chelsea.png') },
      { name: 'coffee.png', type: 'image/png', body: fixture('coffee.png') },
    ]);
    await call('POST', `/v1/batches/${erased}:close`, owner.key, {});
    await openReview(erased);
    await shown();
    const gone = await call('DELETE', `/v1/batches/${erased}`, owner.key);
    await page.locator('#review-title').focus();
    await page.keyboard.press('y');
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'any more: it was erased' }).waitFor({ timeout: 30_000 });
    await shoot('erased');

    expect(gone.status).toBe(202);
    expect(await alert.textContent()).toBe(`No batch named ${erased} for this key any more: it was erased.`);
    expect(await page.locator('.verdicts').count()).toBe(0);
  });

  it('sent no request bound to fail and logged no console error, but those the erasure refused', () => {
    const refused = (url: string) => new URL(url).pathname.startsWith(`/v1/batches/${erased}`);
    const expected = recorder.failures.filter((f) => refused(f.url));

    expect(recorder.failures.filter((f) => !refused(f.url))).toEqual([]);
    expect(expected.map((f) => [f.method, f.status])).toContainEqual(['PUT', 404]);
    expect(expected.every((f) => f.status === 404)).toBe(true);
    expect(recorder.errors.filter((e) => !(/status of 404/.test(e.text) && refused(e.url)))).toEqual([]);
  });
});
