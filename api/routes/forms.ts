import { NotFoundError } from '../../domain/errors.js';
import { FORM_KINDS, FORM_TYPES, getForm, listForms } from '../../domain/forms/read.js';
import { submitForm, type SubmissionInput } from '../../domain/forms/submit.js';
import { idempotencyKey, idempotencyKeyHeader } from '../http/idempotency-key.js';
import { defineRoute } from '../http/route.js';
import { listRoute, readRoute } from './reads.js';
import { paginationQuery, resourceId } from '../schemas/common.js';
import { formSchema, submissionBodySchema, submissionResultSchema } from '../schemas/forms.js';
import { TAGS } from './tags.js';

/**
 * Forms (spec: GET /v1/forms, POST /v1/forms/{id}/submissions; GET /v1/forms/{id} among the
 * endpoints named by the material). Definitions are panel-only (cli/commands/form.ts). The scopes
 * are independent: form:read reads, form:write submits, neither implies the other.
 */

const formId = { id: { ...resourceId, description: 'The form id.' } };

export const formRoutes = [
  listRoute({
    path: '/v1/forms',
    operationId: 'listForms',
    summary: 'List forms, each with its items in display order',
    description:
      'Oldest first; each item has the same shape as GET /v1/forms/{id}: its fields, consent items (with the term ' +
      'version a submission must send), separators and text blocks in display order. Filters combine; name is a ' +
      'partial, case-insensitive match.',
    tag: TAGS.forms,
    scope: 'form:read',
    query: {
      ...paginationQuery,
      kind: { type: 'string', enum: [...FORM_KINDS] },
      type: { type: 'string', enum: [...FORM_TYPES] },
      is_active: { type: 'boolean' },
      name: { type: 'string', maxLength: 255, description: 'Partial, case-insensitive.' },
      requires_confirmation: { type: 'boolean', description: 'Whether the form requires double confirmation.' },
      auto_reply_sender_id: { ...resourceId, description: 'Sender of the auto-reply and the confirmation mail.' },
    },
    page: { description: 'A page of forms, oldest first; each as GET /v1/forms/{id} shows it', item: formSchema },
    list: listForms,
  }),
  readRoute<{ id: number }>({
    path: '/v1/forms/{id}',
    operationId: 'getForm',
    summary: 'Read a form: its items with the ids and term versions a submission sends',
    description: 'Read it before each submission: a consent item’s term_version_id is the term’s current version, which the submission must send.',
    tag: TAGS.forms,
    scope: 'form:read',
    params: formId,
    found: { description: 'The form', schema: formSchema },
    read: async ({ tenant, params, deps }) => {
      const form = await getForm(tenant, deps.pool, params.id);
      if (!form) throw new NotFoundError('form', params.id);
      return form;
    },
  }),
  defineRoute<Record<string, never>, { id: number }, SubmissionInput>({
    method: 'post',
    path: '/v1/forms/{id}/submissions',
    operationId: 'submitForm',
    summary: 'Record a submission the integrator’s site presented to a contact (source form_api)',
    description:
      'Every field and consent item of the form, once each (422 with every failure together: field_item_omitted, consent_item_omitted, ' +
      'item_duplicated, item_unknown, consent_term_version_stale with params.current_term_version_id, field_value_invalid, ' +
      'field_value_missing, consent_required). 409 consent_identity_field_missing: an accepted consent whose channel’s identifying field ' +
      '(email for mail, phone for sms and wsp) has no value. 404 form_not_found for a missing or deactivated form. ' +
      'Optional header Idempotency-Key (1-255 characters, scoped to the form, kept as long as the submission): the same submission again answers ' +
      '200 with the original body and creates nothing; another submission under the same key is 422 idempotency_key_reused. ' +
      '201 confirmed when the form needs no confirmation; pending when it does (the confirmation mail is sent; consents not in force until confirmed).',
    tag: TAGS.forms,
    auth: { kind: 'api_key', scope: 'form:write' },
    params: formId,
    requestHeaders: {
      'Idempotency-Key': idempotencyKeyHeader(
        'Optional. The same submission sent again under this key answers 200 with the original body and creates nothing (scoped to the form).',
      ),
    },
    body: submissionBodySchema,
    success: { status: 201, description: 'The new submission', schema: submissionResultSchema },
    alsoAnswers: { 200: { description: 'A retry under the same Idempotency-Key: the original body', body: 'success' } },
    errors: [404, 409],
    handler: async ({ tenant, params, body, deps }, res) => {
      const key = idempotencyKey(res.req.get('Idempotency-Key'));
      const { httpStatus, body: result } = await submitForm(tenant, deps.pool, deps.queue, params.id, body, {
        source: 'form_api',
        ...(key !== undefined ? { idempotencyKey: key } : {}),
      });
      res.status(httpStatus).json(result);
      return undefined;
    },
  }),
];
