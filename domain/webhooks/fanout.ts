import type { Client } from '../../sql/pool.js';
import { chainHeads } from './chain.js';
import { eventTypeOf, type WebhookEventType } from './event-types.js';
import { assignTags, outboxShares, priorityOf, virtualTime, type FanoutBudget } from './fair-share.js';

/**
 * The webhook stage over the event outbox (workers/jobs/webhook-fanout.ts runs it; service role, every
 * instance). One transaction per batch:
 *   1. take the stage's advisory lock (one fan-out at a time across workers, so each instance's
 *      events are turned into deliveries in outbox order) and lock, for each instance with rows
 *      waiting, its share of its oldest unmarked rows (fair-share.ts: instances take turns, so
 *      one instance's backlog never holds back another's events);
 *   2. for the instances of the batch that have webhooks: freeze each event's body into
 *      webhook_events, and add one delivery per webhook it is for (active, subscribed; a test
 *      event only to its own webhook);
 *   3. mark the rows (webhooks_done), and enqueue the deliveries that head their mail's chain,
 *      each job's priority its place in its instance's backlog (fair-share.ts).
 * All or nothing: a crash before the commit leaves the rows unmarked, to be done again; after it,
 * the deliveries and their jobs exist. An event of an instance without any webhook is only marked.
 *
 * An instance's rows are taken up to its first open or click the event pump has not judged yet
 * (stage 0: workers/jobs/event-pump.ts flags machine-made ones within a tick, about 100 ms), so
 * mail.opened and mail.clicked carry that judgment (`machine`) and the order stays the outbox's.
 * A click judged human and re-flagged later as part of a burst (a judgment only later clicks can
 * make) keeps the `machine: null` it was delivered with; the listings show the new flag.
 */
const STAGE_LOCK = 0x77656268; // 'webh'

interface OutboxRow {
  id: string;
  instance_id: string;
  mail_id: string | null;
  entity_id: string | null;
  kind: string;
  status: number | null;
  url: string | null;
  user_agent: string | null;
  ip: string | null;
  /** The event pump's judgment of an open or click (domain/tracking/machine.ts): a reason, or null for a person. */
  machine: string | null;
  occurred_at: Date;
}

interface WebhookTarget {
  id: string;
  instance_id: string;
  events: string[] | null;
  is_active: boolean;
}

export interface FanoutResult {
  /** Outbox rows marked. */
  marked: number;
  /** Some instance had more rows than its share (or more instances were waiting): tick again at once. */
  more: boolean;
  /** Deliveries created. */
  deliveries: number;
  /** Deliveries to enqueue now (chain heads); already enqueued when `enqueue` was given. */
  heads: number[];
}

export async function fanOutBatch(
  c: Client,
  budget: FanoutBudget,
  enqueue: (c: Client, jobs: Array<{ deliveryId: number; priority: number }>) => Promise<void>,
): Promise<FanoutResult | undefined> {
  const { rows: lock } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [STAGE_LOCK]);
  if (!lock[0]!.ok) return undefined;
  const shares = await outboxShares(c, budget);
  if (!shares.length) return { marked: 0, more: false, deliveries: 0, heads: [] };
  const { rows: events } = await c.query<OutboxRow>({
    name: 'webhook_fanout_claim',
    text: `SELECT o.* FROM unnest($1::bigint[], $2::int[]) AS q(instance_id, n)
            CROSS JOIN LATERAL (
              SELECT id, instance_id, mail_id, entity_id, kind, status, url, user_agent, host(ip) AS ip, machine, occurred_at
                FROM event_outbox WHERE instance_id = q.instance_id AND NOT webhooks_done
                 AND id < coalesce((SELECT min(id) FROM event_outbox
                                     WHERE instance_id = q.instance_id AND NOT webhooks_done AND stage = 0 AND kind IN ('open', 'click')), 9223372036854775807)
               ORDER BY id LIMIT q.n FOR UPDATE) o
           ORDER BY o.id`,
    values: [shares.map((s) => s.instanceId), shares.map((s) => s.events)],
  });
  const taken = new Map<string, number>();
  for (const e of events) taken.set(e.instance_id, (taken.get(e.instance_id) ?? 0) + 1);
  const more = shares.length >= budget.events || shares.some((s) => (taken.get(s.instanceId) ?? 0) >= s.events);
  if (!events.length) return { marked: 0, more, deliveries: 0, heads: [] };
  const instanceIds = [...new Set(events.map((e) => e.instance_id))];
  // Before the webhooks' locks below, which every settle waits for: it reads the queue.
  const now = await virtualTime(c);
  // FOR KEY SHARE (what the deliveries' foreign key takes anyway): a delivery settling meanwhile
  // (FOR UPDATE) either committed before, and its chain successor is found here, or waits, and
  // finds ours (chain.ts). Attempts beginning (FOR NO KEY UPDATE) do not wait for it.
  const { rows: webhooks } = await c.query<WebhookTarget>({
    name: 'webhook_fanout_targets',
    text: `SELECT id, instance_id, events, is_active FROM webhooks WHERE instance_id = ANY($1::bigint[]) ORDER BY id FOR KEY SHARE`,
    values: [instanceIds],
  });
  const byInstance = new Map<string, WebhookTarget[]>();
  for (const w of webhooks) byInstance.set(w.instance_id, [...(byInstance.get(w.instance_id) ?? []), w]);

  const wanted = events.filter((e) => byInstance.has(e.instance_id) && eventTypeOf(e.kind, e.status) !== undefined);
  let deliveryIds: number[] = [];
  const tagOf = new Map<number, number>();
  if (wanted.length) {
    const bodies = await buildBodies(c, wanted);
    const evIds: string[] = [], evInstances: string[] = [], evTypes: string[] = [], evMails: Array<string | null> = [],
      evWebhooks: Array<string | null> = [], evTimes: Date[] = [], evBodies: string[] = [];
    const dEvents: string[] = [], dInstances: string[] = [], dWebhooks: string[] = [], dMails: Array<string | null> = [];
    for (const e of wanted) {
      const type = eventTypeOf(e.kind, e.status)!;
      const testFor = type === 'webhook.test' ? e.entity_id : null;
      evIds.push(e.id); evInstances.push(e.instance_id); evTypes.push(type); evMails.push(e.mail_id);
      evWebhooks.push(testFor); evTimes.push(e.occurred_at);
      evBodies.push(JSON.stringify({ type, timestamp: e.occurred_at.toISOString(), data: bodies.get(e.id) ?? {} }));
      for (const w of byInstance.get(e.instance_id)!) {
        const forIt = testFor !== null ? w.id === testFor : w.is_active && (w.events === null || w.events.includes(type));
        if (!forIt) continue;
        dEvents.push(e.id); dInstances.push(e.instance_id); dWebhooks.push(w.id); dMails.push(e.mail_id);
      }
    }
    // ON CONFLICT: a batch done again after a crash between here and the commit never happens
    // (same transaction), but a row re-marked by hand must not fail the stage.
    await c.query({
      name: 'webhook_fanout_events',
      text: `INSERT INTO webhook_events (id, instance_id, type, mail_id, webhook_id, occurred_at, body)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[], $7::text[])
             ON CONFLICT (id) DO NOTHING`,
      values: [evIds, evInstances, evTypes, evMails, evWebhooks, evTimes, evBodies],
    });
    if (dEvents.length) {
      const tags = await assignTags(c, dInstances, now);
      const { rows } = await c.query<{ id: string; fair_tag: string }>({
        name: 'webhook_fanout_deliveries',
        text: `INSERT INTO webhook_deliveries (instance_id, webhook_id, event_id, mail_id, fair_tag)
               SELECT i, w, e, m, f FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[]) WITH ORDINALITY AS x(i, w, e, m, f, n)
               ORDER BY n RETURNING id, fair_tag`,
        values: [dInstances, dWebhooks, dEvents, dMails, tags],
      });
      deliveryIds = rows.map((r) => Number(r.id));
      for (const r of rows) tagOf.set(Number(r.id), Number(r.fair_tag));
    }
  }
  await c.query({
    name: 'webhook_fanout_mark',
    text: 'UPDATE event_outbox SET webhooks_done = true WHERE id = ANY($1::bigint[])',
    values: [events.map((e) => e.id)],
  });
  const heads = await chainHeads(c, deliveryIds);
  await enqueue(c, heads.map((deliveryId) => ({ deliveryId, priority: priorityOf(tagOf.get(deliveryId)!) })));
  return { marked: events.length, more, deliveries: deliveryIds.length, heads };
}

/** Each event's `data` (docs/webhooks.md, per type), by outbox id. */
async function buildBodies(c: Client, events: OutboxRow[]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  const mailEvents = events.filter((e) => e.mail_id !== null);
  if (mailEvents.length) {
    const { rows } = await c.query<Record<string, any>>({
      name: 'webhook_fanout_mail_data',
      // Joined from the outbox rows themselves: occurred_at must equal the log's created_at to
      // the microsecond, which a round trip through a JS Date would lose.
      text: `SELECT x.id AS event_id, m.msg_id, m.to_email, m.sender_id, m.sender, m.subject, m.custom_msg_id, m.custom_group_code,
                    m.bounce_class, l.reason, l.smtp_code, l.smtp_enhanced, l.smtp_reply, l.attempt, l.bounce_reason, k.feedback_type
               FROM event_outbox x
               LEFT JOIN mails m ON m.mail_id = x.mail_id
               LEFT JOIN LATERAL (SELECT g.reason, g.smtp_code, g.smtp_enhanced, g.smtp_reply, g.attempt, g.bounce_reason FROM mail_logs g
                                   WHERE x.kind = 'status' AND g.mail_id = x.mail_id AND g.status = x.status AND g.created_at = x.occurred_at AND g.moved
                                   ORDER BY g.id DESC LIMIT 1) l ON true
               LEFT JOIN mail_complaints k ON x.kind = 'complaint' AND k.mail_id = x.mail_id
              WHERE x.id = ANY($1::bigint[])`,
      values: [mailEvents.map((e) => e.id)],
    });
    const byId = new Map(rows.map((r) => [String(r.event_id), r]));
    for (const e of mailEvents) {
      const r = byId.get(String(e.id)) ?? {};
      const data: Record<string, unknown> = {
        mail_id: e.mail_id,
        msg_id: r.msg_id ?? null,
        custom_msg_id: r.custom_msg_id ?? null,
        custom_group_code: r.custom_group_code ?? null,
        recipient: r.to_email ?? null,
        sender_id: r.sender_id === null || r.sender_id === undefined ? null : Number(r.sender_id),
        sender: r.sender ?? null,
        subject: r.subject ?? null,
      };
      if (e.kind === 'status') {
        Object.assign(data, {
          status: e.status,
          reason: r.reason ?? null,
          smtp_code: r.smtp_code ?? null,
          smtp_enhanced: r.smtp_enhanced ?? null,
          smtp_reply: r.smtp_reply ?? null,
          attempt: r.attempt ?? null,
        });
        if (e.status === 6) Object.assign(data, { bounce_class: r.bounce_class ?? null, bounce_reason: r.bounce_reason ?? null });
      } else if (e.kind === 'open' || e.kind === 'click') {
        Object.assign(data, e.kind === 'click' ? { url: e.url } : {}, { user_agent: e.user_agent, ip: e.ip, machine: e.machine ?? null });
      } else if (e.kind === 'complaint') {
        data.feedback_type = r.feedback_type ?? null;
      }
      out.set(e.id, data);
    }
  }
  const restrictionSelect = 'SELECT id::text, recipient, reason, restricted_at, deleted_at, bounce_reason, bounce_class FROM mail_restrictions';
  for (const [e, r] of await entityRows(c, events, 'restriction.', restrictionSelect)) {
    out.set(e.id, {
      restriction_id: Number(e.entity_id),
      recipient: r?.recipient ?? null,
      reason: r?.reason ?? null,
      restricted_at: r?.restricted_at ?? null,
      ...(e.kind === 'restriction.lifted' ? { lifted_at: e.occurred_at } : {}),
      bounce_reason: r?.bounce_reason ?? null,
      bounce_class: r?.bounce_class ?? null,
    });
  }
  const consentSelect = `SELECT id::text, term_id, term_version_id, status, method, source, submission_id, form_id, created_at, confirmed_at, expired_at
                           FROM consent_events`;
  for (const [e, r] of await entityRows(c, events, 'consent.event.', consentSelect)) {
    out.set(e.id, {
      consent_event_id: Number(e.entity_id),
      term_id: r ? Number(r.term_id) : null,
      term_version_id: r ? Number(r.term_version_id) : null,
      method: r?.method ?? null,
      source: r?.source ?? null,
      submission_id: r?.submission_id == null ? null : Number(r.submission_id),
      form_id: r?.form_id == null ? null : Number(r.form_id),
      status: ({ 'consent.event.created': r?.method === 'double_opt_in' ? 'pending' : 'confirmed', 'consent.event.confirmed': 'confirmed', 'consent.event.expired': 'expired' } as Record<string, string>)[e.kind],
    });
  }
  for (const [e, r] of await entityRows(c, events, 'form.submission.', 'SELECT id::text, form_id FROM form_submissions')) {
    out.set(e.id, { submission_id: Number(e.entity_id), form_id: r?.form_id == null ? null : Number(r.form_id) });
  }
  // The report as stored (sql/migrations/031_dmarc_reports.sql), its domain by name; a report gone
  // with its domain (ON DELETE CASCADE) before the fan-out is nulls, as other entities' are.
  const dmarcSelect = `SELECT id::text, domain, report_id, org_name, message_count, dmarc_pass_count
                         FROM (SELECT r.id, d.name AS domain, r.report_id, r.org_name, r.message_count, r.dmarc_pass_count
                                 FROM dmarc_reports r JOIN domains d ON d.id = r.domain_id AND d.instance_id = r.instance_id) AS r`;
  for (const [e, r] of await entityRows(c, events, 'domain.dmarc_report', dmarcSelect)) {
    out.set(e.id, {
      domain: r?.domain ?? null,
      report_id: r?.report_id ?? null,
      org_name: r?.org_name ?? null,
      message_count: r ? Number(r.message_count) : null,
      dmarc_fail_count: r ? Number(r.message_count) - Number(r.dmarc_pass_count) : null,
    });
  }
  // The alert as claimed (sql/migrations/033_deliverability_alerts.sql): the figures it was
  // judged on, frozen in its row.
  const alertSelect = `SELECT id::text, provider, domain, metric, rate, threshold, status, day::text AS date, delivered, volume, count
                         FROM deliverability_alerts`;
  for (const [e, r] of await entityRows(c, events, 'deliverability.threshold_', alertSelect)) {
    out.set(e.id, {
      provider: r?.provider ?? null,
      domain: r?.domain ?? null,
      metric: r?.metric ?? null,
      rate: r ? Number(r.rate) : null,
      threshold: r ? Number(r.threshold) : null,
      status: r?.status ?? null,
      date: r?.date ?? null,
      delivered: r ? Number(r.delivered) : null,
      volume: r ? Number(r.volume) : null,
      count: r ? Number(r.count) : null,
    });
  }
  for (const e of events.filter((x) => x.kind === 'webhook.test')) {
    out.set(e.id, { webhook_id: Number(e.entity_id), message: 'This is a test event from Cartero.' });
  }
  return out;
}

/**
 * The events whose kind starts with `prefix`, each with the row its entity_id names (`select` is
 * the SELECT … FROM of that table, id first; undefined when the row is gone), in one query.
 */
async function entityRows(c: Client, events: OutboxRow[], prefix: string, select: string): Promise<Array<[OutboxRow, Record<string, any> | undefined]>> {
  const mine = events.filter((e) => e.kind.startsWith(prefix));
  if (!mine.length) return [];
  const { rows } = await c.query(`${select} WHERE id = ANY($1::bigint[])`, [mine.map((e) => e.entity_id)]);
  const byId = new Map(rows.map((r) => [String(r.id), r]));
  return mine.map((e) => [e, byId.get(String(e.entity_id))]);
}

export type { WebhookEventType };
