import { createForm, deleteForm, draftForm, setFormActive, updateForm, type FormDefinitionInput } from '../../../domain/forms/definition.js';
import { formMailSettings, listSubmissions, MAX_SUBMISSION_EXPORT, submissionsCsv } from '../../../domain/forms/submissions.js';
import { defineRoute, type ApiKeyRoute } from '../../http/route.js';
import { collectionSchema, paginationQuery, resourceId } from '../../schemas/common.js';
import { formSchema } from '../../schemas/forms.js';
import { formPage } from '../../pages/form-page.js';
import { formDeletedSchema, formPreviewSchema, formWriteSchema, mailSettingsSchema, submissionRowSchema } from '../../schemas/panel-forms.js';
import { pageFormOf } from '../form-pages.js';
import { formRoutes } from '../forms.js';
import { panelMirror } from './mirror.js';
import { TAGS } from '../tags.js';
import { activationRoute } from './activation.js';

/**
 * Forms in the panel (docs/panel.md, Forms). Reads: GET /v1/forms and /v1/forms/{id} mirrored for
 * any member (the field catalog the builder offers is the datasets' mirror); submitting (POST
 * /v1/forms/{id}/submissions) stays the integration's and the hosted page's: it is not mirrored.
 * Changes, an admin's: the panel-only definitions of the spec, through the functions `cartero
 * form create`, `form update`, `form activate|deactivate` and `form delete` call, so the panel
 * and the CLI cannot disagree on a rule (consent_channel_not_covered,
 * form_confirmation_email_missing, form_dataset_columns_not_collected, form_name_taken, the
 * 422s of unresolved references with their pointers).
 */

const tag = TAGS.panel;
const formId = { id: { ...resourceId, description: 'The form id.' } };

type FormWrite = FormDefinitionInput & { align_dataset_columns?: boolean };

function split(body: FormWrite): [FormDefinitionInput, { alignDatasetColumns: boolean }] {
  const { align_dataset_columns, ...definition } = body;
  return [definition, { alignDatasetColumns: align_dataset_columns ?? false }];
}

const RULES =
  '422 with every reference that does not resolve (an unknown or inactive field_key, a term or channel, a dataset, sender, template, ' +
  'team address, an item id not of this form), each with its pointer; 409 consent_channel_not_covered (a consent item on a channel whose ' +
  'identifying field, email or phone, the form lacks), form_confirmation_email_missing (double confirmation without a required email ' +
  'field), form_dataset_columns_not_collected (the fed dataset requires a column no required item collects; align_dataset_columns ' +
  'true makes them required items instead), form_name_taken (ignoring case and accents).';

/** The public form reads and the field catalog, at /v1/private/...: any member. */
// The field catalog the builder offers (GET /v1/private/fields) is mirrored with the datasets'
// routes (datasets.ts, beside this file), where the catalog is managed.
const mirrored = (formRoutes as ApiKeyRoute[]).filter((r) => r.method === 'get').map((r) => panelMirror(r, 'viewer'));

export const panelFormRoutes = [
  ...mirrored,
  defineRoute<Record<string, never>, Record<string, never>, FormWrite>({
    method: 'post',
    path: '/v1/private/forms',
    operationId: 'createPanelForm',
    summary: 'Create a form from its whole definition',
    description: `The definition of docs/forms.md (items in display order). ${RULES} Admin or owner; \`cartero form create\`.`,
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: formWriteSchema,
    success: { status: 201, description: 'The new form, as GET /v1/forms/{id} shows it', schema: formSchema },
    errors: [409],
    handler: ({ tenant, body, deps }) => createForm(tenant, deps.pool, ...split(body)),
  }),
  defineRoute<Record<string, never>, Record<string, never>, FormWrite>({
    method: 'post',
    path: '/v1/private/forms/preview',
    operationId: 'previewPanelForm',
    summary: 'The hosted page a definition would make, storing nothing',
    description:
      'The builder\'s live preview: the definition (the body of POST /v1/private/forms, checked by the same schema) drawn by the hosted ' +
      'page\'s own renderer (GET /f/{public_token}) as `html`, its Send button disabled. Nothing is written. 422 with every reference that ' +
      'does not resolve, each with its pointer, as a create answers; the 409 rules (consent_channel_not_covered, ' +
      'form_confirmation_email_missing, form_dataset_columns_not_collected, form_name_taken) are the save\'s, so a form can be seen while ' +
      'it is built. align_dataset_columns true: the dataset\'s missing columns drawn as the save would add them. The HTML is for a ' +
      '`sandbox=""` frame\'s srcdoc (the panel\'s Forms page): never for the panel\'s own document. Any member.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    body: formWriteSchema,
    success: { status: 200, description: 'The page', schema: formPreviewSchema },
    handler: async ({ tenant, body, deps }, res) => {
      res.set('Cache-Control', 'no-store');
      const draft = await draftForm(tenant, deps.pool, ...split(body));
      return { html: formPage(await pageFormOf(tenant, deps, draft), { values: {}, errors: new Map(), submissionKey: 'preview' }, { preview: true }) };
    },
  }),
  defineRoute<Record<string, never>, { id: number }, FormWrite>({
    method: 'put',
    path: '/v1/private/forms/{id}',
    operationId: 'updatePanelForm',
    summary: 'Replace a form’s definition',
    description:
      'The whole definition: items that carry their id keep it, items without one are new, items left out are removed; a rename ' +
      `renames the form in its consent events. is_active left out keeps the form's. ${RULES} 404 form_not_found. Admin or owner; \`cartero form update\`.`,
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: formId,
    body: formWriteSchema,
    success: { status: 200, description: 'The form, as GET /v1/forms/{id} shows it', schema: formSchema },
    errors: [404, 409],
    handler: ({ tenant, params, body, deps }) => updateForm(tenant, deps.pool, params.id, ...split(body)),
  }),
  activationRoute<{ id: number }>({
    path: '/v1/private/forms/{id}',
    operationId: 'setPanelFormActive',
    summary: 'Activate or deactivate a form',
    description:
      'is_active false: submissions (the API and the hosted page) answer 404 form_not_found, as for a missing form; true: accepted ' +
      'again. Nothing else changes. 404 form_not_found. Admin or owner; `cartero form activate|deactivate`.',
    params: formId,
    meaning: 'false: submissions answer 404 form_not_found, as for a missing form.',
    answer: { description: 'The form', schema: formSchema },
    errors: [404],
    set: (tenant, pool, params, active) => setFormActive(tenant, pool, params.id, active),
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'delete',
    path: '/v1/private/forms/{id}',
    operationId: 'deletePanelForm',
    summary: 'Delete a form',
    description:
      'Gone from the listings; submissions answer 404; its submissions and consent events keep naming it and its name is free again. ' +
      '404 form_not_found (also for a form already deleted). Admin or owner; `cartero form delete`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: formId,
    success: { status: 200, description: 'What was deleted', schema: formDeletedSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => deleteForm(tenant, deps.pool, params.id),
  }),
  defineRoute<{ page: number; page_size: number }, { id: number }>({
    method: 'get',
    path: '/v1/private/forms/{id}/submissions',
    operationId: 'listPanelFormSubmissions',
    summary: "A form's submissions, newest first",
    description:
      'Each with its source (form: the hosted page; form_api: the API), status (pending until confirmed when the form requires it), the ' +
      'values it collected and the consent events it produced. Panel-only: the API submits, it does not list. 404 form_not_found. Any member.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    params: formId,
    query: paginationQuery,
    success: { status: 200, description: 'A page of submissions', schema: collectionSchema(submissionRowSchema) },
    errors: [404],
    handler: async ({ tenant, params, query, deps }, res) => {
      res.set('Cache-Control', 'no-store');
      return listSubmissions(tenant, deps.pool, params.id, query);
    },
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'get',
    path: '/v1/private/forms/{id}/submissions/export',
    operationId: 'exportPanelFormSubmissions',
    summary: "A form's submissions as CSV",
    description:
      `text/csv attachment: UTF-8 BOM, a header row (id, created_at, source, status, confirmed_at, each collected field key, consents), newest first, ` +
      `at most ${MAX_SUBMISSION_EXPORT} rows; text cells formula-guarded as the activity exports are. 404 form_not_found. Any member.`,
    tag,
    auth: { kind: 'session', role: 'viewer' },
    params: formId,
    success: { status: 200, description: 'The CSV file', contentType: 'text/csv', schema: { type: 'string' } },
    errors: [404],
    handler: async ({ tenant, params, deps }, res) => {
      const csv = await submissionsCsv(tenant, deps.pool, params.id);
      res.set('Cache-Control', 'no-store');
      res.set('Content-Type', 'text/csv; charset=utf-8');
      res.set('Content-Disposition', `attachment; filename="form-${params.id}-submissions.csv"`);
      res.status(200).send(csv);
      return undefined;
    },
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'get',
    path: '/v1/private/forms/{id}/mail-settings',
    operationId: 'getPanelFormMailSettings',
    summary: "A form's auto-reply and team notice addresses",
    description:
      'The parts of a definition GET /v1/forms/{id} does not show and PUT /v1/private/forms/{id} replaces: the builder reads them so a ' +
      'save keeps them. 404 form_not_found. Any member.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    params: formId,
    success: { status: 200, description: 'The auto-reply (null: none) and the team notice addresses', schema: mailSettingsSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => formMailSettings(tenant, deps.pool, params.id),
  }),
];
