// Debian's Chromium driven by playwright-core: no browser is ever downloaded (CI installs the `chromium` package).
// Each page records every request URL, console error and page error, so tests can assert on all of them.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';

export { launchChromium } from './chromium';

/** Where screenshots go (git-ignored): test-output/webapp/. */
export const SCREENSHOTS = path.resolve(__dirname, '..', '..', 'test-output', 'webapp');

export interface Recorder {
  /** Every URL any page of the context requested. */
  urls: string[];
  /** Console errors and uncaught page errors, with the URL they name when the browser gave one. */
  errors: { text: string; url: string }[];
  /** Every answer of 400 or more: method, URL, status. */
  failures: { method: string; url: string; status: number }[];
}

/** A context at a phone's width (375 px) whose pages record requests and errors. */
export async function phoneContext(browser: Browser, recorder: Recorder): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 375, height: 812 }, acceptDownloads: true });
  context.on('request', (req) => recorder.urls.push(req.url()));
  context.on('response', (res) => {
    if (res.status() >= 400) recorder.failures.push({ method: res.request().method(), url: res.url(), status: res.status() });
  });
  context.on('page', (page) => watch(page, recorder));
  return context;
}

function watch(page: Page, recorder: Recorder): void {
  page.on('console', (msg: ConsoleMessage) => {
    if (msg.type() === 'error') recorder.errors.push({ text: msg.text(), url: msg.location().url });
  });
  page.on('pageerror', (err) => recorder.errors.push({ text: `${err.name}: ${err.message}`, url: '' }));
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The page's widest content: at most the viewport when nothing scrolls sideways. */
export const scrollWidth = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth);

/** Signs in on the app's own page with an API key, and waits for the batch list. */
export async function signIn(page: Page, apiUrl: string, key: string): Promise<void> {
  await page.goto(`${apiUrl}/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#batches-title').waitFor();
}
