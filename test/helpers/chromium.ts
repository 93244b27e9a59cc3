import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { projectRoot } from '../../config/paths.js';
import { jsonCall } from './http.js';
import { panelHeaders, panelLogin } from './panel.js';
import { sleep } from './wait.js';

/** Debian's chromium (`.ci/run` installs it), never a tool's own browser download. */
export const CHROMIUM = '/usr/bin/chromium';
/** Where browser tests keep their screenshots (ignored by git: artifacts/). */
export const SCREENSHOTS = join(projectRoot, 'artifacts', 'screenshots');

/**
 * One headless Chromium for a test file: launched before its first test, closed after its last.
 * Without the binary the file's browser part is skipped and says so (a pass marked skip), and this
 * answers undefined, so the caller registers no browser tests.
 */
export function useChromium(t: Test, what: string): { browser: Browser } | undefined {
  if (!existsSync(CHROMIUM)) {
    t.comment(`${CHROMIUM} is not installed (Debian package chromium; .ci/run installs it): ${what} skipped`);
    t.pass('skipped: no chromium', { skip: `${CHROMIUM} absent` });
    return undefined;
  }
  const holder = {} as { browser: Browser };
  t.before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    holder.browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  t.teardown(async () => {
    await holder.browser?.close();
  });
  return holder;
}

/**
 * What a page asks for and complains about, from now on: every request's URL (to check that none
 * leaves the origin) and the console's errors, CSP refusals and uncaught exceptions.
 */
export function watchPage(page: Page): { requests: string[]; complaints: string[] } {
  const requests: string[] = [];
  const complaints: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/.test(m.text())) complaints.push(m.text());
  });
  page.on('pageerror', (e) => complaints.push(`uncaught: ${e.message}`));
  return { requests, complaints };
}

/**
 * Whether the element shows within `ms`: a page redraws after an action's answer, so an
 * instantaneous isVisible() right after the announcement can look before the redraw.
 */
export async function shown(locator: Locator, ms = 10_000): Promise<boolean> {
  return locator.waitFor({ state: 'visible', timeout: ms }).then(
    () => true,
    () => false,
  );
}

/**
 * The value of `expression` in the page once `accept` takes it, or its last value after `ms`: what
 * a page does after a redraw (the focus given back, say) lands a moment after what announced it.
 */
export async function settled(page: Page, expression: string, accept: (value: unknown) => boolean, ms = 10_000): Promise<unknown> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await page.evaluate(expression);
    if (accept(value) || Date.now() > deadline) return value;
    await sleep(50);
  }
}

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core's violations on the page as it is (injected once per page). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, so the page's CSP (no inline script) does not stop it.
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(readFileSync(join(projectRoot, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
  return ((await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as { violations: AxeViolation[] }).violations;
}

export const isSerious = (v: AxeViolation) => v.impact === 'serious' || v.impact === 'critical';

/** Every violation noted, and none serious or critical (the panel's bar: its markup is all ours). */
export async function assertAxeClean(t: Test, page: Page, what: string): Promise<void> {
  const violations = await axeViolations(page);
  for (const v of violations) t.comment(`axe on ${what}: ${v.impact} ${v.id} (${v.help}), e.g. ${v.nodes[0]?.target.join(' ')}`);
  t.same(violations.filter(isSerious).map((v) => v.id), [], `axe-core on ${what}: no serious or critical violation`);
}

/** A new page of `browser` for the service at `base`, its requests and console complaints watched (what assertStayedHome reads). */
export async function watchedPage(browser: Browser, base: string, viewport: { width: number; height: number }) {
  const page = await browser.newPage({ viewport });
  return { page, origin: new URL(base).origin, ...watchPage(page) };
}

/** Signs in to the panel at `base` through its form and waits for the first page. */
export async function signInToPanel(page: Page, base: string, user: { email: string; password: string }): Promise<void> {
  await page.goto(`${base}/panel`);
  await page.getByLabel('Email', { exact: true }).fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Instances', exact: true }).waitFor();
}

/**
 * A member signed in to the panel in a new browser context (downloads allowed, dialogs
 * accepted; `options` adds to or changes the context's), its requests and console complaints
 * watched, and `read` for the same member's /v1/private answers (of instance `slug`) to compare
 * the page with: it signs in through the API at its first use.
 */
export async function openPanelAs(browser: Browser, base: string, user: { email: string; password: string }, slug?: string, options: BrowserContextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, ...options });
  const page = await context.newPage();
  const { requests, complaints } = watchPage(page);
  page.on('dialog', (d) => void d.accept());
  await signInToPanel(page, base, user);
  let token: Promise<string> | undefined;
  const read = async (path: string) => (await jsonCall(base, 'GET', path, undefined, panelHeaders(await (token ??= panelLogin(base, user)), slug))).body;
  return { context, page, origin: new URL(base).origin, requests, complaints, read };
}

/**
 * A member's browser on the page of `domain` (Domains, then the domain's link, its heading
 * shown) and `section`, the region of that page named `region`: where the panel tests of a
 * domain's sections (the checklist, DMARC) begin.
 */
export async function openDomainSection(browser: Browser, base: string, user: { email: string; password: string }, slug: string, domain: string, region: string) {
  const watched = await openPanelAs(browser, base, user, slug);
  await watched.page.getByRole('link', { name: 'Domains' }).click();
  await watched.page.getByRole('link', { name: domain }).click();
  await watched.page.getByRole('heading', { level: 1, name: `Domain ${domain}` }).waitFor();
  return { ...watched, section: watched.page.getByRole('region', { name: region }) };
}

/** Goes to the panel page that the menu's `link` opens, and waits for its `heading`. */
export async function openFromMenu(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: heading }).waitFor();
}

/** A viewer's browser on the page that the menu's `link` opens (openFromMenu), with the note telling a viewer what it cannot do there. */
export async function openAsViewer(page: Page, link: string, heading: string): Promise<void> {
  await openFromMenu(page, link, heading);
  await page.getByText('Your role here is viewer').waitFor();
}

/** What pressing the button named `button` downloads: the file's suggested name and its bytes. */
export async function downloaded(page: Page, button: string): Promise<{ name: string; bytes: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
  return { name: download.suggestedFilename(), bytes: readFileSync((await download.path())!) };
}

/**
 * How a browser test of ours ends: no request left the origin (data: and blob: URLs are the
 * page's own), and the console holds no complaint (an error, a CSP refusal, an uncaught
 * exception) but the refusals the test asked for itself, `expected` (the browser logs a refused
 * fetch: /status of (409|422)/).
 */
export function assertStayedHome(t: Test, watched: { requests: string[]; complaints: string[]; origin: string }, expected?: RegExp): void {
  const elsewhere = watched.requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== watched.origin);
  t.same(elsewhere, [], `no request left the origin (${watched.requests.length} requests)`);
  t.same(watched.complaints.filter((c) => !expected?.test(c)), [], 'no other console error, nothing refused by the CSP');
}
