// A real browser for the console tests: Debian's Chromium driven by playwright-core, headless,
// with a fresh profile and nothing that phones home. Screenshots go to test/screenshots/.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.FERRITE_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.resolve(process.cwd(), 'test/screenshots');

/** Flags that keep Chromium from contacting Google's services (refused connections otherwise). */
const QUIET = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set FERRITE_CHROMIUM)`);
  // playwright launches with a fresh temporary profile (user-data-dir) every time.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: QUIET });
}

/** A new page at `url`; a script error on the page fails the test that reads `errors`. */
/**
 * A page whose waits (navigation, locators) last 90 s, not Playwright's 30: on a 2-core CI machine
 * running the whole suite, loading Swagger UI's bundle once took longer than 30 s.
 */
export async function newPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(90_000);
  page.setDefaultNavigationTimeout(90_000);
  return page;
}

export async function openPage(browser: Browser, url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await newPage(browser);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  return { page, errors };
}

/** Saves the whole page (or only the viewport) as test/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/**
 * Pixels of the chart canvas inside `selector` in a saturated colour: drawn series (every
 * series colour is saturated; axes, grid and text are grey or black).
 */
export function colouredPixels(page: Page, selector: string): Promise<number> {
  return page.locator(selector).first().evaluate((el) => {
    const canvas = el.querySelector('canvas');
    if (canvas === null) return 0;
    const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b, a] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
      if (a > 128 && Math.max(r, g, b) - Math.min(r, g, b) > 60) n++;
    }
    return n;
  });
}

/** Waits until the chart in `selector` has drawn at least `min` coloured pixels; returns the count. */
export async function waitForDrawn(page: Page, selector: string, min = 100, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = await colouredPixels(page, selector).catch(() => 0);
    if (n >= min || Date.now() > deadline) return n;
    await page.waitForTimeout(200);
  }
}

/** Waits until the numeric attribute `attr` of the first `selector` satisfies `ok`; returns it. */
export async function waitForNumber(page: Page, selector: string, attr: string, ok: (v: number) => boolean, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const raw = await page.locator(selector).first().getAttribute(attr, { timeout: 1_000 }).catch(() => null);
    const v = raw === null ? NaN : Number(raw);
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${selector} [${attr}] is ${raw} after ${timeoutMs} ms`);
    await page.waitForTimeout(200);
  }
}
