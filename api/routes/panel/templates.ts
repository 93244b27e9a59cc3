import { copyTemplate } from '../../../domain/templates/copy.js';
import { sendTemplateTest } from '../../../domain/templates/test-send.js';
import { deleteTemplate, setTemplateStatus, TEMPLATE_LIMITS } from '../../../domain/templates/templates.js';
import type { JsonSchema } from '../../../domain/validation.js';
import { defineRoute, type ApiKeyRoute } from '../../http/route.js';
import { resourceId, withRequired } from '../../schemas/common.js';
import { sendAcceptedSchema } from '../../schemas/mails.js';
import { templateSchema } from '../../schemas/templates.js';
import { panelMirror } from './mirror.js';
import { TAGS } from '../tags.js';
import { templateRoutes, templateSetting } from '../templates.js';

/**
 * The instance's templates in the panel (docs/panel.md, Templates). Every /v1/mail-templates
 * route at /v1/private/mail-templates, any member reading (the list, a template, the format and
 * its module kinds), an admin or owner writing (create, validate, PATCH): the public
 * declarations mirrored, so the spec's codes (template_published, template_read_only,
 * template_name_taken, template_editor_unavailable) are the panel's too. Then what only the
 * panel does, with the functions of `cartero template publish|unpublish|delete`: publish,
 * unpublish, delete, copy, and a test send through the normal acceptance.
 */

const tag = TAGS.panel;
const admin = { kind: 'session', role: 'admin' } as const;
const params = { template_id: resourceId };
type Id = { template_id: number };

const copySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.name, description: 'The new template’s name (unique ignoring case and accents).' } },
};

const testSendSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    to: { type: 'string', format: 'email', maxLength: 320, description: 'The recipient; absent: the caller’s own address.' },
    sender_id: { ...resourceId, description: 'A sender of the instance; absent: the instance’s sandbox sender (sends only to its members).' },
    subject: { type: 'string', minLength: 1, maxLength: TEMPLATE_LIMITS.subject, description: 'Absent: the template’s subject, else its name.' },
  },
};

const testSentSchema = withRequired(sendAcceptedSchema, { from: { type: 'string', description: 'The sender’s address.' } });

const status = (operationId: string, verb: 'publish' | 'unpublish', to: 'public' | 'draft', summary: string, description: string) =>
  defineRoute<Record<string, never>, Id>({
    method: 'post',
    path: `/v1/private/mail-templates/{template_id}/${verb}`,
    operationId,
    summary,
    description: `${description} Setting the status it has changes nothing. 404 mail_template_not_found. Admin or owner; \`cartero template ${verb}\`.`,
    tag,
    auth: admin,
    params,
    success: { status: 200, description: 'The template', schema: templateSchema },
    errors: [409],
    handler: ({ tenant, params, deps }) => setTemplateStatus(tenant, deps.pool, params.template_id, to),
  });

export const panelTemplateRoutes = [
  ...templateRoutes.map((route: ApiKeyRoute) => panelMirror(route, route.method === 'get' ? 'viewer' : 'admin')),
  status(
    'publishPanelTemplate',
    'publish',
    'public',
    'Publish a template',
    'Sendable outside test_mode, no longer editable (PATCH answers 409 template_published). 409 template_has_no_html for an empty design.',
  ),
  status('unpublishPanelTemplate', 'unpublish', 'draft', 'Return a published template to draft', 'Editable again; sendable only with test_mode.'),
  defineRoute<Record<string, never>, Id, { name: string }>({
    method: 'post',
    path: '/v1/private/mail-templates/{template_id}/copy',
    operationId: 'copyPanelTemplate',
    summary: 'A new draft from an existing template',
    description:
      'A native template’s design document, subject, preheader and description, checked and rendered as POST /v1/mail-templates does ' +
      '(409 template_editor_unavailable with TEMPLATE_EDITOR=off); an external template’s HTML as a new external (read-only) draft. ' +
      '409 template_name_taken; 404 mail_template_not_found. Admin or owner.',
    tag,
    auth: admin,
    params,
    body: copySchema,
    success: { status: 201, description: 'The new template, with its findings', schema: templateSchema },
    errors: [409],
    handler: async ({ tenant, params, body, deps }, res) => {
      const copy = await copyTemplate(tenant, deps.pool, params.template_id, body.name, templateSetting(deps));
      res.status(201);
      return copy;
    },
  }),
  defineRoute<Record<string, never>, Id, { to?: string; sender_id?: number; subject?: string }>({
    method: 'post',
    path: '/v1/private/mail-templates/{template_id}/test-send',
    operationId: 'testSendPanelTemplate',
    summary: 'Send a template to one address to see it in a mailbox',
    description:
      'Accepted as POST /v1/mails/send accepts a send with template_id and test_mode: true (a draft may be tried), from the instance’s ' +
      'sandbox sender unless sender_id names another. The sandbox sends only to the instance’s members: 409 sandbox_relay_restricted for ' +
      'any other address. 404 mail_template_not_found, sender_not_found; 409 domain_sender_not_verified. Admin or owner.',
    tag,
    auth: admin,
    params,
    body: testSendSchema,
    bodyRequired: false,
    success: { status: 202, description: 'The accepted send, and the address it goes from', schema: testSentSchema },
    errors: [409],
    handler: async ({ tenant, params, body, session, deps }, res) => {
      const accepted = await sendTemplateTest(
        tenant,
        deps.pool,
        deps.queue,
        { templateId: params.template_id, to: body?.to ?? session.user.email, senderId: body?.sender_id, subject: body?.subject },
        deps.config.render,
      );
      res.status(202);
      return accepted;
    },
  }),
  defineRoute<Record<string, never>, Id>({
    method: 'delete',
    path: '/v1/private/mail-templates/{template_id}',
    operationId: 'deletePanelTemplate',
    summary: 'Delete a template',
    description:
      'Gone from reads and sends, its name free again; sends already accepted keep their content. Answers the template as it was. ' +
      '404 mail_template_not_found. Admin or owner; `cartero template delete`.',
    tag,
    auth: admin,
    params,
    success: { status: 200, description: 'The template as it was', schema: templateSchema },
    handler: ({ tenant, params, deps }) => deleteTemplate(tenant, deps.pool, params.template_id),
  }),
];
