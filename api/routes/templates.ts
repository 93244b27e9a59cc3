import {
  createTemplate,
  getTemplate,
  listTemplates,
  patchTemplate,
  TEMPLATE_STATUSES,
  validateTemplate,
  type EditorSetting,
  type TemplateFields,
} from '../../domain/templates/templates.js';
import { NotFoundError } from '../../domain/errors.js';
import { formatDescriptionJson, formatEtag, moduleDetail, type Lang } from '../../engines/beefree/format/description.js';
import { defineRoute, type AppDeps } from '../http/route.js';
import { listRoute, readRoute } from './reads.js';
import { paginationQuery, resourceId } from '../schemas/common.js';
import {
  templateCreateSchema,
  templateFormatSchema,
  templateModuleSchema,
  templatePatchSchema,
  templateSchema,
  templateSummarySchema,
  templateValidateSchema,
  templateValidationSchema,
} from '../schemas/templates.js';
import { TAGS } from './tags.js';

const templateId = { template_id: resourceId };

/**
 * Documents are checked and rendered on the web dyno's thread pool (deps.templates); an optional
 * check that threw is logged with the template id (the answer carries a check_failed warning).
 */
export function templateSetting(deps: AppDeps): EditorSetting {
  return {
    editor: deps.config.templateEditor,
    processor: deps.templates,
    onCheckFailure: (failure, templateId) =>
      deps.logger.warn({ template_id: templateId, check: failure.check, err: failure.error }, 'template check could not run; skipped'),
  };
}

const lang = {
  lang: {
    type: 'string',
    enum: ['es', 'en'],
    default: 'es',
    'x-error-code': 'literal_error',
    description: 'Language of the text (format, description); nothing else changes with it.',
  },
};

/**
 * The format changes only when Cartero's code does and is the same for every instance, so a
 * client keeps it: its ETag (a hash of the exact bytes) answers If-None-Match with 304, and it
 * may be reused for an hour without asking. private: the answer needs credentials, so shared
 * caches do not keep it.
 */
const FORMAT_CACHE_CONTROL = 'private, max-age=3600';

/**
 * RFC 9110 13.1.2: If-None-Match holds `*` or a list of entity tags, compared weakly (W/
 * ignored). Evaluated here rather than by Express's req.fresh, which ignores a conditional
 * request sent with Cache-Control: no-cache, the header fetch() adds to every request that
 * carries If-None-Match: an origin server answers the precondition whatever caches are told.
 */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/**
 * The largest write body: a config of 262144 bytes leaves room for pretty-printing, and a body
 * may carry back everything a read returned, html included (ignored), so the bound is well above
 * the config's own; the config's limit is checked on its own (413 with max_bytes 262144).
 */
const TEMPLATE_BODY_MAX_BYTES = 4 * 1024 * 1024;

// The format routes come first: /v1/mail-templates/format must not be taken for a template id.
export const templateRoutes = [
  defineRoute<{ lang: Lang }>({
    method: 'get',
    path: '/v1/mail-templates/format',
    operationId: 'getMailTemplateFormat',
    summary: 'The design document format: Markdown text, field types, defaults, skeleton and module kinds',
    description:
      'Identical for every instance; changes only when the format does (ETag, Cache-Control; If-None-Match answers 304). ' +
      'Start documents from the skeleton, a library template or an existing config.',
    tag: TAGS.templates,
    auth: { kind: 'api_key', scope: 'templates:read' },
    query: lang,
    success: {
      status: 200,
      description: 'The template format description',
      schema: templateFormatSchema,
      headers: {
        ETag: { description: 'Strong validator of the exact bytes; send it back in If-None-Match', schema: { type: 'string' } },
        'Cache-Control': { description: FORMAT_CACHE_CONTROL, schema: { type: 'string' } },
      },
    },
    alsoAnswers: { 304: { description: 'If-None-Match holds the ETag of the answer: no body', body: 'none' } },
    handler: async ({ query }, res) => {
      res.setHeader('ETag', formatEtag(query.lang));
      res.setHeader('Cache-Control', FORMAT_CACHE_CONTROL);
      if (noneMatch(res.req.get('if-none-match'), formatEtag(query.lang))) {
        res.status(304).end();
        return undefined;
      }
      res.status(200).type('application/json').send(formatDescriptionJson(query.lang));
      return undefined;
    },
  }),
  defineRoute<{ lang: Lang }, { kind: string }>({
    method: 'get',
    path: '/v1/mail-templates/format/modules/{kind}',
    operationId: 'getMailTemplateModule',
    summary: 'One module kind in detail: fields with types, defaults and an example module',
    description:
      'The detail of one kind listed in modules[] of GET /v1/mail-templates/format: every field of its descriptor with ' +
      'its value type, the defaults a new module of this kind starts from, and a complete example module to copy into a ' +
      'document. lang chooses the language of the texts. 404 template_module_not_found when the format has no such kind.',
    tag: TAGS.templates,
    auth: { kind: 'api_key', scope: 'templates:read' },
    params: { kind: { type: 'string', minLength: 1, maxLength: 64, description: 'A kind of the modules[] of the format (e.g. paragraph).' } },
    query: lang,
    success: { status: 200, description: 'The module kind', schema: templateModuleSchema },
    errors: [404],
    handler: async ({ params, query }, res) => {
      const detail = moduleDetail(params.kind, query.lang);
      if (!detail) throw new NotFoundError('template_module', params.kind);
      res.setHeader('Cache-Control', FORMAT_CACHE_CONTROL);
      return detail;
    },
  }),
  listRoute({
    path: '/v1/mail-templates',
    operationId: 'listMailTemplates',
    summary: 'List mail templates',
    description: 'Without html, config and findings; oldest first. Deleted templates are not listed.',
    tag: TAGS.templates,
    scope: 'templates:read',
    query: {
      ...paginationQuery,
      name: { type: 'string', maxLength: 255, description: 'Partial, case-insensitive.' },
      status: { type: 'string', enum: [...TEMPLATE_STATUSES] },
    },
    page: { description: 'A page of templates', item: templateSummarySchema },
    list: listTemplates,
  }),
  defineRoute<Record<string, never>, Record<string, never>, TemplateFields>({
    method: 'post',
    path: '/v1/mail-templates/validate',
    operationId: 'validateMailTemplate',
    summary: 'Check a design document and render it, storing nothing',
    description: 'The findings and the html a create with this body would store; errors are the 422 a create would answer.',
    tag: TAGS.templates,
    auth: { kind: 'api_key', scope: 'templates:write' },
    body: templateValidateSchema,
    maxBodyBytes: TEMPLATE_BODY_MAX_BYTES,
    success: { status: 200, description: 'Findings and generated html', schema: templateValidationSchema },
    errors: [409, 413],
    handler: ({ body, deps }) => validateTemplate(body, templateSetting(deps)),
  }),
  readRoute<{ template_id: number }>({
    path: '/v1/mail-templates/{template_id}',
    operationId: 'getMailTemplate',
    summary: 'Read a mail template',
    description:
      'The whole template: the design document (config), the html generated from it (preheader included as a hidden ' +
      'block) and the findings (warnings and suggestions) about the stored document. 404 mail_template_not_found.',
    tag: TAGS.templates,
    scope: 'templates:read',
    params: templateId,
    found: { description: 'The template, with html, config and findings', schema: templateSchema },
    read: ({ tenant, params, deps }) => getTemplate(tenant, deps.pool, params.template_id),
  }),
  defineRoute<Record<string, never>, Record<string, never>, TemplateFields & { name: string }>({
    method: 'post',
    path: '/v1/mail-templates',
    operationId: 'createMailTemplate',
    summary: 'Create a native draft template from a design document',
    description: '409 template_editor_unavailable where the platform editor is not offered (TEMPLATE_EDITOR=off).',
    tag: TAGS.templates,
    auth: { kind: 'api_key', scope: 'templates:write' },
    body: templateCreateSchema,
    maxBodyBytes: TEMPLATE_BODY_MAX_BYTES,
    success: { status: 201, description: 'The template, with its findings', schema: templateSchema },
    errors: [409, 413],
    handler: ({ tenant, body, deps }) => createTemplate(tenant, deps.pool, body, templateSetting(deps)),
  }),
  defineRoute<Record<string, never>, { template_id: number }, TemplateFields>({
    method: 'patch',
    path: '/v1/mail-templates/{template_id}',
    operationId: 'updateMailTemplate',
    summary: 'Update a draft template',
    description:
      'Only the fields present change; null empties (except name). id, status, provider, html, findings and the dates are ignored. ' +
      'A present config or preheader regenerates html; null config empties design and html.',
    tag: TAGS.templates,
    auth: { kind: 'api_key', scope: 'templates:write' },
    params: templateId,
    body: templatePatchSchema,
    maxBodyBytes: TEMPLATE_BODY_MAX_BYTES,
    success: { status: 200, description: 'The template, with its findings', schema: templateSchema },
    errors: [404, 409, 413],
    handler: ({ tenant, params, body, deps }) => patchTemplate(tenant, deps.pool, params.template_id, body, templateSetting(deps)),
  }),
];
