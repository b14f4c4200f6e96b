// What the accessibility checks measure in a page, shared by the browser tests: axe-core's violations at a desktop's
// and a phone's width (with the page's width and every control's size), and a shape's contrast against the photo
// under it, in pixels.

import { readFileSync } from 'node:fs';
import type { AxeResults } from 'axe-core';
import type { Locator, Page } from 'playwright-core';
import sharp from 'sharp';
import { screenshot } from './browser';

const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];
/** axe-core's own build, put into a page once per document. */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's run on the page as it stands, by its own API (`axe.run`), the script put in once per document: the app is
 * one document without frames, where @axe-core/playwright's analyze() put the script in again on every call and
 * finished each run in a new page (1.9 s a run against 0.4 s, measured on a page of 60 links).
 */
async function runAxe(page: Page): Promise<AxeResults> {
  // Evaluated, not added as a script tag, which the app's Content-Security-Policy (script-src 'self') refuses.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(
    (tags) =>
      (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe.run(document, {
        runOnly: { type: 'tag', values: tags },
      }),
    TAGS,
  );
}

export const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 375, height: 812 },
];

/**
 * What is wrong with the page as it stands, at both widths (a screenshot of each, `a11y-<name>-<width>`): axe-core's
 * violations, a page wider than the viewport, controls under 24×24 px. Empty when nothing is.
 */
export async function accessibilityFindings(page: Page, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    const result = await runAxe(page);
    await screenshot(page, `a11y-${name}-${size.width}`);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    if (wide > size.width) found.push(`${size.width}px: the page is ${wide} px wide`);
    // WCAG 2.2's 24 px, for every control itself (axe passes a small target with room around it).
    for (const small of await smallTargets(page)) found.push(`${size.width}px: ${small} is under 24x24 px`);
    for (const v of result.violations)
      found.push(
        `${size.width}px ${v.id}: ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 4)
          .join(' | ')}`,
      );
  }
  return found;
}

/** Visible controls less than 24 px wide or tall, but a link in a sentence's text (exempt) and a visually hidden input. */
const smallTargets = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('a[href], button, input:not([type="hidden"]), select, summary, [tabindex="0"]')]
      .filter((el) => el.checkVisibility() && !el.closest('p:not(.crumbs):not(.log-head), .visually-hidden'))
      .map((el) => ({ el, r: el.getBoundingClientRect() }))
      .filter(({ r }) => r.width < 24 || r.height < 24)
      .map(
        ({ el, r }) =>
          `${el.tagName.toLowerCase()} "${(el.textContent ?? '').trim().slice(0, 30)}" ${Math.round(r.width)}x${Math.round(r.height)}`,
      ),
  );

const luminance = ([r, g, b]: number[]) =>
  [r!, g!, b!]
    .map((v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i]!, 0);
const contrast = (a: number[], b: number[]) => {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
};

/**
 * A shape's contrast against the photo under it, measured in pixels: `frame` shot with `layer` shown and hidden. All
 * round `shape`, every few pixels, across its edge: its best colour there against the photo just outside it (and just
 * inside, for an outline); the worst place's figure.
 */
export async function contrastAgainstPhoto(
  frame: Locator,
  layer: Locator,
  shape: Locator,
  { sides = [7, -7], margin = 12 } = {},
): Promise<number> {
  const shot = async () => {
    const { data, info } = await sharp(await frame.screenshot())
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return (x: number, y: number) => {
      const [cx, cy] = [Math.min(info.width - 1, Math.max(0, Math.round(x))), Math.min(info.height - 1, Math.max(0, Math.round(y)))];
      const at = (cy * info.width + cx) * 3;
      return [data[at]!, data[at + 1]!, data[at + 2]!];
    };
  };
  const [f, b] = await Promise.all([frame.boundingBox(), shape.boundingBox()]);
  const withBoxes = await shot();
  await layer.evaluate((el) => ((el as HTMLElement).style.visibility = 'hidden'));
  const photo = await shot();
  await layer.evaluate((el) => ((el as HTMLElement).style.visibility = ''));
  const [left, top, right, bottom] = [b!.x - f!.x, b!.y - f!.y, b!.x - f!.x + b!.width, b!.y - f!.y + b!.height];
  // Points on the edge, each with its outward direction.
  const points: [number, number, number, number][] = [];
  for (let x = left + margin; x < right - margin; x += 3) points.push([x, top, 0, -1], [x, bottom, 0, 1]);
  for (let y = top + margin; y < bottom - margin; y += 3) points.push([left, y, -1, 0], [right, y, 1, 0]);
  let worst = Infinity;
  for (const [x, y, dx, dy] of points) {
    const strokes = [-3, -2, -1, 0, 1, 2, 3].map((d) => withBoxes(x + dx * d, y + dy * d));
    for (const side of sides) {
      const around = photo(x + dx * side, y + dy * side);
      worst = Math.min(worst, Math.max(...strokes.map((s) => contrast(s, around))));
    }
  }
  return Math.round(worst * 100) / 100;
}
