import type { MailSnapshot } from '../domain/outbox/pump.js';
import { chDateTime, type ClickHouseClient } from './client.js';

/** One row of ClickHouse's mail_events (analytics/migrations/002_mail_events.ts). */
export interface MailEventRow {
  instance_id: number;
  /** open, click, unsubscribe, complaint, or the status a delivery move reached (STATUS_EVENT). */
  event_type: string;
  /** 1-7 for a delivery move, else null. */
  status: number | null;
  /** Why the mail bounced, on a move to bounced (engines/bounces/reason.ts); else null (absent: null). */
  bounce_reason?: string | null;
  occurred_at: Date;
  event_id: number;
  mail_id: string;
  msg_id: string;
  recipient: string;
  /** The mail's mailbox provider (engines/providers/table.ts); absent: 'other'. */
  provider?: string;
  sender_id: number | null;
  sender: string | null;
  subject: string;
  custom_msg_id: string | null;
  custom_group_code: string | null;
  mail_received_at: Date;
  sent_at: Date | null;
  url: string | null;
  user_agent: string;
  ip: string;
  machine: string;
}

/** event_type of a delivery move to each status. */
export const STATUS_EVENT: Record<number, string> = {
  1: 'received',
  2: 'queued',
  3: 'sent',
  4: 'dropped',
  5: 'deferred',
  6: 'bounced',
  7: 'onhold',
};

// DateTime64(3) accepts 'YYYY-MM-DD hh:mm:ss.sss' in JSONEachRow; ISO's T and Z are not parsed
// by the default (basic) date-time input format.

/**
 * One multi-row JSONEachRow insert per batch. async_insert is off: the pump marks the rows shipped
 * in Postgres only after ClickHouse acknowledged them as written. For the same reason, in cluster
 * mode (a Distributed table under the same name: analytics/sharding.ts) the insert returns only
 * once every shard wrote its part, not when the rows are queued on the receiving node
 * (distributed_foreground_insert; no effect on a single node's MergeTree).
 */
export async function pumpInsert(ch: ClickHouseClient, table: string, values: Array<Record<string, unknown>>, comment = 'event pump'): Promise<void> {
  if (!values.length) return;
  await ch.insert({
    table,
    format: 'JSONEachRow',
    values,
    clickhouse_settings: { async_insert: 0, distributed_foreground_insert: 1, log_comment: comment },
  });
}

export async function insertMailEvents(ch: ClickHouseClient, rows: readonly MailEventRow[]): Promise<void> {
  await pumpInsert(
    ch,
    'mail_events',
    rows.map((r) => ({
      ...r,
      occurred_at: chDateTime(r.occurred_at),
      mail_received_at: chDateTime(r.mail_received_at),
      sent_at: r.sent_at ? chDateTime(r.sent_at) : null,
    })),
  );
}

/** One row of ClickHouse's mails mirror: the snapshot the pump reads (domain/outbox/pump.ts). */
export type MailMirrorRow = MailSnapshot;

export async function insertMailSnapshots(ch: ClickHouseClient, rows: readonly MailMirrorRow[]): Promise<void> {
  await pumpInsert(
    ch,
    'mails',
    rows.map((r) => ({
      ...r,
      received_at: chDateTime(r.received_at),
      queued_at: r.queued_at ? chDateTime(r.queued_at) : null,
      sent_at: r.sent_at ? chDateTime(r.sent_at) : null,
    })),
  );
}
