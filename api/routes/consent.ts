import { listEvents, registerEvent, type ConsentEventInput } from '../../domain/consent/events.js';
import { consentProof } from '../../domain/consent/proof.js';
import { listPurposes } from '../../domain/consent/purposes.js';
import { resolveConsent, type ResolveQuery } from '../../domain/consent/resolve.js';
import { listTerms } from '../../domain/consent/terms.js';
import { CONSENT_CHANNELS, CONTACT_TYPES, EVENT_STATUSES, MAX_CONTACT_LENGTH, type ConsentChannel, type ContactType } from '../../domain/consent/vocabulary.js';
import { RuleViolation, ValidationFailed, type FieldError } from '../../domain/errors.js';
import { defineRoute } from '../http/route.js';
import { listRoute } from './reads.js';
import { paginationQuery } from '../schemas/common.js';
import { eventCreateSchema, eventSchema, proofSchema, purposeSchema, resolveSchema, termSchema } from '../schemas/consent.js';
import { TAGS } from './tags.js';

/** Most identifiers and purposes one resolve call asks about (100 × 20 = 2,000 verdicts at most). */
const RESOLVE_MAX_CONTACTS = 100;
const RESOLVE_MAX_PURPOSES = 20;

/** Query parameters a route cannot do without: a route's query schema declares no required ones. */
function requireQuery(query: Record<string, unknown>, names: readonly string[]): void {
  const missing = names.filter((n) => query[n] === undefined);
  if (missing.length) throw new ValidationFailed(missing.map((n) => ({ pointer: `/${n}`, code: 'missing', message: 'Field required' })));
}

interface ResolveParams {
  contacts?: string;
  contact_types?: string;
  channel?: ConsentChannel;
  purpose_ids?: string;
}

/**
 * The resolve query's comma-separated lists, checked: every list item well formed (422, all
 * together), then the two identifier lists the same length (409 consent_contact_pairs_mismatch:
 * they pair by position).
 */
function resolveQuery(q: ResolveParams): ResolveQuery {
  requireQuery(q as Record<string, unknown>, ['contacts', 'contact_types', 'channel', 'purpose_ids']);
  const contacts = q.contacts!.split(',');
  const types = q.contact_types!.split(',');
  const purposeIds = q.purpose_ids!.split(',').map(Number);
  const errors: FieldError[] = [];
  const empty = contacts.findIndex((c) => c === '');
  if (empty >= 0) errors.push({ pointer: '/contacts', code: 'value_error.empty_item', message: `Identifier ${empty + 1} of the list is empty` });
  const long = contacts.findIndex((c) => c.length > MAX_CONTACT_LENGTH);
  if (long >= 0) errors.push({ pointer: '/contacts', code: 'string_too_long', message: `Identifier ${long + 1} is over ${MAX_CONTACT_LENGTH} characters`, params: { max_length: MAX_CONTACT_LENGTH } });
  if (contacts.length > RESOLVE_MAX_CONTACTS) {
    errors.push({ pointer: '/contacts', code: 'too_long', message: `At most ${RESOLVE_MAX_CONTACTS} identifiers`, params: { max_length: RESOLVE_MAX_CONTACTS } });
  }
  const badType = types.findIndex((t) => !(CONTACT_TYPES as readonly string[]).includes(t));
  if (badType >= 0) {
    const expected = CONTACT_TYPES.map((t) => `'${t}'`).join(', ');
    errors.push({ pointer: '/contact_types', code: 'enum', message: `Type ${badType + 1} of the list should be ${expected}`, params: { expected } });
  }
  if (purposeIds.length > RESOLVE_MAX_PURPOSES) {
    errors.push({ pointer: '/purpose_ids', code: 'too_long', message: `At most ${RESOLVE_MAX_PURPOSES} purposes`, params: { max_length: RESOLVE_MAX_PURPOSES } });
  }
  if (errors.length) throw new ValidationFailed(errors);
  if (contacts.length !== types.length) {
    throw new RuleViolation(
      'consent_contact_pairs_mismatch',
      `contacts has ${contacts.length} identifiers and contact_types ${types.length} types: they pair by position`,
    );
  }
  return {
    channel: q.channel!,
    contacts: contacts.map((contact, i) => ({ contact, contact_type: types[i] as ContactType })),
    purpose_ids: purposeIds,
  };
}

export const consentRoutes = [
  listRoute({
    path: '/v1/consent-purposes',
    operationId: 'listConsentPurposes',
    summary: 'List consent purposes',
    description:
      'What consent is asked for ("Newsletter"): each purpose has an id and a unique name. Terms and consent rules name ' +
      'purposes by id; the resolver answers per purpose. Purposes are created with the admin CLI and never change.',
    tag: TAGS.consent,
    scope: 'consent:read',
    query: paginationQuery,
    page: { description: 'A page of purposes, oldest first', item: purposeSchema },
    list: listPurposes,
  }),
  listRoute({
    path: '/v1/consent-terms',
    operationId: 'listConsentTerms',
    summary: 'List consent terms with their versions',
    description:
      'Oldest first. Each term is a legal text for some purposes on some channels, with its version history: the version ' +
      'with is_current true is the one a new consent accepts. Publishing a version does not make it current, so a term can ' +
      'have versions and none current, and then registering a consent to it answers 409. An inactive term accepts no new consent.',
    tag: TAGS.consent,
    scope: 'consent:read',
    query: paginationQuery,
    page: { description: 'A page of terms, oldest first, each with its versions in publishing order', item: termSchema },
    list: listTerms,
  }),
  listRoute({
    path: '/v1/consent-events',
    operationId: 'listConsentEvents',
    summary: 'Consent history, newest first, with rules embedded',
    description:
      'History, not the current state (that is GET /v1/consent-rules/resolve): a grant and its later revocation both appear. ' +
      'total_items is null (histories run to millions of events); paginate with has_more.',
    tag: TAGS.consent,
    scope: 'consent:read',
    query: {
      ...paginationQuery,
      term_id: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
      status: { type: 'string', enum: [...EVENT_STATUSES] },
      contact: {
        type: 'string',
        maxLength: MAX_CONTACT_LENGTH,
        description: "Exact match against an identifier of any of the event's rules, in stored form: emails are stored lowercased, so a mixed-case email matches nothing.",
      },
    },
    page: { description: 'A page of events', item: eventSchema },
    list: listEvents,
  }),
  defineRoute<{ contact?: string }>({
    method: 'get',
    path: '/v1/consent-events/proof',
    operationId: 'getConsentProof',
    summary: 'Proof of consent for one contact: every event with its rules, the exact term texts, declared and confirmation evidence',
    description:
      'What demonstrates consent (GDPR Art. 7(1)) for one identifier, exact against the stored form (emails lowercased). ' +
      'Events oldest first; each term version they froze once, with its full text and SHA-256. `cartero consent proof` writes the same document.',
    tag: TAGS.consent,
    auth: { kind: 'api_key', scope: 'consent:read' },
    query: { contact: { type: 'string', minLength: 1, maxLength: MAX_CONTACT_LENGTH, description: 'Required.' } },
    success: { status: 200, description: 'The proof document', schema: proofSchema },
    handler: ({ tenant, query, deps }) => {
      requireQuery(query, ['contact']);
      return consentProof(tenant, deps.pool, query.contact!);
    },
  }),
  defineRoute<Record<string, never>, Record<string, never>, ConsentEventInput>({
    method: 'post',
    path: '/v1/consent-events',
    operationId: 'createConsentEvent',
    summary: 'Register a consent event (source api)',
    description:
      'Freezes the term’s current version. single_opt_in is in force at once; double_opt_in is pending and authorizes nothing until confirmed. ' +
      'Errors in this order: 404 consent_term_not_found; 409 consent_term_inactive, consent_term_no_current_version; 422 (every field error: ' +
      'a channel or purpose the term does not declare, value_error.channel_not_in_term / value_error.purpose_not_in_term; a malformed ' +
      'identifier; evidence too large); 409 consent_contact_type_channel_mismatch, consent_duplicate_rule.',
    tag: TAGS.consent,
    auth: { kind: 'api_key', scope: 'consent:write' },
    body: eventCreateSchema,
    success: { status: 201, description: 'The event as GET /v1/consent-events shows it', schema: eventSchema },
    errors: [404, 409, 413],
    handler: ({ tenant, body, deps }) => registerEvent(tenant, deps.pool, deps.queue, body, 'api'),
  }),
  defineRoute<ResolveParams>({
    method: 'get',
    path: '/v1/consent-rules/resolve',
    operationId: 'resolveConsent',
    summary: 'The current verdict for identifiers on a channel, per purpose',
    description:
      'One item per identifier and purpose (identifiers in order, then purposes in order): allowed, denied or no_consent. ' +
      'A deny wins over any allow whatever their order; pending and expired events count for nothing; emails are compared lowercased. ' +
      `contacts and contact_types pair by position (different lengths: 409 consent_contact_pairs_mismatch); at most ${RESOLVE_MAX_CONTACTS} identifiers and ${RESOLVE_MAX_PURPOSES} purposes.`,
    tag: TAGS.consent,
    auth: { kind: 'api_key', scope: 'consent:read' },
    query: {
      contacts: { type: 'string', maxLength: 33_000, description: 'Required. Comma-separated identifiers (an identifier cannot contain a comma).' },
      contact_types: { type: 'string', maxLength: 2_000, description: `Required. Comma-separated, one per identifier: ${CONTACT_TYPES.join(', ')}.` },
      channel: { type: 'string', enum: [...CONSENT_CHANNELS], description: 'Required.' },
      purpose_ids: { type: 'string', maxLength: 400, pattern: '^[1-9][0-9]{0,14}(,[1-9][0-9]{0,14})*$', description: 'Required. Comma-separated purpose ids.' },
    },
    success: { status: 200, description: 'The verdicts', schema: resolveSchema },
    errors: [409],
    handler: async ({ tenant, query, deps }) => ({ data: await resolveConsent(tenant, deps.pool, resolveQuery(query)) }),
  }),
];
