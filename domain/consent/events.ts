import { isIP } from 'node:net';
import type { Client, Pool } from '../../sql/pool.js';
import { isoUtc } from '../../sql/iso-time.js';
import { NotFoundError, RuleViolation, ValidationFailed, type FieldError } from '../errors.js';
import { CONSENT_CONFIRMATION_MAIL_QUEUE, type ConsentConfirmationMailJob, type JobQueue } from '../job-queue.js';
import { append } from '../outbox/append.js';
import type { Page, PageRequest } from '../pagination.js';
import { toPage, window } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import {
  contactTypeFits,
  storedContact,
  type ConsentAction,
  type ConsentChannel,
  type ConsentMethod,
  type ContactType,
  type EventSource,
  type EventStatus,
} from './vocabulary.js';

/**
 * Consent events (spec: Consent event): registering one (POST /v1/consent-events) and the
 * history listing. An event accepts one term at the version current at that moment (frozen in
 * term_version_id) and declares rules, each allowing or denying one purpose on one channel for
 * one identifier. The current verdict is the resolver's (resolve.ts); this is history.
 */
export interface ConsentRule {
  id: number;
  channel: ConsentChannel;
  contact_type: ContactType;
  contact: string;
  purpose_id: number;
  action: ConsentAction;
  created_at: string;
}

export interface ConsentEvent {
  id: number;
  term_id: number;
  term_version_id: number;
  status: EventStatus;
  method: ConsentMethod;
  source: EventSource;
  submission_id: number | null;
  form_id: number | null;
  form_name: string | null;
  confirmed_at: string | null;
  expired_at: string | null;
  created_at: string;
  rules: ConsentRule[];
}

export interface RuleInput {
  channel: ConsentChannel;
  contact_type: ContactType;
  contact: string;
  purpose_id: number;
  action: ConsentAction;
}

/** The body of POST /v1/consent-events after schema validation (api/schemas/consent.ts). */
export interface ConsentEventInput {
  term_id: number;
  method: ConsentMethod;
  rules: RuleInput[];
  ip_address?: string;
  user_agent?: string;
  evidence?: Record<string, unknown>;
}

/** Largest evidence object, as the UTF-8 bytes of its compact JSON (docs/consent.md says why 16 KiB). */
export const MAX_EVIDENCE_BYTES = 16 * 1024;

/**
 * Longest user agent kept as proof: declared with an event (a longer one is refused), or seen at a
 * confirmation or a form submission (cut to it). The columns' CHECKs hold the same bound.
 */
export const MAX_PROOF_USER_AGENT = 1024;

/** The event columns as the API shows them, for `e` (consent_events) with its rules embedded. */
export const EVENT_COLUMNS = `e.id, e.term_id, e.term_version_id, e.status, e.method, e.source, e.submission_id, e.form_id, e.form_name,
  ${isoUtc('e.confirmed_at')} AS confirmed_at, ${isoUtc('e.expired_at')} AS expired_at, ${isoUtc('e.created_at')} AS created_at,
  coalesce((SELECT json_agg(json_build_object('id', r.id, 'channel', r.channel, 'contact_type', r.contact_type, 'contact', r.contact,
                                              'purpose_id', r.purpose_id, 'action', r.action, 'created_at', ${isoUtc('r.created_at')}) ORDER BY r.id)
              FROM consent_rules r WHERE r.event_id = e.id AND r.instance_id = e.instance_id), '[]') AS rules`;

export interface EventFilter extends PageRequest {
  term_id?: number;
  status?: EventStatus;
  /** Exact match against the stored form of any rule's identifier (emails are stored lowercased). */
  contact?: string;
}

/**
 * History, newest first, not collapsed (a grant and its later revocation are both listed).
 * total_items is null: an instance's history runs to millions of events and counting them would
 * cost more than the page; has_more is exact. Not a named statement, so each call is planned
 * with its own values and an absent filter costs nothing.
 */
export async function listEvents(tenant: Tenant, pool: Pool, f: EventFilter): Promise<Page<ConsentEvent>> {
  const { limit, offset } = window(f);
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<ConsentEvent>(
      `SELECT ${EVENT_COLUMNS}
         FROM consent_events e
        WHERE e.instance_id = $1
          AND ($2::bigint IS NULL OR e.term_id = $2)
          AND ($3::text IS NULL OR e.status = $3)
          AND ($4::text IS NULL OR e.id IN (SELECT r.event_id FROM consent_rules r WHERE r.instance_id = $1 AND r.contact = $4))
        ORDER BY e.id DESC
        LIMIT $5 OFFSET $6`,
      [tenant.instanceId, f.term_id ?? null, f.status ?? null, f.contact ?? null, limit, offset],
    ),
  );
  return toPage(rows, f, null);
}

/** One event as the listing shows it, in the caller's tenant transaction. */
export async function readEvent(tenant: Tenant, client: Client, id: number): Promise<ConsentEvent> {
  const { rows } = await client.query<ConsentEvent>(`SELECT ${EVENT_COLUMNS} FROM consent_events e WHERE e.instance_id = $1 AND e.id = $2`, [
    tenant.instanceId,
    id,
  ]);
  if (!rows[0]) throw new NotFoundError('consent_event', id);
  return rows[0];
}

interface TermState {
  is_active: boolean;
  purpose_ids: number[];
  channels: ConsentChannel[];
  current_version_id: number | null;
}

/**
 * The field errors a term and the body's own rules give (422, reported together): a rule's
 * channel and purpose must be among the term's (a term covers only what it declares), its
 * identifier must be one of its type, the address must be an IP address, and the evidence must
 * fit MAX_EVIDENCE_BYTES.
 */
function fieldErrors(term: TermState, input: ConsentEventInput): { errors: FieldError[]; contacts: string[] } {
  const errors: FieldError[] = [];
  const contacts: string[] = [];
  input.rules.forEach((rule, i) => {
    if (!term.channels.includes(rule.channel)) {
      errors.push({
        pointer: `/rules/${i}/channel`,
        code: 'value_error.channel_not_in_term',
        message: `Channel ${rule.channel} is not one of term ${input.term_id}'s channels`,
        params: { channels: term.channels.join(', ') },
      });
    }
    if (!term.purpose_ids.includes(rule.purpose_id)) {
      errors.push({
        pointer: `/rules/${i}/purpose_id`,
        code: 'value_error.purpose_not_in_term',
        message: `Purpose ${rule.purpose_id} is not one of term ${input.term_id}'s purposes`,
        params: { purpose_ids: term.purpose_ids.join(', ') },
      });
    }
    const stored = storedContact(rule.contact_type, rule.contact);
    if ('code' in stored) errors.push({ pointer: `/rules/${i}/contact`, code: stored.code, message: stored.message });
    else contacts.push(stored.contact);
  });
  const badIp = ipAddressError(input.ip_address);
  if (badIp) errors.push(badIp);
  if (input.evidence !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(input.evidence), 'utf8');
    if (bytes > MAX_EVIDENCE_BYTES) {
      errors.push({
        pointer: '/evidence',
        code: 'value_error.too_large',
        message: `At most ${MAX_EVIDENCE_BYTES} bytes as compact JSON (UTF-8); this is ${bytes}`,
        params: { max_bytes: MAX_EVIDENCE_BYTES },
      });
    }
  }
  return { errors, contacts };
}

/** 409 consent_contact_type_channel_mismatch, then 409 consent_duplicate_rule, for the first offending rule. */
function ruleConflicts(rules: readonly RuleInput[]): void {
  rules.forEach((rule, i) => {
    if (!contactTypeFits(rule.channel, rule.contact_type)) {
      throw new RuleViolation(
        'consent_contact_type_channel_mismatch',
        `rules/${i}: a ${rule.contact_type} identifier cannot carry consent on channel ${rule.channel}`,
        { pointer: `/rules/${i}` },
      );
    }
  });
  const seen = new Map<string, number>();
  rules.forEach((rule, i) => {
    const key = `${rule.channel}\u0000${rule.purpose_id}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw new RuleViolation(
        'consent_duplicate_rule',
        `rules/${i} repeats the channel ${rule.channel} and purpose ${rule.purpose_id} of rules/${first}: one rule per channel and purpose in a call`,
        { pointer: `/rules/${i}` },
      );
    }
    seen.set(key, i);
  });
}

/**
 * Register a consent event. In order: 404 consent_term_not_found (another instance's term too);
 * 409 consent_term_inactive; 409 consent_term_no_current_version; 422 with every field error
 * (fieldErrors); 409 consent_contact_type_channel_mismatch; 409 consent_duplicate_rule.
 * single_opt_in is confirmed (in force) at once; double_opt_in is pending and authorizes nothing
 * until confirmed. The event, its rules and its outbox row are one transaction, and so is, for a
 * double_opt_in event with an email contact, the job that mails the confirmation link
 * (domain/consent/confirmation-mail.ts), sent from `confirmationSenderId` when given (a form's
 * auto_reply_sender_id), else from the sender that job chooses.
 */
export async function registerEvent(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  input: ConsentEventInput,
  source: EventSource = 'api',
  confirmationSenderId: number | null = null,
): Promise<ConsentEvent> {
  return withTenant(pool, tenant, async (c) => {
    const { rows } = await c.query<TermState>(
      `SELECT t.is_active, to_json(t.purpose_ids) AS purpose_ids, t.channels,
              (SELECT v.id FROM consent_term_versions v WHERE v.instance_id = t.instance_id AND v.term_id = t.id AND v.is_current) AS current_version_id
         FROM consent_terms t WHERE t.instance_id = $1 AND t.id = $2`,
      [tenant.instanceId, input.term_id],
    );
    const term = rows[0];
    if (!term) throw new NotFoundError('consent_term', input.term_id);
    if (!term.is_active) throw new RuleViolation('consent_term_inactive', `term ${input.term_id} is deactivated: it cannot receive new consents`);
    if (term.current_version_id === null) {
      throw new RuleViolation('consent_term_no_current_version', `term ${input.term_id} has no current version: publish one and mark it current`);
    }
    const { errors, contacts } = fieldErrors(term, input);
    if (errors.length) throw new ValidationFailed(errors);
    ruleConflicts(input.rules);

    const status: EventStatus = input.method === 'single_opt_in' ? 'confirmed' : 'pending';
    const event = (
      await c.query<{ id: number; created_at: Date }>(
        `INSERT INTO consent_events (instance_id, term_id, term_version_id, status, method, source, ip_address, user_agent, evidence)
         VALUES ($1, $2, $3, $4, $5, $6, $7::inet, $8, $9::json) RETURNING id, created_at`,
        [
          tenant.instanceId, input.term_id, term.current_version_id, status, input.method, source,
          input.ip_address ?? null, input.user_agent ?? null, input.evidence === undefined ? null : JSON.stringify(input.evidence),
        ],
      )
    ).rows[0]!;
    await c.query(
      `INSERT INTO consent_rules (instance_id, event_id, channel, contact_type, contact, purpose_id, action, created_at)
       SELECT $1, $2, r.channel, r.contact_type, r.contact, r.purpose_id, r.action, $3
         FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[]) WITH ORDINALITY AS r(channel, contact_type, contact, purpose_id, action, n)
        ORDER BY r.n`,
      [
        tenant.instanceId, event.id, event.created_at,
        input.rules.map((r) => r.channel), input.rules.map((r) => r.contact_type), contacts,
        input.rules.map((r) => r.purpose_id), input.rules.map((r) => r.action),
      ],
    );
    await append(tenant, c, { kind: 'consent.event.created', entityId: event.id, occurredAt: event.created_at });
    const created = await readEvent(tenant, c, event.id);
    if (input.method === 'double_opt_in' && input.rules.some((r) => r.contact_type === 'email_address')) {
      // Last in the transaction: the insert leaves the tenant role (workers/machinery/queue.ts).
      const job: ConsentConfirmationMailJob = { instance_id: tenant.instanceId, event_id: event.id, sender_id: confirmationSenderId };
      await queue.insert(c, [{ name: CONSENT_CONFIRMATION_MAIL_QUEUE, data: job }]);
    }
    return created;
  });
}

/** An ip_address the API refuses (consent events, form submissions): node:net's test, less zone ids (fe80::1%eth0), which Postgres's inet refuses. */
export function ipAddressError(ip: string | undefined): FieldError | undefined {
  if (ip === undefined || (isIP(ip) !== 0 && !ip.includes('%'))) return undefined;
  return { pointer: '/ip_address', code: 'value_error.ip_address', message: 'Input should be an IPv4 or IPv6 address' };
}
