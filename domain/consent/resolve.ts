import type { Client, Pool } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { comparedContact, type ConsentChannel, type ContactType, type Verdict } from './vocabulary.js';

/**
 * The resolver: may Cartero contact this identifier on this channel for this purpose? One verdict
 * per identifier and purpose, from the rules of the events in force:
 *  - only confirmed events count: a pending double opt-in and an expired one authorize nothing
 *    (and deny nothing either: a revocation is registered single opt-in, in force at once);
 *  - a deny wins over any allow, whatever their order (spec: precedence is not chronological);
 *  - no rule in force: no_consent.
 * Identifiers are compared in their stored form (emails lowercased) and with their type: an
 * email rule never answers for a uniquecode of the same text. Used by GET
 * /v1/consent-rules/resolve and, at send time, by send-hook.ts.
 */
export interface ResolveQuery {
  channel: ConsentChannel;
  /** Identifiers with their types, paired by position. */
  contacts: ReadonlyArray<{ contact: string; contact_type: ContactType }>;
  purpose_ids: readonly number[];
}

export interface ResolvedItem {
  /** As compared: the stored form (emails lowercased). */
  contact: string;
  contact_type: ContactType;
  channel: ConsentChannel;
  purpose_id: number;
  verdict: Verdict;
  /** The events the verdict rests on, newest first: the denying ones, or the allowing ones; none for no_consent. */
  event_ids: number[];
}

interface Matched {
  contact: string;
  contact_type: ContactType;
  purpose_id: number;
  deny_ids: number[] | null;
  allow_ids: number[] | null;
}

/**
 * One statement for the whole question, whatever the number of identifiers and purposes: the
 * contact index of consent_rules (sql/migrations/013) is read once per (identifier, purpose) pair
 * for the matching rules, which carry their action and event; only those events are read, for
 * their status. Grouped in SQL so a contact with a long history sends back one row per verdict,
 * not one per rule. Named: the resolver is the hot path of sending to consent-required senders.
 */
const RESOLVE_SQL = `
SELECT r.contact, r.contact_type, r.purpose_id,
       array_agg(r.event_id ORDER BY r.event_id DESC) FILTER (WHERE r.action = 'deny')::float8[] AS deny_ids,
       array_agg(r.event_id ORDER BY r.event_id DESC) FILTER (WHERE r.action = 'allow')::float8[] AS allow_ids
  FROM consent_rules r
  JOIN consent_events e ON e.instance_id = r.instance_id AND e.id = r.event_id AND e.status = 'confirmed'
 WHERE r.instance_id = $1 AND r.contact = ANY ($2::text[]) AND r.channel = $3 AND r.purpose_id = ANY ($4::bigint[])
 GROUP BY r.contact, r.contact_type, r.purpose_id`;

/** The verdicts, in the caller's tenant transaction: for each identifier in order, each purpose in order. */
export async function resolveIn(tenant: Tenant, client: Client, q: ResolveQuery): Promise<ResolvedItem[]> {
  const contacts = q.contacts.map((c) => ({ contact: comparedContact(c.contact_type, c.contact), contact_type: c.contact_type }));
  if (!contacts.length || !q.purpose_ids.length) return [];
  const { rows } = await client.query<Matched>({
    name: 'consent-resolve',
    text: RESOLVE_SQL,
    values: [tenant.instanceId, [...new Set(contacts.map((c) => c.contact))], q.channel, [...new Set(q.purpose_ids)]],
  });
  const found = new Map(rows.map((r) => [`${r.contact_type}\u0000${r.contact}\u0000${r.purpose_id}`, r]));
  return contacts.flatMap((c) =>
    q.purpose_ids.map((purpose_id): ResolvedItem => {
      const m = found.get(`${c.contact_type}\u0000${c.contact}\u0000${purpose_id}`);
      const base = { contact: c.contact, contact_type: c.contact_type, channel: q.channel, purpose_id };
      if (m?.deny_ids?.length) return { ...base, verdict: 'denied', event_ids: m.deny_ids };
      if (m?.allow_ids?.length) return { ...base, verdict: 'allowed', event_ids: m.allow_ids };
      return { ...base, verdict: 'no_consent', event_ids: [] };
    }),
  );
}

export async function resolveConsent(tenant: Tenant, pool: Pool, q: ResolveQuery): Promise<ResolvedItem[]> {
  return withTenant(pool, tenant, (c) => resolveIn(tenant, c, q));
}
