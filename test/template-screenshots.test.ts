import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { moduleType } from '../engines/beefree/format/nodes.js';
import { renderDocument } from '../engines/beefree/render/index.js';
import { corpusPath } from './helpers/corpus.js';
import { SCREENSHOTS, useChromium } from './helpers/chromium.js';

/**
 * The rendered HTML laid out by a real browser engine (Debian's chromium, headless, through
 * playwright-core): two corpus documents with multi-column rows at 600 px (columns side by
 * side) and 375 px (stacked: each column below the previous one, same left edge), plus a
 * hand-made document whose rows ask for no stacking and for reverse stacking. Positions are
 * read with boundingBox; the screenshots are kept under artifacts/screenshots/ (ignored by git)
 * for a person to look at. Nothing leaves the machine: images are answered with a local
 * placeholder, every other request (web fonts) is refused.
 */

const CORPUS = corpusPath('templates', 'beefree', 'samples');
const DOCUMENTS = ['examples-sample.json', 'simple-schema-template-3.json'];
const DESKTOP = 600;
const PHONE = 375;

const PLACEHOLDER = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="250"><rect width="400" height="250" fill="#c8ccd0"/></svg>',
);

const chrome = useChromium(t, 'layout screenshots');
if (chrome) {
  for (const file of DOCUMENTS) {
    t.test(`${file}: columns side by side at ${DESKTOP} px, stacked at ${PHONE} px`, async (t) => {
      const doc = JSON.parse(readFileSync(join(CORPUS, file), 'utf8')) as unknown;
      const { html } = await renderDocument(doc, { preheader: 'Screenshot preheader', title: file });
      const wide = await layout(chrome.browser, html, DESKTOP, `${file}-${DESKTOP}.png`);
      const narrow = await layout(chrome.browser, html, PHONE, `${file}-${PHONE}.png`);
      t.ok(wide.length > 0, `${wide.length} multi-column rows found`);
      t.equal(narrow.length, wide.length);
      wide.forEach((row, i) => t.same(sideBySide(t, row, `row ${i + 1} at ${DESKTOP} px`), row, 'left to right in document order'));
      narrow.forEach((row, i) => stacked(t, row, `row ${i + 1} at ${PHONE} px`));
    });
  }

  t.test('a row that does not stack (mj-group) and a row that stacks in reverse', async (t) => {
    const para = (uuid: string, text: string) => ({ uuid, type: moduleType('paragraph'), descriptor: { paragraph: { html: `<p>${text}</p>` } } });
    const row = (uuid: string, computedStyle: Record<string, boolean>) => ({
      uuid,
      content: { computedStyle },
      columns: [
        { uuid: `${uuid}-a`, 'grid-columns': 6, modules: [para(`${uuid}-p1`, `${uuid} first column`)] },
        { uuid: `${uuid}-b`, 'grid-columns': 6, modules: [para(`${uuid}-p2`, `${uuid} second column`)] },
      ],
    });
    const doc = { page: { body: { content: { computedStyle: { messageWidth: '600px' } } }, rows: [row('nostack', { rowColStackOnMobile: false }), row('reverse', { rowReverseColStackOnMobile: true })] } };
    const { html } = await renderDocument(doc, { preheader: null, title: null });
    const wide = await layout(chrome.browser, html, DESKTOP, `stacking-options-${DESKTOP}.png`);
    const narrow = await layout(chrome.browser, html, PHONE, `stacking-options-${PHONE}.png`);
    t.equal(wide.length, 2);
    t.equal(narrow.length, 2);
    const [noStackWide, reverseWide] = wide as [Column[], Column[]];
    const [noStackNarrow, reverseNarrow] = narrow as [Column[], Column[]];
    sideBySide(t, noStackWide, 'no stacking, desktop');
    t.match(sideBySide(t, noStackNarrow, 'no stacking, phone: still side by side')[0]!.text, /nostack first/);
    t.match(sideBySide(t, reverseWide, 'reverse stacking, desktop')[0]!.text, /reverse first/, 'desktop keeps the document order left to right');
    // Reverse: the second column of the document is on top on a phone.
    const byTop = [...reverseNarrow].sort((a, b) => a.box.y - b.box.y);
    stacked(t, byTop, 'reverse stacking, phone');
    t.match(byTop[0]!.text, /reverse second/, 'the stack starts with the last column');
  });
}

interface Column {
  box: { x: number; y: number; width: number; height: number };
  text: string;
}

/**
 * The columns of every multi-column row, left to right in screen order: MJML's column blocks
 * (class mj-column-per-N) that share a parent. The 100% block MJML wraps an mj-group's columns
 * in is not a column of its own. Each column is read with Playwright's boundingBox.
 */
async function layout(browser: Browser, html: string, width: number, png: string): Promise<Column[][]> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  try {
    await offline(page);
    await page.setContent(html, { waitUntil: 'load' });
    const rows = await page.evaluate(() => {
      const isColumn = (el: Element) => [...el.classList].some((c) => c.startsWith('mj-column-per-'));
      const groups = new Map<Element, Element[]>();
      for (const el of document.querySelectorAll('div')) {
        if (!isColumn(el) || !el.parentElement) continue;
        const inner = [...el.children].some((c) => c.tagName === 'DIV' && isColumn(c));
        if (inner) continue; // an mj-group's wrapper
        const list = groups.get(el.parentElement) ?? [];
        list.push(el);
        groups.set(el.parentElement, list);
      }
      const multi = [...groups.values()].filter((cols) => cols.length > 1);
      multi.forEach((cols, r) => cols.forEach((c, i) => c.setAttribute('data-shot', `${r}-${i}`)));
      return multi.map((cols) => cols.length);
    });
    const out: Column[][] = [];
    for (const [r, count] of rows.entries()) {
      const cols: Column[] = [];
      for (let i = 0; i < count; i++) {
        const el = page.locator(`[data-shot="${r}-${i}"]`);
        const box = await el.boundingBox();
        if (!box) throw new Error(`row ${r} column ${i} has no box`);
        cols.push({ box, text: (await el.innerText()).replace(/\s+/g, ' ').trim() });
      }
      out.push(cols);
    }
    await page.screenshot({ path: join(SCREENSHOTS, png), fullPage: true });
    return out;
  } finally {
    await page.close();
  }
}

/** Images get a local placeholder (so image rows have their height); nothing else is fetched. */
async function offline(page: Page): Promise<void> {
  await page.route('**/*', async (route) => {
    if (route.request().resourceType() === 'image') await route.fulfill({ status: 200, contentType: 'image/svg+xml', body: PLACEHOLDER });
    else await route.abort();
  });
}

/** Left to right on screen, each column starts at the right edge of the previous one, on the same top line. */
function sideBySide(t: Test, columns: Column[], what: string): Column[] {
  const cols = [...columns].sort((a, b) => a.box.x - b.box.x);
  for (let i = 1; i < cols.length; i++) {
    const prev = cols[i - 1]!.box;
    const cur = cols[i]!.box;
    t.ok(Math.abs(cur.y - prev.y) <= 1 && cur.x >= prev.x + prev.width - 1, `${what}: column ${i + 1} beside column ${i} (${fmt(prev)} | ${fmt(cur)})`);
  }
  return cols;
}

/** In the order given, each column starts below the previous one, at the same left edge. */
function stacked(t: Test, cols: Column[], what: string): void {
  for (let i = 1; i < cols.length; i++) {
    const prev = cols[i - 1]!.box;
    const cur = cols[i]!.box;
    t.ok(Math.abs(cur.x - prev.x) <= 1 && cur.y >= prev.y + prev.height - 1, `${what}: column ${i + 1} below column ${i} (${fmt(prev)} / ${fmt(cur)})`);
  }
}

function fmt(b: Column['box']): string {
  return `x=${Math.round(b.x)} y=${Math.round(b.y)} w=${Math.round(b.width)} h=${Math.round(b.height)}`;
}
