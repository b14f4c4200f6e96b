// The web app's first screen of a 2,000-image batch: milliseconds from navigation until every card on the first
// screen has its thumbnail (or its placeholder) painted, in Debian's Chromium, against the local stack, at a phone's
// and a desktop's viewport; reported with the page's JavaScript size.
// The batch's 2,000 image items are written straight to DynamoDB in the ingest's item shape (classifying 2,000
// images with the offline detector takes ~20 minutes here, and only the read path is measured). Where the API
// answers thumbnailUrl for them, the cards wait for those images; without it they show placeholders.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildWebBundle, scriptSize } from '../scripts/build-web';
import { startStack } from '../local/stack';
import { seedBatch, type SeedImage } from '../test/helpers/api';
import { launchChromium } from '../test/browser/chromium';
import { median, percentile, round } from './stats';

const IMAGES = 2_000;
const ROUNDS = 7;
const VIEWPORTS = [
  { name: 'phone', width: 375, height: 812 },
  { name: 'desktop', width: 1280, height: 800 },
];

interface Rect {
  top: number;
  bottom: number;
}
interface Card {
  getBoundingClientRect(): Rect;
  querySelector(selector: string): (Card & { complete?: boolean; naturalWidth?: number }) | null;
}
/** The few page globals the probe reads (this file compiles without the DOM library). */
interface PageGlobals {
  document: { querySelectorAll(selector: string): ArrayLike<Card>; querySelector(selector: string): Card | null };
  innerHeight: number;
  performance: {
    now(): number;
    getEntriesByType(type: string): { name: string; domContentLoadedEventEnd?: number; requestStart?: number; responseEnd?: number }[];
  };
}

/**
 * Runs in the page on every frame: once the cards fill the first screen (or the batch has no more) and each
 * on-screen thumbnail has loaded, the timings of that moment.
 */
function firstScreenPainted() {
  const { document, innerHeight, performance } = globalThis as unknown as PageGlobals;
  const cards = Array.from(document.querySelectorAll('a.card'));
  const last = cards[cards.length - 1];
  if (!last) return false;
  const full = last.getBoundingClientRect().bottom >= innerHeight || document.querySelector('.grid[aria-busy="false"]') !== null;
  const onScreen = cards.filter((c) => c.getBoundingClientRect().top < innerHeight);
  const painted = onScreen.every((c) => c.querySelector('img')?.complete ?? true);
  if (!full || !painted) return false;
  const nav = performance.getEntriesByType('navigation')[0];
  const list = performance.getEntriesByType('resource').find((r) => /\/images\?/.test(r.name));
  return {
    firstScreenMs: performance.now(),
    domContentLoadedMs: nav?.domContentLoadedEventEnd ?? -1,
    imagesRequestMs: list ? (list.responseEnd ?? 0) - (list.requestStart ?? 0) : -1,
    cards: onScreen.length,
    thumbnails: onScreen.filter((c) => (c.querySelector('img')?.naturalWidth ?? 0) > 0).length,
  };
}

export default async function bench(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'icecat-bench-webapp-'));
  const stack = await startStack({ dataDir, quiet: true, detector: false, ports: { api: 0, s3: 0, dynamodb: 0, rekognition: 0, bridge: 0 } });
  const browser = await launchChromium();
  try {
    const key = stack.demoApiKey as string;
    const now = Date.now();
    const images: SeedImage[] = Array.from({ length: IMAGES }, (_, i) => ({
      fprint: `f${String(i).padStart(6, '0')}${'0'.repeat(25)}`,
      uploadTs: now - (IMAGES - i) * 1000,
      isCat: i % 3 === 0,
      fileName: `photo-${String(i).padStart(4, '0')}.jpg`,
      ...(i % 50 === 7 ? { status: 'fail' as const, error: { code: 'NotAnImage', message: 'not an image' } } : {}),
    }));
    const batchId = await seedBatch('demo', images, {
      n_total: IMAGES,
      n_success: images.filter((i) => !i.status).length,
      n_fail: images.filter((i) => i.status === 'fail').length,
      n_cats: images.filter((i) => i.isCat && !i.status).length,
      expected: IMAGES,
    });
    const url = `${stack.endpoints.api}/#/batches/${batchId}`;

    const results: Record<string, unknown> = {};
    for (const viewport of VIEWPORTS) {
      const samples: { firstScreenMs: number; domContentLoadedMs: number; imagesRequestMs: number; cards: number; thumbnails: number }[] = [];
      // One unmeasured round warms the API (its first request builds the page) and the browser's code cache.
      for (let round = 0; round <= ROUNDS; round++) {
        const context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
        // Signed in as the sign-in form leaves the tab: the key in sessionStorage.
        await context.addInitScript((k) => (globalThis as unknown as { sessionStorage: { setItem(n: string, v: string): void } }).sessionStorage.setItem('icecat.apiKey', k), key);
        const page = await context.newPage();
        await page.goto(url);
        const handle = await page.waitForFunction(firstScreenPainted, undefined, { polling: 'raf', timeout: 60_000 });
        const sample = (await handle.jsonValue()) as (typeof samples)[number];
        if (round > 0) samples.push(sample);
        await context.close();
      }
      const ms = samples.map((s) => s.firstScreenMs);
      results[viewport.name] = {
        viewport: `${viewport.width}x${viewport.height}`,
        firstScreenMsMedian: round(median(ms), 1),
        firstScreenMsP90: round(percentile(ms, 90), 1),
        domContentLoadedMsMedian: round(median(samples.map((s) => s.domContentLoadedMs)), 1),
        firstImagesPageMsMedian: round(median(samples.map((s) => s.imagesRequestMs)), 1),
        cardsOnFirstScreen: samples[0]?.cards,
        thumbnailImagesOnFirstScreen: samples[0]?.thumbnails,
      };
    }
    const size = scriptSize(await buildWebBundle());
    return {
      batchImages: IMAGES,
      rounds: ROUNDS,
      seeded: 'image items written straight to DynamoDB (no classification)',
      javascriptBytes: size.bytes,
      javascriptGzipBytes: size.gzipBytes,
      javascriptBudgetGzipBytes: 100 * 1024,
      ...results,
    };
  } finally {
    await browser.close();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
