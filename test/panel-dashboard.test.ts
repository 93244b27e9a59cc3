import { createServer, type Socket } from 'node:net';
import t from 'tap';
import { DateTime } from 'luxon';
import { freePort } from '../config/ports.js';
import { withTenant } from '../domain/tenancy/context.js';
import { restrict } from '../domain/restrictions/restrictions.js';
import { makeSenders, makeTenant, type TestTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { PREFETCH_SECONDS } from '../domain/tracking/machine.js';
import { backdate, complainAbout, deliver, deliveryBench, outboxDrained, startTestPump, trackingLinks } from './helpers/delivered.js';
import { FAST_RETRIES, mailApi } from './helpers/send-stack.js';
import { sleep, waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * GET /v1/private/dashboard (docs/panel.md, "Dashboard") against real activity: mails taken
 * through the send worker's steps with the mailbox simulator's replies (test/helpers/delivered.ts:
 * delivered, hard and soft bounces, a drop, a complaint sent back as a real ARF report to the
 * inbound listener, here in this process), opens and clicks
 * through the real tracking links with a browser's and machines' user agents, the pump shipping
 * all of it to ClickHouse. Every figure is then compared with the count its public listing gives
 * for the same range, day by day and in total; nothing here is a hard-coded answer but the
 * shape of the activity made (which makes each figure non-zero, so a figure stuck at 0 fails).
 */

const PUBLIC_URL = 'https://links.dash.test';
const TZ = 'Pacific/Kiritimati'; // UTC+14: its local day is rarely the UTC day, so a wrong zone shows
// The soft bounce's tries as a worker made them with FAST_RETRIES (read when the queues are made).
const { dbs, url, pool, inboundPort } = await deliveryBench(t, 'paneldash', PUBLIC_URL);

const scopes = ['mail:send', 'mail:read'];
const a = await makeTenant(pool, { scopes, tz: TZ });
const b = await makeTenant(pool, { scopes });
for (const x of [a, b]) await makeSenders(pool, x.tenant, { domain: `${x.slug}.example`, senders: [{ email: 'news', name: 'News' }] });
const viewer = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
const onlyB = await makePanelUser(pool, [{ instanceId: b.tenant.instanceId, role: 'owner' }]);
const viewerToken = await panelLogin(url, viewer);
const onlyBToken = await panelLogin(url, onlyB);

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const local = (link: string) => url + link.slice(PUBLIC_URL.length);

const dash = (params: Record<string, string> = {}, token = viewerToken, slug = a.slug) =>
  jsonCall(url, 'GET', `/v1/private/dashboard?${new URLSearchParams(params)}`, undefined, panelHeaders(token, slug));

/** Every row of a public listing for these filters, page by page. */
async function all(who: TestTenant, path: string, params: Record<string, string>): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page++) {
    const r = await jsonCall(url, 'GET', `${path}?${new URLSearchParams({ ...params, page: String(page), page_size: '100' })}`, undefined, who.headers);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    rows.push(...r.body.data);
    if (!r.body.pagination.has_more) return rows;
  }
}

/** total_items of a counted listing (opens, clicks with group_by=none). */
async function total(who: TestTenant, path: string, params: Record<string, string>): Promise<number> {
  const r = await jsonCall(url, 'GET', `${path}?${new URLSearchParams({ ...params, page_size: '1' })}`, undefined, who.headers);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.pagination.total_items;
}

async function sendTo(who: TestTenant, recipients: string[], html = '<p>Hi <a href="https://shop.example/a">A</a> <a href="https://shop.example/b">B</a></p>') {
  const r = await mailApi(url, who.headers).send({ from: `news@${who.slug}.example`, to: recipients.map((email) => ({ email })), subject: 'Dashboard', html });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.mails as Array<{ mail_id: string; to: string }>;
}


// ---- The activity. ----
// A restriction made before the sends: an unsubscribe (and the send to it is dropped).
await withTenant(pool, a.tenant, (c) => restrict(a.tenant, c, 'gone@example.org', 'unsubscribe'));
const sent = await sendTo(a, [
  'reader1@example.org', 'reader2@example.org', 'reader3@example.org',
  'bounce-hard@example.org', 'softbounce-x@example.org', 'complaint-dash@example.org', 'gone@example.org',
]);
const sentB = await sendTo(b, ['other@example.org', 'bounce-b@example.org']); // another instance's, never counted in A's
const api = mailApi(url, a.headers);
const delivered = await deliver(a.tenant, pool, sent.map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
await deliver(b.tenant, pool, sentB.map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
const byTo = new Map(sent.map((m) => [m.to, m.mail_id]));
await complainAbout(inboundPort, delivered.get(byTo.get('complaint-dash@example.org')!)!);
const finals = new Map<string, number>();
for (const m of sent) finals.set(m.to, (await api.mail(m.mail_id)).status);
await backdate(a.tenant, pool, sent.map((m) => m.mail_id), PREFETCH_SECONDS + 1); // past the prefetch window after delivery, without waiting it out
startTestPump(t, dbs);
const linksOf = (mailId: string) => trackingLinks(delivered.get(mailId)?.rendered);
const r1 = linksOf(byTo.get('reader1@example.org')!);
const r2 = linksOf(byTo.get('reader2@example.org')!);
const hit = async (link: string, init: RequestInit) => (await fetch(local(link), { redirect: 'manual', ...init })).arrayBuffer();
// reader1: opened twice by a person, clicked once, then a scanner follows a link (link_scanner)
// and a HEAD request (head_request).
await hit(r1.pixel, { headers: { 'user-agent': BROWSER } });
await hit(r1.clicks[0]!, { headers: { 'user-agent': BROWSER } });
await sleep(1_500);
await hit(r1.pixel, { headers: { 'user-agent': BROWSER } });
await hit(r1.clicks[1]!, { method: 'HEAD', headers: { 'user-agent': BROWSER } });
await hit(r1.clicks[1]!, { headers: { 'user-agent': 'python-requests/2.31' } });
// reader2: an Apple Mail Privacy Protection fetch (privacy_proxy) and an open with no user agent.
await hit(r2.pixel, { headers: { 'user-agent': 'Mozilla/5.0' } });
await hit(r2.pixel, { headers: { 'user-agent': '' } });
const OPENS = 4;
const CLICKS = 3;

// Everything in ClickHouse: the events (listings' counts), the complaint in Postgres.
await waitFor('the events to reach the listings', async () =>
  (await total(a, '/v1/activities/opens', {})) === OPENS && (await total(a, '/v1/activities/clicks', {})) === CLICKS ? true : undefined, { ms: 30_000 });
await waitFor('the complaint', async () => ((await all(a, '/v1/mail-complaints', {})).length === 1 ? true : undefined), { ms: 30_000 });
await waitFor('the mirror to hold the final statuses', async () => {
  const rows = await all(a, '/v1/activities/sent', {});
  return rows.length === sent.length && rows.every((r) => r.status === finals.get(r.to)) ? true : undefined;
}, { ms: 30_000 });
await waitFor('the machine flags to settle (nothing left in the outbox)', () => outboxDrained(pool, a.tenant.instanceId), { ms: 30_000 });

/** The public listings' counts for one range (local dates in `tz`): what the dashboard must equal. */
async function listingFigures(who: TestTenant, start: string, end: string, tz: string) {
  const range = { start_date: start, end_date: end, tz };
  const sentRows = await all(who, '/v1/activities/sent', range);
  const bouncedRows = sentRows.filter((r) => r.status === 6);
  let hard = 0;
  for (const m of bouncedRows) {
    const logs = await api.logs(m.mail_id);
    if (logs.filter((l: any) => l.status === 6).at(-1)?.bounce_class === 'hard') hard++;
  }
  const opened = await total(who, '/v1/activities/opens', range);
  const openedHuman = await total(who, '/v1/activities/opens', { ...range, exclude_machine: 'true' });
  const clicked = await total(who, '/v1/activities/clicks', range);
  const clickedHuman = await total(who, '/v1/activities/clicks', { ...range, exclude_machine: 'true' });
  const from = DateTime.fromISO(start, { zone: tz }).startOf('day').toMillis();
  const to = DateTime.fromISO(end, { zone: tz }).plus({ days: 1 }).startOf('day').toMillis();
  const restricted = (await all(who, '/v1/mail-restrictions', {})).filter((r) => Date.parse(r.restricted_at) >= from && Date.parse(r.restricted_at) < to);
  const deliveredRows = await all(who, '/v1/activities/sent', { ...range, status: '3' });
  const deliveredOpened = (await all(who, '/v1/activities/sent', { ...range, status: '3', opened: 'opened' })).length;
  return {
    figures: {
      sent: sentRows.length,
      delivered: deliveredRows.length,
      bounced: (await all(who, '/v1/activities/sent', { ...range, status: '6' })).length,
      bounced_hard: hard,
      bounced_soft: bouncedRows.length - hard,
      complained: (await all(who, '/v1/mail-complaints', range)).length,
      opened,
      opened_human: openedHuman,
      opened_machine: opened - openedHuman,
      clicked,
      clicked_human: clickedHuman,
      clicked_machine: clicked - clickedHuman,
      delivered_opened: deliveredOpened,
      delivered_opened_human: deliveredRows.filter((r) => r.human_opens > 0).length,
      delivered_clicked: deliveredRows.filter((r) => r.clicks > 0).length,
      delivered_clicked_human: deliveredRows.filter((r) => r.human_clicks > 0).length,
      restricted: restricted.length,
    },
    bouncedRows,
    restricted,
  };
}

t.test('the statuses the activity was meant to make', async (t) => {
  t.strictSame(Object.fromEntries(finals), {
    'reader1@example.org': 3, 'reader2@example.org': 3, 'reader3@example.org': 3, 'complaint-dash@example.org': 3,
    'bounce-hard@example.org': 6, 'softbounce-x@example.org': 6, 'gone@example.org': 4,
  });
});

t.test('a viewer reads the default range: the last 30 days in the instance zone, each figure equal to its listing', async (t) => {
  const res = await dash();
  t.equal(res.status, 200, JSON.stringify(res.body));
  const d = res.body;
  const today = DateTime.now().setZone(TZ).toISODate()!;
  t.equal(d.tz, TZ, "the instance's zone");
  t.equal(d.end_date, today, 'ends today, local');
  t.equal(d.start_date, DateTime.fromISO(today).minus({ days: 29 }).toISODate(), '30 days');
  t.equal(d.days.length, 30);
  t.strictSame(d.days.map((x: any) => x.date), [...d.days.map((x: any) => x.date)].sort(), 'oldest first');

  const whole = await listingFigures(a, d.start_date, d.end_date, TZ);
  t.strictSame(d.totals, whole.figures, 'totals = the listings over the range');
  t.comment(`totals: ${JSON.stringify(d.totals)}`);
  // Non-zero where the activity made something, so a figure stuck at zero fails.
  t.match(d.totals, {
    sent: 7, delivered: 4, bounced: 2, bounced_hard: 1, bounced_soft: 1, complained: 1,
    opened: OPENS, clicked: CLICKS,
  });
  t.ok(d.totals.opened_human > 0 && d.totals.opened_machine > 0, 'opens of both kinds');
  t.ok(d.totals.clicked_human > 0 && d.totals.clicked_machine > 0, 'clicks of both kinds');
  // reader1 opened by a person, reader2 by Apple's proxy and a bare fetch only: the raw open rate
  // is twice the human one; reader1's click is a person's.
  t.same(
    [d.totals.delivered_opened, d.totals.delivered_opened_human, d.totals.delivered_clicked, d.totals.delivered_clicked_human],
    [2, 1, 1, 1],
    'delivered mails opened and clicked, raw and human',
  );
  t.ok(d.totals.restricted >= 2, 'the unsubscribe and the hard bounce restrictions');

  // Day by day: every day with activity, and one without, equal its listings for that day.
  const active = d.days.filter((x: any) => x.sent || x.opened || x.clicked || x.complained || x.restricted);
  t.ok(active.length >= 1);
  const quiet = d.days.find((x: any) => !active.includes(x));
  for (const day of [...active, quiet]) {
    const { date, ...figures } = day;
    t.strictSame(figures, (await listingFigures(a, date, date, TZ)).figures, `${date}: each figure = its listing's for that day`);
  }
  const sum = (k: string) => d.days.reduce((s: number, x: any) => s + x[k], 0);
  for (const k of Object.keys(d.totals)) t.equal(d.totals[k], sum(k), `totals.${k} = the sum of the days`);

  // Bounce reasons: the reasons in the logs of the bounced mails of the sent listing.
  const reasons = new Map<string | null, number>();
  for (const m of whole.bouncedRows) {
    const reason = (await api.logs(m.mail_id)).filter((l: any) => l.status === 6).at(-1)?.bounce_reason ?? null;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  t.strictSame(
    [...d.bounce_reasons].sort((x: any, y: any) => String(x.reason).localeCompare(String(y.reason))),
    [...reasons].map(([reason, count]) => ({ reason, count })).sort((x, y) => String(x.reason).localeCompare(String(y.reason))),
    'top bounce reasons = the reasons logged for the bounced mails',
  );
  t.ok(d.bounce_reasons.some((r: any) => r.reason === 'userunknown'), 'the hard bounce is userunknown');
  t.comment(`bounce_reasons: ${JSON.stringify(d.bounce_reasons)}`);

  // Restrictions per reason: the listing's rows of the range, per reason.
  const perReason = new Map<string, number>();
  for (const r of whole.restricted) perReason.set(r.reason, (perReason.get(r.reason) ?? 0) + 1);
  t.strictSame(
    [...d.restrictions].sort((x: any, y: any) => x.reason.localeCompare(y.reason)),
    [...perReason].map(([reason, count]) => ({ reason, count })).sort((x, y) => x.reason.localeCompare(y.reason)),
  );
  t.comment(`restrictions: ${JSON.stringify(d.restrictions)}`);
});

t.test('another zone and an explicit range: still equal to the listings asked the same', async (t) => {
  const today = DateTime.now().setZone('America/Los_Angeles').toISODate()!;
  const start = DateTime.fromISO(today).minus({ days: 2 }).toISODate()!;
  const params = { start_date: start, end_date: today, tz: 'America/Los_Angeles' };
  const res = await dash(params);
  t.equal(res.status, 200);
  t.equal(res.body.days.length, 3);
  t.strictSame(res.body.totals, (await listingFigures(a, start, today, 'America/Los_Angeles')).figures);
  // A zone in another case (luxon accepts it) reaches ClickHouse and Postgres by its canonical name.
  const lower = await dash({ ...params, tz: 'america/los_angeles' });
  t.equal(lower.status, 200, JSON.stringify(lower.body));
  t.equal(lower.body.tz, 'America/Los_Angeles');
  t.strictSame(lower.body.totals, res.body.totals);
  // Before the activity: every figure zero.
  const old = await dash({ start_date: '2026-01-01', end_date: '2026-01-31', tz: 'UTC' });
  t.equal(old.status, 200);
  t.ok(Object.values(old.body.totals).every((v) => v === 0), 'a range without activity is all zeros');
  t.strictSame([old.body.bounce_reasons, old.body.restrictions], [[], []]);
});

t.test('another instance: its own figures only; a user without membership gets 404', async (t) => {
  const bOwner = await dash({}, onlyBToken, b.slug);
  t.equal(bOwner.status, 200);
  t.equal(bOwner.body.totals.sent, 2, "B's two mails, not A's seven");
  const cross = await dash({}, onlyBToken, a.slug);
  t.equal(cross.status, 404);
  t.equal(cross.body.code, 'instance_not_found');
});

t.test('no session: 401; no slug: 400', async (t) => {
  const none = await jsonCall(url, 'GET', '/v1/private/dashboard', undefined, { 'x-instance-slug': a.slug });
  t.equal(none.status, 401);
  t.equal(none.body.code, 'unauthorized');
  const noSlug = await jsonCall(url, 'GET', '/v1/private/dashboard', undefined, panelHeaders(viewerToken));
  t.equal(noSlug.status, 400);
});

t.test('range validation: 422 with the pointer', async (t) => {
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ start_date: '2026-01-01', end_date: '2026-06-30' }, '/end_date', 'value_error.date_range'],
    [{ start_date: '2026-03-02', end_date: '2026-03-01' }, '/end_date', 'value_error.date_range'],
    [{ start_date: '2026-02-30' }, '/start_date', ''],
    [{ end_date: 'yesterday' }, '/end_date', ''],
    [{ tz: 'Mars/Olympus' }, '/tz', 'value_error.timezone'],
  ];
  for (const [params, pointer, code] of cases) {
    const r = await dash(params);
    t.equal(r.status, 422, `${JSON.stringify(params)}: ${JSON.stringify(r.body)}`);
    t.equal(r.body.errors?.[0]?.pointer, pointer);
    if (code) t.equal(r.body.errors[0].code, code);
  }
  const max = await dash({ start_date: '2026-01-01', end_date: '2026-04-02', tz: 'UTC' });
  t.equal(max.status, 200, '92 days is the most');
  t.equal(max.body.days.length, 92);
  t.equal((await dash({ start_date: '2026-01-01', end_date: '2026-04-03', tz: 'UTC' })).status, 422, '93 days is refused');
});

t.test('ClickHouse refusing or silent: 503 service_unavailable with Retry-After, never a 500', async (t) => {
  // A port nothing listens on, and a server that accepts and never answers.
  const closed = await freePort();
  const sockets: Socket[] = [];
  const silent = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const silentPort = (silent.address() as { port: number }).port;
  const cases: Array<[string, string, Record<string, string>, string]> = [
    ['refused', `http://127.0.0.1:${closed}/cartero`, {}, '1'],
    ['silent', `http://127.0.0.1:${silentPort}/cartero`, { CLICKHOUSE_REQUEST_TIMEOUT_MS: '1000' }, '5'],
  ];
  for (const [what, clickhouseUrl, env, retryAfter] of cases) {
    const web = await startTestWeb(t, { databaseUrl: dbs.databaseUrl, clickhouseUrl }, { env });
    const r = await jsonCall(web.url, 'GET', '/v1/private/dashboard', undefined, panelHeaders(viewerToken, a.slug));
    t.equal(r.status, 503, `${what}: ${JSON.stringify(r.body)}`);
    t.equal(r.body.code, 'service_unavailable');
    t.equal(r.headers.get('retry-after'), retryAfter);
  }
});
