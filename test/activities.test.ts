import { DateTime } from 'luxon';
import t, { type Test } from 'tap';
import { clicksQuery } from '../analytics/activities/clicks.js';
import { ACTIVITY_SETTINGS } from '../analytics/activities/query.js';
import { opensQuery } from '../analytics/activities/opens.js';
import type { ActivityQuery } from '../analytics/activities/query.js';
import { checkRows } from '../analytics/activities/rows.js';
import { sentQuery } from '../analytics/activities/sent.js';
import { unopenedQuery } from '../analytics/activities/unopened.js';
import { createClickHouseClient } from '../analytics/client.js';
import { collectionSchema } from '../api/schemas/common.js';
import { clickRowSchemas, openRowSchemas, unopenedRowSchema } from '../api/schemas/activities.js';
import { compile } from '../domain/validation.js';
import { newId } from '../domain/mail/ids.js';
import type { ActivityFilter } from '../domain/mail/mails.js';
import type { MailSnapshot } from '../domain/outbox/pump.js';
import { restrict } from '../domain/restrictions/restrictions.js';
import { withTenant } from '../domain/tenancy/context.js';
import { setInstanceAllowList } from '../domain/tenancy/instances.js';
import { openToken } from '../domain/tracking/tokens.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { rawCall } from './helpers/auth-matrix.js';
import { makeSenders, makeTenant, type TestTenant } from './helpers/fixtures.js';
import { testDatabases } from './helpers/databases.js';
import { deliver, startTestPump } from './helpers/delivered.js';
import { mailApi } from './helpers/send-stack.js';
import { waitFor } from './helpers/wait.js';
import { startTestWeb } from './helpers/web.js';

/**
 * GET /v1/activities/sent, opens, clicks and unopened over HTTP on the real app and a real
 * ClickHouse. Most cases insert fixture rows straight into ClickHouse's mail_events and mails
 * tables (as the event pump writes them: re-shipped duplicates and successive snapshots included)
 * and compare every listing with a reference model of the spec computed here from the same
 * fixtures. The end-to-end cases accept real mail through the API, take it through the send
 * worker's steps (test/helpers/delivered.ts: render, gates, the reply recorded; no SMTP), open it
 * through the pixel and read the result back once the event pump shipped it.
 */

const PUBLIC_URL = 'https://links.cartero.test';
const dbs = await testDatabases(t, 'activities');
const { url } = await startTestWeb(t, dbs, { env: { PUBLIC_URL } });
const ch = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => ch.close());
const scopes = ['mail:read', 'mail:send'];
const a = await makeTenant(dbs.pool, { scopes });
const b = await makeTenant(dbs.pool, { scopes });
const A = a.tenant.instanceId;
const B = b.tenant.instanceId;

const DAY = 86_400_000;
const NY = 'America/New_York';
// Day 0 of the fixtures: a UTC midnight 20 days ago, well inside the 3-month TTL of both tables.
const D0 = new Date(Date.now() - 20 * DAY);
D0.setUTCHours(0, 0, 0, 0);
const at = (day: number, hh: number, mm = 0) => new Date(D0.getTime() + day * DAY + (hh * 60 + mm) * 60_000);
const dateOf = (day: number) => new Date(D0.getTime() + day * DAY).toISOString().slice(0, 10);
/** 23:30 in New York on the local date `day`: already the next day in UTC. */
const nyEvening = (day: number) => DateTime.fromISO(`${dateOf(day)}T23:30:00`, { zone: NY }).toUTC().toJSDate();
const chTime = (d: Date | null) => (d ? d.toISOString().replace('T', ' ').replace('Z', '') : null);
const iso = (d: Date | null) => (d ? d.toISOString() : null);

// ---------------------------------------------------------------------------------------------
// Fixtures: mails (the mirror) and their events, for instance A, with noise in instance B.

/** A mail as the mirror holds it, as far as the listings read it. */
type Mail = Pick<
  MailSnapshot,
  'instance_id' | 'mail_id' | 'msg_id' | 'recipient' | 'subject' | 'sender_id' | 'sender' | 'custom_msg_id' | 'custom_group_code' | 'received_at' | 'queued_at' | 'sent_at' | 'status'
> & {
  /** Opens counted in the mirror; defaults to the mail's open events. */
  opens?: number;
};

interface Ev {
  id: number;
  type: 'open' | 'click';
  mail: Mail;
  at: Date;
  url: string | null;
  machine: string;
}

const mails: Mail[] = [];
const events: Ev[] = [];
let nextEventId = 1000;

function message(instance: number, m: Pick<Mail, 'subject' | 'sender_id' | 'sender' | 'custom_msg_id' | 'custom_group_code'> & { received: Date; msg_id?: string }) {
  const msg_id = m.msg_id ?? newId();
  const recipientOf = (recipient: string, extra: Partial<Mail> = {}): Mail => {
    const mail: Mail = {
      instance_id: instance,
      mail_id: newId(),
      msg_id,
      recipient,
      subject: m.subject,
      sender_id: m.sender_id,
      sender: m.sender,
      custom_msg_id: m.custom_msg_id,
      custom_group_code: m.custom_group_code,
      received_at: m.received,
      queued_at: new Date(m.received.getTime() + 1_000),
      sent_at: new Date(m.received.getTime() + 60_000),
      status: 3,
      ...extra,
    };
    mails.push(mail);
    return mail;
  };
  return Object.assign(recipientOf, { msg_id });
}

function ev(type: 'open' | 'click', mail: Mail, when: Date, opts: { url?: string | null; machine?: string } = {}): Ev {
  const e = { id: nextEventId++, type, mail, at: when, url: opts.url ?? null, machine: opts.machine ?? '' };
  events.push(e);
  return e;
}

const spring = message(A, {
  subject: 'Spring Sale 50% off', sender_id: 11, sender: 'news@shop.example', custom_msg_id: 'camp-1', custom_group_code: 'spring', received: at(1, 9),
});
const ann = spring('ann@example.com');
const bob = spring('bob@example.com');
const carol = spring('carol+tag@example.com');
const dan = spring('dan@example.net'); // delivered, never opened

const weekly = message(A, {
  subject: 'Weekly NEWS digest', sender_id: 12, sender: 'info@shop.example', custom_msg_id: null, custom_group_code: null, received: at(3, 12),
});
const annOther = weekly('ann@other.test');
const bounced = weekly('bounce@example.com', { status: 6 });
const dropped = weekly('drop@example.com', { status: 4, queued_at: null, sent_at: null });
const queued = weekly('queued@example.com', { status: 2, sent_at: null });
const erin = weekly('erin@example.com'); // delivered, never opened
// Opened an hour ago: the event is in ClickHouse, the mirror's snapshot still says 0 opens (a
// pump tick whose snapshot insert failed and waits for its retry).
const fay = weekly('fay@example.com', { opens: 0 });

// Merge tags: the recipients of one message got different subjects.
const hello = message(A, {
  subject: '', sender_id: 11, sender: 'news@shop.example', custom_msg_id: 'camp-3', custom_group_code: 'spring', received: at(5, 20),
});
const gus = hello('gus@example.com', { subject: 'Hello Gus' });
const hal = hello('hal@example.com', { subject: 'Hello Hal' });

// Opens.
ev('open', ann, at(1, 10));
const annSecond = ev('open', ann, at(2, 8));
const bobTie = ev('open', bob, at(2, 8)); // same instant as annSecond: the higher event id comes first
ev('open', bob, at(1, 11), { machine: 'privacy_proxy' });
ev('open', carol, nyEvening(1)); // day 1 in New York, day 2 in UTC
ev('open', annOther, at(3, 13));
const reflagged = ev('open', annOther, at(4, 9)); // shipped twice: the second time flagged
// Shipped twice, the second time flagged, in a campaign: read from mail_events_by_group too.
const reflaggedInCampaign = ev('open', gus, at(5, 21));
ev('open', fay, new Date(Date.now() - 3_600_000));
// Clicks.
ev('click', ann, at(1, 10, 5), { url: 'https://shop.example/a' });
ev('click', ann, at(1, 10, 6), { url: 'https://shop.example/b' });
ev('click', ann, at(2, 8, 1), { url: 'https://shop.example/a' });
ev('click', bob, at(1, 11, 30), { url: 'https://shop.example/a', machine: 'link_scanner' });
ev('click', gus, at(5, 21, 5), { url: 'https://shop.example/a' });
ev('click', hal, at(6, 7), { url: null });
ev('click', hal, at(6, 7, 1), { url: 'https://shop.example/c' });

// Instance B: the same msg_id as A's spring sale (three more recipients, one of them also
// ann@example.com) and events of its own. None of it may reach A's listings or counts.
const bSpring = message(B, {
  msg_id: spring.msg_id, subject: 'Spring Sale 50% off', sender_id: 11, sender: 'news@shop.example', custom_msg_id: 'camp-1',
  custom_group_code: 'spring', received: at(1, 9),
});
const bAnn = bSpring('ann@example.com');
bSpring('zed@example.com');
bSpring('yan@example.com', { status: 3 });
ev('open', bAnn, at(1, 12));
ev('click', bAnn, at(1, 12, 1), { url: 'https://shop.example/a' });
ev('open', bAnn, at(2, 9));

const opensOf = (m: Mail) => m.opens ?? events.filter((e) => e.mail === m && e.type === 'open').length;
const clicksOf = (m: Mail) => events.filter((e) => e.mail === m && e.type === 'click').length;
/** The mail's human opens (clicks): its events no rule flagged, as the pump counts them (none while its snapshot says 0). */
const humanOf = (m: Mail, type: 'open' | 'click') =>
  type === 'open' && m.opens === 0 ? 0 : events.filter((e) => e.mail === m && e.type === type && !e.machine).length;

function eventRow(e: Ev, machine: string, shippedAt: Date) {
  const m = e.mail;
  return {
    instance_id: m.instance_id, event_type: e.type, status: null, occurred_at: chTime(e.at), event_id: e.id, mail_id: m.mail_id,
    msg_id: m.msg_id, recipient: m.recipient, sender_id: m.sender_id, sender: m.sender, subject: m.subject, custom_msg_id: m.custom_msg_id,
    custom_group_code: m.custom_group_code, mail_received_at: chTime(m.received_at), sent_at: chTime(m.sent_at), url: e.url,
    user_agent: 'Mozilla/5.0 (X11)', ip: '192.0.2.1', machine, shipped_at: chTime(shippedAt),
  };
}

function snapshot(m: Mail, version: number, over: Partial<{ status: number; opens: number; clicks: number }> = {}) {
  return {
    instance_id: m.instance_id, received_at: chTime(m.received_at), mail_id: m.mail_id, msg_id: m.msg_id, recipient: m.recipient,
    subject: m.subject, sender_id: m.sender_id, sender: m.sender, status: m.status, bounce_class: m.status === 6 ? 'hard' : '',
    opens: opensOf(m), clicks: clicksOf(m),
    human_opens: Math.min(over.opens ?? Infinity, humanOf(m, 'open')), human_clicks: Math.min(over.clicks ?? Infinity, humanOf(m, 'click')),
    queued_at: chTime(m.queued_at), sent_at: chTime(m.sent_at),
    delay: m.sent_at ? (m.sent_at.getTime() - m.received_at.getTime()) / 1000 : null, custom_msg_id: m.custom_msg_id,
    custom_group_code: m.custom_group_code, version, ...over,
  };
}

async function insert(table: string, values: object[]): Promise<void> {
  // Foreground: in cluster mode (CARTERO_TEST_CLICKHOUSE_SHARDS) the rows are on their shards
  // when this returns, as the pump's are (analytics/mail-events.ts); no effect on a single node.
  await ch.insert({ table, values, format: 'JSONEachRow', clickhouse_settings: { distributed_foreground_insert: 1 } });
}

const shipped = new Date(Date.now() - 60_000);
// No background merges in this file's ClickHouse: the copies below must stay two rows, or a
// query that counted rows instead of events would pass by luck once a merge collapsed them.
// Table by table, in this file's database only: other files share the server (test/helpers/databases.ts).
const mergeTrees = await (
  await ch.query({ query: "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree'", format: 'JSONEachRow' })
).json<{ name: string }>();
for (const { name } of mergeTrees) await ch.command({ query: 'SYSTEM STOP MERGES {table:Identifier}', query_params: { table: name } });
const reshipped = [reflagged, reflaggedInCampaign];
await insert('mail_events', events.map((e) => eventRow(e, reshipped.includes(e) ? '' : e.machine, shipped)));
// The re-shipped copies of those events (same sorting key), now flagged: the newest copy wins.
await insert('mail_events', reshipped.map((e) => eventRow(e, 'prefetch', new Date(shipped.getTime() + 1_000))));
for (const e of reshipped) e.machine = 'prefetch';
// Each mail's older snapshot (queued, nothing counted; for the bounced mail: delivered), then its
// current one, in separate inserts so they sit in separate parts.
await insert('mails', mails.map((m) => snapshot(m, 1, { status: m === bounced ? 3 : 2, opens: 0, clicks: 0 })));
await insert('mails', mails.map((m) => snapshot(m, 2)));

// ---------------------------------------------------------------------------------------------
// The reference model: what the spec says each listing returns for these fixtures.

/** The listings' common filters (domain/mail/mails.ts) and those of some listings. */
type Filter = ActivityFilter & {
  exclude_machine?: boolean;
  status?: number;
  opened?: 'all' | 'opened' | 'unopened';
};

function inDates(d: Date, f: Filter, instanceTz: string | null = null): boolean {
  const zone = f.tz ?? instanceTz ?? 'UTC';
  if (f.start_date && d < DateTime.fromISO(f.start_date, { zone }).startOf('day').toJSDate()) return false;
  if (f.end_date && d >= DateTime.fromISO(f.end_date, { zone }).plus({ days: 1 }).startOf('day').toJSDate()) return false;
  return true;
}

function mailMatches(m: Mail, f: Filter, instance = A): boolean {
  if (m.instance_id !== instance) return false;
  if (f.msg_id !== undefined && m.msg_id !== f.msg_id) return false;
  if (f.mail_id !== undefined && m.mail_id !== f.mail_id) return false;
  if (f.sender_id !== undefined && m.sender_id !== f.sender_id) return false;
  if (f.recipient !== undefined) {
    const r = f.recipient.toLowerCase();
    if (f.recipient_operator === 'starts_with' ? !m.recipient.startsWith(r) : m.recipient !== r) return false;
  }
  if (f.custom_msg_id !== undefined && m.custom_msg_id !== f.custom_msg_id) return false;
  if (f.custom_group_code !== undefined && m.custom_group_code !== f.custom_group_code) return false;
  if (f.subject !== undefined && !m.subject.toLowerCase().includes(f.subject.toLowerCase())) return false;
  return true;
}

function selected(type: 'open' | 'click', f: Filter): Ev[] {
  return events
    .filter((e) => e.type === type && mailMatches(e.mail, f) && inDates(e.at, f) && !(f.exclude_machine && e.machine))
    .sort((x, y) => y.at.getTime() - x.at.getTime() || y.id - x.id);
}

const spanOf = (es: Ev[]) => ({ first: new Date(Math.min(...es.map((e) => +e.at))), last: new Date(Math.max(...es.map((e) => +e.at))) });
const byLastDesc = (key: 'mail_id' | 'msg_id') => (x: any, y: any) => (x.last < y.last ? 1 : x.last > y.last ? -1 : x[key] < y[key] ? 1 : -1);

function groups(es: Ev[], key: 'mail_id' | 'msg_id') {
  const map = new Map<string, Ev[]>();
  for (const e of es) map.set(e.mail[key], [...(map.get(e.mail[key]) ?? []), e]);
  return [...map.entries()]
    .map(([k, list]) => ({ [key]: k, list, m: list[0]!.mail, ...spanOf(list), last: spanOf(list).last.toISOString() }))
    .sort(byLastDesc(key));
}

const subjectOf = (list: Ev[]) => (new Set(list.map((e) => e.mail.subject)).size === 1 ? list[0]!.mail.subject : null);
const rcptCount = (m: Mail) => mails.filter((x) => x.instance_id === m.instance_id && x.msg_id === m.msg_id).length;
const distinct = <T>(xs: T[]) => new Set(xs).size;
// Cartero's additions (docs/tracking.md): each event's flag, and a group's events and recipients without one.
const people = (list: Ev[]) => list.filter((e) => !e.machine);

function expectedOpens(f: Filter, groupBy: 'none' | 'mail_id' | 'msg_id') {
  const es = selected('open', f);
  if (groupBy === 'none') {
    return es.map((e) => ({
      mail_id: e.mail.mail_id, msg_id: e.mail.msg_id, to: e.mail.recipient, sender: e.mail.sender, opened_at: iso(e.at),
      sent_at: iso(e.mail.sent_at), custom_msg_id: e.mail.custom_msg_id, custom_group_code: e.mail.custom_group_code, machine: e.machine || null,
    }));
  }
  if (groupBy === 'mail_id') {
    return groups(es, 'mail_id').map(({ m, list, first, last }) => ({
      mail_id: m.mail_id, msg_id: m.msg_id, to: m.recipient, sender: m.sender, open_count: list.length, first_opened_at: iso(first),
      last_opened_at: last, sent_at: iso(m.sent_at), custom_msg_id: m.custom_msg_id, custom_group_code: m.custom_group_code,
      human_open_count: people(list).length,
    }));
  }
  return groups(es, 'msg_id').map(({ m, list, first, last }) => ({
    msg_id: m.msg_id, sender: m.sender, subject: subjectOf(list), open_count: list.length, recipients_opened: distinct(list.map((e) => e.mail)),
    rcpt_count: rcptCount(m), first_opened_at: iso(first), last_opened_at: last, custom_msg_id: m.custom_msg_id,
    custom_group_code: m.custom_group_code, human_open_count: people(list).length, recipients_opened_human: distinct(people(list).map((e) => e.mail)),
  }));
}

function expectedClicks(f: Filter, groupBy: 'none' | 'mail_id' | 'msg_id') {
  const es = selected('click', f);
  if (groupBy === 'none') {
    return es.map((e) => ({
      mail_id: e.mail.mail_id, msg_id: e.mail.msg_id, to: e.mail.recipient, sender: e.mail.sender, url_redirect: e.url, clicked_at: iso(e.at),
      sent_at: iso(e.mail.sent_at), custom_msg_id: e.mail.custom_msg_id, custom_group_code: e.mail.custom_group_code, machine: e.machine || null,
    }));
  }
  const links = (list: Ev[]) => distinct(list.filter((e) => e.url !== null).map((e) => `${e.mail.mail_id} ${e.url}`));
  if (groupBy === 'mail_id') {
    return groups(es, 'mail_id').map(({ m, list, first, last }) => ({
      mail_id: m.mail_id, msg_id: m.msg_id, to: m.recipient, sender: m.sender, click_count: list.length, links_clicked: links(list),
      first_clicked_at: iso(first), last_clicked_at: last, sent_at: iso(m.sent_at), custom_msg_id: m.custom_msg_id,
      custom_group_code: m.custom_group_code, human_click_count: people(list).length,
    }));
  }
  return groups(es, 'msg_id').map(({ m, list, first, last }) => ({
    msg_id: m.msg_id, sender: m.sender, subject: subjectOf(list), click_count: list.length, recipients_clicked: distinct(list.map((e) => e.mail)),
    links_clicked: links(list), rcpt_count: rcptCount(m), first_clicked_at: iso(first), last_clicked_at: last,
    custom_msg_id: m.custom_msg_id, custom_group_code: m.custom_group_code, human_click_count: people(list).length,
    recipients_clicked_human: distinct(people(list).map((e) => e.mail)),
  }));
}

const newestFirst = (x: Mail, y: Mail) => y.received_at.getTime() - x.received_at.getTime() || (x.mail_id < y.mail_id ? 1 : -1);
const unopened = (m: Mail) => m.status === 3 && !events.some((e) => e.mail === m && e.type === 'open');
/** human=true: no open a person made (a mail opened only by machines is listed). */
const unopenedByPeople = (m: Mail) => m.status === 3 && !events.some((e) => e.mail === m && e.type === 'open' && !e.machine);

function expectedUnopened(f: Filter & { human?: boolean }) {
  return mails
    .filter((m) => mailMatches(m, f) && inDates(m.received_at, f) && (f.human ? unopenedByPeople(m) : unopened(m)))
    .sort(newestFirst)
    .map((m) => ({
      mail_id: m.mail_id, msg_id: m.msg_id, to: m.recipient, subject: m.subject, sender: m.sender, received_at: iso(m.received_at),
      sent_at: iso(m.sent_at), custom_msg_id: m.custom_msg_id, custom_group_code: m.custom_group_code,
    }));
}

function expectedSent(f: Filter) {
  return mails
    .filter((m) => mailMatches(m, f) && inDates(m.received_at, f))
    .filter((m) => f.status === undefined || m.status === f.status)
    .filter((m) => (f.opened === 'opened' ? opensOf(m) > 0 : f.opened === 'unopened' ? unopened(m) : true))
    .sort(newestFirst)
    .map((m) => ({
      mail_id: m.mail_id, msg_id: m.msg_id, to: m.recipient, subject: m.subject, sender: m.sender, status: m.status, opens: opensOf(m),
      clicks: clicksOf(m), human_opens: humanOf(m, 'open'), human_clicks: humanOf(m, 'click'), received_at: iso(m.received_at), queued_at: iso(m.queued_at), sent_at: iso(m.sent_at), schedule_at: null,
      delay: m.sent_at ? (m.sent_at.getTime() - m.received_at.getTime()) / 1000 : null, custom_msg_id: m.custom_msg_id,
      custom_group_code: m.custom_group_code,
    }));
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers.

function qs(params: Record<string, unknown>): string {
  const s = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  return s ? `?${s}` : '';
}

async function get(path: string, headers: Record<string, string> = a.headers) {
  const res = await fetch(url + path, { headers });
  return { status: res.status, body: (await res.json()) as any };
}

async function list(path: string, params: Record<string, unknown> = {}, headers = a.headers) {
  const r = await get(path + qs({ page_size: 100, ...params }), headers);
  if (r.status !== 200) throw new Error(`${path}${qs(params)}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { data: any[]; pagination: any };
}

/** Every page of a listing at `pageSize`, checking has_more and the envelope on the way. */
async function walk(t: Test, path: string, params: Record<string, unknown>, pageSize: number): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; page < 50; page++) {
    const r = await list(path, { ...params, page, page_size: pageSize });
    t.equal(r.pagination.page, page);
    t.equal(r.pagination.page_size, pageSize);
    t.ok(r.data.length <= pageSize, `page ${page} is not longer than page_size`);
    rows.push(...r.data);
    if (!r.pagination.has_more) return rows;
    t.equal(r.data.length, pageSize, `page ${page} with has_more is full`);
  }
  throw new Error('has_more never became false');
}

async function runQuery(q: ActivityQuery): Promise<any[]> {
  const rs = await ch.query({ query: q.sql, query_params: q.params, format: 'JSONEachRow', clickhouse_settings: { ...ACTIVITY_SETTINGS } });
  return rs.json();
}

// The field lists of the spec, in its order (written out here, not taken from the code).
const SPEC_FIELDS = {
  opens: {
    none: ['mail_id', 'msg_id', 'to', 'sender', 'opened_at', 'sent_at', 'custom_msg_id', 'custom_group_code', 'machine'],
    mail_id: ['mail_id', 'msg_id', 'to', 'sender', 'open_count', 'first_opened_at', 'last_opened_at', 'sent_at', 'custom_msg_id', 'custom_group_code',
      'human_open_count'],
    msg_id: ['msg_id', 'sender', 'subject', 'open_count', 'recipients_opened', 'rcpt_count', 'first_opened_at', 'last_opened_at', 'custom_msg_id',
      'custom_group_code', 'human_open_count', 'recipients_opened_human'],
  },
  clicks: {
    none: ['mail_id', 'msg_id', 'to', 'sender', 'url_redirect', 'clicked_at', 'sent_at', 'custom_msg_id', 'custom_group_code', 'machine'],
    mail_id: ['mail_id', 'msg_id', 'to', 'sender', 'click_count', 'links_clicked', 'first_clicked_at', 'last_clicked_at', 'sent_at', 'custom_msg_id',
      'custom_group_code', 'human_click_count'],
    msg_id: ['msg_id', 'sender', 'subject', 'click_count', 'recipients_clicked', 'links_clicked', 'rcpt_count', 'first_clicked_at', 'last_clicked_at',
      'custom_msg_id', 'custom_group_code', 'human_click_count', 'recipients_clicked_human'],
  },
  unopened: ['mail_id', 'msg_id', 'to', 'subject', 'sender', 'received_at', 'sent_at', 'custom_msg_id', 'custom_group_code'],
  sent: ['mail_id', 'msg_id', 'to', 'subject', 'sender', 'status', 'opens', 'clicks', 'human_opens', 'human_clicks', 'received_at', 'queued_at', 'sent_at', 'schedule_at', 'delay',
    'custom_msg_id', 'custom_group_code'],
} as const;

const MODES = ['none', 'mail_id', 'msg_id'] as const;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ALL_DAYS = { start_date: dateOf(0), end_date: dateOf(7) };
const expected = { opens: expectedOpens, clicks: expectedClicks };

// ---------------------------------------------------------------------------------------------

t.test('row shapes per group_by: the spec fields in its order, ISO UTC dates, values of the events', async (t) => {
  const validators = {
    opens: Object.fromEntries(MODES.map((m) => [m, compile(collectionSchema(openRowSchemas[m]), 'json')])),
    clicks: Object.fromEntries(MODES.map((m) => [m, compile(collectionSchema(clickRowSchemas[m]), 'json')])),
  };
  for (const kind of ['opens', 'clicks'] as const) {
    for (const mode of MODES) {
      const r = await list(`/v1/activities/${kind}`, { ...ALL_DAYS, group_by: mode });
      const want = expected[kind]({ ...ALL_DAYS }, mode);
      t.ok(want.length >= 2, `${kind} ${mode}: the fixtures give several rows`);
      validators[kind][mode]!(r);
      for (const row of r.data) t.strictSame(Object.keys(row), SPEC_FIELDS[kind][mode], `${kind} ${mode}: keys and order`);
      t.strictSame(r.data, want, `${kind} ${mode}: rows field by field`);
      for (const row of r.data) {
        for (const [k, v] of Object.entries(row)) if (k.endsWith('_at') && v !== null) t.match(v, ISO_UTC, `${kind} ${mode} ${k} is ISO UTC`);
      }
    }
  }
  const spec = await list('/v1/activities/opens', { ...ALL_DAYS, group_by: 'msg_id', msg_id: spring.msg_id } as any);
  t.strictSame(spec.data.map((x) => [x.rcpt_count, x.recipients_opened, x.subject]), [[4, 3, 'Spring Sale 50% off']],
    "rcpt_count counts every recipient of the message (the unopened one too) and none of B's");
  const hi = await list('/v1/activities/clicks', { ...ALL_DAYS, group_by: 'msg_id', msg_id: hello.msg_id } as any);
  t.strictSame(hi.data.map((x) => [x.subject, x.links_clicked, x.click_count, x.recipients_clicked]), [[null, 2, 3, 2]],
    'subjects that differ by recipient: null; a click without URL counts as a click, not as a link');
  const annClicks = await list('/v1/activities/clicks', { ...ALL_DAYS, group_by: 'mail_id', mail_id: ann.mail_id } as any);
  t.strictSame(annClicks.data.map((x) => [x.click_count, x.links_clicked]), [[3, 2]], 'links_clicked: distinct links of the recipient');

  const un = await list('/v1/activities/unopened', ALL_DAYS);
  compile(collectionSchema(unopenedRowSchema), 'json')(un);
  for (const row of un.data) t.strictSame(Object.keys(row), SPEC_FIELDS.unopened, 'unopened keys and order');
  const sent = await list('/v1/activities/sent', ALL_DAYS);
  for (const row of sent.data) t.strictSame(Object.keys(row), SPEC_FIELDS.sent, 'sent keys and order');
});

t.test('grouped counts equal the sum of the detail rows, under filters too', async (t) => {
  const campaign = { ...ALL_DAYS, custom_group_code: 'spring' };
  for (const f of [ALL_DAYS, { ...ALL_DAYS, sender_id: 11 }, { ...ALL_DAYS, exclude_machine: true }, { start_date: dateOf(2), end_date: dateOf(2) }, campaign]) {
    for (const kind of ['opens', 'clicks'] as const) {
      const count = kind === 'opens' ? 'open_count' : 'click_count';
      const recipients = kind === 'opens' ? 'recipients_opened' : 'recipients_clicked';
      const none = await list(`/v1/activities/${kind}`, { ...f, group_by: 'none' });
      const byMail = await list(`/v1/activities/${kind}`, { ...f, group_by: 'mail_id' });
      const byMsg = await list(`/v1/activities/${kind}`, { ...f, group_by: 'msg_id' });
      const label = `${kind} ${JSON.stringify(f)}`;
      t.ok(none.data.length > 0, `${label}: events in range`);
      t.equal(byMail.data.reduce((s, x) => s + x[count], 0), none.data.length, `${label}: per-recipient counts sum to the events`);
      t.equal(byMsg.data.reduce((s, x) => s + x[count], 0), none.data.length, `${label}: per-message counts sum to the events`);
      t.equal(byMsg.data.reduce((s, x) => s + x[recipients], 0), byMail.data.length, `${label}: recipients per message sum to the recipient rows`);
      for (const g of byMail.data) {
        const mine = none.data.filter((x) => x.mail_id === g.mail_id);
        t.equal(g[count], mine.length, `${label}: ${g.to}`);
        const times = mine.map((x) => x.opened_at ?? x.clicked_at).sort();
        t.equal(g[kind === 'opens' ? 'first_opened_at' : 'first_clicked_at'], times[0]);
        t.equal(g[kind === 'opens' ? 'last_opened_at' : 'last_clicked_at'], times.at(-1));
      }
    }
  }
});

t.test('dates: local dates in tz on the event time; an open at 23:30 in New York is on its New York date', async (t) => {
  const carolOpen = { recipient: carol.recipient };
  const onDay = async (day: number, tz?: string) =>
    (await list('/v1/activities/opens', { ...carolOpen, start_date: dateOf(day), end_date: dateOf(day), ...(tz ? { tz } : {}) })).data.length;
  t.equal(await onDay(1, NY), 1, 'day 1 in New York');
  t.equal(await onDay(2, NY), 0, 'not day 2 in New York');
  t.equal(await onDay(1), 0, 'not day 1 in UTC (the default zone of this instance)');
  t.equal(await onDay(2), 1, 'day 2 in UTC');
  t.equal(await onDay(2, 'UTC'), 1);
  const grouped = await list('/v1/activities/opens', { ...carolOpen, start_date: dateOf(1), end_date: dateOf(1), tz: NY, group_by: 'msg_id' });
  t.equal(grouped.data[0]?.open_count, 1, 'grouped modes use the same bounds');

  // The instance's zone is the default when tz is omitted.
  const ny = await makeTenant(dbs.pool, { scopes, tz: NY });
  const nyMail = message(ny.tenant.instanceId, {
    subject: 'NY', sender_id: 1, sender: 'ny@shop.example', custom_msg_id: null, custom_group_code: null, received: at(1, 12),
  })('nyc@example.com');
  mails.pop();
  await insert('mail_events', [eventRow({ id: 9_000_001, type: 'open', mail: nyMail, at: nyEvening(1), url: null, machine: '' }, '', shipped)]);
  await insert('mails', [snapshot(nyMail, 1, { opens: 1 })]);
  const nyDay = async (day: number, tz?: string) =>
    (await list('/v1/activities/opens', { start_date: dateOf(day), end_date: dateOf(day), ...(tz ? { tz } : {}) }, ny.headers)).data.length;
  t.equal(await nyDay(1), 1, "the instance's zone when tz is omitted");
  t.equal(await nyDay(1, 'UTC'), 0, 'tz overrides it');

  // Sent and unopened: the reception date. Spring sale mails arrived on day 1 at 09:00 UTC.
  for (const path of ['/v1/activities/sent', '/v1/activities/unopened']) {
    const d1 = await list(path, { start_date: dateOf(1), end_date: dateOf(1), msg_id: spring.msg_id });
    t.ok(d1.data.length > 0, `${path}: on its reception date`);
    t.equal((await list(path, { start_date: dateOf(2), end_date: dateOf(4), msg_id: spring.msg_id })).data.length, 0, `${path}: not on later dates`);
    // 09:00 UTC on day 1 is 23:00 on day 1 at UTC+14: not day 0 there either.
    t.equal((await list(path, { start_date: dateOf(0), end_date: dateOf(0), tz: 'Pacific/Kiritimati', msg_id: spring.msg_id })).data.length, 0);
  }
  const bad = await get('/v1/activities/opens?tz=Mars/Olympus');
  t.equal(bad.status, 422, 'an unknown zone is a 422');
  t.equal(bad.body.errors[0].pointer, '/tz');
  const backwards = await get(`/v1/activities/clicks${qs({ start_date: dateOf(3), end_date: dateOf(1) })}`);
  t.equal(backwards.status, 422, 'end before start');
});

// Each filter, alone and combined, on every listing, against the model; and, written out by hand
// (not computed by the model's mailMatches), the mails of instance A each case must return: every
// other mail of A must not be returned. A filter that ignored its value, matched a prefix where it
// should compare exactly, or read % or _ as wildcards returns other mails and fails here even if
// the model made the same mistake.
const SPRING = [ann, bob, carol, dan];
const WEEKLY = [annOther, bounced, dropped, queued, erin, fay];
const HELLO = [gus, hal];
const FILTER_CASES: Array<{ label: string; f: Filter; want: Mail[] }> = [
  { label: 'msg_id', f: { msg_id: spring.msg_id }, want: SPRING },
  { label: 'mail_id', f: { mail_id: ann.mail_id }, want: [ann] },
  { label: 'sender_id', f: { sender_id: 12 }, want: WEEKLY },
  { label: 'recipient exact', f: { recipient: 'ann@example.com' }, want: [ann] },
  { label: 'recipient exact, compared lower-cased', f: { recipient: 'ANN@Example.COM' }, want: [ann] },
  // A prefix match would return ann@example.com and ann@other.test.
  { label: 'recipient exact is not a prefix', f: { recipient: 'ann@', recipient_operator: 'eq' }, want: [] },
  { label: 'recipient starts_with', f: { recipient: 'ann@', recipient_operator: 'starts_with' }, want: [ann, annOther] },
  { label: 'recipient starts_with, upper-case', f: { recipient: 'GU', recipient_operator: 'starts_with' }, want: [gus] },
  { label: 'recipient with an encoded +', f: { recipient: 'carol+tag@example.com' }, want: [carol] },
  { label: 'custom_msg_id', f: { custom_msg_id: 'camp-1' }, want: SPRING },
  { label: 'custom_group_code', f: { custom_group_code: 'spring' }, want: [...SPRING, ...HELLO] },
  { label: 'subject partial, case-insensitive', f: { subject: 'news' }, want: WEEKLY },
  { label: 'subject with a literal %', f: { subject: '50% OFF' }, want: SPRING },
  // As LIKE wildcards, 'Sale%off' would match 'Spring Sale 50% off' and 'Hello_' both 'Hello Gus' and 'Hello Hal'.
  { label: 'subject: % is not a wildcard', f: { subject: 'Sale%off' }, want: [] },
  { label: 'subject: _ is not a wildcard', f: { subject: 'Hello_' }, want: [] },
  { label: 'combined', f: { custom_group_code: 'spring', subject: 'hello', sender_id: 11 }, want: HELLO },
  { label: 'custom_group_code, machine-made excluded', f: { custom_group_code: 'spring', exclude_machine: true }, want: [...SPRING, ...HELLO] },
  { label: 'dates and a filter', f: { start_date: dateOf(1), end_date: dateOf(1), custom_msg_id: 'camp-1' }, want: SPRING },
];

/** The recipients of these rows (unique among A's mails), sorted: what a failure shows. */
const recipientsOf = (rows: Array<{ to: string }>) => rows.map((r) => r.to).sort();

t.test('every common filter, on every listing and mode, against the model', async (t) => {
  const total = { opens: selected('open', ALL_DAYS).length, clicks: selected('click', ALL_DAYS).length };
  const ofA = mails.filter((m) => m.instance_id === A);
  for (const { label, f, want } of FILTER_CASES) {
    const fx = { ...ALL_DAYS, ...f };
    const ungrouped = { opens: [] as any[], clicks: [] as any[] };
    for (const kind of ['opens', 'clicks'] as const) {
      for (const mode of MODES) {
        const r = await list(`/v1/activities/${kind}`, { ...fx, group_by: mode });
        t.strictSame(r.data, expected[kind](fx, mode), `${label}: ${kind} ${mode}`);
        if (mode === 'none') ungrouped[kind] = r.data;
      }
    }
    const un = await list('/v1/activities/unopened', fx);
    t.strictSame(un.data, expectedUnopened(fx), `${label}: unopened`);
    const sent = await list('/v1/activities/sent', fx);
    t.strictSame(sent.data, expectedSent(fx), `${label}: sent`);

    // By hand: exactly the wanted mails, each listing by its own date and its own rows.
    const wanted = new Set(want);
    const eventsOf = (type: 'open' | 'click') =>
      events.filter((e) => e.type === type && wanted.has(e.mail) && inDates(e.at, fx) && !(fx.exclude_machine && e.machine)).map((e) => ({ to: e.mail.recipient }));
    t.strictSame(recipientsOf(sent.data), recipientsOf(want.filter((m) => inDates(m.received_at, fx)).map((m) => ({ to: m.recipient }))),
      `${label}: sent returns exactly the wanted mails`);
    t.strictSame(recipientsOf(un.data), recipientsOf(want.filter((m) => unopened(m) && inDates(m.received_at, fx)).map((m) => ({ to: m.recipient }))),
      `${label}: unopened returns exactly the wanted mails never opened`);
    t.strictSame(recipientsOf(ungrouped.opens), recipientsOf(eventsOf('open')), `${label}: opens are exactly the wanted mails' opens`);
    t.strictSame(recipientsOf(ungrouped.clicks), recipientsOf(eventsOf('click')), `${label}: clicks are exactly the wanted mails' clicks`);
    t.ok(want.length < ofA.length, `${label}: the wanted mails leave some of A's out`);
    const narrower = selected('open', fx).length < total.opens || selected('click', fx).length < total.clicks;
    t.ok(narrower, `${label}: leaves something out`);
  }
  // Cases the model can get wrong too: check a few results by hand.
  t.equal((await list('/v1/activities/sent', { recipient: 'ANN@Example.COM' })).data[0]?.mail_id, ann.mail_id);
  t.equal((await list('/v1/activities/sent', { subject: 'Sale%off' })).data.length, 0);
  t.equal((await list('/v1/activities/sent', { subject: '50% OFF' })).data.length, 4);
  t.equal((await list('/v1/activities/clicks', { recipient: 'ann@', recipient_operator: 'starts_with' })).data.length, 3);
  t.strictSame((await list('/v1/activities/opens', { recipient_operator: 'starts_with' })).data, expectedOpens({}, 'none'),
    'recipient_operator alone is ignored');
  t.equal((await list('/v1/activities/opens', { sender_id: 999 })).data.length, 0, 'an unknown sender matches nothing');
});

t.test('a + sent unencoded reads as a space and matches nothing; %2B matches', async (t) => {
  for (const path of ['/v1/activities/opens', '/v1/activities/sent', '/v1/activities/unopened', '/v1/activities/clicks']) {
    const raw = await get(`${path}?recipient=carol+tag@example.com`);
    t.equal(raw.status, 200, `${path}: not an error`);
    t.strictSame(raw.body.data, [], `${path}: empty`);
    const plusPrefix = await get(`${path}?recipient=carol+&recipient_operator=starts_with`);
    t.strictSame(plusPrefix.body.data, [], `${path}: a prefix with a raw + matches nothing either`);
  }
  t.equal((await get('/v1/activities/opens?recipient=carol%2Btag@example.com')).body.data.length, 1);
  t.equal((await get('/v1/activities/sent?recipient=carol%2Btag@example.com')).body.data.length, 1);
});

t.test('pagination: has_more across page boundaries, every row exactly once, in order', async (t) => {
  for (const kind of ['opens', 'clicks'] as const) {
    for (const mode of MODES) {
      // The campaign's pages come from mail_events_by_group (and mail_events_by_msg for msg_id).
      for (const f of [ALL_DAYS, { ...ALL_DAYS, custom_group_code: 'spring' }]) {
        const want = expected[kind](f, mode);
        for (const size of [1, 2, 3, want.length]) {
          t.strictSame(await walk(t, `/v1/activities/${kind}`, { ...f, group_by: mode }, size), want, `${kind} ${mode} ${JSON.stringify(f)} by ${size}`);
        }
      }
    }
  }
  for (const size of [1, 2, 4]) {
    t.strictSame(await walk(t, '/v1/activities/unopened', {}, size), expectedUnopened({}), `unopened by ${size}`);
    t.strictSame(await walk(t, '/v1/activities/sent', {}, size), expectedSent({}), `sent by ${size}`);
  }
  const n = expectedOpens(ALL_DAYS, 'none').length;
  const last = await list('/v1/activities/opens', { ...ALL_DAYS, page_size: n });
  t.equal(last.pagination.has_more, false, 'a page ending exactly at the last row has no more');
  const beyond = await list('/v1/activities/opens', { ...ALL_DAYS, page_size: n, page: 2 });
  t.strictSame(beyond.data, []);
  t.equal(beyond.pagination.has_more, false);
  const beforeLast = await list('/v1/activities/opens', { ...ALL_DAYS, page_size: n - 1 });
  t.equal(beforeLast.pagination.has_more, true, 'one row left: has_more');
  t.equal((await get('/v1/activities/opens?page_size=101')).status, 422);
});

t.test('total_items: opens with none only; clicks with none unless subject; never for unopened and sent', async (t) => {
  const opens = expectedOpens(ALL_DAYS, 'none').length;
  const p = await list('/v1/activities/opens', { ...ALL_DAYS, page_size: 4 });
  t.strictSame(p.pagination, { page: 1, page_size: 4, has_more: true, total_items: opens, total_pages: Math.ceil(opens / 4) });
  const filtered = await list('/v1/activities/opens', { ...ALL_DAYS, sender_id: 11, exclude_machine: true, page_size: 2 });
  const want = expectedOpens({ ...ALL_DAYS, sender_id: 11, exclude_machine: true }, 'none').length;
  t.equal(filtered.pagination.total_items, want, 'counts the filtered events');
  t.equal(filtered.pagination.total_pages, Math.ceil(want / 2));
  const subj = await list('/v1/activities/opens', { ...ALL_DAYS, subject: 'spring' });
  t.equal(subj.pagination.total_items, expectedOpens({ ...ALL_DAYS, subject: 'spring' }, 'none').length, 'opens: counted with a subject filter too');
  const none = await list('/v1/activities/opens', { start_date: dateOf(30), end_date: dateOf(31) });
  t.strictSame(none.pagination, { page: 1, page_size: 100, has_more: false, total_items: 0, total_pages: 0 }, 'an empty range counts 0');
  for (const mode of ['mail_id', 'msg_id']) {
    for (const kind of ['opens', 'clicks']) {
      const g = await list(`/v1/activities/${kind}`, { ...ALL_DAYS, group_by: mode, page_size: 1 });
      t.strictSame([g.pagination.total_items, g.pagination.total_pages, g.pagination.has_more], [null, null, true], `${kind} ${mode}`);
    }
  }
  const clicks = expectedClicks(ALL_DAYS, 'none').length;
  const c = await list('/v1/activities/clicks', { ...ALL_DAYS, page_size: 5 });
  t.strictSame([c.pagination.total_items, c.pagination.total_pages], [clicks, Math.ceil(clicks / 5)], 'clicks with none: counted');
  const cr = await list('/v1/activities/clicks', { ...ALL_DAYS, recipient: 'ann@', recipient_operator: 'starts_with' });
  t.equal(cr.pagination.total_items, 3, 'clicks: counted with exact-key filters');
  const cs = await list('/v1/activities/clicks', { ...ALL_DAYS, subject: 'sale' });
  t.strictSame([cs.pagination.total_items, cs.pagination.total_pages], [null, null], 'clicks with a subject filter: null');
  t.ok(cs.data.length > 0);
  for (const path of ['/v1/activities/unopened', '/v1/activities/sent']) {
    const r = await list(path, { page_size: 1 });
    t.strictSame([r.pagination.total_items, r.pagination.total_pages, r.pagination.has_more], [null, null, true], path);
  }
});

t.test('filters apply before grouping', async (t) => {
  const f = { ...ALL_DAYS, msg_id: spring.msg_id, recipient: 'ann@example.com', group_by: 'msg_id' };
  const g = await list('/v1/activities/opens', f);
  t.strictSame(g.data.map((x) => [x.open_count, x.recipients_opened, x.rcpt_count]), [[2, 1, 4]],
    'one recipient selected: only its opens, yet rcpt_count is the whole message');
  const day2 = await list('/v1/activities/clicks', { start_date: dateOf(2), end_date: dateOf(2), group_by: 'mail_id' });
  t.strictSame(day2.data.map((x) => [x.to, x.click_count, x.links_clicked, x.first_clicked_at]), [['ann@example.com', 1, 1, iso(at(2, 8, 1))]],
    'a range that holds one of three clicks counts that one');
  const human = await list('/v1/activities/opens', { ...ALL_DAYS, msg_id: spring.msg_id, group_by: 'msg_id', exclude_machine: true });
  t.strictSame(human.data.map((x) => [x.open_count, x.recipients_opened]), [[4, 3]], "bob's proxy open is not counted");
});

t.test('exclude_machine: off by default; on, flagged events go, by their newest flag', async (t) => {
  const all = await list('/v1/activities/opens', ALL_DAYS);
  t.ok(all.data.some((x) => x.to === 'bob@example.com' && x.opened_at === iso(at(1, 11))), 'listed by default');
  t.ok(all.data.some((x) => x.opened_at === iso(reflagged.at)), 'the re-flagged open too');
  t.equal(all.data.filter((x) => x.opened_at === iso(reflagged.at)).length, 1, 'an event shipped twice is listed once');
  t.equal(all.pagination.total_items, selected('open', ALL_DAYS).length, 'and counted once');
  const off = await list('/v1/activities/opens', { ...ALL_DAYS, exclude_machine: false });
  t.strictSame(off.data, all.data, 'false is the default');
  const human = await list('/v1/activities/opens', { ...ALL_DAYS, exclude_machine: true });
  t.notOk(human.data.some((x) => x.opened_at === iso(at(1, 11))), 'the privacy-proxy open is excluded');
  t.notOk(human.data.some((x) => x.opened_at === iso(reflagged.at)), 'the event whose newest copy is flagged is excluded');
  t.equal(human.data.length, all.data.length - 3, 'the proxy open and the two re-flagged ones');
  const campaign = await list('/v1/activities/opens', { ...ALL_DAYS, custom_group_code: 'spring', group_by: 'mail_id' });
  const humanCampaign = await list('/v1/activities/opens', { ...ALL_DAYS, custom_group_code: 'spring', group_by: 'mail_id', exclude_machine: true });
  const copies = await ch.query({
    query: 'SELECT count() AS n FROM mail_events_by_group WHERE event_id = {id:UInt64}',
    query_params: { id: reflaggedInCampaign.id },
    format: 'JSONEachRow',
  });
  t.equal(Number(((await copies.json()) as Array<{ n: string }>)[0]?.n), 2, 'the copy table holds both copies, unmerged');
  t.equal(campaign.data.find((x) => x.to === 'gus@example.com')?.open_count, 1, "the campaign's re-shipped open counts once");
  t.notOk(humanCampaign.data.some((x) => x.to === 'gus@example.com'), 'and is excluded by its newest flag');
  t.strictSame(human.data, expectedOpens({ ...ALL_DAYS, exclude_machine: true }, 'none'));
  const clicks = await list('/v1/activities/clicks', { ...ALL_DAYS, exclude_machine: true, group_by: 'mail_id' });
  t.notOk(clicks.data.some((x) => x.to === 'bob@example.com'), "the scanner's click is excluded, and with it bob's row");
  const bad = await get('/v1/activities/clicks?exclude_machine=maybe');
  t.equal(bad.status, 422);
  t.strictSame(bad.body.errors.map((e: any) => [e.pointer, e.code]), [['/exclude_machine', 'bool_parsing']]);
});

t.test('human counts beside every grouped count, each equal to the count with exclude_machine=true; machine on every event row', async (t) => {
  const ranges = [ALL_DAYS, { ...ALL_DAYS, custom_group_code: 'spring' }, { ...ALL_DAYS, sender_id: 11 }, { start_date: dateOf(1), end_date: dateOf(1) }];
  for (const kind of ['opens', 'clicks'] as const) {
    const count = kind === 'opens' ? 'open_count' : 'click_count';
    const human = kind === 'opens' ? 'human_open_count' : 'human_click_count';
    const recipients = kind === 'opens' ? 'recipients_opened' : 'recipients_clicked';
    for (const f of ranges) {
      for (const mode of ['mail_id', 'msg_id'] as const) {
        const key = mode;
        const raw = (await list(`/v1/activities/${kind}`, { ...f, group_by: mode })).data;
        const people = (await list(`/v1/activities/${kind}`, { ...f, group_by: mode, exclude_machine: true })).data;
        const label = `${kind} ${mode} ${JSON.stringify(f)}`;
        for (const row of raw) {
          const same = people.find((p) => p[key] === row[key]);
          t.equal(row[human], same ? same[count] : 0, `${label} ${row[key]}: ${human} is the count without machines`);
          if (mode === 'msg_id') t.equal(row[`${recipients}_human`], same ? same[recipients] : 0, `${label}: ${recipients}_human`);
        }
      }
    }
    const rows = (await list(`/v1/activities/${kind}`, ALL_DAYS)).data;
    const flagged = rows.filter((x) => x.machine !== null);
    t.ok(flagged.length > 0 && flagged.length < rows.length, `${kind}: some event rows flagged, some not`);
    const excluded = (await list(`/v1/activities/${kind}`, { ...ALL_DAYS, exclude_machine: true })).data;
    t.equal(excluded.length, rows.length - flagged.length, `${kind}: the rows with machine null are those exclude_machine keeps`);
  }
  // Spring: bob's only open came from a privacy proxy, gus's only open was re-flagged (its copies: '' then 'prefetch').
  const spring = (await list('/v1/activities/opens', { ...ALL_DAYS, msg_id: reflaggedInCampaign.mail.msg_id, group_by: 'msg_id' })).data[0];
  t.ok(spring.recipients_opened_human < spring.recipients_opened, `people opened it fewer times than it was opened (${spring.recipients_opened_human} of ${spring.recipients_opened})`);
});

t.test('unopened human=true: delivered with no open a person made', async (t) => {
  const human = await list('/v1/activities/unopened', { human: true } as any);
  t.strictSame(human.data, expectedUnopened({ human: true }), 'the reference model');
  const plain = (await list('/v1/activities/unopened')).data.map((x) => x.mail_id);
  const onlyMachines = human.data.map((x) => x.mail_id).filter((id) => !plain.includes(id));
  t.ok(onlyMachines.length > 0, `mails opened only by machines are listed with human=true (${onlyMachines.length})`);
  for (const id of plain) t.ok(human.data.some((x) => x.mail_id === id), 'every mail with no open at all is still listed');
  const ranged = await list('/v1/activities/unopened', { human: true, start_date: dateOf(1), end_date: dateOf(1) } as any);
  t.strictSame(ranged.data, expectedUnopened({ human: true, start_date: dateOf(1), end_date: dateOf(1) }), 'within a range');
  t.equal((await get('/v1/activities/unopened?human=perhaps')).status, 422);
});

t.test('unopened: delivered mails without a recorded open; bounced, dropped, queued never', async (t) => {
  const unopenedIds = async () => (await list('/v1/activities/unopened')).data.map((x) => x.mail_id);
  const ids = await unopenedIds();
  t.strictSame(ids, [hal, erin, dan].map((m) => m.mail_id), 'hal (clicked, never opened), erin, dan: newest reception first');
  t.strictSame(ids, expectedUnopened({}).map((x) => x.mail_id));
  for (const m of [bounced, dropped, queued]) t.notOk(ids.includes(m.mail_id), `${m.recipient} (status ${m.status}) absent`);
  t.notOk(ids.includes(fay.mail_id), 'an open event whose mail snapshot still says 0 opens hides the mail');
  t.notOk(ids.includes(bounced.mail_id), 'a mail bounced after its delivery snapshot is judged on its newest snapshot');
  t.strictSame((await list('/v1/activities/sent', { opened: 'unopened' })).data.map((x) => x.mail_id), ids, 'sent opened=unopened agrees');

  // Erin opens it now: the pump ships the event and the mail's new snapshot.
  await insert('mail_events', [eventRow({ id: 9_000_002, type: 'open', mail: erin, at: new Date(), url: null, machine: '' }, '', new Date())]);
  await insert('mails', [snapshot(erin, 3, { opens: 1 })]);
  t.strictSame(await unopenedIds(), [hal.mail_id, dan.mail_id], 'an opened mail stops appearing');
  // Dan's snapshot says opened, with no event of the last day: the mirror's count alone hides it.
  await insert('mails', [snapshot(dan, 3, { opens: 1 })]);
  t.strictSame(await unopenedIds(), [hal.mail_id], 'the mirror count alone is enough too');
  // Newer snapshots with opens = 0 again: dan is back; erin is not (its open event of today).
  await insert('mails', [snapshot(dan, 4, { opens: 0 }), snapshot(erin, 4, { opens: 0 })]);
  t.strictSame(await unopenedIds(), [hal.mail_id, dan.mail_id], 'the recent open event alone hides erin');
  t.strictSame(unopenedQuery(a.tenant, {}).columns.map((c) => c.name), SPEC_FIELDS.unopened);
});

t.test('sent: newest snapshot of each mail; status and opened filters', async (t) => {
  t.strictSame((await list('/v1/activities/sent', { status: 6 })).data.map((x) => x.mail_id), [bounced.mail_id], 'status=6');
  t.strictSame((await list('/v1/activities/sent', { status: 2 })).data.map((x) => x.mail_id), [queued.mail_id], 'status=2: the newest snapshot only');
  const opened = (await list('/v1/activities/sent', { opened: 'opened' })).data;
  t.ok(opened.length > 0 && opened.every((x) => x.opens > 0), 'opened: only mails with opens');
  t.strictSame((await list('/v1/activities/sent', { opened: 'all' })).data, (await list('/v1/activities/sent')).data, 'all: no filter');
  const bad = await get('/v1/activities/sent?opened=maybe');
  t.equal(bad.status, 422);
  t.equal(bad.body.errors[0].pointer, '/opened');
});

t.test('the export form of each query (no page) returns the listing rows and columns', async (t) => {
  const cases: Array<[string, Record<string, unknown>, (p?: any) => ActivityQuery]> = [];
  for (const mode of MODES) {
    const campaign = { ...ALL_DAYS, custom_group_code: 'spring' };
    for (const f of [ALL_DAYS, { ...ALL_DAYS, exclude_machine: true, sender_id: 11 }, campaign, { ...campaign, exclude_machine: true }]) {
      const ff = { ...f, group_by: mode };
      cases.push([`/v1/activities/opens`, ff, (p) => opensQuery(a.tenant, ff, p)]);
      cases.push([`/v1/activities/clicks`, ff, (p) => clicksQuery(a.tenant, ff, p)]);
    }
  }
  cases.push(['/v1/activities/unopened', {}, (p) => unopenedQuery(a.tenant, {}, p)]);
  cases.push(['/v1/activities/sent', { opened: 'unopened' }, (p) => sentQuery(a.tenant, { opened: 'unopened' }, p)]);
  cases.push(['/v1/activities/sent', {}, (p) => sentQuery(a.tenant, {}, p)]);
  for (const [path, f, build] of cases) {
    const q = build();
    t.notMatch(q.sql, /LIMIT \{page_limit/, `${q.name}: no LIMIT without a page`);
    // Same rows either way (checked below); this pins which table serves them.
    if ('custom_group_code' in f) t.match(q.sql, /\bmail_events_by_group\b/, `${q.name}: a campaign reads its sorted copy`);
    else t.notMatch(q.sql, /mail_events_by_group/, `${q.name}: no campaign, no copy`);
    const rows = await runQuery(q);
    const listed = await walk(t, path, f, 2);
    t.strictSame(rows, listed, `${q.name} ${JSON.stringify(f)}: same rows as the listing`);
    t.ok(rows.length > 0);
    for (const row of rows) t.strictSame(Object.keys(row), q.columns.map((c) => c.name), `${q.name}: columns in order`);
    t.doesNotThrow(() => checkRows(q, rows), `${q.name}: real rows, NULLs included, pass the listing's row check`);
    for (const c of q.columns) {
      const kinds = new Set(rows.map((r) => (r[c.name] === null ? 'null' : typeof r[c.name])));
      const ok = { text: ['string', 'null'], number: ['number', 'null'], datetime: ['string', 'null'] }[c.kind];
      t.ok([...kinds].every((k) => ok.includes(k)), `${q.name}.${c.name} is ${c.kind}`);
    }
  }
});

t.test('filter values travel as query parameters, never as SQL text', async (t) => {
  const evil = "x' OR 1=1 OR subject != '";
  for (const [build, path] of [
    [(f: any) => opensQuery(a.tenant, f), '/v1/activities/opens'],
    [(f: any) => clicksQuery(a.tenant, { ...f, group_by: 'msg_id' }), '/v1/activities/clicks'],
    [(f: any) => sentQuery(a.tenant, f), '/v1/activities/sent'],
    [(f: any) => unopenedQuery(a.tenant, f), '/v1/activities/unopened'],
  ] as const) {
    const q = build({ subject: evil, recipient: evil, msg_id: evil });
    t.notOk(q.sql.includes('1=1'), `${q.name}: the value is not in the SQL`);
    t.ok(Object.values(q.params).includes(evil), `${q.name}: it is a parameter`);
    const r = await list(path, { subject: evil });
    t.strictSame(r.data, [], `${path}: matches nothing`);
  }
});

t.test("another instance's events and mails never show, nor count", async (t) => {
  const mine = { ...ALL_DAYS, recipient: 'ann@example.com' };
  const opens = await list('/v1/activities/opens', mine);
  t.ok(opens.data.length > 0 && opens.data.every((x) => x.mail_id === ann.mail_id), "B's ann@example.com opens are not A's");
  t.equal(opens.pagination.total_items, 2);
  const theirs = await list('/v1/activities/opens', ALL_DAYS, b.headers);
  t.strictSame(theirs.data.map((x) => x.mail_id), [bAnn.mail_id, bAnn.mail_id], 'B sees its own only');
  t.equal((await list('/v1/activities/opens', { ...ALL_DAYS, mail_id: bAnn.mail_id })).data.length, 0, "B's mail_id from A: nothing");
  const bMsg = await list('/v1/activities/opens', { ...ALL_DAYS, group_by: 'msg_id' }, b.headers);
  t.strictSame(bMsg.data.map((x) => [x.msg_id, x.rcpt_count, x.open_count]), [[spring.msg_id, 3, 2]], "rcpt_count of B's share of the msg_id");
  t.strictSame((await list('/v1/activities/unopened', {}, b.headers)).data.map((x) => x.to).sort(), ['yan@example.com', 'zed@example.com']);
  t.equal((await list('/v1/activities/sent', {}, b.headers)).data.length, 3);
  t.equal((await list('/v1/activities/clicks', { ...ALL_DAYS, group_by: 'mail_id' }, b.headers)).data.length, 1);
});

t.test('422: a bad group_by, page or date', async (t) => {
  for (const kind of ['opens', 'clicks']) {
    const bad = await get(`/v1/activities/${kind}?group_by=recipient`);
    t.equal(bad.status, 422, `${kind}: group_by outside the enum`);
    t.equal(bad.body.code, 'validation_error');
    t.strictSame(bad.body.errors.map((e: any) => [e.pointer, e.code]), [['/group_by', 'enum']]);
    t.equal((await get(`/v1/activities/${kind}?group_by=MSG_ID`)).status, 422, 'case-sensitive');
    t.equal((await get(`/v1/activities/${kind}?start_date=2026-13-01`)).status, 422);
  }
  t.equal((await get('/v1/activities/unopened?group_by=msg_id')).status, 200, 'unopened has no group_by: ignored like any unknown parameter');
  t.equal((await get('/v1/activities/sent?status=8')).status, 422);
});

t.test('the OpenAPI document describes the four listings', async (t) => {
  const doc = (await get('/v1/openapi.json', {})).body;
  const params = (path: string) => doc.paths[path].get.parameters.map((p: any) => p.name).sort();
  const common = ['custom_group_code', 'custom_msg_id', 'end_date', 'mail_id', 'msg_id', 'page', 'page_size', 'recipient', 'recipient_operator',
    'sender_id', 'start_date', 'subject', 'tz'];
  t.strictSame(params('/v1/activities/opens'), [...common, 'exclude_machine', 'group_by'].sort());
  t.strictSame(params('/v1/activities/clicks'), [...common, 'exclude_machine', 'group_by'].sort());
  t.strictSame(params('/v1/activities/unopened'), [...common, 'human'].sort());
  t.strictSame(params('/v1/activities/sent'), [...common, 'opened', 'status'].sort());
  for (const path of ['/v1/activities/opens', '/v1/activities/clicks']) {
    const op = doc.paths[path].get;
    t.strictSame(op.parameters.find((p: any) => p.name === 'group_by').schema.enum, ['none', 'mail_id', 'msg_id']);
    t.match(op.parameters.find((p: any) => p.name === 'exclude_machine').description, /machine-made/);
    t.match(op.description, /total_items/);
    t.equal(op['x-required-scope'], 'mail:read');
    const rows = op.responses['200'].content['application/json'].schema.properties.data.items.oneOf;
    t.equal(rows.length, 3, `${path}: three row shapes`);
  }
  t.match(doc.paths['/v1/activities/clicks'].get.description, /subject/, 'the clicks total_items rule is documented');
});

// 401, 403 (scope, disabled instance) and another instance's slug: test/route-security.test.ts, for every route.
t.test('ip_not_allowed and 405 on the listings', async (t) => {
  const ipRefused = await makeTenant(dbs.pool, { scopes: ['mail:read'], allowCidrs: ['10.0.0.0/8'] });
  const instanceIpRefused = await makeTenant(dbs.pool, { scopes: ['mail:read'] });
  await setInstanceAllowList(dbs.pool, instanceIpRefused.slug, { add: ['10.0.0.0/8'] });
  for (const path of ['/v1/activities/sent', '/v1/activities/opens', '/v1/activities/clicks', '/v1/activities/unopened']) {
    await t.test(path, async (t) => {
      t.equal((await rawCall(url + path, a.headers)).status, 200, 'control: a mail:read key');
      t.equal((await rawCall(url + path, ipRefused.headers)).body.code, 'ip_not_allowed');
      t.equal((await rawCall(url + path, instanceIpRefused.headers)).body.code, 'ip_not_allowed');
      const post = await fetch(url + path, { method: 'POST', headers: { ...a.headers, 'content-type': 'application/json' }, body: '{}' });
      t.equal(post.status, 405);
      await post.body?.cancel();
    });
  }
});

// ---------------------------------------------------------------------------------------------
// End to end: real mail through the send worker's steps, the pixel, the pump, the listings.

t.test('end to end: sent equals GET /v1/mails; an open through the pixel reaches opens and leaves unopened', async (t) => {
  const e = await makeTenant(dbs.pool, { scopes });
  const [newsId, infoId] = await makeSenders(dbs.pool, e.tenant, {
    domain: 'act.example',
    senders: [{ email: 'news', name: 'News' }, { email: 'info', name: 'Info' }],
  });
  await withTenant(dbs.pool, e.tenant, (c) => restrict(e.tenant, c, 'blocked@example.org', 'unsubscribe'));
  startTestPump(t, dbs);
  const api = mailApi(url, e.headers);
  const send = async (body: Record<string, unknown>) => {
    const r = await api.send({ text: 'hello', html: '<p>hello</p>', ...body });
    if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { msg_id: string; mails: Array<{ mail_id: string; to: string }> };
  };
  const launch = await send({
    from: 'news@act.example',
    to: [{ email: 'reader1@example.org' }, { email: 'Reader2@Example.org' }, { email: 'bounce-x@example.org' }, { email: 'blocked@example.org' }],
    subject: 'E2E Launch 100%',
    custom_msg_id: 'e2e-1',
    custom_group_code: 'g-e2e',
  });
  const other = await send({ from: 'info@act.example', to: [{ email: 'reader3+tag@example.org' }], subject: 'Other news' });
  const statuses = new Map<string, number>();
  const all = [...launch.mails, ...other.mails];
  await deliver(e.tenant, dbs.pool, all.map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
  for (const m of all) statuses.set(m.to, (await api.mail(m.mail_id)).status);
  t.strictSame(Object.fromEntries(statuses), {
    'reader1@example.org': 3, 'reader2@example.org': 3, 'bounce-x@example.org': 6, 'blocked@example.org': 4, 'reader3+tag@example.org': 3,
  }, 'delivered, bounced and dropped mails');
  const [reader1] = launch.mails;

  const ids = async (path: string, params: Record<string, unknown> = {}) => (await list(path, params, e.headers)).data.map((x) => x.to).sort();
  const delivered = ['reader1@example.org', 'reader2@example.org', 'reader3+tag@example.org'];
  await waitFor('the mirror to hold the delivered mails', async () =>
    JSON.stringify(await ids('/v1/activities/unopened')) === JSON.stringify(delivered) ? true : undefined, { ms: 20_000 });

  const secret = await trackingSecret(dbs.pool);
  const px = await fetch(`${url}/t/o/${openToken(secret, reader1!.mail_id)}`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0' } });
  t.equal(px.status, 200);
  await px.arrayBuffer();
  const openedAt = Date.now();
  const opens = await waitFor('the open in /v1/activities/opens', async () => {
    const r = await list('/v1/activities/opens', {}, e.headers);
    return r.data.length ? r : undefined;
  }, { ms: 20_000 });
  t.strictSame(opens.data.map((x) => [x.mail_id, x.msg_id, x.to, x.sender, x.custom_msg_id, x.custom_group_code]),
    [[reader1!.mail_id, launch.msg_id, 'reader1@example.org', 'news@act.example', 'e2e-1', 'g-e2e']]);
  t.equal(opens.pagination.total_items, 1);
  t.ok(Math.abs(Date.parse(opens.data[0].opened_at) - openedAt) < 10_000, 'opened_at is the time of the hit');
  const today = new Date().toISOString().slice(0, 10);
  const byMsg = await list('/v1/activities/opens', { group_by: 'msg_id', start_date: today, end_date: today, tz: 'UTC' }, e.headers);
  t.strictSame(byMsg.data.map((x) => [x.msg_id, x.open_count, x.recipients_opened, x.rcpt_count, x.subject]),
    [[launch.msg_id, 1, 1, 4, 'E2E Launch 100%']], 'rcpt_count: the four recipients of the message, from the mirror');
  await waitFor('the opened mail to leave unopened', async () =>
    JSON.stringify(await ids('/v1/activities/unopened')) === JSON.stringify(delivered.slice(1)) ? true : undefined, { ms: 10_000 });
  t.pass('the opened mail left unopened');

  // The sent listing equals GET /v1/mails, for the same filters, once the pump has settled.
  const same = async (params: Record<string, unknown>) => {
    const [mine, reference] = [await list('/v1/activities/sent', params, e.headers), await list('/v1/mails', params, e.headers)];
    return { mine: mine.data, reference: reference.data, pagination: [mine.pagination, reference.pagination] };
  };
  await waitFor('sent to settle', async () => {
    const r = await same({});
    return JSON.stringify(r.mine) === JSON.stringify(r.reference) ? true : undefined;
  }, { ms: 20_000 });
  const cases: Array<Record<string, unknown>> = [
    {}, { status: 3 }, { status: 6 }, { status: 4 }, { opened: 'opened' }, { opened: 'unopened' }, { opened: 'all' },
    { recipient: 'READER2@example.org' }, { recipient: 'reader', recipient_operator: 'starts_with' }, { recipient: 'reader3+tag@example.org' },
    { subject: 'launch 100' }, { subject: '100%' }, { subject: 'news' }, { msg_id: launch.msg_id }, { mail_id: reader1!.mail_id },
    { sender_id: newsId }, { sender_id: infoId }, { custom_msg_id: 'e2e-1' }, { custom_group_code: 'g-e2e' },
    { start_date: today, end_date: today, tz: 'UTC' }, { start_date: '2020-01-01', end_date: '2020-01-02' },
    { page_size: 2 }, { page_size: 2, page: 2 }, { page_size: 2, page: 3 }, { status: 3, opened: 'unopened', custom_group_code: 'g-e2e' },
  ];
  for (const params of cases) {
    const r = await same(params);
    t.strictSame(r.mine, r.reference, `sent = GET /v1/mails for ${JSON.stringify(params)}`);
    t.strictSame(r.pagination[0], r.pagination[1], `same pagination for ${JSON.stringify(params)}`);
  }
  t.equal((await same({})).mine.length, 5);
  t.strictSame((await same({ opened: 'opened' })).mine.map((x) => x.mail_id), [reader1!.mail_id]);
  const raw = await get('/v1/activities/sent?recipient=reader3+tag@example.org', e.headers);
  t.strictSame([raw.status, raw.body.data], [200, []], 'an unencoded + matches nothing, like GET /v1/mails');
});
