import type { Logger } from 'pino';
import { insertMailEvents, insertMailSnapshots, STATUS_EVENT, type MailEventRow } from '../../analytics/mail-events.js';
import type { ClickHouseClient } from '../../analytics/client.js';
import { burstClicks, machineReason } from '../../domain/tracking/machine.js';
import {
  addCounts,
  claimNew,
  claimUnshipped,
  clicksAround,
  lockMails,
  markShipped,
  reflag,
  setStage,
  snapshotMails,
  type MailCounts,
  type OutboxEvent,
} from '../../domain/outbox/pump.js';
import { withTransaction, type Pool } from '../../sql/pool.js';
import { startTickLoop } from '../machinery/tick-loop.js';

/**
 * The event pump: moves the event outbox (Postgres table event_outbox) forward, continuously
 * (tracking's lag target is seconds, below pg-boss's one-minute schedules) into ClickHouse's
 * mail_events. The outbox holds the kinds of domain/outbox/kinds.ts: opens, clicks,
 * unsubscribes, complaints and every delivery move ('status', written by a trigger on
 * mail_logs). One transaction per tick:
 *   1. claim the oldest new events (stage 0) and, unless ClickHouse is backing off, the oldest
 *      counted-but-unshipped ones (stage 1), FOR UPDATE SKIP LOCKED (pumps of several workers
 *      share the work);
 *   2. flag machine-made events (domain/tracking/machine.ts);
 *   3. lock the mails they touch, add the new opens and clicks to mails.opens / mails.clicks
 *      (the unflagged ones to human_opens / human_clicks too; a click re-flagged as the start of
 *      a burst leaves human_clicks), read the mails' current rows, and mark the new events
 *      counted (stage 1); commit;
 *   4. outside any transaction, insert the events and those mail snapshots (the mirror of the
 *      sent and unopened listings) into ClickHouse;
 *   5. mark the events shipped (stage 2), unless a newer flag was written meanwhile.
 * Counting never waits for ClickHouse: during an outage events keep being counted and wait at
 * stage 1; ClickHouse is retried with backoff and gets the backlog when it is back. A crash
 * between 3 and the commit re-ships the batch, which ClickHouse's ReplacingMergeTree collapses.
 */
export interface EventPumpOptions {
  pool: Pool;
  clickhouse: ClickHouseClient;
  logger: Logger;
  /** Pause between ticks that found less than a full batch. */
  intervalMs?: number;
  batchSize?: number;
}

export interface EventPump {
  stop(): Promise<void>;
}


export const PUMP_DEFAULTS = { intervalMs: 200, batchSize: 2_000 } as const;
const BACKOFF_MIN_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

export function startEventPump(opts: EventPumpOptions): EventPump {
  const intervalMs = opts.intervalMs ?? PUMP_DEFAULTS.intervalMs;
  const batchSize = opts.batchSize ?? PUMP_DEFAULTS.batchSize;
  const logger = opts.logger.child({ job: 'event-pump' });
  let backoffMs = 0;
  let retryClickHouseAt = 0;

  /** One tick; resolves with the number of new events it counted (a full batch: tick again at once). */
  async function tick(): Promise<number> {
    const tryClickHouse = Date.now() >= retryClickHouseAt;
    // 1. Count and flag in one short transaction; ClickHouse is never called while it holds locks
    //    (a slow ClickHouse must not hold up the send worker's moves of the same mails).
    const counted = await withTransaction(opts.pool, async (c) => {
      const fresh = await claimNew(c, batchSize);
      const backlog = tryClickHouse ? await claimUnshipped(c, batchSize) : [];
      if (!fresh.length && !backlog.length) return undefined;

      const { flags, earlier } = await flagFresh(c, fresh);
      const live = [...fresh, ...backlog].filter((e) => e.to_email !== null);
      const counts = new Map<string, MailCounts>();
      for (const e of fresh) {
        if (e.kind !== 'open' && e.kind !== 'click') continue;
        const n = counts.get(e.mail_id) ?? { opens: 0, clicks: 0, humanOpens: 0, humanClicks: 0 };
        const human = flags.get(e.id) ? 0 : 1;
        if (e.kind === 'open') {
          n.opens++;
          n.humanOpens += human;
        } else {
          n.clicks++;
          n.humanClicks += human;
        }
        counts.set(e.mail_id, n);
      }
      const shipping = tryClickHouse && live.length > 0;
      const touched = shipping ? [...new Set(live.map((e) => e.mail_id))] : [...counts.keys()];
      // Every mail `earlier` names has a click in this batch: locked here too.
      await lockMails(c, touched);
      await addCounts(c, counts);
      await reflag(c, earlier);
      const snapshots = shipping ? await snapshotMails(c, touched) : [];
      const flagged = (e: OutboxEvent) => ({ id: e.id, machine: flags.has(e.id) ? flags.get(e.id)! : e.machine });
      // Events of purged mails have nothing to ship: done.
      await setStage(c, fresh.filter((e) => e.to_email !== null).map(flagged), 1);
      await setStage(c, [...fresh, ...backlog].filter((e) => e.to_email === null).map(flagged), 2);
      return { fresh: fresh.length, shipping, live: live.map(flagged), rows: live.map((e) => toRow(e, flagged(e).machine)), snapshots };
    });
    if (!counted) return 0;
    if (!counted.shipping) return counted.fresh;

    // 2. Ship, then mark shipped. A crash in between re-ships the rows later, which ClickHouse's
    //    ReplacingMergeTree collapses; two pumps shipping the same backlog likewise.
    try {
      await insertMailEvents(opts.clickhouse, counted.rows);
      await insertMailSnapshots(opts.clickhouse, counted.snapshots);
    } catch (err) {
      backoffMs = Math.min(backoffMs ? backoffMs * 2 : BACKOFF_MIN_MS, BACKOFF_MAX_MS);
      retryClickHouseAt = Date.now() + backoffMs;
      logger.warn({ err: (err as Error).message, retryInMs: backoffMs }, 'clickhouse insert failed: events wait in the outbox');
      return counted.fresh;
    }
    if (backoffMs) logger.info('clickhouse is back: the backlog is being shipped');
    backoffMs = 0;
    await withTransaction(opts.pool, (c) => markShipped(c, counted.live));
    return counted.fresh;
  }

  /**
   * Machine flags of the new events, and those of earlier (counted) clicks that a new click turns
   * into a burst: not in this batch, they are re-flagged with reflag once their mails are locked.
   */
  async function flagFresh(
    c: Parameters<typeof claimNew>[0],
    fresh: OutboxEvent[],
  ): Promise<{ flags: Map<number, string | null>; earlier: Array<{ id: number; machine: string }> }> {
    const flags = new Map<number, string | null>();
    for (const e of fresh) {
      flags.set(e.id, machineReason({ kind: e.kind, userAgent: e.user_agent, occurredAt: e.occurred_at, sentAt: e.sent_at, machine: e.machine }));
    }
    const clicks = fresh.filter((e) => e.kind === 'click');
    if (!clicks.length) return { flags, earlier: [] };
    const times = clicks.map((e) => e.occurred_at.getTime());
    const around = await clicksAround(c, [...new Set(clicks.map((e) => e.mail_id))], new Date(Math.min(...times)), new Date(Math.max(...times)));
    const byMail = new Map<string, typeof around>();
    for (const a of around) byMail.set(a.mail_id, [...(byMail.get(a.mail_id) ?? []), a]);
    const earlier: Array<{ id: number; machine: string }> = [];
    for (const list of byMail.values()) {
      for (const id of burstClicks(list.map((a) => ({ id: a.id, url: a.url, occurredAt: a.occurred_at })))) {
        const other = list.find((a) => a.id === id)!;
        if (flags.has(id)) {
          if (!flags.get(id)) flags.set(id, 'click_burst');
        } else if (other.stage !== 0 && !other.machine) {
          // Only clicks already judged: one still at stage 0 (arrived after this batch was
          // claimed, or beyond it) gets its own reason first when its turn comes, and meets this
          // burst then. Flagging it now made a scanner's click 'click_burst' instead of
          // 'link_scanner', depending on where the batch boundary fell.
          earlier.push({ id, machine: 'click_burst' });
        }
      }
    }
    return { flags, earlier };
  }

  return startTickLoop({ logger, failure: 'event pump tick failed', intervalMs, tick: async () => (await tick()) === batchSize });
}

function toRow(e: OutboxEvent, machine: string | null): MailEventRow {
  return {
    instance_id: e.instance_id,
    event_type: e.kind === 'status' ? STATUS_EVENT[e.status!]! : e.kind,
    status: e.status,
    bounce_reason: e.bounce_reason ?? null,
    occurred_at: e.occurred_at,
    event_id: e.id,
    mail_id: e.mail_id,
    msg_id: e.msg_id!,
    recipient: e.to_email!,
    provider: e.provider ?? 'other',
    sender_id: e.sender_id,
    sender: e.sender,
    subject: e.subject ?? '',
    custom_msg_id: e.custom_msg_id,
    custom_group_code: e.custom_group_code,
    mail_received_at: e.received_at!,
    sent_at: e.sent_at,
    url: e.url,
    user_agent: e.user_agent ?? '',
    ip: e.ip ?? '',
    machine: machine ?? '',
  };
}
