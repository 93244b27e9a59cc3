import { readFileSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import t, { type Test } from 'tap';
import { startEmbeddedClickHouse } from '../analytics/embedded/server.js';
import { createClickHouseClient } from '../analytics/client.js';
import { insertMailEvents } from '../analytics/mail-events.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { clickToken, openToken, signToken, unsubscribeToken } from '../domain/tracking/tokens.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, messagesOf, startSendStack, waitFor } from './helpers/send-stack.js';
import { startTestWeb } from './helpers/web.js';

/**
 * Tracking end to end: real mail from the simulator, its pixel and links fetched over HTTP from
 * the web app, a worker dyno (its own process) pumping the outbox into the real ClickHouse.
 */
const PUBLIC_URL = 'https://links.cartero.test';
// Its ClickHouse is stopped and restarted below: a server of its own, not the suite's.
const stack = await startSendStack(t, { label: 'tracking', publicUrl: PUBLIC_URL, ownClickHouse: true });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'track.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);
stack.spawnWorker();
const secret = await trackingSecret(dbs.pool);
let ch = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => ch.close());

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
/** A link of a mail, pointed at the test's web app instead of PUBLIC_URL. */
const local = (link: string) => stack.url + link.slice(PUBLIC_URL.length);

async function sendOne(to: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await api.send({
    from: 'news@track.example',
    to: [{ email: to }],
    subject: 'Tracked',
    html: '<html><body><p>Hi</p><a href="https://shop.example/a?x=1">A</a> <a href="https://shop.example/b">B</a></body></html>',
    ...extra,
  });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.mails[0].mail_id;
}

/** The tracking links of a delivered mail, read from the message the simulator stored. */
async function linksOf(mailId: string): Promise<{ pixel: string; clicks: string[]; unsubscribe: string }> {
  const files = messagesOf(stack.mailboxDir, mailId);
  if (files.length !== 1) throw new Error(`${files.length} messages stored for ${mailId}`);
  const parsed = await simpleParser(readFileSync(files[0]!.file));
  const html = String(parsed.html);
  const pixel = html.match(/<img[^>]+src="([^"]+\/t\/o\/[^"]+)"/)![1]!;
  const clicks = [...html.matchAll(/href="([^"]+\/t\/c\/[^"]+)"/g)].map((m) => m[1]!);
  const unsubscribe = files[0]!.headers.find(([k]) => k === 'list-unsubscribe')![1].replace(/^<|>$/g, '');
  return { pixel, clicks, unsubscribe };
}

async function chRows(mailId: string): Promise<any[]> {
  const rs = await ch.query({
    query: `SELECT event_type, mail_id, msg_id, recipient, url, user_agent, ip, machine, subject, sender
              FROM mail_events FINAL WHERE mail_id = {m:String} AND status IS NULL ORDER BY occurred_at, event_id`,
    query_params: { m: mailId },
    format: 'JSONEachRow',
  });
  return rs.json();
}

async function delivered(t: Test, to: string): Promise<string> {
  const id = await sendOne(to);
  const m = await api.waitFinal(id);
  t.equal(m.status, 3, `${to} delivered`);
  return id;
}

t.test('opens and clicks of a real mail are counted at once and reach ClickHouse', async (t) => {
  const id = await delivered(t, 'reader@example.org');
  await new Promise((r) => setTimeout(r, 2_100)); // past the prefetch window of delivery
  const links = await linksOf(id);
  t.ok(links.pixel.startsWith(`${PUBLIC_URL}/t/o/`), 'pixel on PUBLIC_URL');
  t.equal(links.clicks.length, 2, 'both links tracked');

  const px = await fetch(local(links.pixel), { headers: { 'user-agent': BROWSER } });
  t.equal(px.status, 200);
  t.equal(px.headers.get('content-type'), 'image/gif');
  t.match(px.headers.get('cache-control'), /no-store/);
  const gif = Buffer.from(await px.arrayBuffer());
  t.equal(gif.subarray(0, 6).toString(), 'GIF89a', 'a GIF');
  t.same([gif.readUInt16LE(6), gif.readUInt16LE(8)], [1, 1], '1x1');

  const click = await fetch(local(links.clicks[1]!), { redirect: 'manual', headers: { 'user-agent': BROWSER } });
  t.equal(click.status, 302);
  t.equal(click.headers.get('location'), 'https://shop.example/b', 'redirects to the original URL');

  // Counted the moment the endpoints answered (pending outbox rows are part of the count).
  let m = await api.mail(id);
  t.equal(m.opens, 1, 'one open');
  t.equal(m.clicks, 1, 'one click');

  await new Promise((r) => setTimeout(r, 1_500)); // a human-paced second click
  await fetch(local(links.clicks[0]!), { redirect: 'manual', headers: { 'user-agent': BROWSER } });
  await fetch(local(links.pixel), { headers: { 'user-agent': BROWSER } });
  m = await api.mail(id);
  t.same([m.opens, m.clicks], [2, 2]);

  const rows = await waitFor('4 events in ClickHouse', async () => {
    const r = await chRows(id);
    return r.length === 4 ? r : undefined;
  }, { ms: 20_000 });
  t.same(rows.map((r) => r.event_type).sort(), ['click', 'click', 'open', 'open']);
  const c = rows.find((r) => r.event_type === 'click' && r.url === 'https://shop.example/b');
  t.ok(c, 'click row with url_redirect');
  t.equal(c.recipient, 'reader@example.org');
  t.equal(c.sender, 'news@track.example');
  t.equal(c.subject, 'Tracked');
  t.equal(c.user_agent, BROWSER, 'user agent recorded');
  t.match(c.ip, /127\.0\.0\.1/, 'ip recorded');
  t.same(rows.map((r) => r.machine), ['', '', '', ''], 'browser events are not flagged');
  // The pump settled the counts into the row: the same numbers once nothing is pending.
  const settled = await dbs.pool.query(`SELECT opens, clicks, human_opens, human_clicks FROM mails WHERE mail_id = $1`, [id]);
  t.same(settled.rows[0], { opens: 2, clicks: 2, human_opens: 2, human_clicks: 2 });
  m = await api.mail(id);
  t.same([m.human_opens, m.human_clicks], [2, 2], 'GET /v1/mails/{id}: a browser\'s opens and clicks are human');
  // The delivery history and the mirror of the mail row reach ClickHouse through the same pump.
  const moves = await ch.query({
    query: `SELECT event_type, status FROM mail_events FINAL WHERE mail_id = {m:String} AND status IS NOT NULL ORDER BY status`,
    query_params: { m: id },
    format: 'JSONEachRow',
  });
  t.same(await moves.json(), [{ event_type: 'received', status: 1 }, { event_type: 'queued', status: 2 }, { event_type: 'sent', status: 3 }]);
  // The pump inserts a tick's events, then its mails' snapshots: the events can be readable a
  // moment before the snapshot that counts them.
  const mirror = await waitFor('the mirror row with both opens and clicks', async () => {
    const rs = await ch.query({
      query: `SELECT status, opens, clicks, human_opens, human_clicks, recipient, subject FROM mails FINAL WHERE mail_id = {m:String}`,
      query_params: { m: id },
      format: 'JSONEachRow',
    });
    const r = (await rs.json()) as Array<{ opens: number; clicks: number }>;
    return r[0]?.opens === 2 && r[0]?.clicks === 2 ? r : undefined;
  }, { ms: 20_000 });
  t.same(
    mirror,
    [{ status: 3, opens: 2, clicks: 2, human_opens: 2, human_clicks: 2, recipient: 'reader@example.org', subject: 'Tracked' }],
    'the mirror row is current',
  );
});

t.test('no open redirect: tampered or foreign tokens never redirect', async (t) => {
  const id = await delivered(t, 'careful@example.org');
  const good = clickToken(secret, id, 'https://shop.example/a');
  const [body, sig] = good.split('.');
  const forged = Buffer.from(JSON.stringify({ kind: 'click', mail_id: id, url: 'https://evil.example/' })).toString('base64url');
  const cases: Array<[string, string]> = [
    ['payload swapped, signature kept', `${forged}.${sig}`],
    ['signature of another secret', signToken('not-the-secret', { kind: 'click', mail_id: id, url: 'https://evil.example/' })],
    ['open token on the click path', openToken(secret, id)],
    ['signed javascript: URL', signToken(secret, { kind: 'click', mail_id: id, url: 'javascript:alert(1)' })],
    ['truncated', body!],
    ['garbage', 'abc'],
  ];
  for (const [what, token] of cases) {
    const r = await fetch(`${stack.url}/t/c/${token}`, { redirect: 'manual' });
    t.equal(r.status, 404, what);
    t.equal(r.headers.get('location'), null, `${what}: no Location`);
  }
  const html = await fetch(`${stack.url}/t/c/${forged}.${sig}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  t.equal(html.status, 404);
  t.match(html.headers.get('content-type'), /text\/html/, 'a browser gets a page');

  const px = await fetch(`${stack.url}/t/o/${forged}.${sig}`);
  t.equal(px.status, 200, 'a bad pixel token still gets the image');
  const m = await api.mail(id);
  t.same([m.opens, m.clicks], [0, 0], 'and nothing is recorded');
});

t.test('opens and clicks answered ahead of Express keep the HTTP conventions', async (t) => {
  // runtime/web.ts answers GET/HEAD /t/o and /t/c without Express (api/tracking/fast-path.ts);
  // these are the conventions its answers share with every other answer of the web process.
  const id = await delivered(t, 'conventions@example.org');
  const pixel = `/t/o/${openToken(secret, id)}`;
  const click = `/t/c/${clickToken(secret, id, 'https://shop.example/a b?x=1')}`;
  const ids = new Set<string>();
  const fresh = (r: Response, what: string) => {
    const rid = r.headers.get('x-request-id');
    t.match(rid, /^[A-Za-z0-9._:-]{8,}$/, `${what}: X-Request-Id`);
    ids.add(String(rid));
  };

  const px = await fetch(stack.url + pixel);
  fresh(px, 'pixel');
  t.same(
    ['cache-control', 'pragma', 'expires', 'content-type', 'content-length'].map((h) => px.headers.get(h)),
    ['no-store, no-cache, must-revalidate, private, max-age=0', 'no-cache', '0', 'image/gif', '42'],
    'pixel headers',
  );
  const headPx = await fetch(stack.url + pixel, { method: 'HEAD' });
  fresh(headPx, 'HEAD pixel');
  t.same([headPx.status, headPx.headers.get('content-length'), (await headPx.arrayBuffer()).byteLength], [200, '42', 0], 'HEAD: headers, no body');

  const c = await fetch(stack.url + click, { redirect: 'manual' });
  fresh(c, 'click');
  t.same(
    ['location', 'cache-control', 'referrer-policy', 'vary', 'content-type'].map((h) => c.headers.get(h)),
    ['https://shop.example/a%20b?x=1', 'no-store, no-cache, must-revalidate, private, max-age=0', 'no-referrer', 'Accept', 'text/plain; charset=utf-8'],
    'click headers as Express\'s res.redirect sets them',
  );
  t.equal(await c.text(), 'Found. Redirecting to https://shop.example/a%20b?x=1');
  const html = await fetch(stack.url + click, { redirect: 'manual', headers: { accept: 'text/html' } });
  fresh(html, 'click (html)');
  t.match(html.headers.get('content-type'), /^text\/html/, 'a browser gets the html body');
  // Another spelling of the path goes through Express's router: the same answer.
  const slash = await fetch(`${stack.url}${click}/`, { redirect: 'manual' });
  fresh(slash, 'click via Express');
  t.same([slash.status, slash.headers.get('location'), slash.headers.get('vary')], [302, c.headers.get('location'), 'Accept']);
  t.equal(ids.size, 5, 'a fresh id per answer');

  for (const path of [pixel, click]) {
    const kept = await fetch(stack.url + path, { redirect: 'manual', headers: { 'x-request-id': 'router-abc-12345' } });
    t.equal(kept.headers.get('x-request-id'), 'router-abc-12345', `${path.slice(0, 4)}: a plain incoming id is kept`);
    const junk = await fetch(stack.url + path, { redirect: 'manual', headers: { 'x-request-id': 'no spaces <script>' } });
    t.not(junk.headers.get('x-request-id'), 'no spaces <script>', `${path.slice(0, 4)}: junk is replaced`);
    // Other methods are Express's 405, as on every other path.
    const post = await fetch(stack.url + path, { method: 'POST' });
    t.equal(post.status, 405, `POST ${path.slice(0, 4)}: 405`);
    t.equal(post.headers.get('allow'), 'GET, HEAD');
    t.match(post.headers.get('content-type'), /^application\/problem\+json/);
    t.equal((await post.json()).trace_id, post.headers.get('x-request-id'));
  }

  // The client address honours TRUST_PROXY exactly as Express's req.ip does.
  const proxied = await startTestWeb(t, dbs, { env: { TRUST_PROXY: 'loopback' } });
  const xff = { 'x-forwarded-for': '203.0.113.9, 198.51.100.7', 'user-agent': BROWSER };
  await fetch(stack.url + pixel, { headers: xff });
  await fetch(proxied.url + pixel, { headers: xff });
  await fetch(proxied.url + click, { redirect: 'manual', headers: xff });
  const ips = await dbs.pool.query(`SELECT kind, host(ip) AS ip FROM event_outbox WHERE mail_id = $1 AND user_agent = $2 ORDER BY id`, [id, BROWSER]);
  t.same(ips.rows, [
    { kind: 'open', ip: '127.0.0.1' }, // IPv4-mapped IPv6 stored as IPv4, as authentication reads it
    { kind: 'open', ip: '198.51.100.7' },
    { kind: 'click', ip: '198.51.100.7' },
  ], 'forwarded address believed only from a trusted proxy, only its own hop');

  const metrics = await (await fetch(`${stack.internalUrl}/metrics`)).text();
  for (const [method, route, status] of [['GET', '/t/o/{token}', '200'], ['HEAD', '/t/o/{token}', '200'], ['GET', '/t/c/{token}', '302']]) {
    const line = metrics.split('\n').find((l) => l.startsWith(`cartero_http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"}`));
    t.ok(line && Number(line.split(' ')[1]) > 0, `/metrics counts ${method} ${route} ${status}`);
  }
  t.notMatch(metrics, /route="\/t\/[oc]\/ey/, 'no token in a label');
});

t.test('machine-made opens and clicks are flagged, not dropped', async (t) => {
  const id = await delivered(t, 'scanned@example.org');
  await new Promise((r) => setTimeout(r, 2_100)); // past the prefetch window of delivery
  const links = await linksOf(id);
  await fetch(local(links.pixel), { headers: { 'user-agent': 'Mozilla/5.0' } }); // Apple MPP
  await fetch(local(links.pixel), { headers: { 'user-agent': BROWSER } });
  // A security gateway fetching the pixel: no reader (issue 32; it counted as human before).
  await fetch(local(links.pixel), { headers: { 'user-agent': 'Mozilla/5.0 (compatible; Barracuda Link Protection)' } });
  // A scanner following every link at once.
  await fetch(local(links.clicks[0]!), { redirect: 'manual', headers: { 'user-agent': BROWSER } });
  await fetch(local(links.clicks[1]!), { redirect: 'manual', headers: { 'user-agent': BROWSER } });
  const head = await fetch(local(links.clicks[0]!), { method: 'HEAD', redirect: 'manual', headers: { 'user-agent': BROWSER } });
  t.equal(head.status, 302);
  await fetch(local(links.clicks[0]!), { redirect: 'manual', headers: { 'user-agent': 'python-requests/2.31' } });

  const m = await api.mail(id);
  t.same([m.opens, m.clicks], [3, 4], 'every event counted');
  // The second click turns the first into a burst after the first may have shipped: that one
  // goes back to stage 1 and ships again. Read ClickHouse once the outbox says all shipped.
  const rows = await waitFor('7 events shipped to ClickHouse', async () => {
    const left = await dbs.pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE mail_id = $1 AND stage < 2`, [id]);
    if (left.rows[0].n) return undefined;
    const r = await chRows(id);
    return r.length === 7 ? r : undefined;
  }, { ms: 20_000 });
  const opens = rows.filter((r) => r.event_type === 'open');
  t.same(opens.map((r) => r.machine).sort(), ['', 'image_scanner', 'privacy_proxy']);
  const clicks = rows.filter((r) => r.event_type === 'click').map((r) => r.machine);
  t.same(clicks.sort(), ['click_burst', 'click_burst', 'head_request', 'link_scanner']);
  const pg = await dbs.pool.query(`SELECT machine FROM event_outbox WHERE mail_id = $1 AND kind = 'click' ORDER BY id`, [id]);
  t.same(pg.rows.map((r) => r.machine), ['click_burst', 'click_burst', 'head_request', 'link_scanner'], 'the outbox holds the same flags');

  // Both counts side by side (issue 32): the mail, the sent listing and the listings with
  // exclude_machine=true agree: one human open of three, no human click of four.
  const day = new Date().toISOString().slice(0, 10);
  const range = `start_date=${day}&end_date=${day}&mail_id=${id}&page_size=100`;
  const mail = await api.mail(id);
  t.same([mail.opens, mail.clicks, mail.human_opens, mail.human_clicks], [3, 4, 1, 0], 'GET /v1/mails/{id}: raw and human counts');
  const listed = (await api.call('GET', `/v1/mails?${range}`)).body.data;
  t.same(listed.map((x: any) => [x.human_opens, x.human_clicks]), [[1, 0]], 'GET /v1/mails: the same');
  for (const [kind, field] of [['opens', 'human_opens'], ['clicks', 'human_clicks']] as const) {
    const human = await api.call('GET', `/v1/activities/${kind}?${range}&exclude_machine=true`);
    t.equal(human.status, 200);
    t.equal(human.body.data.length, mail[field], `${field} is what /v1/activities/${kind} lists with exclude_machine=true`);
  }
  const sent = await waitFor('the mirror row with every count', async () => {
    const r = await api.call('GET', `/v1/activities/sent?${range}`);
    const row = r.body.data?.[0];
    return row?.opens === 3 && row?.clicks === 4 && row?.human_clicks === 0 ? row : undefined;
  }, { ms: 20_000 });
  t.same([sent.human_opens, sent.human_clicks], [1, 0], 'GET /v1/activities/sent: the same, from ClickHouse');
  const exported = await api.call('GET', `/v1/activities/sent/export?${range}&format=json&include_machine=true`);
  t.same(exported.body.map((x: any) => [x.human_opens, x.human_clicks]), [[1, 0]], 'the sent export with include_machine=true');
  const csv = String((await api.call('GET', `/v1/activities/sent/export?${range}`)).body);
  t.notMatch(csv.split('\n')[0], /human/, "the sent CSV keeps the spec's columns");
  const csvWith = String((await api.call('GET', `/v1/activities/sent/export?${range}&include_machine=true`)).body).replace(/^\uFEFF/, '').split(/\r?\n/);
  t.match(csvWith[0], /"custom_group_code","human_opens","human_clicks"$/, 'include_machine=true appends the human counts');
  t.match(csvWith[1], /,1,0$/);
});

t.test('one-click unsubscribe: event row, restriction, and the next send is dropped', async (t) => {
  const id = await delivered(t, 'Leaving@Example.org');
  const { unsubscribe } = await linksOf(id);
  t.equal(unsubscribe, `${PUBLIC_URL}/u/${unsubscribeToken(secret, id)}`);

  const page = await fetch(local(unsubscribe));
  t.equal(page.status, 200);
  t.match(await page.text(), /Stop sending mail to <strong>leaving@example\.org<\/strong>/, 'the page asks first');
  const none = await dbs.pool.query(`SELECT count(*)::int AS n FROM mail_unsubscribes WHERE mail_id = $1`, [id]);
  t.equal(none.rows[0].n, 0, 'showing the page unsubscribes nobody (scanners fetch it)');

  const r = await fetch(local(unsubscribe), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  t.equal(r.status, 200);
  const unsub = await dbs.pool.query(
    `SELECT u.instance_id, m.to_email AS recipient, u.method, u.reason, u.comment FROM mail_unsubscribes u JOIN mails m USING (mail_id) WHERE u.mail_id = $1`,
    [id],
  );
  t.same(unsub.rows, [{ instance_id: a.tenant.instanceId, recipient: 'leaving@example.org', method: 'one_click', reason: null, comment: null }]);
  const restr = await dbs.pool.query(`SELECT recipient, reason, deleted_at FROM mail_restrictions WHERE instance_id = $1 AND recipient = 'leaving@example.org'`, [
    a.tenant.instanceId,
  ]);
  t.same(restr.rows, [{ recipient: 'leaving@example.org', reason: 'unsubscribe', deleted_at: null }]);
  t.match(await (await fetch(local(unsubscribe))).text(), /You are unsubscribed/, 'the page now offers to resubscribe');

  // Later the page's form completes the reason; the first unsubscribe is kept.
  await fetch(local(unsubscribe), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'reason=too_frequent&comment=weekly%20is%20plenty' });
  const again = await dbs.pool.query(`SELECT method, reason, comment FROM mail_unsubscribes WHERE mail_id = $1`, [id]);
  t.same(again.rows, [{ method: 'one_click', reason: 'too_frequent', comment: 'weekly is plenty' }], 'one row, reason completed');
  const events = await dbs.pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE mail_id = $1 AND kind = 'unsubscribe'`, [id]);
  t.equal(events.rows[0].n, 1, 'one unsubscribe event');
  await waitFor('unsubscribe in ClickHouse', async () => ((await chRows(id)).some((r) => r.event_type === 'unsubscribe') ? true : undefined), { ms: 20_000 });

  const next = await sendOne('leaving@example.org');
  const dropped = await api.waitFinal(next);
  t.equal(dropped.status, 4, 'next send dropped');
  t.same((await api.logs(next)).map((l: any) => [l.status, l.reason]), [[1, 'accepted'], [4, 'restricted:unsubscribe']]);

  // Resubscribing lifts the restriction and leaves the event row alone.
  const re = await fetch(local(unsubscribe), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=resubscribe' });
  t.equal(re.status, 200);
  const lifted = await dbs.pool.query(`SELECT reason, deleted_at IS NOT NULL AS lifted FROM mail_restrictions WHERE recipient = 'leaving@example.org'`);
  t.same(lifted.rows, [{ reason: 'unsubscribe', lifted: true }]);
  t.match(await (await fetch(local(unsubscribe))).text(), /Stop sending mail to/, 'the page asks again');
  const kept = await dbs.pool.query(`SELECT method, reason FROM mail_unsubscribes WHERE mail_id = $1`, [id]);
  t.same(kept.rows, [{ method: 'one_click', reason: 'too_frequent' }], 'the unsubscribe event is not modified');
  const third = await sendOne('leaving@example.org');
  t.equal((await api.waitFinal(third)).status, 3, 'sent again after resubscribing');

  const bad = await fetch(`${stack.url}/u/${openToken(secret, id)}`, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
  t.equal(bad.status, 404, 'an open token cannot unsubscribe');
});

t.test('a batch shipped twice counts once in ClickHouse', async (t) => {
  const row = {
    instance_id: 999_001, event_type: 'open', status: null, occurred_at: new Date('2026-11-01T10:00:00Z'), event_id: 424_242,
    mail_id: 'M-RESHIP', msg_id: 'G', recipient: 'r@example.org', sender_id: null, sender: null, subject: 's',
    custom_msg_id: null, custom_group_code: null, mail_received_at: new Date('2026-11-01T09:00:00Z'), sent_at: null,
    url: null, user_agent: 'ua', ip: '', machine: '',
  };
  await insertMailEvents(ch, [row]);
  await insertMailEvents(ch, [row, { ...row, event_id: 424_243 }]); // the retry carries the same event again
  const rs = await ch.query({ query: `SELECT count() AS n FROM mail_events FINAL WHERE instance_id = 999001`, format: 'JSONEachRow' });
  t.same(await rs.json(), [{ n: '2' }], 'two events, not three rows');
});

t.test('a batch the pump ships again (its commit lost) counts once, in Postgres and ClickHouse', async (t) => {
  const id = await delivered(t, 'reship@example.org');
  const { pixel } = await linksOf(id);
  for (let i = 0; i < 5; i++) await (await fetch(local(pixel), { headers: { 'user-agent': BROWSER } })).arrayBuffer();
  const stages = async () =>
    (await dbs.pool.query(`SELECT count(*) FILTER (WHERE stage = 2)::int AS shipped, count(*)::int AS n FROM event_outbox WHERE mail_id = $1 AND kind = 'open'`, [id])).rows[0];
  await waitFor('the five opens shipped', async () => ((await stages()).shipped === 5 ? true : undefined), { ms: 20_000 });
  // The state a worker leaves when it dies after ClickHouse took the batch and before it marked
  // the events shipped: counted (stage 1), not shipped. The pump must ship them again.
  await dbs.pool.query(`UPDATE event_outbox SET stage = 1 WHERE mail_id = $1 AND kind = 'open'`, [id]);
  await waitFor('the pump to ship them again', async () => ((await stages()).shipped === 5 ? true : undefined), { ms: 20_000 });
  t.equal((await api.mail(id)).opens, 5, 'mails.opens counts each once');
  const rs = await ch.query({
    query: `SELECT count() AS n, uniqExact(event_id) AS ids FROM mail_events FINAL WHERE mail_id = {m:String} AND event_type = 'open'`,
    query_params: { m: id },
    format: 'JSONEachRow',
  });
  t.same(await rs.json(), [{ n: '5', ids: '5' }], 'ClickHouse: five events');
  const mirror = await ch.query({ query: 'SELECT opens FROM mails FINAL WHERE mail_id = {m:String}', query_params: { m: id }, format: 'JSONEachRow' });
  t.same(await mirror.json(), [{ opens: 5 }], 'the mirror counts five');
});

t.test('ClickHouse down while 1,000 opens arrive: all counted once when it is back', async (t) => {
  const id = await delivered(t, 'outage@example.org');
  const { pixel } = await linksOf(id);
  const port = Number(new URL(dbs.clickhouse.url).port);
  await dbs.clickhouse.stop();

  const total = 1_000;
  let next = 0;
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < total) {
        next++;
        const r = await fetch(local(pixel), { headers: { 'user-agent': BROWSER } });
        await r.arrayBuffer();
        statuses.push(r.status);
      }
    }),
  );
  t.equal(statuses.filter((s) => s === 200).length, total, 'every hit answered');
  t.equal((await api.mail(id)).opens, total, 'counted while ClickHouse is down');
  await waitFor('the pump to count them all', async () => {
    const r = await dbs.pool.query(`SELECT count(*) FILTER (WHERE stage = 0)::int AS fresh, count(*)::int AS n FROM event_outbox WHERE mail_id = $1 AND kind = 'open'`, [id]);
    return r.rows[0].fresh === 0 && r.rows[0].n === total ? true : undefined;
  }, { ms: 20_000 });
  const waiting = await dbs.pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE mail_id = $1 AND kind = 'open' AND stage = 1`, [id]);
  t.equal(waiting.rows[0].n, total, 'all waiting in the outbox');

  const restarted = await startEmbeddedClickHouse({ dir: dbs.clickhouse.dir, port });
  t.teardown(() => restarted.stop());
  await ch.close();
  ch = createClickHouseClient(dbs.clickhouseUrl);
  const counted = await waitFor('1,000 opens in ClickHouse', async () => {
    // Errors while the restarted server comes up are retried like an empty answer.
    const rs = await ch.query({
      query: `SELECT count() AS n, uniqExact(event_id) AS ids FROM mail_events FINAL WHERE mail_id = {m:String} AND event_type = 'open'`,
      query_params: { m: id },
      format: 'JSONEachRow',
    }).catch(() => undefined);
    if (!rs) return undefined;
    const [row] = (await rs.json()) as Array<{ n: string; ids: string }>;
    return Number(row!.n) === total ? row : undefined;
  }, { ms: 90_000, every: 500 });
  t.equal(Number(counted.ids), total, 'each event once');
  // The pump commits "shipped" in Postgres after ClickHouse acknowledged the insert, so the rows
  // can be readable there a moment before the commit.
  const shipped = await waitFor('all marked shipped', async () => {
    const r = await dbs.pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE mail_id = $1 AND kind = 'open' AND stage = 2`, [id]);
    return r.rows[0].n === total ? r.rows[0].n : undefined;
  }, { ms: 20_000 });
  t.equal(shipped, total, 'all marked shipped');
  t.equal((await api.mail(id)).opens, total, 'the mail still counts each once');
});

t.test('a form field with a NUL byte unsubscribes instead of failing with a 500', async (t) => {
  const id = await delivered(t, 'nul@example.org');
  const { unsubscribe } = await linksOf(id);
  const r = await fetch(local(unsubscribe), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'reason=other&comment=a%00b',
  });
  t.equal(r.status, 200);
  const row = await dbs.pool.query(`SELECT method, reason, comment FROM mail_unsubscribes WHERE mail_id = $1`, [id]);
  t.same(row.rows, [{ method: 'page', reason: 'other', comment: 'ab' }]);
});

t.test('RFC 8058 one-click sent as multipart/form-data unsubscribes too', async (t) => {
  const id = await delivered(t, 'multipart@example.org');
  const { unsubscribe } = await linksOf(id);
  const form = new FormData();
  form.set('List-Unsubscribe', 'One-Click');
  const r = await fetch(local(unsubscribe), { method: 'POST', body: form });
  t.equal(r.status, 200);
  const row = await dbs.pool.query(`SELECT method FROM mail_unsubscribes WHERE mail_id = $1`, [id]);
  t.same(row.rows, [{ method: 'one_click' }]);
});
