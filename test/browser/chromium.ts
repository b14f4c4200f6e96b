// Debian's Chromium (the `chromium` package) through playwright-core: no browser is ever downloaded. Free of DOM
// types, so the benches (compiled without the DOM library) launch it too.
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// A fresh profile comes with launch(); these keep the browser off the network and quiet.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
