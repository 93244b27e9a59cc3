import { createHash } from 'node:crypto';
import type { Client, Pool } from '../../sql/pool.js';
import { AppError, NotFoundError, RuleViolation, ValidationFailed, type FieldError } from '../errors.js';
import { checkValue, type StoredValue } from '../fields/values.js';
import type { FieldDefinition } from '../fields/types.js';
import { FORM_SUBMISSION_MAIL_QUEUE, type FormSubmissionMailJob, type JobQueue } from '../job-queue.js';
import { append } from '../outbox/append.js';
import { ipAddressError, MAX_PROOF_USER_AGENT } from '../consent/events.js';
import { recordFormEvents } from '../consent/form-events.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { CONFIRMED_EFFECTS, confirmedJobs, type ConfirmedEffects } from './after-confirmation.js';
import { CHANNEL_FIELD, type FormConsentChannel, type FormType } from './read.js';

/**
 * A form submission (POST /v1/forms/{id}/submissions, and the hosted page's POST /f/{token}),
 * with every rule of the spec, in this order:
 *  1. 404 form_not_found: no such form, another instance's, deleted or deactivated (one answer).
 *  2. Idempotency-Key already used on this form: the same submission answers 200 with the
 *     original body (nothing created, no mail); another submission 422 idempotency_key_reused.
 *  3. 422 validation_error with every failure together: completeness (field_item_omitted,
 *     consent_item_omitted, item_duplicated, item_unknown, consent_term_version_stale with the
 *     current version in params) and each value against its catalog field (field_value_invalid,
 *     field_value_missing, consent_required), and a malformed ip_address.
 *  4. 409 consent_term_inactive, then 409 consent_identity_field_missing: an accepted consent
 *     whose channel's identifying field (mail: email; sms, wsp: phone) has no value.
 * Then one transaction: the submission (the unique (form_id, idempotency_key) constraint decides
 * concurrent duplicates: the loser inserts nothing and answers as a retry), one consent event per
 * accepted consent (source form, with submission_id, form_id, form_name; pending under double
 * confirmation), their outbox rows, form.submission.created (and .confirmed), and the jobs:
 * the confirmation mail when the form requires confirmation, else the confirmed submission's
 * (auto-reply, team notice, dataset feed). docs/forms.md.
 */

/** One answer (spec: items[]): value for fields and consents (true if checked), term_version_id on consents. */
export interface SubmissionItemInput {
  item_id: number;
  value?: unknown;
  term_version_id?: number;
}

/** The body of POST /v1/forms/{id}/submissions after schema validation (api/schemas/forms.ts). */
export interface SubmissionInput {
  items: SubmissionItemInput[];
  ip_address?: string;
  user_agent?: string;
}

export interface SubmissionMeta {
  source: 'form' | 'form_api';
  idempotencyKey?: string;
  /** Overrides input.ip_address (the hosted page passes the request's own). */
  ipAddress?: string;
  userAgent?: string;
}

export type SubmissionStatus = 'pending' | 'confirmed';

export interface SubmissionResult {
  /** 201 a new submission; 200 a retry under the same Idempotency-Key (nothing created). */
  httpStatus: 200 | 201;
  body: { id: number; status: SubmissionStatus };
}

interface TermState {
  is_active: boolean;
  purpose_ids: number[];
  current_version_id: number | null;
}

type LoadedItem =
  | { id: number; type: 'field'; required: boolean; field: FieldDefinition }
  | { id: number; type: 'consent'; required: boolean; term_id: number; channel: FormConsentChannel; term: TermState };

interface LoadedForm extends ConfirmedEffects {
  id: number;
  name: string;
  type: FormType;
  dataset_id: number | null;
  requires_confirmation: boolean;
  items: LoadedItem[];
  /** The submission already made under the call's Idempotency-Key, if any. */
  existing: Existing | null;
}

/**
 * The active form with what a submission is checked against (its sendable items, fields and
 * consents, in order), and in the same round trip the submission its Idempotency-Key already
 * names, if any.
 */
async function loadForm(tenant: Tenant, c: Client, formId: number, key: string | null): Promise<LoadedForm | undefined> {
  const { rows } = await c.query<LoadedForm>({
    name: 'form-for-submission',
    text: `SELECT f.id, f.name, f.type, f.dataset_id, f.requires_confirmation, ${CONFIRMED_EFFECTS},
                  coalesce((SELECT json_agg(json_build_object(
                      'id', i.id, 'type', i.type, 'required', i.required, 'term_id', i.term_id, 'channel', i.channel,
                      'field', CASE WHEN i.type = 'field' THEN json_build_object('id', fl.id, 'key', fl.field_key, 'type', fl.type,
                                 'options', fl.options, 'maxLength', fl.max_length, 'pattern', fl.pattern, 'min', fl.min, 'max', fl.max,
                                 'isActive', fl.is_active) END,
                      'term', CASE WHEN i.type = 'consent' THEN json_build_object('is_active', t.is_active, 'purpose_ids', to_json(t.purpose_ids),
                                 'current_version_id', (SELECT v.id FROM consent_term_versions v
                                                         WHERE v.instance_id = t.instance_id AND v.term_id = t.id AND v.is_current)) END
                    ) ORDER BY i.position)
                    FROM form_items i
                    LEFT JOIN fields fl ON fl.instance_id = i.instance_id AND fl.id = i.field_id
                    LEFT JOIN consent_terms t ON t.instance_id = i.instance_id AND t.id = i.term_id
                   WHERE i.instance_id = f.instance_id AND i.form_id = f.id AND i.removed_at IS NULL
                     AND i.type IN ('field', 'consent')), '[]') AS items,
                  (SELECT json_build_object('id', s.id, 'answered_status', s.answered_status, 'request_hash', s.request_hash)
                     FROM form_submissions s WHERE s.form_id = f.id AND s.idempotency_key = $3) AS existing
             FROM forms f
            WHERE f.instance_id = $1 AND f.id = $2 AND f.is_active AND f.deleted_at IS NULL`,
    values: [tenant.instanceId, formId, key],
  });
  return rows[0];
}

/**
 * What tells a retry from another submission: the items as sent, in item order, without
 * ip_address and user_agent (a retry may come from elsewhere: spec).
 */
export function submissionHash(items: readonly SubmissionItemInput[]): string {
  const canonical = [...items]
    .map((i) => [i.item_id, i.value === undefined ? null : i.value, i.term_version_id ?? null])
    .sort((a, b) => (a[0] as number) - (b[0] as number) || JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

interface Checked {
  /** Answers by item id: fields' stored values (null when empty), consents' true/false. */
  answers: Record<string, StoredValue | null>;
  /** The fields' stored values by field_key (empty ones left out). */
  values: Record<string, StoredValue>;
  /** The consents accepted, in form order. */
  accepted: Array<Extract<LoadedItem, { type: 'consent' }>>;
}

/** Rule 3: every failure of the body against the form, together. */
function checkItems(form: LoadedForm, input: SubmissionInput, ipAddress: string | undefined): Checked {
  const errors: FieldError[] = [];
  const byId = new Map(form.items.map((item) => [item.id, item]));
  const sent = new Map<number, number>();
  const answers: Record<string, StoredValue | null> = {};
  const values: Record<string, StoredValue> = {};
  const accepted: Checked['accepted'] = [];
  input.items.forEach((given, i) => {
    const at = `/items/${i}`;
    const item = byId.get(given.item_id);
    if (!item) {
      errors.push({ pointer: `${at}/item_id`, code: 'item_unknown', message: `The form has no field or consent item ${given.item_id}`, params: { item_id: given.item_id } });
      return;
    }
    const first = sent.get(given.item_id);
    if (first !== undefined) {
      errors.push({ pointer: `${at}/item_id`, code: 'item_duplicated', message: `Item ${given.item_id} was already sent at /items/${first}`, params: { item_id: given.item_id } });
      return;
    }
    sent.set(given.item_id, i);
    if (given.value === undefined) {
      errors.push({ pointer: `${at}/value`, code: 'missing', message: 'Field required (null for an empty optional field, false for an unchecked consent)' });
      return;
    }
    if (item.type === 'field') {
      const checked = checkValue(item.field, given.value);
      if (checked.kind === 'invalid') {
        errors.push({ pointer: `${at}/value`, code: 'field_value_invalid', message: checked.message, params: { field_key: item.field.key, ...checked.params } });
      } else if (checked.kind === 'empty') {
        if (item.required) errors.push({ pointer: `${at}/value`, code: 'field_value_missing', message: `Field ${item.field.key} is required`, params: { field_key: item.field.key } });
        answers[item.id] = null;
      } else {
        answers[item.id] = checked.value;
        values[item.field.key] = checked.value;
      }
      return;
    }
    // A consent item.
    if (given.term_version_id === undefined) {
      errors.push({ pointer: `${at}/term_version_id`, code: 'missing', message: 'Field required on consent items: the term version that was shown' });
    } else if (given.term_version_id !== item.term.current_version_id) {
      errors.push({
        pointer: `${at}/term_version_id`,
        code: 'consent_term_version_stale',
        message: `Term ${item.term_id}'s current version is ${item.term.current_version_id ?? 'none'}: show it and send its id`,
        params: { current_term_version_id: item.term.current_version_id },
      });
    }
    if (typeof given.value !== 'boolean') {
      errors.push({ pointer: `${at}/value`, code: 'bool_parsing', message: 'A consent item takes true (checked) or false (not checked)' });
      return;
    }
    if (!given.value && item.required) {
      errors.push({ pointer: `${at}/value`, code: 'consent_required', message: `Consent item ${item.id} is required and was not accepted`, params: { item_id: item.id } });
    }
    answers[item.id] = given.value;
    if (given.value) accepted.push(item);
  });
  for (const item of form.items) {
    if (sent.has(item.id)) continue;
    errors.push(
      item.type === 'field'
        ? { pointer: '/items', code: 'field_item_omitted', message: `Field item ${item.id} (${item.field.key}) was not sent: send it, with null when empty`, params: { item_id: item.id } }
        : { pointer: '/items', code: 'consent_item_omitted', message: `Consent item ${item.id} was not sent: send it, false when not checked`, params: { item_id: item.id } },
    );
  }
  const badIp = ipAddressError(ipAddress);
  if (badIp) errors.push(badIp);
  if (errors.length) throw new ValidationFailed(errors);
  return { answers, values, accepted };
}

/** Rule 4: what the consents accepted need beyond their values. */
function consentConflicts(checked: Checked): void {
  for (const item of checked.accepted) {
    if (!item.term.is_active) throw new RuleViolation('consent_term_inactive', `term ${item.term_id} of consent item ${item.id} is deactivated: it cannot receive new consents`);
  }
  for (const item of checked.accepted) {
    const key = CHANNEL_FIELD[item.channel];
    if (checked.values[key] === undefined) {
      throw new RuleViolation(
        'consent_identity_field_missing',
        `consent item ${item.id} was accepted on channel ${item.channel}, but the submission has no ${key} to identify the contact on it`,
        { pointer: '/items' },
      );
    }
  }
}

interface Existing {
  id: number;
  answered_status: SubmissionStatus;
  request_hash: string;
}

async function existing(c: Client, formId: number, key: string): Promise<Existing | undefined> {
  const { rows } = await c.query<Existing>('SELECT id, answered_status, request_hash FROM form_submissions WHERE form_id = $1 AND idempotency_key = $2', [formId, key]);
  return rows[0];
}

/** Rule 2: a key already used on this form. */
function replay(found: Existing, hash: string): SubmissionResult {
  if (found.request_hash !== hash) {
    throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used for a different submission of this form: resend with a new key', { errors: [] });
  }
  return { httpStatus: 200, body: { id: found.id, status: found.answered_status } };
}

/**
 * The submission, unless the Idempotency-Key is taken (then nothing at all is written and no row
 * comes back). Its consent events are domain/consent's to write (recordFormEvents) and the outbox
 * rows domain/outbox's (append): three statements in the one transaction, a fixed number whatever
 * the count of consents (none for the events when no consent was accepted).
 */
const WRITE = `
INSERT INTO form_submissions (instance_id, form_id, source, status, answered_status, answers, field_values, idempotency_key, request_hash,
                              ip_address, user_agent, confirmed_at)
VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9::inet, $10, CASE WHEN $4 = 'confirmed' THEN now() END)
ON CONFLICT ON CONSTRAINT form_submissions_idempotency_key DO NOTHING
RETURNING id, created_at::text`;

export async function submitForm(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  formId: number,
  input: SubmissionInput,
  meta: SubmissionMeta,
): Promise<SubmissionResult> {
  const hash = submissionHash(input.items);
  const ipAddress = meta.ipAddress ?? input.ip_address;
  const userAgent = meta.userAgent ?? input.user_agent;
  return withTenant(pool, tenant, async (c) => {
    const form = await loadForm(tenant, c, formId, meta.idempotencyKey ?? null);
    if (!form) throw new NotFoundError('form', formId);
    // A retry is answered as the first call was, even if the form changed since (a new term version, say).
    if (form.existing) return replay(form.existing, hash);
    const checked = checkItems(form, input, ipAddress);
    consentConflicts(checked);

    const status: SubmissionStatus = form.requires_confirmation ? 'pending' : 'confirmed';
    const consents = checked.accepted;
    const ua = userAgent ? userAgent.slice(0, MAX_PROOF_USER_AGENT) : null;
    const { rows } = await c.query<{ id: number; created_at: string }>({
      name: 'form-submission-write',
      text: WRITE,
      values: [
        tenant.instanceId, formId, meta.source, status, JSON.stringify(checked.answers), JSON.stringify(checked.values),
        meta.idempotencyKey ?? null, hash, ipAddress ?? null, ua,
      ],
    });
    const row = rows[0];
    if (!row) {
      // A concurrent call with the same key committed first (the insert waited for it): a retry.
      return replay((await existing(c, formId, meta.idempotencyKey!))!, hash);
    }
    const eventIds = await recordFormEvents(tenant, c, {
      submissionId: row.id,
      formId,
      formName: form.name,
      status,
      method: form.requires_confirmation ? 'double_opt_in' : 'single_opt_in',
      ipAddress: ipAddress ?? null,
      userAgent: ua,
      createdAt: row.created_at,
      consents: consents.map((i) => ({
        termId: i.term_id,
        termVersionId: i.term.current_version_id!,
        channel: i.channel,
        contactType: i.channel === 'mail' ? 'email_address' : 'phone_number',
        contact: checked.values[CHANNEL_FIELD[i.channel]] as string,
        purposeIds: i.term.purpose_ids,
      })),
    });
    // As they happened: the events, then the submission (and its confirmation, without one).
    const at = row.created_at;
    await append(tenant, c, [
      ...eventIds.map((id) => ({ kind: 'consent.event.created' as const, entityId: id, occurredAt: at })),
      { kind: 'form.submission.created', entityId: row.id, occurredAt: at },
      ...(status === 'confirmed' ? [{ kind: 'form.submission.confirmed' as const, entityId: row.id, occurredAt: at }] : []),
    ]);
    const jobs =
      status === 'confirmed'
        ? confirmedJobs(tenant, form, row.id)
        : [{ name: FORM_SUBMISSION_MAIL_QUEUE, data: { instance_id: tenant.instanceId, submission_id: row.id, mail: 'confirmation' } satisfies FormSubmissionMailJob }];
    // Last in the transaction: the insert leaves the tenant role (workers/machinery/queue.ts).
    await queue.insert(c, jobs);
    return { httpStatus: 201, body: { id: row.id, status } };
  });
}
