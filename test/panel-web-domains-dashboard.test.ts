import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { assertAxeClean, openPanelAs, SCREENSHOTS, signInToPanel, useChromium } from './helpers/chromium.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { makeSenders, makeTenant, type TestTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { testDatabases } from './helpers/databases.js';
import { PREFETCH_SECONDS } from '../domain/tracking/machine.js';
import { backdate, deliver, startTestPump, trackingLinks } from './helpers/delivered.js';
import { mailApi } from './helpers/send-stack.js';
import { waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The panel's Domains and Dashboard pages in Chromium (issue 30, docs/panel.md "The web panel"),
 * against the real web app, Postgres, ClickHouse, delivered mails (test/helpers/delivered.ts: the
 * send worker's steps without SMTP, and the event pump in this process) and a real DNS server on
 * loopback: an admin adds a domain and reads its records, copies one, is told the
 * name is taken on a second add, verifies it (records unpublished, then published, then DNS
 * down: a 503 shown as such), rotates DKIM; then reads the dashboard of real activity (mails
 * delivered and bounced, opens and clicks by a person and a machine) and its totals table is
 * compared with the dashboard API and the public listings for the same range. axe-core on each
 * page, every request on the origin; screenshots under artifacts/screenshots/panel-*.png.
 */

const PUBLIC_URL = 'https://links.dashpage.test';
const dns = await startTestDnsServer(t);
const DKIM_KEY = randomBytes(32).toString('hex');
const dbs = await testDatabases(t, 'paneldashpage');
const { url } = await startTestWeb(t, dbs, { env: { PUBLIC_URL, DNS_SERVERS: dns.address, DKIM_KEY_ENCRYPTION_KEY: DKIM_KEY, PANEL_DNS_OVERRIDE: 'on' } });
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: `${a.slug}.example`, senders: [{ email: 'news', name: 'News' }] });
const admin = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'admin' }]);
const token = await panelLogin(url, admin);
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

// ---- Real activity: two delivered, one hard bounce; a person opens and clicks, a scanner clicks. ----
const send = await mailApi(url, a.headers).send({
  from: `news@${a.slug}.example`,
  to: ['reader1@example.org', 'reader2@example.org', 'bounce-hard@example.org'].map((email) => ({ email })),
  subject: 'Dashboard page',
  html: '<p>Hi <a href="https://shop.example/a">A</a></p>',
});
if (send.status !== 202) throw new Error(`send: ${send.status} ${JSON.stringify(send.body)}`);
const mails = send.body.mails as Array<{ mail_id: string; to: string }>;
const delivered = await deliver(a.tenant, dbs.pool, mails.map((m) => m.mail_id), { publicUrl: PUBLIC_URL, dkimKey: DKIM_KEY });
await backdate(a.tenant, dbs.pool, mails.map((m) => m.mail_id), PREFETCH_SECONDS + 1); // past the prefetch window after delivery, without waiting it out
startTestPump(t, dbs);
const local = (link: string) => url + link.slice(PUBLIC_URL.length);
const { pixel, clicks } = trackingLinks(delivered.get(mails[0]!.mail_id)?.rendered);
const click = clicks[0]!;
await fetch(local(pixel), { headers: { 'user-agent': BROWSER } });
await fetch(local(click), { redirect: 'manual', headers: { 'user-agent': BROWSER } });
await fetch(local(click), { redirect: 'manual', headers: { 'user-agent': 'python-requests/2.31' } });
const total = async (who: TestTenant, path: string, params: Record<string, string>) =>
  (await jsonCall(url, 'GET', `${path}?${new URLSearchParams({ ...params, page_size: '1' })}`, undefined, who.headers)).body.pagination.total_items as number;
/** The rows of a listing without a count (the sent listing), page by page. */
async function countRows(who: TestTenant, path: string, params: Record<string, string>): Promise<number> {
  let n = 0;
  for (let page = 1; ; page++) {
    const r = await jsonCall(url, 'GET', `${path}?${new URLSearchParams({ ...params, page: String(page), page_size: '100' })}`, undefined, who.headers);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    n += r.body.data.length;
    if (!r.body.pagination.has_more) return n;
  }
}
await waitFor('the events in the listings', async () => ((await total(a, '/v1/activities/opens', {})) === 1 && (await total(a, '/v1/activities/clicks', {})) === 2 ? true : undefined), { ms: 30_000 });

const chromium = useChromium(t, 'the Domains and Dashboard pages in a browser');
if (chromium) {
  t.test('in Chromium: Domains (add, records, copy, 409, verify, DNS down, rotate) and the Dashboard equal to the API and listings', async (t) => {
    const { context, page, origin, requests, complaints } = await openPanelAs(chromium.browser, url, admin, undefined, { permissions: ['clipboard-read', 'clipboard-write'] });

    // Domains: the sandbox's alone, then add one.
    await page.getByRole('link', { name: 'Domains' }).click();
    await page.getByRole('heading', { level: 1, name: /^Domains of / }).waitFor();
    const name = `mail-${randomBytes(3).toString('hex')}.example`;
    await page.getByLabel('Domain', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { level: 1, name: `Domain ${name}` }).waitFor();
    const rows = page.locator('table.records tbody tr');
    t.equal(await rows.count(), 4, 'four records to publish: DKIM, MX, SPF, DMARC');
    const records = (await jsonCall(url, 'GET', `/v1/private/domains?page_size=100`, undefined, panelHeaders(token, a.slug))).body.data as Array<{ id: number; domain: string }>;
    const id = records.find((d) => d.domain === name)!.id;
    const api = (await jsonCall(url, 'GET', `/v1/private/domains/${id}`, undefined, panelHeaders(token, a.slug))).body;
    const shown = await page.locator('table.records code.record').allTextContents();
    t.same(shown.sort(), api.dns_records.map((r: { value: string }) => r.value).sort(), 'the values shown are the API\'s records');
    t.equal(await page.locator('table.records .state.pending').count(), 4, 'each pending');
    await assertAxeClean(t, page, 'a domain');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-domain.png'), fullPage: true });

    // Copy the DMARC value: the button says so and the clipboard holds it.
    const dmarc = api.dns_records.find((r: { check: string }) => r.check === 'dmarc');
    await page.getByRole('button', { name: 'Copy the DMARC value' }).click();
    await page.getByRole('button', { name: 'Copy the DMARC value' }).getByText('Copied').waitFor();
    t.equal(await page.evaluate('navigator.clipboard.readText()'), dmarc.value, 'the clipboard holds the DMARC value');

    // Verify with nothing published: checked, not verified.
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.getByText(`${name} was checked: not verified yet`).waitFor();
    // The page is drawn again after the answer: wait for its new states.
    await page.locator('dl.facts dd').nth(1).filter({ hasNotText: 'never' }).waitFor();
    const checked = (await jsonCall(url, 'GET', `/v1/private/domains/${id}`, undefined, panelHeaders(token, a.slug))).body;
    t.ok(checked.dns_checked_at, 'DNS was asked');
    t.same(
      await page.locator('table.records .state').evaluateAll((els) => els.map((e) => e.className.replace('state ', ''))),
      checked.dns_records.map((r: { status: string }) => r.status),
      `each record's live state as the API has it (${checked.dns_records.map((r: { status: string }) => r.status).join(', ')})`,
    );
    t.notOk(checked.dns_records.every((r: { status: string }) => r.status === 'approved'), 'not approved while unpublished');
    // Published: verified, each approved.
    for (const r of api.dns_records) {
      if (r.type === 'MX') dns.mx(r.name, r.value.split(' ')[1]);
      else dns.txt(r.name, r.value);
    }
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.getByText(`${name} is verified.`).waitFor();
    await page.locator('table.records .state.approved').nth(3).waitFor();
    t.equal(await page.locator('table.records .state.approved').count(), 4, 'each record approved');
    await waitFor('the focus back on Verify now', async () => ((await page.evaluate('document.activeElement?.textContent')) === 'Verify now' ? true : undefined), { ms: 5_000 });
    t.pass('the page drawn again, the focus is back on the button pressed');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-domain-verified.png'), fullPage: true });
    // DNS down: the 503 said plainly, nothing changed.
    await dns.stop();
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.getByRole('alert').getByText('DNS did not answer').waitFor();
    await dns.start();
    t.equal(await page.locator('table.records .state.approved').count(), 4, 'still approved');
    // Rotate DKIM: two DKIM records.
    await page.getByRole('button', { name: 'Rotate DKIM key' }).click();
    await page.getByText(`A new DKIM key was made for ${name}`).waitFor();
    await page.locator('table.records tbody tr').nth(4).waitFor();
    t.equal(await page.locator('table.records tbody tr').count(), 5, 'both DKIM keys shown');

    // The list, and the name again: 409 domain_already_exists, shown.
    await page.getByRole('link', { name: 'All domains' }).click();
    await page.getByRole('link', { name }).waitFor();
    await page.getByLabel('Domain', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('alert').filter({ hasText: /already/i }).waitFor();
    t.match(await page.getByRole('alert').filter({ hasText: /already/i }).textContent(), /already/i, 'the 409 said');
    await assertAxeClean(t, page, 'domains');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-domains.png'), fullPage: true });

    // The sandbox domain: said to be the service's, with nothing to verify or rotate.
    await page.getByRole('link', { name: `${a.slug}.sandbox.cartero.test` }).click();
    await page.getByRole('heading', { level: 1, name: `Domain ${a.slug}.sandbox.cartero.test` }).waitFor();
    await page.getByText('This is the instance’s sandbox domain.').waitFor();
    t.equal(await page.getByRole('button', { name: /Verify now|Rotate DKIM key/ }).count(), 0, 'the sandbox: no verify, no rotate');
    await assertAxeClean(t, page, 'the sandbox domain');
    await page.getByRole('link', { name: 'All domains' }).click();

    // Dashboard: the default range, its totals equal to the API's and the listings'.
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.locator('table.totals-table').waitFor();
    const figures = Object.fromEntries(
      await page.locator('td[data-figure]').evaluateAll((tds) => tds.map((td) => [td.getAttribute('data-figure'), Number(td.textContent)])),
    ) as Record<string, number>;
    const start = await page.getByLabel('From').inputValue();
    const end = await page.getByLabel('To (inclusive)').inputValue();
    const d = (await jsonCall(url, 'GET', `/v1/private/dashboard?start_date=${start}&end_date=${end}`, undefined, panelHeaders(token, a.slug))).body;
    t.same(figures, d.totals, `the page's totals are the API's for ${start}..${end}`);
    const range = { start_date: start, end_date: end };
    t.equal(figures['sent'], await countRows(a, '/v1/activities/sent', range), 'sent = the sent listing');
    t.equal(figures['delivered'], await countRows(a, '/v1/activities/sent', { ...range, status: '3' }), 'delivered = status 3');
    t.equal(figures['bounced'], await countRows(a, '/v1/activities/sent', { ...range, status: '6' }), 'bounced = status 6');
    t.equal(figures['opened'], await total(a, '/v1/activities/opens', range), 'opens');
    t.equal(figures['clicked'], await total(a, '/v1/activities/clicks', range), 'clicks');
    t.equal(figures['clicked_human'], await total(a, '/v1/activities/clicks', { ...range, exclude_machine: 'true' }), 'clicks by people');
    t.strictSame([figures['sent'], figures['delivered'], figures['bounced'], figures['opened'], figures['clicked']], [3, 2, 1, 1, 2], 'the activity made');
    // The rates, raw and by people side by side (issue 32), over the delivered mails.
    const rates = await page.locator('table.rates-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    const pct = (n: number) => `${((100 * n) / d.totals.delivered).toFixed(1)} % (${n} of ${d.totals.delivered})`;
    t.same(rates, [
      ['Open rate', pct(d.totals.delivered_opened), pct(d.totals.delivered_opened_human)],
      ['Click rate', pct(d.totals.delivered_clicked), pct(d.totals.delivered_clicked_human)],
    ], 'open and click rates, all and by people');
    t.equal(d.totals.delivered_opened, 1, 'reader1 opened (by a person)');
    // The dashboard's six (the Providers section's own are test/panel-web-providers.test.ts's).
    t.equal(await page.locator('.charts:not(.provider-charts) svg.chart').count(), 6, 'six charts');
    t.equal(await page.locator('.charts:not(.provider-charts) details table.numbers').count(), 6, 'each with its numbers as a table');
    await assertAxeClean(t, page, 'dashboard');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-dashboard.png'), fullPage: true });
    // Another range with the keyboard: the first day only (no activity), sent with Enter.
    await page.getByLabel('From').fill(start);
    await page.getByLabel('To (inclusive)').fill(start);
    await page.getByLabel('To (inclusive)').press('Enter');
    await page.locator('table.totals-table caption', { hasText: `Totals from ${start} to ${start}` }).waitFor();
    t.equal(await page.locator('td[data-figure="sent"]').textContent(), '0', 'the first day of the range had none');
    // A range the API refuses (more than 92 days): its 422 said, no figures invented.
    await page.getByLabel('From').fill('2020-01-01');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('alert').filter({ hasText: 'This range cannot be shown' }).waitFor();
    t.equal(await page.locator('table.totals-table').count(), 0, 'no totals for a refused range');
    t.pass('the 422 said in the form\'s words');

    t.same(requests.filter((r) => !r.startsWith(origin)), [], 'every request on the origin');
    // The two refusals the test asked for (DNS down, the name taken) are logged by the browser; nothing else.
    t.same(complaints.filter((c) => !/status of (503|409|422)/.test(c)), [], 'no other console error, no CSP complaint');
    t.same(complaints.map((c) => c.match(/status of (\d+)/)?.[1]), ['503', '409', '422'], 'the 503, the 409 and the 422 only');
    await context.close();
  });

  t.test('in Chromium: a viewer reads a domain and its records but gets no Add, Verify or Rotate', async (t) => {
    const viewer = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInToPanel(page, url, viewer);
    await page.getByRole('link', { name: 'Domains' }).click();
    await page.getByText('Your role here is viewer').waitFor();
    t.equal(await page.getByRole('button', { name: 'Add domain' }).count(), 0, 'no Add');
    await page.getByRole('link', { name: `${a.slug}.example` }).click();
    await page.getByRole('heading', { level: 1, name: `Domain ${a.slug}.example` }).waitFor();
    const fixture = (await jsonCall(url, 'GET', `/v1/private/domains?page_size=100`, undefined, panelHeaders(token, a.slug))).body.data.find((d: { domain: string }) => d.domain === `${a.slug}.example`);
    const records = (await jsonCall(url, 'GET', `/v1/private/domains/${fixture.id}`, undefined, panelHeaders(token, a.slug))).body.dns_records;
    t.equal(await page.locator('table.records tbody tr').count(), records.length, `its ${records.length} records`);
    t.equal(await page.getByRole('button', { name: /Verify now|Rotate DKIM key/ }).count(), 0, 'no Verify or Rotate');
    await assertAxeClean(t, page, 'a domain as a viewer');
    await page.close();
  });

  t.test('in Chromium, with PANEL_DNS_OVERRIDE=on: the owner sets checks by hand; an admin is not offered it', async (t) => {
    const fresh = `override-${randomBytes(3).toString('hex')}.example`;
    const added = await jsonCall(url, 'POST', '/v1/private/domains', { domain: fresh }, panelHeaders(token, a.slug));
    t.equal(added.status, 201);
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInToPanel(page, url, admin);
    await page.goto(`${url}/panel#/domains/${added.body.id}`);
    await page.getByRole('heading', { level: 1, name: `Domain ${fresh}` }).waitFor();
    t.equal(await page.getByRole('button', { name: 'Set checks' }).count(), 0, 'an admin: no override');
    await page.close();

    const owner = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'owner' }]);
    const ownerPage = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInToPanel(ownerPage, url, owner);
    await ownerPage.goto(`${url}/panel#/domains/${added.body.id}`);
    await ownerPage.getByRole('heading', { level: 2, name: 'Set the checks by hand' }).waitFor();
    for (const check of ['MX', 'SPF', 'DKIM', 'DMARC']) await ownerPage.getByLabel(check, { exact: true }).selectOption('approved');
    await ownerPage.getByRole('button', { name: 'Set checks' }).click();
    await ownerPage.getByRole('status').getByText(`The checks of ${fresh} were set by hand.`).waitFor();
    const after = (await jsonCall(url, 'GET', `/v1/private/domains/${added.body.id}`, undefined, panelHeaders(token, a.slug))).body;
    t.match(after, { is_verified: true, checks_overridden: true }, 'verified by hand (read through the API)');
    await ownerPage.getByText('set by the operator without DNS').waitFor();
    await assertAxeClean(t, ownerPage, 'a domain with the override');
    await ownerPage.screenshot({ path: join(SCREENSHOTS, 'panel-domain-override.png'), fullPage: true });
    await ownerPage.close();
  });
}

