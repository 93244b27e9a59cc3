import type { Readable } from 'node:stream';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CLICKS, clicksQuery } from '../analytics/activities/clicks.js';
import { eventCountQuery } from '../analytics/activities/event-rows.js';
import type { EventActivityFilter, GroupBy, PageWindow } from '../analytics/activities/filters.js';
import { readPage } from '../analytics/activities/listing.js';
import { OPENS, opensQuery } from '../analytics/activities/opens.js';
import { ACTIVITY_SETTINGS, type ActivityQuery } from '../analytics/activities/query.js';
import { sentQuery, type SentActivityFilter } from '../analytics/activities/sent.js';
import { unopenedQuery } from '../analytics/activities/unopened.js';
import { createClickHouseClient, type ClickHouseClient } from '../analytics/client.js';
import { startEmbeddedClickHouseCluster } from '../analytics/embedded/cluster.js';
import { startEmbeddedClickHouse } from '../analytics/embedded/server.js';
import { exportRequest, type ExportFormat } from '../analytics/export/stream.js';
import { insertMailEvents, insertMailSnapshots, type MailEventRow, type MailMirrorRow } from '../analytics/mail-events.js';
import { migrateClickHouse } from '../analytics/migrate.js';
import { LOCAL_SUFFIX } from '../analytics/sharding.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { TEST_DIR } from './setup/env.js';
import { sleep } from './helpers/wait.js';

/**
 * Cluster mode (CLICKHOUSE_CLUSTER, analytics/sharding.ts) answers exactly what a single node
 * answers. One embedded server and one embedded 2-shard cluster, each migrated by the release's
 * runner, get the same mails and events through the event pump's own inserts (re-shipped batches
 * and successive snapshots included); then every listing (sent, unopened, opens and clicks in
 * each group_by, with and without exclude_machine, under each filter, page by page), every count
 * and every export (CSV and JSON) is asked of both, and the answers (a page's rows as the listing
 * gives them, every other result's bytes as ClickHouse returns them) must be the
 * same. The rest of the analytics suite runs in cluster mode by hand with
 * CARTERO_TEST_CLICKHOUSE_SHARDS=2 (test/helpers/databases.ts).
 */

const dir = join(TEST_DIR, 'clickhouse', `cluster-compare-${process.pid}`);
const single = await startEmbeddedClickHouse({ dir: join(dir, 'single') });
const cluster = await startEmbeddedClickHouseCluster({ dir: join(dir, 'cluster'), shards: 2 });
t.teardown(async () => {
  await Promise.all([single.stop(), cluster.stop()]);
  await rm(dir, { recursive: true, force: true });
});
const singleUrl = `${single.url}/cartero`;
const shardUrls = cluster.shards.map((s) => `${s.url}/cartero`);
await migrateClickHouse(singleUrl);
await migrateClickHouse(shardUrls[0]!, { cluster: { name: cluster.name, nodes: shardUrls } });
const one = createClickHouseClient(singleUrl);
// The dynos' CLICKHOUSE_URL in cluster mode: one node (shard 1).
const many = createClickHouseClient(shardUrls[0]!);
const shardClients = shardUrls.map((u) => createClickHouseClient(u));
t.teardown(async () => {
  for (const c of [one, many, ...shardClients]) await c.close();
});

// ---------------------------------------------------------------------------------------------
// The data: a seeded pseudo-random history for two tenants, the same rows into both.

let seed = 42;
const rnd = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

const HOUR = 3_600_000;
const now = Date.now();
const SUBJECTS = ['Weekly news', 'Your invoice', 'Hello {{name}}', 'Sale ends today', 'weekly NEWS digest'];
const SENDERS: Array<[number, string]> = [[11, 'News <news@send.example>'], [12, 'Billing <billing@send.example>'], [13, 'Shop <shop@send.example>']];
const GROUPS = [null, 'spring', 'autumn', '=cmd|calc'];
const LINKS = ['https://shop.example/a', 'https://shop.example/b', 'https://shop.example/c?x=1', null];
const MACHINES = ['', '', '', '', 'link_scanner', 'click_burst'];

const A: Tenant = { instanceId: 7, slug: 'a', tz: null };
const B: Tenant = { instanceId: 8, slug: 'b', tz: null };

const snapshots: MailMirrorRow[] = [];
const events: MailEventRow[] = [];
const mailIds: string[] = [];
const msgIds: string[] = [];
let eventId = 1;
let version = 1;

for (let m = 0; m < 60; m++) {
  const instance = m % 5 === 4 ? B : A;
  const msgId = `msg${String(m).padStart(3, '0')}`;
  msgIds.push(msgId);
  const [senderId, sender] = pick(SENDERS);
  const group = pick(GROUPS);
  const customMsg = rnd() < 0.5 ? `order-${m}` : null;
  const received = new Date(now - Math.floor(rnd() * 20 * 24) * HOUR - Math.floor(rnd() * HOUR));
  const recipients = 1 + Math.floor(rnd() * 6);
  for (let r = 0; r < recipients; r++) {
    const mailId = `${msgId}-r${r}`;
    mailIds.push(mailId);
    const recipient = `${pick(['ana', 'ben', 'carla', 'anabel'])}${m}.${r}@${pick(['example.org', 'mail.example'])}`;
    const subject = rnd() < 0.2 ? `${pick(SUBJECTS)} ${r}` : SUBJECTS[m % SUBJECTS.length]!;
    const status = pick([3, 3, 3, 3, 6, 5, 4]);
    const sentAt = status === 3 || status === 6 ? new Date(received.getTime() + 60_000) : null;
    const base = {
      instance_id: instance.instanceId,
      received_at: received,
      mail_id: mailId,
      msg_id: msgId,
      recipient,
      subject,
      sender_id: rnd() < 0.1 ? null : senderId,
      sender: rnd() < 0.1 ? null : sender,
      bounce_class: status === 6 ? 'hard' : '',
      queued_at: new Date(received.getTime() + 1_000),
      sent_at: sentAt,
      delay: sentAt ? 60 : null,
      custom_msg_id: customMsg,
      custom_group_code: group,
    };
    const opens = status === 3 ? Math.floor(rnd() * 4) : 0;
    const clicks = opens > 0 ? Math.floor(rnd() * 3) : 0;
    // The mirror gets a snapshot per move (received, then its final state), as the pump ships them.
    snapshots.push({ ...base, status: 1, opens: 0, clicks: 0, sent_at: null, delay: null, version: String(version++) } as MailMirrorRow);
    // A mail opened in the last day whose mirror still says 0 opens: unopened's second condition.
    const lagging = opens > 0 && rnd() < 0.15;
    snapshots.push({ ...base, status, opens: lagging ? 0 : opens, clicks, version: String(version++) } as MailMirrorRow);
    const eventOf = (type: 'open' | 'click', at: Date): MailEventRow => ({
      instance_id: instance.instanceId,
      event_type: type,
      status: null,
      occurred_at: at,
      event_id: eventId++,
      mail_id: mailId,
      msg_id: msgId,
      recipient,
      sender_id: base.sender_id,
      sender: base.sender,
      subject,
      custom_msg_id: customMsg,
      custom_group_code: group,
      mail_received_at: received,
      sent_at: sentAt,
      url: type === 'click' ? pick(LINKS) : null,
      user_agent: 'Mozilla/5.0',
      ip: '192.0.2.1',
      machine: pick(MACHINES),
    });
    for (let i = 0; i < opens; i++) {
      const at = lagging ? new Date(now - Math.floor(rnd() * 20) * HOUR) : new Date(received.getTime() + 120_000 + Math.floor(rnd() * 48 * HOUR));
      events.push(eventOf('open', at));
    }
    for (let i = 0; i < clicks; i++) events.push(eventOf('click', new Date(received.getTime() + 180_000 + Math.floor(rnd() * 48 * HOUR))));
    // Two clicks in the same millisecond: the ties the ORDER BYs break by id.
    if (clicks > 1) events.push({ ...eventOf('click', events.at(-1)!.occurred_at), url: LINKS[0]! });
  }
}
// The moves of delivery go in mail_events too (event_type = the status): noise for the listings.
for (const s of snapshots.filter((x) => x.status !== 1)) {
  events.push({
    instance_id: s.instance_id,
    event_type: s.status === 6 ? 'bounced' : 'sent',
    status: s.status,
    bounce_reason: s.status === 6 ? 'userunknown' : null,
    occurred_at: s.sent_at ?? s.received_at,
    event_id: eventId++,
    mail_id: s.mail_id,
    msg_id: s.msg_id,
    recipient: s.recipient,
    sender_id: s.sender_id,
    sender: s.sender,
    subject: s.subject,
    custom_msg_id: s.custom_msg_id,
    custom_group_code: s.custom_group_code,
    mail_received_at: s.received_at,
    sent_at: s.sent_at,
    url: null,
    user_agent: '',
    ip: '',
    machine: '',
  });
}

/**
 * A batch shipped again (a pump that died before its Postgres commit), some with a new flag: an
 * unflagged click re-flagged, as the pump does for a burst's first click. Never the other way: a
 * flag only goes from none to a reason, which lets a page read copies as stored (a flagged copy is
 * the newest judgment) and agree with a merged copy whichever side merged first.
 */
const reshipped = events.filter((_, i) => i % 7 === 0).map((e, i) => (i % 3 === 0 && !e.machine ? { ...e, machine: e.event_type === 'click' ? 'click_burst' : 'prefetch' } : e));

async function load(ch: ClickHouseClient): Promise<void> {
  // In batches, in the pump's order: events, then the snapshots of their mails.
  for (let i = 0; i < events.length; i += 100) await insertMailEvents(ch, events.slice(i, i + 100));
  for (let i = 0; i < snapshots.length; i += 100) await insertMailSnapshots(ch, snapshots.slice(i, i + 100));
  // Later than the first shipment (its shipped_at is newer): the re-flagged copies win.
  await sleep(5);
  await insertMailEvents(ch, reshipped);
}
await load(one);
await load(many);

async function rowsOf(ch: ClickHouseClient, sql: string): Promise<Array<Record<string, unknown>>> {
  return (await ch.query({ query: sql, format: 'JSONEachRow' })).json();
}

t.test('each shard holds part of every table, and together all of it', async (t) => {
  const eventsWanted = new Set(events.map((e) => e.event_id)).size;
  for (const table of ['mail_events', 'mails', 'mail_events_by_msg', 'mail_events_by_group']) {
    const perShard = await Promise.all(
      shardClients.map(async (c) => Number((await rowsOf(c, `SELECT count() AS n FROM ${table}${LOCAL_SUFFIX} FINAL`))[0]!.n)),
    );
    const whole = Number((await rowsOf(many, `SELECT count() AS n FROM ${table} FINAL`))[0]!.n);
    const alone = Number((await rowsOf(one, `SELECT count() AS n FROM ${table} FINAL`))[0]!.n);
    t.ok(perShard.every((n) => n > 0), `${table}: every shard holds some rows (${perShard.join(' + ')})`);
    t.equal(perShard.reduce((x, y) => x + y, 0), whole, `${table}: the shards' rows are the Distributed table's`);
    t.equal(whole, alone, `${table}: as many rows as on a single node`);
  }
  t.equal(Number((await rowsOf(many, 'SELECT count() AS n FROM mail_events FINAL'))[0]!.n), eventsWanted, 'every event once');
  // Every copy of a message's rows on one shard: what keeps FINAL and the local subqueries exact.
  for (const table of ['mail_events', 'mails']) {
    const split = await rowsOf(many, `SELECT msg_id, uniqExact(_shard_num) AS shards FROM ${table} GROUP BY msg_id HAVING shards > 1`);
    t.same(split, [], `${table}: no message is spread over two shards`);
  }
});

t.test('a re-shipped batch adds no row', async (t) => {
  const before = await rowsOf(many, 'SELECT count() AS n, uniqExact(event_id) AS ids FROM mail_events FINAL');
  await insertMailEvents(many, reshipped);
  await insertMailSnapshots(many, snapshots.slice(0, 50));
  const after = await rowsOf(many, 'SELECT count() AS n, uniqExact(event_id) AS ids FROM mail_events FINAL');
  t.same(after, before, 'the same events, once each');
  t.equal(Number(after[0]!.n), Number(after[0]!.ids), 'no event twice');
  const mails = await rowsOf(many, 'SELECT count() AS n FROM mails FINAL');
  t.equal(Number(mails[0]!.n), mailIds.length, 'one mirror row per mail');
  // And the single node, so the comparisons below still see the same data.
  await insertMailEvents(one, reshipped);
  await insertMailSnapshots(one, snapshots.slice(0, 50));
});

// ---------------------------------------------------------------------------------------------
// Every listing, count and export, compared byte for byte.

/**
 * A page as the listing answers it (readPage: a group_by=msg_id page's messages read with copies,
 * which depends on which copies each side has merged yet, are settled), one JSON line per row.
 */
async function pageText(ch: ClickHouseClient, q: ActivityQuery): Promise<string> {
  return (await readPage(ch, q)).map((r) => `${JSON.stringify(r)}\n`).join('');
}

async function exportBytes(ch: ClickHouseClient, q: ActivityQuery, format: ExportFormat): Promise<Buffer> {
  const result = await ch.exec(exportRequest(q, format));
  const chunks: Buffer[] = [];
  for await (const chunk of result.stream as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const FILTERS: Array<[string, EventActivityFilter]> = [
  ['no filter', {}],
  ['dates in a zone', { start_date: day(now - 12 * 24 * HOUR), end_date: day(now - 3 * 24 * HOUR), tz: 'America/New_York' }],
  ['msg_id', { msg_id: msgIds[3]! }],
  ['mail_id', { mail_id: mailIds[5]! }],
  ['sender_id', { sender_id: 12 }],
  ['recipient prefix', { recipient: 'ANA', recipient_operator: 'starts_with' }],
  ['custom_msg_id', { custom_msg_id: 'order-6' }],
  ['custom_group_code', { custom_group_code: 'spring' }],
  ['subject', { subject: 'WEEKLY' }],
];
/** The filters also asked with exclude_machine (each event judged on its newest copy). */
const WITH_EXCLUDE = new Set(['no filter', 'msg_id', 'custom_group_code']);
/** Every filter gets a page of 101; the unfiltered listings also these (a page's edges, past the end). */
const PAGES: PageWindow[] = [
  { limit: 6, offset: 0 },
  { limit: 6, offset: 5 },
  { limit: 6, offset: 1_000 },
];
const FULL_PAGE: PageWindow = { limit: 101, offset: 0 };

/** Asks both, compares; returns the single node's answer for the caller's sanity checks. */
async function same(t: Test, what: string, ask: (ch: ClickHouseClient) => Promise<string | Buffer>): Promise<string> {
  const [a, b] = await Promise.all([ask(one), ask(many)]);
  const [x, y] = [a.toString(), b.toString()];
  if (x !== y) t.equal(y, x, `${what}: the cluster answers what the single node answers`);
  else t.pass(what);
  return x;
}

let nonEmpty = 0;
const count = (text: string) => text.split('\n').filter(Boolean).length;

for (const [kind, build] of [['opens', opensQuery], ['clicks', clicksQuery]] as const) {
  for (const groupBy of ['none', 'mail_id', 'msg_id'] as GroupBy[]) {
    t.test(`${kind}, group_by=${groupBy}`, async (t) => {
      const combos = FILTERS.flatMap(([name, filter]) => (WITH_EXCLUDE.has(name) ? [false, true] : [false]).map((x) => [name, filter, x] as const));
      for (const [name, filter, excludeMachine] of combos) {
        const f: EventActivityFilter = { ...filter, group_by: groupBy, exclude_machine: excludeMachine };
        const label = `${name}${excludeMachine ? ', exclude_machine' : ''}`;
        const pages = name === 'no filter' ? [FULL_PAGE, ...PAGES] : [FULL_PAGE];
        for (const page of pages) {
          const text = await same(t, `${label}, page ${page.offset}+${page.limit}`, (ch) => pageText(ch, build(A, f, page)));
          if (count(text) > 0) nonEmpty++;
        }
        for (const format of name === 'no filter' ? (['csv', 'json'] as const) : (['csv'] as const)) {
          await same(t, `${label}, ${format} export`, (ch) => exportBytes(ch, build(A, f), format));
        }
        if (groupBy === 'none') {
          const c = eventCountQuery(A, kind === 'opens' ? OPENS : CLICKS, f);
          await same(t, `${label}, count`, async (ch) => (await ch.query({ query: c.sql, query_params: c.params, format: 'JSONEachRow', clickhouse_settings: ACTIVITY_SETTINGS })).text());
        }
      }
      // The other tenant sees its own rows only, in both modes.
      await same(t, 'tenant b', (ch) => exportBytes(ch, build(B, { group_by: groupBy }), 'json'));
    });
  }
}

const SENT_FILTERS: Array<[string, SentActivityFilter]> = [
  ...FILTERS.map(([n, f]) => [n, f] as [string, SentActivityFilter]),
  ['dates', { start_date: day(now - 12 * 24 * HOUR), end_date: day(now - 3 * 24 * HOUR) }],
  ['recipient', { recipient: events.find((e) => e.event_type === 'open')!.recipient.toUpperCase() }],
  ['status', { status: 3 }],
  ['status bounced', { status: 6 }],
  ['opened', { opened: 'opened' }],
  ['unopened', { opened: 'unopened' }],
];

t.test('sent and unopened', async (t) => {
  for (const [name, f] of SENT_FILTERS) {
    const pages = name === 'no filter' ? [FULL_PAGE, ...PAGES] : [FULL_PAGE];
    for (const page of pages) {
      const sent = await same(t, `sent ${name}, page ${page.offset}+${page.limit}`, (ch) => pageText(ch, sentQuery(A, f, page)));
      if (count(sent) > 0) nonEmpty++;
      const unopened = await same(t, `unopened ${name}, page ${page.offset}+${page.limit}`, (ch) => pageText(ch, unopenedQuery(A, f, page)));
      if (count(unopened) > 0) nonEmpty++;
    }
    for (const format of name === 'no filter' ? (['csv', 'json'] as const) : (['csv'] as const)) {
      await same(t, `sent ${name}, ${format} export`, (ch) => exportBytes(ch, sentQuery(A, f), format));
      await same(t, `unopened ${name}, ${format} export`, (ch) => exportBytes(ch, unopenedQuery(A, f), format));
    }
  }
  await same(t, 'sent, tenant b', (ch) => exportBytes(ch, sentQuery(B, {}), 'json'));
  await same(t, 'unopened, tenant b', (ch) => exportBytes(ch, unopenedQuery(B, {}), 'json'));
  for (const page of PAGES) await same(t, `unopened, tenant b, page ${page.offset}`, (ch) => pageText(ch, unopenedQuery(B, {}, page)));
  // The unopened listing's second condition (an open of the last day the mirror does not count
  // yet) is exercised: some mail with 0 opens in the mirror is left out because of its event.
  const lagging = await rowsOf(one, `SELECT count() AS n FROM mails FINAL WHERE status = 3 AND opens = 0 AND mail_id IN
    (SELECT mail_id FROM mail_events WHERE event_type = 'open' AND occurred_at >= now64(3) - INTERVAL 1 DAY)`);
  t.ok(Number(lagging[0]!.n) > 0, 'the data has mails whose open the mirror does not count yet');
});

t.test('the comparisons compared something', async (t) => {
  // Most pages hold rows: identical empty answers would prove nothing.
  t.ok(nonEmpty > 60, `${nonEmpty} non-empty pages compared`);
});

t.test('on a cluster with Keeper: one ON CLUSTER statement each, replicated local tables, backfills once', async (t) => {
  const { clusterStatements } = await import('../analytics/sharding.js');
  const target = { cluster: 'prod', database: 'cartero', onCluster: true };
  const create = clusterStatements('CREATE TABLE IF NOT EXISTS mails (a UInt64, msg_id String, version UInt64) ENGINE = ReplacingMergeTree(version) ORDER BY a', target);
  t.same(
    create.map((s) => [s.runs, s.query.replace(/\s+/g, ' ')]),
    [
      ['each', 'CREATE TABLE IF NOT EXISTS mails_local ON CLUSTER prod (a UInt64, msg_id String, version UInt64) ENGINE = ReplicatedReplacingMergeTree(version) ORDER BY a'],
      ['each', "CREATE TABLE IF NOT EXISTS mails ON CLUSTER prod AS mails_local ENGINE = Distributed('prod', 'cartero', 'mails_local', cityHash64(msg_id))"],
    ],
  );
  const alter = clusterStatements('ALTER TABLE mail_events ADD COLUMN IF NOT EXISTS x UInt8', target).map((s) => s.query);
  t.same(alter, ['ALTER TABLE mail_events_local ON CLUSTER prod ADD COLUMN IF NOT EXISTS x UInt8', 'ALTER TABLE mail_events ON CLUSTER prod ADD COLUMN IF NOT EXISTS x UInt8']);
  t.same(clusterStatements('ALTER TABLE mail_events ADD INDEX IF NOT EXISTS i x TYPE bloom_filter', target).length, 1, 'an index: the local table only');
  t.same(clusterStatements('INSERT INTO mail_events_by_msg SELECT * FROM mail_events', target), [{ query: 'INSERT INTO mail_events_by_msg SELECT * FROM mail_events', runs: 'once' }]);
  t.throws(() => clusterStatements('RENAME TABLE mails TO m2', target), /no rule/, 'a statement kind without a cluster rule stops the release');
});

t.test('cluster mode refuses a database migrated as a single node', async (t) => {
  await t.rejects(migrateClickHouse(singleUrl, { cluster: { name: cluster.name, nodes: [singleUrl] } }), /single-node schema/);
  // And a cluster migrated again applies nothing.
  t.same(await migrateClickHouse(shardUrls[0]!, { cluster: { name: cluster.name, nodes: shardUrls } }), { applied: [] });
});
