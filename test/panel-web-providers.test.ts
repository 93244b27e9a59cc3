import { join } from 'node:path';
import t from 'tap';
import { THRESHOLDS } from '../engines/providers/thresholds.js';
import { PROVIDERS } from '../engines/providers/table.js';
import { assertAxeClean, assertStayedHome, openPanelAs, SCREENSHOTS, settled, useChromium } from './helpers/chromium.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { makePanelUser } from './helpers/panel.js';
import { testDatabases } from './helpers/databases.js';
import { startTestInbound, startTestPump } from './helpers/delivered.js';
import { providerFiguresShipped, seedProviderActivity } from './helpers/provider-activity.js';
import { waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The dashboard's mailbox providers in Chromium (issue 40, docs/panel.md "Dashboard"): mail to
 * gmail.com, yahoo.com and outlook.com delivered, bounced, complained about, unsubscribed from
 * and opened (test/helpers/provider-activity.ts); a viewer opens the dashboard and reads the
 * Providers table, equal cell by cell to GET /v1/private/deliverability/providers for the range
 * the page shows, each rate's status in words; then one provider's days: the complaint and
 * bounce rate charts with the warning and critical lines drawn at the server's thresholds
 * (engines/providers/thresholds.ts), the opens all and by people side by side, their numbers
 * the daily answer's. Chosen from the table with the keyboard, and from the select. axe-core on
 * both views; screenshot panel-dashboard-providers.png.
 */

const PUBLIC_URL = 'https://links.provpage.test';
const dbs = await testDatabases(t, 'panelprovpage');
const { url } = await startTestWeb(t, dbs, { env: { PUBLIC_URL } });
const inboundPort = await startTestInbound(t, dbs.pool);
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: `${a.slug}.example`, senders: [{ email: 'news', name: 'News' }] });
const viewer = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
await seedProviderActivity({ url, publicUrl: PUBLIC_URL, pool: dbs.pool, who: a, inboundPort });
startTestPump(t, dbs);
await waitFor('the figures in ClickHouse', () => providerFiguresShipped(url, a), { ms: 30_000 });

const LABEL = Object.fromEntries(PROVIDERS.map((p) => [p.id, p.label]));
const pct = (r: number | null) => (r === null ? '—' : `${(r * 100).toFixed(2)} %`);
const words = (s: string) => (s === 'no_data' ? 'no data' : s);
/** A rate as the page shows it: none beside no_data (Gmail's 0 complaints are unknown, not 0 %). */
const shown = (r: number | null, status: string) => pct(status === 'no_data' ? null : r);
const COUNTS = ['sent', 'delivered', 'deferred', 'bounced_hard', 'bounced_soft', 'complaints', 'unsubscribed', 'opened', 'opened_human'];

const chromium = useChromium(t, 'the dashboard providers in a browser');
if (chromium) {
  t.test("in Chromium: a viewer reads the Providers table and a provider's days, the API's figures, the thresholds drawn", async (t) => {
    const { context, page, origin, requests, complaints, read } = await openPanelAs(chromium.browser, url, viewer, a.slug);
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.locator('table.providers-table').waitFor();
    const start = await page.getByLabel('From').inputValue();
    const end = await page.getByLabel('To (inclusive)').inputValue();
    const api = await read(`/v1/private/deliverability/providers?start_date=${start}&end_date=${end}`);

    // The table: a row per provider of the API's, in its order, each cell its figure.
    const rows = await page.locator('table.providers-table tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        provider: tr.getAttribute('data-provider'),
        label: tr.querySelector('th')!.textContent,
        counts: Object.fromEntries([...tr.querySelectorAll('td[data-count]')].map((td) => [td.getAttribute('data-count'), Number(td.textContent)])),
        rates: Object.fromEntries([...tr.querySelectorAll('td[data-rate]')].map((td) => [td.getAttribute('data-rate'), [td.querySelector('.rate')!.textContent, td.querySelector('.rate-status')!.textContent, td.getAttribute('data-status')]])),
      })),
    );
    t.strictSame(
      rows,
      api.data.map((r: Record<string, any>) => ({
        provider: r.provider,
        label: LABEL[r.provider],
        counts: Object.fromEntries(COUNTS.map((k) => [k, r[k]])),
        rates: { complaint_rate: [shown(r.complaint_rate, r.complaint_status), words(r.complaint_status), r.complaint_status], bounce_rate: [shown(r.bounce_rate, r.bounce_status), words(r.bounce_status), r.bounce_status] },
      })),
      `the table is the API's for ${start}..${end}`,
    );
    t.strictSame(rows.map((r) => r.provider), ['yahoo', 'gmail', 'microsoft'], 'three providers, most mails first');
    t.strictSame(rows[0]!.rates, { complaint_rate: ['25.00 %', 'critical', 'critical'], bounce_rate: ['20.00 %', 'critical', 'critical'] }, 'Yahoo: both critical, said in words');
    t.strictSame(rows[1]!.rates['complaint_rate'], ['—', 'no data', 'no_data'], "Gmail's complaints: no data, not 0 %");
    t.strictSame([rows[1]!.counts['opened'], rows[1]!.counts['opened_human']], [3, 2], 'Gmail: opens all and by people side by side');
    // The status's colour repeats the words: critical is not the colour of ok.
    const colour = (sel: string) => page.locator(sel).first().evaluate((el) => getComputedStyle(el).color);
    t.not(await colour('.rate-status.critical'), await colour('.rate-status.ok'), 'critical and ok differ in colour too');

    // The first provider's days at first: its two rate charts, each with its two lines.
    const checkDays = async (provider: string) => {
      const daily = await read(`/v1/private/deliverability/providers/${provider}/daily?start_date=${start}&end_date=${end}`);
      await page.locator('#c-p-complaints-h', { hasText: LABEL[provider]! }).waitFor();
      for (const [id, metric] of [['c-p-complaints', 'complaint_rate'], ['c-p-bounces', 'bounce_rate']] as const) {
        const box = page.locator(`section[aria-labelledby="${id}-h"]`);
        const lines = await box.locator('svg line.threshold').evaluateAll((ls) =>
          ls.map((l) => ({ name: l.getAttribute('data-threshold'), value: Number(l.getAttribute('data-value')), y: Number(l.getAttribute('y1')), base: Number((l as SVGLineElement).ownerSVGElement!.querySelector('line.grid')!.getAttribute('y1')) })),
        );
        t.strictSame(lines.map((l) => [l.name, l.value]), [['warning', THRESHOLDS[metric].warning], ['critical', THRESHOLDS[metric].critical]], `${provider} ${metric}: the warning and critical lines at the server's thresholds`);
        t.ok(lines[1]!.y < lines[0]!.y && lines[0]!.y < lines[0]!.base, 'critical drawn above warning, both above zero');
        const beyond = daily.days.filter((d: Record<string, any>) => d[metric] !== null && d[metric] > 4 * THRESHOLDS[metric].critical).length;
        t.equal(await box.locator('svg rect.over').count(), beyond, `${provider} ${metric}: ${beyond} day(s) beyond the scale drawn to the top, marked`);
        t.strictSame(await box.locator('svg text.threshold-label').allTextContents(), [`warning ${pct(THRESHOLDS[metric].warning)}`, `critical ${pct(THRESHOLDS[metric].critical)}`], 'each line named in words');
        const table = await box.locator('table.numbers tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
        const status = metric === 'complaint_rate' ? 'complaint_status' : 'bounce_status';
        t.strictSame(table, daily.days.map((d: Record<string, any>) => [d.date, shown(d[metric], d[status]), words(d[status])]), `${provider} ${metric}: each day's rate and status, the API's`);
      }
      const opens = await page.locator('section[aria-labelledby="c-p-opens-h"] table.numbers tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
      t.strictSame(opens, daily.days.map((d: Record<string, any>) => [d.date, String(d.opened), String(d.opened_human)]), `${provider}: opens all and by people per day, the API's`);
      return daily;
    };
    const yahoo = await checkDays('yahoo');
    t.equal(await page.locator('section[aria-labelledby="c-p-complaints-h"] svg rect').count(), yahoo.days.filter((d: any) => d.complaint_rate > 0).length, 'a bar per day with complaints');
    t.equal(await page.locator('.provider-charts svg.chart').count(), 3, "the provider's three charts");
    await assertAxeClean(t, page, 'the dashboard with its providers');
    await page.locator('#providers-heading').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-dashboard-providers.png'), fullPage: true });
    await page.locator('section.providers').screenshot({ path: join(SCREENSHOTS, 'panel-dashboard-providers-section.png') });

    // Gmail from the table, with the keyboard: its days drawn, said, the focus on the select.
    await page.getByRole('button', { name: 'Show the days of Gmail' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: `Gmail: its days from ${start} to ${end}.` }).waitFor();
    await checkDays('gmail');
    await page.locator('section.providers').screenshot({ path: join(SCREENSHOTS, 'panel-dashboard-providers-gmail.png') });
    t.equal(await settled(page, 'document.activeElement?.id', (v) => v === 'provider-days'), 'provider-days', 'the focus on the Provider select');
    // Outlook.com from the select.
    await page.getByLabel('Provider', { exact: true }).selectOption('microsoft');
    await checkDays('microsoft');
    await assertAxeClean(t, page, "the dashboard with Outlook.com's days");
    // Another dashboard range (today alone) keeps the provider chosen, its days that range's.
    await page.getByLabel('From').fill(end);
    await page.getByLabel('To (inclusive)').press('Enter');
    await page.locator('table.totals-table caption', { hasText: `Totals from ${end} to ${end}` }).waitFor();
    t.equal(await page.getByLabel('Provider', { exact: true }).inputValue(), 'microsoft', 'the provider chosen is kept with the range');
    t.equal(await page.locator('section[aria-labelledby="c-p-opens-h"] table.numbers tbody tr').count(), 1, 'one day drawn');

    assertStayedHome(t, { requests, complaints, origin });
    await context.close();
  });
}
