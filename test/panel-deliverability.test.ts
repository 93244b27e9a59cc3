import t from 'tap';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { testDatabases } from './helpers/databases.js';
import { startTestInbound, startTestPump } from './helpers/delivered.js';
import { providerFiguresShipped, seedProviderActivity } from './helpers/provider-activity.js';
import { waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * GET /v1/private/deliverability/providers and /providers/{provider}/daily (docs/panel.md,
 * "Dashboard"): the public listings mirrored for the panel. Any member reads them (a viewer);
 * each answer is the public one for the same query, byte for byte in its figures; another
 * instance's member gets 404 as on every /v1/private route; no session 401; the public 422s.
 */

const PUBLIC_URL = 'https://links.panelprov.test';
const dbs = await testDatabases(t, 'panelprov');
const { url } = await startTestWeb(t, dbs, { env: { PUBLIC_URL } });
const inboundPort = await startTestInbound(t, dbs.pool);
const scopes = ['mail:send', 'mail:read'];
const a = await makeTenant(dbs.pool, { scopes });
const b = await makeTenant(dbs.pool, { scopes });
for (const x of [a, b]) await makeSenders(dbs.pool, x.tenant, { domain: `${x.slug}.example`, senders: [{ email: 'news', name: 'News' }] });
const viewer = await panelLogin(url, await makePanelUser(dbs.pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]));
const ownerOfB = await panelLogin(url, await makePanelUser(dbs.pool, [{ instanceId: b.tenant.instanceId, role: 'owner' }]));

await seedProviderActivity({ url, publicUrl: PUBLIC_URL, pool: dbs.pool, who: a, inboundPort });
startTestPump(t, dbs);
await waitFor('the figures in ClickHouse', () => providerFiguresShipped(url, a), { ms: 30_000 });

const priv = (path: string, token = viewer, slug = a.slug) => jsonCall(url, 'GET', path, undefined, panelHeaders(token, slug));
const pub = (path: string) => jsonCall(url, 'GET', path, undefined, a.headers);

t.test("a viewer reads the providers' figures: the public answer's, for the same query", async (t) => {
  for (const q of ['', `?domain=${a.slug}.example`, '?domain=elsewhere.example', '?tz=Pacific/Kiritimati']) {
    const mine = await priv(`/v1/private/deliverability/providers${q}`);
    t.equal(mine.status, 200, `providers${q}`);
    t.equal(mine.headers.get('cache-control'), 'no-store', 'kept by no cache');
    t.strictSame(mine.body, (await pub(`/v1/deliverability/providers${q}`)).body, `the public answer${q}`);
  }
  const all = (await priv('/v1/private/deliverability/providers')).body.data as Array<Record<string, unknown>>;
  t.strictSame(all.map((r) => r.provider), ['yahoo', 'gmail', 'microsoft'], 'most mails first');
  t.match(all[0], { sent: 5, delivered: 4, bounced_hard: 1, complaints: 1, unsubscribed: 1, complaint_rate: 0.25, complaint_status: 'critical', bounce_rate: 0.2, bounce_status: 'critical' });
  t.match(all[1], { sent: 3, delivered: 3, opened: 3, opened_human: 2, complaint_status: 'no_data', bounce_status: 'ok' });
  t.match(all[2], { sent: 3, delivered: 2, bounced_soft: 1, complaint_rate: 0, complaint_status: 'ok', bounce_rate: 0, bounce_status: 'ok' });
  const other = (await priv('/v1/private/deliverability/providers?domain=elsewhere.example')).body;
  t.strictSame(other.data, [], 'another sending domain: none');
});

t.test("a viewer reads one provider's days: the public answer's", async (t) => {
  for (const p of ['yahoo', 'gmail', 'apple']) {
    const mine = await priv(`/v1/private/deliverability/providers/${p}/daily`);
    t.equal(mine.status, 200, p);
    t.strictSame(mine.body, (await pub(`/v1/deliverability/providers/${p}/daily`)).body, `${p}: the public answer`);
    t.equal(mine.body.days.length, 30, 'the 30 days of the default range');
  }
  const yahoo = (await priv('/v1/private/deliverability/providers/yahoo/daily')).body;
  t.match(yahoo.days.at(-1), { complaints: 1, complaint_status: 'critical', bounced_hard: 1 }, "today's");
  const bad = await priv('/v1/private/deliverability/providers/hotmail/daily');
  t.equal(bad.status, 422, 'not a provider id: the public 422');
  t.equal(bad.body.errors?.[0]?.pointer, '/provider');
  const range = await priv('/v1/private/deliverability/providers?start_date=2026-01-01&end_date=2026-06-30');
  t.equal(range.status, 422, 'more than 92 days');
  t.equal(range.body.errors?.[0]?.pointer, '/end_date');
});

t.test("another instance's member: 404 on A, its own figures on B; no session: 401", async (t) => {
  for (const path of ['/v1/private/deliverability/providers', '/v1/private/deliverability/providers/yahoo/daily']) {
    const cross = await priv(path, ownerOfB, a.slug);
    t.equal(cross.status, 404, `${path} as B's owner with A's slug`);
    t.equal(cross.body.code, 'instance_not_found');
    t.notMatch(JSON.stringify(cross.body), /yahoo"|complaint_rate/, 'no figure of A');
    const none = await jsonCall(url, 'GET', path, undefined, { 'x-instance-slug': a.slug });
    t.equal(none.status, 401, `${path} without a session`);
  }
  const own = await priv('/v1/private/deliverability/providers', ownerOfB, b.slug);
  t.equal(own.status, 200);
  t.strictSame(own.body.data, [], "B sent nothing: none of A's figures");
  const key = await jsonCall(url, 'GET', '/v1/private/deliverability/providers', undefined, a.headers);
  t.equal(key.status, 401, 'an API key is no session');
});
