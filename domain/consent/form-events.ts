import type { Client } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import type { ConsentChannel, ContactType, EventStatus } from './vocabulary.js';

/**
 * The consent events of a form submission (docs/forms.md): written here, as every consent event
 * is (domain/consent owns consent_events and consent_rules), in the form's transaction
 * (domain/forms/submit.ts, domain/forms/confirm.ts). Unlike registerEvent (events.ts) the form
 * has checked everything already, and the outbox rows are the caller's, appended with its own
 * (one INSERT for the submission's events and the submission's).
 */

/** One accepted consent of the submission: its term at the version shown, and the contact it is for. */
export interface FormConsent {
  termId: number;
  termVersionId: number;
  channel: ConsentChannel;
  contactType: ContactType;
  /** The contact, as the submission stores it. */
  contact: string;
  /** One allow rule per purpose of the term. */
  purposeIds: readonly number[];
}

export interface FormEventsInput {
  submissionId: number;
  formId: number;
  formName: string;
  /** pending under double confirmation, else confirmed. */
  status: EventStatus;
  method: 'single_opt_in' | 'double_opt_in';
  ipAddress: string | null;
  userAgent: string | null;
  /** The submission's created_at as Postgres wrote it (`::text`): the events carry it exactly. */
  createdAt: string;
  consents: readonly FormConsent[];
}

/**
 * The statement: one event per consent ($10/$11 in form order: term, version), each with one allow
 * rule per purpose of its term ($15/$16: the event's position and the purpose; $12..$14: channel,
 * contact type, contact). Identity values are drawn in insertion order within a statement, so the
 * events' ids in ascending order follow the ordinality they were inserted in, which pairs each with
 * its rules.
 */
const WRITE = `
WITH e AS (
  INSERT INTO consent_events (instance_id, term_id, term_version_id, status, method, source, submission_id, form_id, form_name, ip_address, user_agent, created_at)
  SELECT $1, x.term_id, x.version_id, $2, $3, 'form', $4, $5, $6, $7::inet, $8, $9::timestamptz
    FROM unnest($10::bigint[], $11::bigint[]) WITH ORDINALITY AS x(term_id, version_id, n)
   ORDER BY x.n
  RETURNING id, created_at
), en AS (
  SELECT id, created_at, row_number() OVER (ORDER BY id) AS n FROM e
), r AS (
  INSERT INTO consent_rules (instance_id, event_id, channel, contact_type, contact, purpose_id, action, created_at)
  SELECT $1, en.id, x.channel, x.contact_type, x.contact, p.purpose_id, 'allow', en.created_at
    FROM en
    JOIN unnest($12::text[], $13::text[], $14::text[]) WITH ORDINALITY AS x(channel, contact_type, contact, n) ON x.n = en.n
    JOIN unnest($15::bigint[], $16::bigint[]) AS p(n, purpose_id) ON p.n = en.n
)
SELECT id FROM en ORDER BY n`;

/**
 * Records the submission's consent events and their rules, one statement (none for no consent);
 * returns the events' ids in the order of `consents`.
 */
export async function recordFormEvents(tenant: Tenant, c: Client, input: FormEventsInput): Promise<string[]> {
  const consents = input.consents;
  if (!consents.length) return [];
  const { rows } = await c.query<{ id: string }>({
    name: 'form-consent-events-write',
    text: WRITE,
    values: [
      tenant.instanceId, input.status, input.method, input.submissionId, input.formId, input.formName, input.ipAddress, input.userAgent, input.createdAt,
      consents.map((i) => i.termId), consents.map((i) => i.termVersionId),
      consents.map((i) => i.channel), consents.map((i) => i.contactType), consents.map((i) => i.contact),
      consents.flatMap((i, n) => i.purposeIds.map(() => n + 1)), consents.flatMap((i) => i.purposeIds),
    ],
  });
  return rows.map((r) => r.id);
}

/**
 * The person confirmed the submission (domain/forms/confirm.ts, its row locked): its pending
 * events become confirmed at the submission's confirmed_at, with the same evidence. Returns the
 * ids confirmed.
 */
export async function confirmFormEvents(
  tenant: Tenant,
  c: Client,
  submissionId: number,
  confirmedAt: Date,
  evidence: { ip: string | null; userAgent: string | null },
): Promise<string[]> {
  const { rows } = await c.query<{ id: string }>(
    `UPDATE consent_events SET status = 'confirmed', confirmed_at = $3, confirmation_ip = $4::inet, confirmation_user_agent = $5
      WHERE instance_id = $1 AND submission_id = $2 AND status = 'pending' RETURNING id`,
    [tenant.instanceId, submissionId, confirmedAt, evidence.ip, evidence.userAgent],
  );
  return rows.map((r) => r.id);
}
