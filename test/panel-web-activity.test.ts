import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { assertAxeClean, downloaded, SCREENSHOTS, settled, signInToPanel, useChromium, watchPage } from './helpers/chromium.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser } from './helpers/panel.js';
import { testDatabases } from './helpers/databases.js';
import { PREFETCH_SECONDS } from '../domain/tracking/machine.js';
import { backdate, deliver, outboxDrained, startTestPump, trackingLinks } from './helpers/delivered.js';
import { mailApi } from './helpers/send-stack.js';
import { waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The panel's Activity page in Chromium (docs/panel.md, Activity), against the real web app,
 * Postgres, ClickHouse and delivered mails (test/helpers/delivered.ts: the send worker's steps
 * without SMTP, and the event pump in this process): a viewer opens each listing,
 * filters, groups, switches machine-made events out, pages by has_more (with the keyboard too),
 * exports CSV and JSON (the downloaded bytes compared with the public API's export for the same
 * filters) and opens a mail's logs. Every table shown is compared cell by cell with the public
 * API's page for the same query; axe-core on each view; screenshots under
 * artifacts/screenshots/panel-activity*.png.
 */

const PUBLIC_URL = 'https://links.activitypage.test';
const dbs = await testDatabases(t, 'panelactivitypage');
const { url } = await startTestWeb(t, dbs, { env: { PUBLIC_URL } });
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: `${a.slug}.example`, senders: [{ email: 'news', name: 'News' }] });
const viewer = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

const send = await mailApi(url, a.headers).send({
  from: `news@${a.slug}.example`,
  to: ['reader1@example.org', 'reader2@example.org', 'reader3@example.org', 'reader4@example.org', 'bounce-hard@example.org'].map((email) => ({ email })),
  subject: 'Activity page',
  html: '<p>Hi <a href="https://shop.example/a">A</a> <a href="https://shop.example/b">B</a></p>',
});
if (send.status !== 202) throw new Error(`send: ${send.status} ${JSON.stringify(send.body)}`);
const mails = send.body.mails as Array<{ mail_id: string; to: string }>;
const delivered = await deliver(a.tenant, dbs.pool, mails.map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
await backdate(a.tenant, dbs.pool, mails.map((m) => m.mail_id), PREFETCH_SECONDS + 1); // past the prefetch window after delivery, without waiting it out
startTestPump(t, dbs);
const local = (link: string) => url + link.slice(PUBLIC_URL.length);
const linksOf = (mailId: string) => trackingLinks(delivered.get(mailId)?.rendered);
const hit = async (link: string, ua: string) => (await fetch(local(link), { redirect: 'manual', headers: { 'user-agent': ua } })).arrayBuffer();
const r1 = linksOf(mails[0]!.mail_id);
const r2 = linksOf(mails[1]!.mail_id);
await hit(r1.pixel, BROWSER);
await hit(r1.clicks[0]!, BROWSER);
await hit(r1.clicks[1]!, 'python-requests/2.31'); // a link scanner
await hit(r2.pixel, 'Mozilla/5.0'); // a privacy proxy
await hit(r2.clicks[0]!, BROWSER);
const publicGet = (path: string) => jsonCall(url, 'GET', path, undefined, a.headers);
await waitFor('the events in the listings', async () =>
  (await publicGet('/v1/activities/opens?page_size=1')).body.pagination.total_items === 2 && (await publicGet('/v1/activities/clicks?page_size=1')).body.pagination.total_items === 3 ? true : undefined, { ms: 30_000 });
await waitFor('the machine flags to settle', () => outboxDrained(dbs.pool, a.tenant.instanceId), { ms: 30_000 });
await waitFor('the mirror to hold the final statuses', async () => {
  const rows = (await publicGet('/v1/activities/sent?page_size=100')).body.data as any[];
  return rows.length === mails.length && rows.every((r) => [3, 6].includes(r.status)) ? true : undefined;
}, { ms: 30_000 });

/** A value as the page writes it in a cell. */
const asCell = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** The results table as shown: its headers and its cells' text. */
async function shownTable(page: Page, selector = '#activity-rows') {
  const table = page.locator(selector);
  return {
    columns: await table.locator('thead th').allTextContents(),
    cells: await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''))),
  };
}

/** The public API's page for `params`, as the table should show it. */
async function expected(listing: string, params: Record<string, string>) {
  const r = await publicGet(`/v1/activities/${listing}?${new URLSearchParams(params)}`);
  if (r.status !== 200) throw new Error(`${listing}: ${r.status} ${JSON.stringify(r.body)}`);
  const rows = r.body.data as Array<Record<string, unknown>>;
  const columns = rows.length ? Object.keys(rows[0]!) : [];
  return { columns, cells: rows.map((row) => columns.map((c) => asCell(row[c]))), pagination: r.body.pagination };
}

/** Runs `action` and waits for the live region to say its outcome; answers what it said. */
async function said(page: Page, action: () => Promise<unknown>): Promise<string> {
  await page.evaluate(`document.querySelector('[role=status]').textContent = ''`);
  await action();
  const status = page.locator('p.status[role=status]');
  await waitFor('the live region', async () => ((await status.textContent())?.trim() ? true : undefined), { ms: 15_000 });
  return (await status.textContent())!.trim();
}

const chromium = useChromium(t, 'the Activity page in a browser');
if (chromium) {
  t.test('in Chromium: the four listings, filters, group_by, the machine switch, pages, exports and a mail\'s logs equal the API', async (t) => {
    const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    const origin = new URL(url).origin;
    const { requests, complaints } = watchPage(page);
    await signInToPanel(page, url, viewer);

    // Sent, the default listing, 25 a page.
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.getByRole('heading', { level: 1, name: /^Activity of / }).waitFor();
    await page.locator('#activity-rows').waitFor();
    let want = await expected('sent', { page: '1', page_size: '25' });
    t.strictSame(await shownTable(page), { columns: want.columns, cells: want.cells }, 'Sent: the API\'s rows, its fields as columns');
    t.equal(want.cells.length, 5, 'the five mails');
    t.equal(await page.getByLabel('Group by').isVisible(), false, 'no group_by for Sent');
    await assertAxeClean(t, page, 'activity: sent');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-activity.png'), fullPage: true });

    // Pages of two, by has_more: Next, Next (the last), Previous; then the keyboard.
    await page.getByLabel('Rows per page').fill('2');
    let message = await said(page, () => page.getByRole('button', { name: 'Show' }).click());
    t.equal(message, 'Sent, page 1: rows 1 to 2, more on the next page.', 'the live region says the page');
    t.strictSame((await shownTable(page)).cells, (await expected('sent', { page: '1', page_size: '2' })).cells, 'page 1 of two');
    t.ok(await page.getByRole('button', { name: 'Previous page' }).isDisabled(), 'no previous page on the first');
    message = await said(page, () => page.getByRole('button', { name: 'Next page' }).click());
    t.equal(message, 'Sent, page 2: rows 3 to 4, more on the next page.');
    t.strictSame((await shownTable(page)).cells, (await expected('sent', { page: '2', page_size: '2' })).cells, 'page 2');
    await page.getByRole('button', { name: 'Next page' }).focus();
    message = await said(page, () => page.keyboard.press('Enter'));
    want = await expected('sent', { page: '3', page_size: '2' });
    t.equal(want.pagination.has_more, false, 'the API has no more after page 3');
    t.equal(message, 'Sent, page 3: rows 5 to 5.');
    t.strictSame((await shownTable(page)).cells, want.cells, 'page 3, by the keyboard');
    t.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled(), 'has_more false: no next page');
    t.equal(await settled(page, 'document.activeElement?.id', (v) => v === 'results'), 'results', 'the disabled button handed the focus to the results heading');
    await said(page, () => page.getByRole('button', { name: 'Previous page' }).click());
    t.strictSame((await shownTable(page)).cells, (await expected('sent', { page: '2', page_size: '2' })).cells, 'back to page 2');

    // Filters: recipient starting with "reader", status 3.
    await page.getByLabel('Rows per page').fill('25');
    await page.getByLabel('Recipient', { exact: true }).fill('reader');
    await page.getByLabel('Recipient match').selectOption('starts_with');
    await page.getByLabel('Status').selectOption('3');
    await said(page, () => page.getByRole('button', { name: 'Show' }).click());
    want = await expected('sent', { recipient: 'reader', recipient_operator: 'starts_with', status: '3', page: '1', page_size: '25' });
    t.equal(want.cells.length, 4, 'the four delivered readers');
    t.strictSame((await shownTable(page)).cells, want.cells, 'filtered as the API filters');
    await said(page, () => page.getByRole('button', { name: 'Clear filters' }).click());
    t.strictSame((await shownTable(page)).cells, (await expected('sent', { page: '1', page_size: '25' })).cells, 'cleared: every mail');

    // Opens, by the keyboard: arrow from Sent to Opens in the listing chooser.
    await page.getByLabel('Sent', { exact: true }).focus();
    message = await said(page, () => page.keyboard.press('ArrowRight'));
    t.ok(await page.getByLabel('Opens', { exact: true }).isChecked(), 'Opens chosen with an arrow key');
    t.match(message, /^Opens: Opens, page 1: rows 1 to 2 of 2\.$/, 'the live region says the listing and its rows');
    t.strictSame(await shownTable(page), (({ columns, cells }) => ({ columns, cells }))(await expected('opens', { page: '1', page_size: '25' })), 'Opens: one row per open');
    await page.getByLabel('Group by').selectOption('mail_id');
    await said(page, () => page.getByRole('button', { name: 'Show' }).click());
    want = await expected('opens', { group_by: 'mail_id', page: '1', page_size: '25' });
    t.strictSame(await shownTable(page), { columns: want.columns, cells: want.cells }, 'Opens per recipient: the grouped rows and their columns');
    t.ok(want.columns.includes('open_count'), 'a grouped row counts its opens');
    await page.getByLabel('People only').check();
    await said(page, () => page.getByRole('button', { name: 'Show' }).click());
    want = await expected('opens', { group_by: 'mail_id', exclude_machine: 'true', page: '1', page_size: '25' });
    t.equal(want.cells.length, 1, 'people only: the privacy proxy\'s open is left out');
    t.strictSame((await shownTable(page)).cells, want.cells, 'people only, as the API');
    await assertAxeClean(t, page, 'activity: opens per recipient, people only');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-activity-opens.png'), fullPage: true });

    // Clicks: the filters kept (per recipient, people only), then per message with machines.
    await said(page, () => page.getByLabel('Clicks', { exact: true }).check());
    want = await expected('clicks', { group_by: 'mail_id', exclude_machine: 'true', page: '1', page_size: '25' });
    t.strictSame(await shownTable(page), { columns: want.columns, cells: want.cells }, 'Clicks per recipient, people only');
    await page.getByLabel('Group by').selectOption('msg_id');
    await page.getByLabel('Include machine-made').check();
    await said(page, () => page.getByRole('button', { name: 'Show' }).click());
    want = await expected('clicks', { group_by: 'msg_id', page: '1', page_size: '25' });
    t.strictSame(await shownTable(page), { columns: want.columns, cells: want.cells }, 'Clicks per message, machines included');
    await assertAxeClean(t, page, 'activity: clicks per message');

    // Exports: the downloaded bytes are the API's export for the same filters.
    for (const [format, button] of [['csv', 'Export Clicks as CSV'], ['json', 'Export Clicks as JSON']] as const) {
      const { name, bytes } = await downloaded(page, button);
      const res = await fetch(`${url}/v1/activities/clicks/export?group_by=msg_id&format=${format}`, { headers: a.headers });
      const api = Buffer.from(await res.arrayBuffer());
      t.ok(bytes.equals(api), `${format.toUpperCase()}: the downloaded ${bytes.length} bytes are the API's ${api.length}`);
      t.equal(name, /filename="([^"]+)"/.exec(res.headers.get('content-disposition')!)![1], 'named as the API names it');
      await page.getByText(`${name} saved`).waitFor();
    }
    t.ok((await downloaded(page, 'Export Clicks as JSON')).bytes.length > 2, 'not an empty array');

    // Unopened.
    await said(page, () => page.getByLabel('Unopened', { exact: true }).check());
    want = await expected('unopened', { page: '1', page_size: '25' });
    t.equal(want.cells.length, 2, 'reader3 and reader4: delivered, not opened');
    t.strictSame(await shownTable(page), { columns: want.columns, cells: want.cells }, 'Unopened');
    t.equal(await page.getByLabel('Group by').isVisible(), false, 'no group_by for Unopened');
    const unopened = await downloaded(page, 'Export Unopened as CSV');
    const api = Buffer.from(await (await fetch(`${url}/v1/activities/unopened/export?format=csv`, { headers: a.headers })).arrayBuffer());
    t.ok(unopened.bytes.equals(api), 'the unopened CSV is the API\'s');
    await assertAxeClean(t, page, 'activity: unopened');

    // A mail's logs: the bounce, from Sent.
    await said(page, () => page.getByLabel('Sent', { exact: true }).check());
    const bounced = mails.find((m) => m.to === 'bounce-hard@example.org')!.mail_id;
    await page.getByRole('link', { name: `Mail ${bounced}: details and logs` }).click();
    await page.getByRole('heading', { level: 1, name: `Mail ${bounced}` }).waitFor();
    const logs = (await publicGet(`/v1/mails/${bounced}/logs?page_size=100`)).body.data as Array<Record<string, unknown>>;
    const logColumns = Object.keys(logs[0]!);
    t.strictSame(await shownTable(page, '#mail-logs'), { columns: logColumns, cells: logs.map((l) => logColumns.map((c) => asCell(l[c]))) }, 'the logs as the API has them');
    t.ok(logs.some((l) => l['status'] === 6), 'with the bounce');
    const mail = (await publicGet(`/v1/mails/${bounced}`)).body;
    t.equal(await page.locator('#mail-facts dt', { hasText: /^status$/ }).locator('xpath=following-sibling::dd[1]').textContent(), String(mail.status), 'the mail\'s status');
    await assertAxeClean(t, page, "a mail's logs");
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-activity-mail.png'), fullPage: true });
    await page.getByRole('link', { name: 'Back to the activity' }).click();
    await page.locator('#activity-rows').waitFor();
    t.ok(await page.getByLabel('Sent', { exact: true }).isChecked(), 'back on the listing left');

    t.same(requests.filter((r) => !r.startsWith(origin) && !r.startsWith('blob:')), [], 'every request on the origin');
    t.same(complaints, [], 'no console error, no CSP complaint');
    await context.close();
  });
}
