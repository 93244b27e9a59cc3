import type { Pool } from '../../sql/pool.js';
import { isoUtc } from '../../sql/iso-time.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { EVENT_COLUMNS, type ConsentEvent } from './events.js';
import type { ConsentChannel, TermType } from './vocabulary.js';

/**
 * The proof export: everything Cartero holds that shows what one contact accepted or refused,
 * when, from where and under which exact text (GDPR Art. 7(1): the controller must be able to
 * demonstrate consent; docs/consent.md). GET /v1/consent-events/proof and `cartero consent proof`
 * write this same document.
 *
 * Events are in the order they happened (oldest first: a proof reads as a story), each as the
 * listing shows it plus what was declared with it and how it was confirmed. Each term version an
 * event froze is given once, with its full text and the SHA-256 of that text (computed by the
 * database from the stored text), so a long legal text is not repeated per event.
 */
export interface ProofEvent extends ConsentEvent {
  /** What the caller that registered the event declared it observed (not verified by Cartero). */
  declared: { ip_address: string | null; user_agent: string | null; evidence: unknown };
  /** The double opt-in confirmation: when, and the confirming request's address and user agent; null when none happened. */
  confirmation: { confirmed_at: string; ip_address: string | null; user_agent: string | null } | null;
}

export interface ConsentProof {
  contact: string;
  instance: string;
  generated_at: string;
  events: ProofEvent[];
  terms: Array<{ id: number; name: string; type: TermType; purpose_ids: number[]; channels: ConsentChannel[] }>;
  term_versions: Array<{
    id: number;
    term_id: number;
    version: string;
    body: string;
    body_sha256: string;
    document_url: string | null;
    published_at: string;
  }>;
  purposes: Array<{ id: number; name: string; created_at: string }>;
}

/** The proof for one identifier, exact against the stored form (emails are stored lowercased). */
export async function consentProof(tenant: Tenant, pool: Pool, contact: string): Promise<ConsentProof> {
  return withTenant(pool, tenant, async (c) => {
    // The events first; what they name is read after them and cannot disagree with them: a
    // term's purposes, a published version's text and a purpose never change (013's triggers
    // and grants).
    const events = (
      await c.query<ProofEvent & { ip: string | null; ua: string | null; evidence: unknown; confirmation_ip: string | null; confirmation_ua: string | null }>(
        `SELECT ${EVENT_COLUMNS}, host(e.ip_address) AS ip, e.user_agent AS ua, e.evidence,
                host(e.confirmation_ip) AS confirmation_ip, e.confirmation_user_agent AS confirmation_ua
           FROM consent_events e
          WHERE e.instance_id = $1
            AND e.id IN (SELECT r.event_id FROM consent_rules r WHERE r.instance_id = $1 AND r.contact = $2)
          ORDER BY e.id`,
        [tenant.instanceId, contact],
      )
    ).rows.map(({ ip, ua, evidence, confirmation_ip, confirmation_ua, ...event }): ProofEvent => ({
      ...event,
      declared: { ip_address: ip, user_agent: ua, evidence: evidence ?? null },
      confirmation: event.confirmed_at ? { confirmed_at: event.confirmed_at, ip_address: confirmation_ip, user_agent: confirmation_ua } : null,
    }));
    const versionIds = [...new Set(events.map((e) => e.term_version_id))];
    const termIds = [...new Set(events.map((e) => e.term_id))];
    const terms = (
      await c.query<ConsentProof['terms'][number]>(
        `SELECT id, name, type, to_json(purpose_ids) AS purpose_ids, channels FROM consent_terms
          WHERE instance_id = $1 AND id = ANY ($2::bigint[]) ORDER BY id`,
        [tenant.instanceId, termIds],
      )
    ).rows;
    const versions = (
      await c.query<ConsentProof['term_versions'][number]>(
        `SELECT id, term_id, version, body, body_sha256, document_url, ${isoUtc('published_at')} AS published_at
           FROM consent_term_versions WHERE instance_id = $1 AND id = ANY ($2::bigint[]) ORDER BY id`,
        [tenant.instanceId, versionIds],
      )
    ).rows;
    const purposeIds = [...new Set([...terms.flatMap((t) => t.purpose_ids), ...events.flatMap((e) => e.rules.map((r) => r.purpose_id))])];
    const purposes = (
      await c.query<ConsentProof['purposes'][number]>(
        `SELECT id, name, ${isoUtc('created_at')} AS created_at FROM consent_purposes WHERE instance_id = $1 AND id = ANY ($2::bigint[]) ORDER BY id`,
        [tenant.instanceId, purposeIds],
      )
    ).rows;
    return { contact, instance: tenant.slug, generated_at: new Date().toISOString(), events, terms, term_versions: versions, purposes };
  });
}
