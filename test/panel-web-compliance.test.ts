import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import { setDomainChecks } from '../domain/domains/domains.js';
import { assertAxeClean, assertStayedHome, openDomainSection, SCREENSHOTS, useChromium } from './helpers/chromium.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { testDatabases } from './helpers/databases.js';
import { startTestWeb } from './helpers/web.js';

/**
 * A domain's sender rules checklist on its panel page (issue 40, docs/panel.md "A domain"), in
 * Chromium against the real web app, Postgres and a loopback DNS server: the list shows each check
 * of GET /v1/domains/{domain_name}/compliance as the API answers it, its state in words; a record
 * published afterwards and "Check again" turn a fail into a pass in place, said in the live
 * region. axe-core clean, every request on the origin; screenshot
 * artifacts/screenshots/panel-domain-compliance.png.
 */
const dbs = await testDatabases(t, 'panelcompliance');
const dns = await startTestDnsServer(t);
const { url } = await startTestWeb(t, dbs, {
  env: { DKIM_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'), DNS_SERVERS: dns.address, PUBLIC_URL: 'https://cartero.test' },
});
const a = await makeTenant(dbs.pool, { scopes: ['domains:read'] });
const viewer = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
const admin = await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'admin' }]);
const domain = `mail-${randomBytes(3).toString('hex')}.example`;
const added = await jsonCall(url, 'POST', '/v1/private/domains', { domain }, panelHeaders(await panelLogin(url, admin), a.slug));
if (added.status !== 201) throw new Error(`add domain: ${added.status} ${JSON.stringify(added.body)}`);
await setDomainChecks(a.tenant, dbs.pool, domain, { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });
// DKIM and DMARC published as the domain shows them; SPF not yet.
for (const r of added.body.dns_records as Array<{ check: string; type: string; name: string; value: string }>) {
  if (r.check === 'dkim' || r.check === 'dmarc') dns.txt(r.name, r.value);
}

async function api() {
  const r = await jsonCall(url, 'GET', `/v1/domains/${domain}/compliance`, undefined, a.headers);
  if (r.status !== 200) throw new Error(`compliance: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.checks as Array<{ rule: string; status: string; detail: string }>;
}
const WORD: Record<string, string> = { pass: 'Pass', warn: 'Warning', fail: 'Fail', unknown: 'Unknown' };

const chromium = useChromium(t, 'the sender rules checklist of a domain page in a browser');
if (chromium) {
  t.test("in Chromium: a domain's checklist is the API's checks, and Check again reads them anew", async (t) => {
    const watched = await openDomainSection(chromium.browser, url, viewer, a.slug, domain, 'Sender rules checklist');
    const { page, section } = watched;
    await section.getByRole('list').waitFor();
    const shown = () =>
      section.locator('ul.checklist > li').evaluateAll((lis) =>
        lis.map((li) => [li.getAttribute('data-rule'), li.querySelector('.state')!.textContent, li.querySelector('p')!.textContent]),
      );
    const expected = (await api()).map((c) => [c.rule, WORD[c.status], c.detail]);
    t.same(await shown(), expected, "the API's checks, in its order, each state in words");
    t.same(
      (await shown()).map((r) => [r[0], r[1]]),
      [
        ['spf_aligned', 'Fail'],
        ['dkim_aligned', 'Pass'],
        ['dmarc_policy', 'Pass'],
        ['dmarc_reports_received', 'Unknown'],
        ['one_click_unsubscribe', 'Unknown'],
        ['unsubscribe_within_2_days', 'Unknown'],
        ['complaint_rate', 'Unknown'],
      ],
      'SPF not published yet; DKIM and DMARC as shown; nothing sent yet',
    );
    t.equal(
      await section.locator('#compliance-summary').textContent(),
      '7 checks: 1 fail, 4 unknown, 2 pass.',
      'the tally',
    );
    const links = await section.getByRole('link').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
    t.ok(links.length === 7 && links.every((h) => h.startsWith('https://')), "each check links its provider's page");
    await assertAxeClean(t, page, 'a domain with its checklist');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-domain-compliance.png'), fullPage: true });

    // SPF published; Check again: in place, announced, the focus kept on the button.
    dns.txt(`bounces.${domain}`, 'v=spf1 mx -all');
    await section.getByRole('button', { name: 'Check again' }).click();
    await page.getByRole('status').filter({ hasText: `Sender rules of ${domain}: 4 unknown, 3 pass.` }).waitFor();
    t.same((await shown())[0]!.slice(0, 2), ['spf_aligned', 'Pass'], 'SPF now passes');
    t.same(await shown(), (await api()).map((c) => [c.rule, WORD[c.status], c.detail]), 'still the API’s answer');
    t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Check again', 'the focus stays on the button');
    await assertAxeClean(t, page, 'the checklist read again');
    assertStayedHome(t, watched);
    await watched.context.close();
  });
}
