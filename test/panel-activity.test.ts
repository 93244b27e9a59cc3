import t from 'tap';
import { testDatabases } from './helpers/databases.js';
import { PREFETCH_SECONDS } from '../domain/tracking/machine.js';
import { backdate, deliver, outboxDrained, startTestPump, trackingLinks, type Delivered } from './helpers/delivered.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { mailApi } from './helpers/send-stack.js';
import { sleep, waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The panel's Activity routes (docs/panel.md, Activity): the four listings, their four exports
 * and the mail reads at /v1/private/..., mirrors of the public routes. Against real activity
 * (mails accepted by the API and delivered through the send worker's steps, test/helpers/delivered.ts,
 * a hard bounce, opens and clicks through the real tracking links by a person and by machines,
 * the pump shipping them to ClickHouse), each panel
 * answer, for a viewer, must equal the public API's for the same query: the listings with their
 * filters, group_by, the machine switch and pages; the exports byte for byte. Another
 * instance's mail is a 404; the panel does not send.
 */

const PUBLIC_URL = 'https://links.activity.test';
const dbs = await testDatabases(t, 'panelactivity');
const { url } = await startTestWeb(t, dbs, { env: { PUBLIC_URL } });
const pool = dbs.pool;

const scopes = ['mail:send', 'mail:read'];
const a = await makeTenant(pool, { scopes, tz: 'Europe/Madrid' });
const b = await makeTenant(pool, { scopes });
for (const x of [a, b]) await makeSenders(pool, x.tenant, { domain: `${x.slug}.example`, senders: [{ email: 'news', name: 'News' }] });
const viewer = await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'viewer' }]);
const viewerToken = await panelLogin(url, viewer);
const panel = panelHeaders(viewerToken, a.slug);

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const local = (link: string) => url + link.slice(PUBLIC_URL.length);
const HTML = '<p>Hi <a href="https://shop.example/a">A</a> <a href="https://shop.example/b">B</a></p>';

async function send(who: typeof a, to: string[], subject: string) {
  const r = await mailApi(url, who.headers).send({ from: `news@${who.slug}.example`, to: to.map((email) => ({ email })), subject, html: HTML, custom_group_code: 'spring' });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.mails as Array<{ mail_id: string; to: string }>;
}

const sent = [
  ...(await send(a, ['reader1@example.org', 'reader2@example.org', 'reader3@example.org', 'bounce-hard@example.org'], 'Activity spring')),
  ...(await send(a, ['reader4@example.org'], 'Activity other')),
];
const [bMail] = await send(b, ['other@example.org'], 'B only');
const delivered = await deliver(a.tenant, pool, sent.map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
await deliver(b.tenant, pool, [bMail!.mail_id], { publicUrl: PUBLIC_URL });
await backdate(a.tenant, pool, sent.map((m) => m.mail_id), PREFETCH_SECONDS + 1); // past the prefetch window after delivery, without waiting it out
startTestPump(t, dbs);
const byTo = new Map(sent.map((m) => [m.to, m.mail_id]));

const linksOf = (mailId: string) => trackingLinks((delivered.get(mailId) as Delivered).rendered);
const hit = async (link: string, ua: string) => (await fetch(local(link), { redirect: 'manual', headers: { 'user-agent': ua } })).arrayBuffer();
const r1 = linksOf(byTo.get('reader1@example.org')!);
const r2 = linksOf(byTo.get('reader2@example.org')!);
const r4 = linksOf(byTo.get('reader4@example.org')!);
await hit(r1.pixel, BROWSER);
await hit(r1.clicks[0]!, BROWSER);
await sleep(1_500);
await hit(r1.pixel, BROWSER);
await hit(r1.clicks[1]!, 'python-requests/2.31'); // a link scanner: machine-made
await hit(r2.pixel, 'Mozilla/5.0'); // a privacy proxy: machine-made
await hit(r4.pixel, BROWSER);
await hit(r4.clicks[0]!, BROWSER);
const OPENS = 4;
const CLICKS = 3;

const publicGet = (path: string) => jsonCall(url, 'GET', path, undefined, a.headers);
const panelGet = (path: string, headers = panel) => jsonCall(url, 'GET', path.replace(/^\/v1\//, '/v1/private/'), undefined, headers);
await waitFor('the events in the listings', async () => {
  const o = await publicGet('/v1/activities/opens?page_size=1');
  const c = await publicGet('/v1/activities/clicks?page_size=1');
  return o.body.pagination.total_items === OPENS && c.body.pagination.total_items === CLICKS ? true : undefined;
}, { ms: 30_000 });
await waitFor('the machine flags to settle', () => outboxDrained(pool, a.tenant.instanceId), { ms: 30_000 });
await waitFor('the mirror to hold the final statuses', async () => {
  const rows = (await publicGet('/v1/activities/sent?page_size=100')).body.data as any[];
  return rows.length === sent.length && rows.every((r) => [3, 6].includes(r.status)) ? true : undefined;
}, { ms: 30_000 });

const today = new Date().toISOString().slice(0, 10);
const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
const COMMON: Array<Record<string, string>> = [
  {},
  { page_size: '2' },
  { page_size: '2', page: '2' },
  { page_size: '2', page: '3' },
  { recipient: 'reader1@example.org' },
  { recipient: 'reader', recipient_operator: 'starts_with' },
  { mail_id: byTo.get('reader1@example.org')! } as Record<string, string>,
  { subject: 'spring' },
  { custom_group_code: 'spring' },
  { start_date: '2020-01-01', end_date: '2020-01-02' },
  { start_date: today, end_date: today, tz: 'UTC' },
];
const EVENTS: Array<Record<string, string>> = [
  ...COMMON,
  ...['none', 'mail_id', 'msg_id'].flatMap((group_by): Array<Record<string, string>> => [{ group_by }, { group_by, exclude_machine: 'true' }, { group_by, exclude_machine: 'false', page_size: '1' }]),
  { exclude_machine: 'true', subject: 'spring' },
];
const QUERIES: Record<string, Array<Record<string, string>>> = {
  sent: [...COMMON, { status: '3' }, { status: '6' }, { opened: 'opened' }, { opened: 'unopened' }],
  opens: EVENTS,
  clicks: EVENTS,
  unopened: COMMON,
};

t.test('each panel listing equals the public listing for the same query, for a viewer', async (t) => {
  const sizes: Record<string, number> = {};
  for (const [listing, queries] of Object.entries(QUERIES)) {
    for (const params of queries) {
      const path = `/v1/activities/${listing}?${q(params)}`;
      const pub = await publicGet(path);
      const mine = await panelGet(path);
      t.equal(pub.status, 200, `public ${path}`);
      t.equal(mine.status, 200, `panel ${path}: ${JSON.stringify(mine.body).slice(0, 200)}`);
      t.strictSame(mine.body, pub.body, `${path}: the same page`);
      t.equal(mine.headers.get('cache-control'), 'no-store', `${path}: kept by no cache`);
      sizes[`${listing} ${q(params)}`] = pub.body.data.length;
    }
  }
  // The comparisons are not of empty pages: the activity shows, and the switches change what is listed.
  t.equal(sizes['sent '], 5);
  t.equal(sizes['unopened '], 1, 'reader3 only (the bounce is not delivered)');
  t.equal(sizes['opens '], OPENS);
  t.equal(sizes['clicks '], CLICKS);
  t.ok(sizes['opens exclude_machine=true&subject=spring']! < sizes['opens subject=spring']!, 'people only leaves the privacy proxy out');
  t.ok(sizes['clicks group_by=none&exclude_machine=true']! < CLICKS, 'people only leaves the scanner out');
  t.equal(sizes['sent page_size=2&page=3'], 1, 'the third page of two');
  t.equal(sizes['opens group_by=mail_id'], 3, 'one row per recipient who opened');
});

t.test("a listing's refusal is the API's: a 422 names the same field", async (t) => {
  for (const path of ['/v1/activities/opens?group_by=day', '/v1/activities/sent?status=9', '/v1/activities/clicks?exclude_machine=maybe', '/v1/activities/unopened?start_date=2026-13-01']) {
    const pub = await publicGet(path);
    const mine = await panelGet(path);
    t.equal(mine.status, 422, path);
    t.strictSame(mine.body.errors, pub.body.errors, `${path}: the same errors`);
    t.equal(mine.body.code, pub.body.code);
  }
});

async function raw(path: string, headers: Record<string, string>) {
  const res = await fetch(url + path, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

t.test('each panel export streams the same file as the public one, byte for byte', async (t) => {
  const cases: Array<[string, Record<string, string>]> = [
    ['sent', {}],
    ['sent', { status: '3', recipient: 'reader', recipient_operator: 'starts_with' }],
    ['opens', {}],
    ['opens', { group_by: 'mail_id' }],
    ['opens', { group_by: 'msg_id', exclude_machine: 'true' }],
    ['clicks', {}],
    ['clicks', { group_by: 'mail_id', exclude_machine: 'true' }],
    ['unopened', {}],
  ];
  for (const [listing, params] of cases) {
    for (const format of ['csv', 'json']) {
      const path = `/v1/activities/${listing}/export?${q({ ...params, format })}`;
      const pub = await raw(path, a.headers);
      const mine = await raw(path.replace('/v1/', '/v1/private/'), panel);
      t.equal(pub.status, 200, path);
      t.equal(mine.status, 200, `panel ${path}: ${mine.bytes.toString().slice(0, 200)}`);
      t.ok(mine.bytes.equals(pub.bytes), `${path}: the same ${pub.bytes.length} bytes`);
      for (const h of ['content-type', 'content-disposition']) t.equal(mine.headers.get(h), pub.headers.get(h), `${path}: ${h}`);
      t.equal(mine.headers.get('cache-control'), 'no-store');
      if (format === 'json') {
        const rows = JSON.parse(pub.bytes.toString());
        const listed = (await publicGet(`/v1/activities/${listing}?${q({ ...params, page_size: '100' })}`)).body.data;
        t.equal(rows.length, listed.length, `${path}: the listing's ${listed.length} rows`);
        if (listing !== 'unopened' || Object.keys(params).length === 0) t.ok(rows.length > 0, 'not an empty file');
      } else {
        t.ok(pub.bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])), 'CSV with its BOM');
      }
    }
  }
});

t.test('the mail reads equal the public ones; another instance\'s mail is a 404', async (t) => {
  for (const path of ['/v1/mails', '/v1/mails?page_size=2&page=2', '/v1/mails?status=6', `/v1/mails/${byTo.get('bounce-hard@example.org')}`, `/v1/mails/${byTo.get('reader1@example.org')}/logs`]) {
    const pub = await publicGet(path);
    const mine = await panelGet(path);
    t.equal(mine.status, 200, `panel ${path}`);
    t.strictSame(mine.body, pub.body, `${path}: the same answer`);
  }
  const logs = (await panelGet(`/v1/mails/${byTo.get('bounce-hard@example.org')}/logs`)).body.data as any[];
  t.ok(logs.some((l) => l.status === 6), 'the bounce is in its logs');
  for (const path of [`/v1/mails/${bMail!.mail_id}`, `/v1/mails/${bMail!.mail_id}/logs`]) {
    const mine = await panelGet(path);
    t.equal(mine.status, 404, `${path} of B, from A's viewer`);
    t.equal(mine.body.code, 'mail_not_found');
    t.notOk(JSON.stringify(mine.body).includes('other@example.org'), 'nothing of B');
  }
  const listed = (await panelGet('/v1/mails?page_size=100')).body.data as any[];
  t.notOk(listed.some((m) => m.mail_id === bMail!.mail_id), "B's mail is not in A's list");
  const mineB = await panelGet(`/v1/activities/sent/export?format=json`);
  t.equal(mineB.status, 200);
  t.notOk(JSON.stringify(mineB.body).includes('other@example.org'), "B's mail is not in A's export");
});

t.test('the panel does not send, and a session is needed', async (t) => {
  const from = `news@${a.slug}.example`;
  const res = await jsonCall(url, 'POST', '/v1/private/mails/send', { from, to: [{ email: 'x@example.org' }], subject: 'No', html: '<p>No</p>' }, panel);
  // /v1/private/mails/{mail_id} is read only: no route sends (405, the path being a mail's).
  t.equal(res.status, 405, `no POST /v1/private/mails/send: ${res.status} ${JSON.stringify(res.body)}`);
  const before = (await publicGet('/v1/mails?page_size=100')).body.data.length;
  t.equal(before, sent.length, 'nothing sent');
  t.equal((await panelGet('/v1/activities/opens', { 'x-instance-slug': a.slug })).status, 401);
  t.equal((await panelGet('/v1/activities/opens', a.headers)).status, 401, 'an API key is not a session');
});
