// Focus and scroll across the hash router's page changes. A new page puts focus on its heading (read once it has
// rendered); a page the reader comes back to from the one it led to (Escape, a breadcrumb, the browser's back button) puts
// focus back on the link that left it, at the scroll position it had.

/** The pages walked through, the current one last: each with the link that left it and its scroll position then. */
let trail: { hash: string; opener?: string; y: number }[] = [];

/** Resolves with the first element matching `selector`, once rendered; null after `ms`. */
function whenRendered(selector: string, ms = 5000): Promise<HTMLElement | null> {
  const find = () => document.querySelector<HTMLElement>(selector);
  const found = find();
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      const el = find();
      if (el) done(el);
    });
    const timer = setTimeout(() => done(null), ms);
    const done = (el: HTMLElement | null) => {
      observer.disconnect();
      clearTimeout(timer);
      resolve(el);
    };
    observer.observe(document.body, { childList: true, subtree: true });
  });
}

function focusHeading(run: number) {
  scrollTo(0, 0);
  void whenRendered('main h1').then((h) => {
    if (run !== current) return;
    const target = h ?? document.getElementById('main');
    if (!target) return;
    if (h && !h.hasAttribute('tabindex')) h.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
  });
}

let current = 0;

/** Called on every hashchange: remembers how `from` was left, then focuses what `to` should. */
export function onPageChange(fromHash: string, toHash: string): void {
  const [from, to] = [fromHash || '#/', toHash || '#/'];
  const run = ++current;
  let here = trail[trail.length - 1];
  if (!here || here.hash !== from) trail = [(here = { hash: from, y: 0 })];
  const active = document.activeElement as HTMLElement | null;
  here.opener = active?.closest('a[href^="#"]')?.getAttribute('href') ?? undefined;
  here.y = scrollY;
  // Another view of the same page (a batch's filters): focus stays on the control that chose it.
  if (from.split('?')[0] === to.split('?')[0]) {
    here.hash = to;
    return;
  }
  // Back to the page before (Escape, a breadcrumb, the back button): to the link that left it, at its scroll position.
  const before = trail[trail.length - 2];
  const back = before?.hash === to ? before : undefined;
  if (back) trail.pop();
  else trail = [...trail.slice(-49), { hash: to, y: 0 }];
  // After the new page's first render (the old page's heading and links are gone by then).
  setTimeout(() => {
    if (run !== current) return;
    if (back?.opener) restore(run, { href: back.opener, y: back.y });
    else focusHeading(run);
  }, 0);
}

function restore(run: number, back: { href: string; y: number }) {
  void whenRendered(`a[href="${CSS.escape(back.href)}"]`).then((link) => {
    if (run !== current) return;
    if (!link) {
      focusHeading(run);
      return;
    }
    scrollTo(0, back.y);
    link.focus({ preventScroll: true });
  });
}

/** The skip link: focus into the main region, the route untouched. */
export function skipToMain(e: Event): void {
  e.preventDefault();
  const main = document.getElementById('main');
  (main?.querySelector<HTMLElement>('h1[tabindex]') ?? main)?.focus();
}
