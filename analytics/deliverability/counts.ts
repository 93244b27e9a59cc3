import type { ClickHouseClient } from '@clickhouse/client';
import type { DashboardRange } from '../../domain/panel/dashboard-range.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { activityWhere, type Where } from '../activities/filters.js';
import type { ResultColumn } from '../activities/query.js';
import { readChecked, type CheckedQuery } from '../activities/rows.js';

/**
 * The per-provider counts (docs/deliverability.md, "Figures"), each read where and as its listing
 * reads it, so every figure equals what a listing counts for the same range:
 *
 *  - sent, delivered, deferred, bounced (hard, soft): the `mails` mirror, each mail's newest
 *    snapshot (FINAL), by reception time: the rows of GET /v1/activities/sent, with status=3, 5
 *    and 6 (bounced split by bounce_class, as the dashboard does);
 *  - complaints, unsubscribed, opened, opened_human: `mail_events`, each event once (its copies share
 *    event_id), by the event's time: the complaints of GET /v1/mail-complaints, the mails'
 *    unsubscribes, and total_items of GET /v1/activities/opens, without and with exclude_machine=true.
 *
 * Grouped by any of: the mail's provider (a column of both tables since analytics migration
 * 009), the local day of the time column, and the sending domain (the part after the sender
 * address's @). The same date bounds as the listings (activityWhere).
 */
export type CountKey = 'provider' | 'day' | 'domain';

export interface CountsFilter {
  /** One sending domain (lower case), or all. */
  domain?: string;
  /** One provider, or all. */
  provider?: string;
}

export interface Counts {
  sent: number;
  delivered: number;
  deferred: number;
  bounced_hard: number;
  bounced_soft: number;
  complaints: number;
  unsubscribed: number;
  /** Every open, and those not flagged as machine-made: shown side by side, as elsewhere. */
  opened: number;
  opened_human: number;
}

export type KeyedCounts = Partial<Record<CountKey, string>> & Counts;

export const zeroCounts = (): Counts => ({
  sent: 0, delivered: 0, deferred: 0, bounced_hard: 0, bounced_soft: 0, complaints: 0, unsubscribed: 0, opened: 0, opened_human: 0,
});

// The sender's domain: `sender` is the sender's address, stored lower case (senders.email_address).
const SENDER_DOMAIN = `substring(assumeNotNull(sender), position(assumeNotNull(sender), '@') + 1)`;

function keySql(key: CountKey, timeColumn: string): string {
  if (key === 'provider') return 'provider';
  if (key === 'day') return `toString(toDate(${timeColumn}, {tz:String}))`;
  return SENDER_DOMAIN;
}

function narrowed(where: Where, f: CountsFilter): Where {
  const conditions = [where.sql];
  const params = { ...where.params };
  if (f.domain !== undefined) {
    conditions.push('endsWith(sender, {sender_at:String})');
    params.sender_at = `@${f.domain.toLowerCase()}`;
  }
  if (f.provider !== undefined) {
    conditions.push('provider = {provider:String}');
    params.provider = f.provider;
  }
  return { sql: conditions.join(' AND '), params };
}


const numbers = (...names: string[]): ResultColumn[] => names.map((name) => ({ name, kind: 'number' }));
const texts = (keys: readonly CountKey[]): ResultColumn[] => keys.map((name) => ({ name, kind: 'text' }));

export function mailCountsQuery(tenant: Tenant, range: DashboardRange, f: CountsFilter, keys: readonly CountKey[]): CheckedQuery {
  const where = narrowed(activityWhere(tenant, range, 'received_at'), f);
  const select = keys.map((k) => `${keySql(k, 'received_at')} AS ${k}`);
  return {
    name: 'deliverability.mails',
    sql: `SELECT ${[...select,
      'toUInt32(count()) AS sent',
      'toUInt32(countIf(status = 3)) AS delivered',
      'toUInt32(countIf(status = 5)) AS deferred',
      `toUInt32(countIf(status = 6 AND bounce_class = 'hard')) AS bounced_hard`,
      `toUInt32(countIf(status = 6 AND bounce_class != 'hard')) AS bounced_soft`].join(', ')}
    FROM mails FINAL WHERE ${where.sql}${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`,
    params: { ...where.params, tz: range.tz },
    columns: [...texts(keys), ...numbers('sent', 'delivered', 'deferred', 'bounced_hard', 'bounced_soft')],
  };
}

/**
 * Complaints, unsubscribes and human opens: each event once, read with FINAL, which keeps each
 * event's newest copy (the copies a re-shipped batch leaves share the whole sorting key,
 * occurred_at and event_id included; the highest shipped_at wins): an open is human when that
 * copy carries no machine flag, as the opens listing's count reads it (event-rows.ts). The keys
 * are the same on every copy (provider and sender are the mail's, fixed at acceptance;
 * occurred_at is in the key). Three ranges of the key (instance, type, time).
 *
 * FINAL, not `GROUP BY event_type, event_id` with argMax(machine, shipped_at) as before: the same
 * rows (checked on bench/analytics's 10 M mails, 5.5 M opens), but a merge of sorted ranges
 * instead of a hash table of every event: 0.6 s and 21 MiB against 22.7 s and 1.5 GiB there
 * (docs/performance-history.md, issue 40).
 */
export function eventCountsQuery(tenant: Tenant, range: DashboardRange, f: CountsFilter, keys: readonly CountKey[]): CheckedQuery {
  const where = narrowed(activityWhere(tenant, range, 'occurred_at'), f);
  return {
    name: 'deliverability.events',
    sql: `SELECT ${[...keys.map((k) => `${keySql(k, 'occurred_at')} AS ${k}`),
      `toUInt32(countIf(event_type = 'complaint')) AS complaints`,
      `toUInt32(countIf(event_type = 'unsubscribe')) AS unsubscribed`,
      `toUInt32(countIf(event_type = 'open')) AS opened`,
      `toUInt32(countIf(event_type = 'open' AND machine = '')) AS opened_human`].join(', ')}
    FROM mail_events FINAL WHERE ${where.sql} AND event_type IN ('complaint', 'unsubscribe', 'open')${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`,
    params: { ...where.params, tz: range.tz },
    columns: [...texts(keys), ...numbers('complaints', 'unsubscribed', 'opened', 'opened_human')],
  };
}

/** The counts of the range, one entry per combination of the keys that has any; both queries side by side. */
export async function countsBy(
  tenant: Tenant,
  ch: ClickHouseClient,
  range: DashboardRange,
  f: CountsFilter,
  keys: readonly CountKey[],
): Promise<KeyedCounts[]> {
  const [mails, events] = await Promise.all([
    readChecked(ch, mailCountsQuery(tenant, range, f, keys)),
    readChecked(ch, eventCountsQuery(tenant, range, f, keys)),
  ]);
  const merged = new Map<string, KeyedCounts>();
  const entry = (row: Record<string, unknown>) => {
    const id = JSON.stringify(keys.map((k) => row[k]));
    let e = merged.get(id);
    if (!e) merged.set(id, (e = { ...Object.fromEntries(keys.map((k) => [k, String(row[k])])), ...zeroCounts() }));
    return e;
  };
  for (const r of [...mails, ...events]) {
    const e = entry(r);
    for (const name of Object.keys(zeroCounts()) as Array<keyof Counts>) if (r[name] !== undefined) e[name] = Number(r[name]);
  }
  return [...merged.values()];
}
