import { createPurpose } from '../../../domain/consent/purposes.js';
import { addTermVersion, createTerm, MAX_TERM_BODY_BYTES, readTerm, setCurrentVersion, setTermActive } from '../../../domain/consent/terms.js';
import type { ConsentChannel, TermType } from '../../../domain/consent/vocabulary.js';
import { fieldErrors } from '../field-errors.js';
import { withTenant } from '../../../domain/tenancy/context.js';
import { defineRoute, type ApiKeyRoute } from '../../http/route.js';
import { resourceId } from '../../schemas/common.js';
import { purposeSchema, termSchema } from '../../schemas/consent.js';
import { currentVersionSchema, purposeCreateSchema, termCreateSchema, versionCreateSchema } from '../../schemas/panel-consent.js';
import { consentRoutes } from '../consent.js';
import { panelMirror } from './mirror.js';
import { TAGS } from '../tags.js';
import { activationRoute } from './activation.js';

/**
 * Consent in the panel (docs/panel.md, Consent). Reads: the public consent listings, the proof
 * export and the resolver, mirrored for any member (registering a consent, POST
 * /v1/consent-events, stays the integration's: it is not mirrored). Changes, an admin's: the
 * panel-only operations of the spec, through the functions `cartero purpose create`, `term
 * create`, `term add-version`, `term set-current` and `term activate|deactivate` call, so the
 * panel and the CLI cannot disagree on a rule.
 */

const tag = TAGS.panel;

/** The domain's refusals of an input the CLI passes unchecked, answered as the 422 of the field they concern. */
const asFieldErrors = fieldErrors({
  invalid_name: '/name',
  invalid_purposes: '/purpose_ids',
  invalid_channels: '/channels',
  invalid_version: '/version',
  invalid_body: '/body',
  invalid_document_url: '/document_url',
});

const termId = { id: resourceId };

/** The public consent reads, at /v1/private/...: any member. */
const mirrored = (consentRoutes as ApiKeyRoute[]).filter((r) => r.method === 'get').map((r) => panelMirror(r, 'viewer'));

export const panelConsentRoutes = [
  ...mirrored,
  defineRoute<Record<string, never>, Record<string, never>, { name: string }>({
    method: 'post',
    path: '/v1/private/consent-purposes',
    operationId: 'createPanelConsentPurpose',
    summary: 'Create a consent purpose',
    description:
      'What a consent is for ("Newsletter"). Purposes are never edited or deleted: terms and past consents name them. 409 ' +
      'consent_purpose_name_taken for a name the instance has, ignoring case and accents. Admin or owner; `cartero purpose create`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: purposeCreateSchema,
    success: { status: 201, description: 'The new purpose', schema: purposeSchema },
    errors: [409],
    handler: ({ tenant, body, deps }) => asFieldErrors(() => createPurpose(tenant, deps.pool, { name: body.name })),
  }),
  defineRoute<Record<string, never>, Record<string, never>, { name: string; type: TermType; purpose_ids: number[]; channels: ConsentChannel[] }>({
    method: 'post',
    path: '/v1/private/consent-terms',
    operationId: 'createPanelConsentTerm',
    summary: 'Create a consent term for some purposes on some channels',
    description:
      'Its purposes and channels are fixed from now on. Active, with no version yet: consent cannot be registered to it until a version ' +
      'is published and made current. 404 consent_purpose_not_found for a purpose the instance does not have; 409 ' +
      'consent_term_name_taken for a name it has (ignoring case and accents). Admin or owner; `cartero term create`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: termCreateSchema,
    success: { status: 201, description: 'The new term, without versions', schema: termSchema },
    errors: [404, 409],
    handler: ({ tenant, body, deps }) =>
      asFieldErrors(() => createTerm(tenant, deps.pool, { name: body.name, type: body.type, purposeIds: body.purpose_ids, channels: body.channels })),
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'get',
    path: '/v1/private/consent-terms/{id}',
    operationId: 'getPanelConsentTerm',
    summary: 'One consent term with its versions',
    description: 'As GET /v1/consent-terms lists it. 404 consent_term_not_found for an id the instance does not have. Any member.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    params: termId,
    success: { status: 200, description: 'The term', schema: termSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => withTenant(deps.pool, tenant, (c) => readTerm(tenant, c, params.id)),
  }),
  activationRoute<{ id: number }>({
    path: '/v1/private/consent-terms/{id}',
    operationId: 'updatePanelConsentTerm',
    summary: 'Activate or deactivate a consent term',
    description:
      'is_active false: the term receives no new consents (registering one answers 409 consent_term_inactive); the consents it has ' +
      'keep counting. true: it receives them again. Nothing else of a term changes. Admin or owner; `cartero term deactivate|activate`.',
    params: termId,
    meaning: 'false: the term receives no new consents (409 consent_term_inactive); true: it does again.',
    answer: { description: 'The term', schema: termSchema },
    errors: [404],
    set: (tenant, pool, params, active) => setTermActive(tenant, pool, params.id, active),
  }),
  defineRoute<Record<string, never>, { id: number }, { version: string; body: string; document_url?: string }>({
    method: 'post',
    path: '/v1/private/consent-terms/{id}/versions',
    operationId: 'addPanelConsentTermVersion',
    summary: "Publish a version of a term's text",
    description:
      'It does not become current (the spec): a term may have versions and none current. The label is unique in the term (409 ' +
      `consent_term_version_taken); the text, at most ${MAX_TERM_BODY_BYTES} bytes, never changes afterwards. Admin or owner; \`cartero term add-version\`.`,
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: termId,
    body: versionCreateSchema,
    // The text may be a whole policy: 1 MiB of UTF-8, which JSON escaping can double (line breaks, quotes).
    maxBodyBytes: 2 * MAX_TERM_BODY_BYTES + 64 * 1024,
    success: { status: 201, description: 'The term with its versions, the new one last', schema: termSchema },
    errors: [404, 409, 413],
    handler: ({ tenant, params, body, deps }) =>
      asFieldErrors(() => addTermVersion(tenant, deps.pool, params.id, { version: body.version, body: body.body, documentUrl: body.document_url })),
  }),
  defineRoute<Record<string, never>, { id: number }, { version: string }>({
    method: 'put',
    path: '/v1/private/consent-terms/{id}/current-version',
    operationId: 'setPanelConsentTermCurrentVersion',
    summary: 'Make a published version the current one',
    description:
      'The version a consent registered from now on freezes; the previous current one stops being current (events keep the version ' +
      'they froze). 404 consent_term_version_not_found for a label the term has not published. Admin or owner; `cartero term set-current`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: termId,
    body: currentVersionSchema,
    success: { status: 200, description: 'The term', schema: termSchema },
    errors: [404],
    handler: ({ tenant, params, body, deps }) => setCurrentVersion(tenant, deps.pool, params.id, body.version),
  }),
];
