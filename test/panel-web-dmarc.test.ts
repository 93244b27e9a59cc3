import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { chDateTime, createClickHouseClient } from '../analytics/client.js';
import { setDomainChecks } from '../domain/domains/domains.js';
import { assertAxeClean, assertStayedHome, openDomainSection, SCREENSHOTS, settled, useChromium } from './helpers/chromium.js';
import { makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { testDatabases } from './helpers/databases.js';
import { startTestWeb } from './helpers/web.js';

/**
 * A domain's DMARC reports on its panel page (issue 39, docs/panel.md "A domain"), in Chromium,
 * against the real web app, Postgres and ClickHouse: three reports of two days are stored as the
 * listener and the DMARC shipper store them (the Postgres ledger's rows, shipped, and their
 * ClickHouse rows); the page's summary, its two groups of sources (Cartero-signed mail apart from
 * the rest) and its reports equal the figures seeded and the public listings' answers for the
 * range the page shows; a range of the other day, a range with nothing and a refused range
 * change what is shown in place. axe-core on each view, every request on the origin;
 * screenshot artifacts/screenshots/panel-domain-dmarc.png.
 */

const dbs = await testDatabases(t, 'paneldmarc');
const { url } = await startTestWeb(t, dbs, { env: { DKIM_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') } });
const a = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
const viewer = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
const admin = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'admin' }]);
const token = await panelLogin(url, admin);
const domain = `mail-${randomBytes(3).toString('hex')}.example`;
const added = await jsonCall(url, 'POST', '/v1/private/domains', { domain }, panelHeaders(token, a.slug));
if (added.status !== 201) throw new Error(`add domain: ${added.status} ${JSON.stringify(added.body)}`);
await setDomainChecks(a.tenant, dbs.pool, domain, { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });
const domainId = added.body.id as number;
const selector = (added.body.dns_records as Array<{ check: string; selector?: string | null }>).find((r) => r.check === 'dkim')!.selector!;

// ---- Three reports, stored as the listener and the shipper store them. ----
const DAY = 86_400_000;
const utcDay = (daysAgo: number) => new Date(Math.floor(Date.now() / DAY) * DAY - daysAgo * DAY);
const date = (d: Date) => d.toISOString().slice(0, 10);
const recent = utcDay(3); // inside the page's first range, the last 30 days
const old = utcDay(40); // outside it

interface Rec {
  ip: string;
  count: number;
  disposition: 'none' | 'quarantine' | 'reject';
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail';
  /** Its DKIM results hold a pass by the domain's Cartero selector. */
  cartero: boolean;
}
interface Report {
  org: string;
  email: string;
  reportId: string;
  begin: Date;
  schema: 'rfc7489' | 'rfc9990';
  authenticated: boolean;
  records: Rec[];
}
const reports: Report[] = [
  {
    org: 'google.com', email: 'noreply-dmarc-support@google.com', reportId: `g-${randomBytes(4).toString('hex')}`, begin: recent, schema: 'rfc7489', authenticated: true,
    records: [
      { ip: '192.0.2.10', count: 120, disposition: 'none', dkim: 'pass', spf: 'pass', cartero: true },
      // Cartero's own address, mail whose signature broke on the way (a forward that rewrote it): not Cartero-signed any more.
      { ip: '192.0.2.10', count: 2, disposition: 'quarantine', dkim: 'fail', spf: 'fail', cartero: false },
      // Another service sending as the domain with SPF aligned only.
      { ip: '198.51.100.7', count: 30, disposition: 'none', dkim: 'fail', spf: 'pass', cartero: false },
    ],
  },
  {
    org: 'Yahoo', email: 'dmarchelp@yahooinc.com', reportId: `y-${randomBytes(4).toString('hex')}`, begin: recent, schema: 'rfc9990', authenticated: false,
    records: [
      // Passed on DKIM alone (SPF not aligned: relayed on the way).
      { ip: '192.0.2.10', count: 40, disposition: 'none', dkim: 'pass', spf: 'fail', cartero: true },
      { ip: '203.0.113.9', count: 5, disposition: 'reject', dkim: 'fail', spf: 'fail', cartero: false },
    ],
  },
  {
    org: 'Outlook.com', email: 'dmarcreport@microsoft.com', reportId: `o-${randomBytes(4).toString('hex')}`, begin: old, schema: 'rfc7489', authenticated: true,
    records: [{ ip: '203.0.113.66', count: 7, disposition: 'reject', dkim: 'fail', spf: 'fail', cartero: false }],
  },
];

const ch = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => ch.close());
const received = new Date(Date.now() - 3_600_000);
for (const r of reports) {
  const end = new Date(r.begin.getTime() + DAY - 1000);
  const messages = r.records.reduce((n, x) => n + x.count, 0);
  const passed = r.records.filter((x) => x.dkim === 'pass' || x.spf === 'pass').reduce((n, x) => n + x.count, 0);
  const policy = { domain, p: 'quarantine', sp: null, np: r.schema === 'rfc9990' ? 'reject' : null, pct: r.schema === 'rfc9990' ? null : 100, adkim: 'r', aspf: 'r' };
  const { rows } = await dbs.pool.query<{ id: string }>(
    `INSERT INTO dmarc_reports (instance_id, domain_id, org_name, org_email, report_id, begin_at, end_at, schema, policy, message_count, dmarc_pass_count,
       record_count, reporter_authenticated, received_at, records, shipped_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULL, now()) RETURNING id`,
    [a.tenant.instanceId, domainId, r.org, r.email, r.reportId, r.begin, end, r.schema, policy, messages, passed, r.records.length, r.authenticated, received],
  );
  const key = Number(rows[0]!.id);
  const common = { instance_id: a.tenant.instanceId, domain, begin_at: chDateTime(r.begin).slice(0, 19), report_key: key, end_at: chDateTime(end).slice(0, 19) };
  await ch.insert({
    table: 'dmarc_reports',
    format: 'JSONEachRow',
    clickhouse_settings: { distributed_foreground_insert: 1 },
    values: [{
      ...common, org_name: r.org, org_email: r.email, report_id: r.reportId, schema: r.schema, policy_domain: domain, policy_p: policy.p, policy_sp: policy.sp,
      policy_np: policy.np, policy_pct: policy.pct, policy_adkim: policy.adkim, policy_aspf: policy.aspf, policy_fo: null, policy_testing: null,
      policy_discovery: null, generator: null, message_count: messages, dmarc_pass_count: passed, dmarc_fail_count: messages - passed,
      record_count: r.records.length, reporter_authenticated: r.authenticated, received_at: chDateTime(received),
    }],
  });
  await ch.insert({
    table: 'dmarc_records',
    format: 'JSONEachRow',
    clickhouse_settings: { distributed_foreground_insert: 1 },
    values: r.records.map((x, i) => ({
      ...common, row_number: i, org_name: r.org, source_ip: x.ip, count: x.count, disposition: x.disposition, dkim_aligned: x.dkim, spf_aligned: x.spf,
      header_from: domain, envelope_from: null, envelope_to: null, reason_types: [], reason_comments: [],
      // Cartero's signature where it held; a signature of another service's (or a broken one of ours) otherwise.
      dkim_domains: [domain], dkim_selectors: [x.cartero ? selector : 'other'], dkim_results: [x.cartero ? 'pass' : x.dkim],
      spf_domains: [`bounces.${domain}`], spf_scopes: ['mfrom'], spf_results: [x.spf], cartero_signed: x.cartero,
    })),
  });
}

/** The public listing (an API key of the instance), every row of the range. */
async function listing(what: 'reports' | 'sources', range: { start_date: string; end_date: string }) {
  const r = await jsonCall(url, 'GET', `/v1/domains/${domain}/dmarc-${what}?${new URLSearchParams({ ...range, tz: 'UTC', page_size: '100' })}`, undefined, a.headers);
  if (r.status !== 200) throw new Error(`dmarc-${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as Array<Record<string, unknown>>;
}

const chromium = useChromium(t, 'the DMARC section of a domain page in a browser');
if (chromium) {
  t.test("in Chromium: a domain's DMARC sources (Cartero's mail apart) and reports, for the range chosen", async (t) => {
    const watched = await openDomainSection(chromium.browser, url, viewer, a.slug, domain, 'DMARC reports');
    const { page, section } = watched;
    await section.getByRole('heading', { level: 3, name: 'Sources of mail Cartero signed' }).waitFor();

    // The first range: the last 30 UTC days, today included.
    const start = await page.getByLabel('From (UTC)').inputValue();
    const end = await page.getByLabel('To (UTC, inclusive)').inputValue();
    t.same([start, end], [date(utcDay(29)), date(utcDay(0))], 'the last 30 days first');
    const range = { start_date: start, end_date: end };

    const fact = (name: string) => section.locator(`dd[data-fact="${name}"]`).textContent();
    t.equal(await fact('messages'), '197 from 3 sources', 'the messages of the range: 152 + 45');
    t.equal(await fact('cartero-share'), '81.2 % (160 of 197) signed by one of its DKIM selectors', "Cartero's share: its 120 and 40");
    t.equal(await fact('cartero-pass'), '98.8 % (160 of 162)', "its source's pass rate");
    t.equal(await fact('other-pass'), '85.7 % (30 of 35)', "the others': 30 with SPF aligned, 5 not");

    /** A table's rows as text, cell by cell (a rate's two lines joined by a space). */
    const rows = (table: string) =>
      section.locator(`#${table} tbody tr`).evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => (c as HTMLElement).innerText.replace(/\s*\n\s*/g, ' ').trim())));
    t.same(await rows('dmarc-cartero-table'), [
      ['192.0.2.10', '162', '98.8 % 160 of 162', '98.8 % 160 of 162', '98.8 % 160 of 162', '74.1 % 120 of 162', 'none 160, quarantine 2', domain, 'Yahoo, google.com'],
    ], "Cartero's source, with the two messages whose signature broke; the reporters in the API's order");
    t.same(await rows('dmarc-others-table'), [
      ['198.51.100.7', '30', '100.0 % 30 of 30', '0.0 % 0 of 30', '100.0 % 30 of 30', 'none 30', domain, 'google.com'],
      ['203.0.113.9', '5', '0.0 % 0 of 5', '0.0 % 0 of 5', '0.0 % 0 of 5', 'reject 5', domain, 'Yahoo'],
    ], 'the other sources, busiest first, with no Cartero column');
    // The same rows as the public listing answers for this range.
    const sources = await listing('sources', range);
    const shownIps = [...(await rows('dmarc-cartero-table')), ...(await rows('dmarc-others-table'))].map((r) => r[0]);
    t.same(shownIps.sort(), sources.map((s) => s['source_ip']).sort(), "the sources are the listing's");
    for (const s of sources) {
      const row = [...(await rows('dmarc-cartero-table')), ...(await rows('dmarc-others-table'))].find((r) => r[0] === s['source_ip'])!;
      t.equal(row[1], String(s['message_count']), `${s['source_ip']}: the listing's message count`);
      t.equal(s['cartero_signed_count'] as number > 0, shownIpsIn(await rows('dmarc-cartero-table'), s['source_ip'] as string), `${s['source_ip']}: in the group its cartero_signed_count says`);
    }

    const reportRows = await rows('dmarc-reports-table');
    t.same(reportRows.map((r) => r.slice(0, 5)), [
      // Both began the same day; the listing's order between them is kept.
      ...(await listing('reports', range)).map((r) => [
        `${r['org_name']} ${r['org_email']}`, `${date(recent)} (UTC day)`, String(r['message_count']),
        `${((100 * (r['dmarc_pass_count'] as number)) / (r['message_count'] as number)).toFixed(1)} % ${r['dmarc_pass_count']} of ${r['message_count']}`, String(r['dmarc_fail_count']),
      ]),
    ], "the reports as the listing has them");
    t.same(reportRows.map((r) => [r[0]!.split(' ')[0], r[4], r[6], r[7]]).sort(), [
      ['Yahoo', '5', 'not authenticated', reports[1]!.reportId],
      ['google.com', '2', 'authenticated', reports[0]!.reportId],
    ], 'each report: its failures, whether its mail was authenticated, its id');
    t.match(reportRows.find((r) => r[0]!.startsWith('Yahoo'))![5], /p=quarantine; np=reject; adkim=r; aspf=r RFC 9990/, 'the policy Yahoo saw, RFC 9990 (no pct)');
    t.match(reportRows.find((r) => r[0]!.startsWith('google.com'))![5], /p=quarantine; pct=100; adkim=r; aspf=r RFC 7489/, 'the policy Google saw, RFC 7489');
    t.equal(await section.locator('#dmarc-reports-table caption').textContent(), `2 reports from ${start} to ${end}, newest first`, 'the caption says the range');
    await assertAxeClean(t, page, 'a domain with DMARC reports');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-domain-dmarc.png'), fullPage: true });

    // The other day alone, with the keyboard: drawn in place, announced, the focus left on Show.
    await page.getByLabel('From (UTC)').fill(date(old));
    await page.getByLabel('To (UTC, inclusive)').fill(date(old));
    await page.getByLabel('To (UTC, inclusive)').press('Enter');
    await page.getByRole('status').filter({ hasText: `DMARC from ${date(old)} to ${date(old)}: 1 source, 1 report.` }).waitFor();
    t.equal(await fact('messages'), '7 from 1 source', "that day's one report");
    t.equal(await fact('cartero-share'), '0.0 % (0 of 7) signed by one of its DKIM selectors', 'none of it Cartero-signed');
    await section.getByText('None of the mail reported carried Cartero’s DKIM signature.').waitFor();
    t.same((await rows('dmarc-others-table')).map((r) => r.slice(0, 2)), [['203.0.113.66', '7']], "that day's source, among the others");
    t.same((await rows('dmarc-reports-table')).map((r) => r[0]), ['Outlook.com dmarcreport@microsoft.com'], "that day's report");
    t.equal(await settled(page, 'document.activeElement?.textContent', (v) => v === 'Show'), 'Show', 'the focus stays on Show');
    t.equal(await page.getByRole('heading', { level: 1, name: `Domain ${domain}` }).count(), 1, 'the rest of the page stays');
    await assertAxeClean(t, page, 'a domain with no Cartero-signed mail in the range');

    // A range with nothing: said, no figures invented.
    await page.getByLabel('From (UTC)').fill(date(utcDay(60)));
    await page.getByLabel('To (UTC, inclusive)').fill(date(utcDay(50)));
    await page.getByRole('button', { name: 'Show' }).click();
    await section.getByText(`No DMARC report about ${domain} covers ${date(utcDay(60))} to ${date(utcDay(50))}.`, { exact: false }).waitFor();
    t.equal(await section.locator('dd[data-fact]').count(), 0, 'no summary');
    t.equal(await section.locator('#dmarc-reports-table caption').textContent(), `0 reports from ${date(utcDay(60))} to ${date(utcDay(50))}, newest first`, 'no report');
    await assertAxeClean(t, page, 'a domain with no DMARC report in the range');

    // A range the API refuses (the end before the start): its 422, in the form's words.
    await page.getByLabel('From (UTC)').fill(date(utcDay(1)));
    await page.getByLabel('To (UTC, inclusive)').fill(date(utcDay(5)));
    await page.getByRole('button', { name: 'Show' }).click();
    await section.getByRole('alert').filter({ hasText: 'This range cannot be shown' }).waitFor();
    t.equal(await section.locator('#dmarc-reports-table').count(), 0, 'no table for a refused range');

    // Back to the first range: the same figures again.
    await page.getByLabel('From (UTC)').fill(start);
    await page.getByLabel('To (UTC, inclusive)').fill(end);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('status').filter({ hasText: `DMARC from ${start} to ${end}: 3 sources, 2 reports.` }).waitFor();
    t.equal(await section.locator('#dmarc-error').textContent(), '', 'the refusal gone');
    t.equal(await fact('messages'), '197 from 3 sources', 'the first range again');

    assertStayedHome(t, watched, /status of 422/);
    await watched.context.close();
  });
}

function shownIpsIn(rows: string[][], ip: string): boolean {
  return rows.some((r) => r[0] === ip);
}
