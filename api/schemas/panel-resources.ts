import { SCOPES } from '../../domain/tenancy/api-keys.js';
import { RESTRICTION_REASONS } from '../../domain/restrictions/restrictions.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateTime, nullableDateTime, withRequired } from './common.js';
import { senderSchema } from './senders.js';

/**
 * The instance's resources in the operator panel's /v1/private API (docs/panel.md, "The
 * instance's resources"): API keys, senders, domains, restrictions and the instance's settings.
 * The resources the public API already shows (senders, domains, restrictions) keep its schemas.
 */

// An address or network as `cartero key create --allow-ip` and `instance allow-ip` take it; its
// form is checked by the domain (normalizeCidr: 400 invalid_cidr), as the CLI's is.
const cidr: JsonSchema = { type: 'string', minLength: 1, maxLength: 64, description: 'An IPv4 or IPv6 address or network in CIDR notation' };
const cidrs: JsonSchema = { type: 'array', maxItems: 100, items: cidr };

export const keyIdParam: JsonSchema = { type: 'string', pattern: '^[0-9a-f]{16}$', description: 'The key_id: 16 hexadecimal characters' };

const keyFields = {
  key_id: { type: 'string', description: 'The key’s public id, the middle part of crt.<key_id>.<token>' },
  scopes: { type: 'array', items: { type: 'string' } },
  allowed_cidrs: { type: 'array', items: { type: 'string' }, description: 'Networks the key may be used from; empty: any' },
  expires_at: { ...nullableDateTime, description: 'After this the key is refused; null: never' },
} satisfies Record<string, JsonSchema>;

/** A listed key: never its secret, nor the hash of it. */
export const listedKeySchema: JsonSchema = closedObject({
  ...keyFields,
  revoked_at: { ...nullableDateTime, description: 'When it was revoked; null while usable' },
  created_at: dateTime,
});

export const keysSchema: JsonSchema = { type: 'object', required: ['data'], properties: { data: { type: 'array', items: listedKeySchema } } };

export const createdKeySchema: JsonSchema = closedObject({
  key_id: keyFields.key_id,
  key: { type: 'string', description: 'The full key, crt.<key_id>.<token>: shown in this answer only (only a hash of its token is stored)' },
  instance: { type: 'string', description: 'The instance’s slug' },
  scopes: keyFields.scopes,
  allowed_cidrs: keyFields.allowed_cidrs,
  expires_at: keyFields.expires_at,
});

// No minItems on scopes: an empty list is the spec's business rule 409 api_key_scope_required.
export const keyCreateSchema: JsonSchema = {
  type: 'object',
  required: ['scopes'],
  additionalProperties: false,
  properties: {
    scopes: { type: 'array', maxItems: SCOPES.length, items: { type: 'string', enum: [...SCOPES] } },
    allowed_cidrs: { ...cidrs, description: 'Networks the key may be used from (default: any)' },
    expires_at: { ...nullableDateTime, description: 'When the key stops working (default: never)' },
  },
};

export const revokedKeySchema: JsonSchema = closedObject({ key_id: keyFields.key_id, revoked_at: dateTime });

/** A created sender: the public API's sender, and whether its domain was added (pending) with it. */
export const createdSenderSchema: JsonSchema = withRequired(senderSchema, {
  domain_created: { type: 'boolean', description: 'The instance lacked the address’s domain: it was added, pending, with a DKIM key' },
});

/** A sender in the panel's listing: the public Sender, and whether it is the sandbox's. */
export const panelSenderSchema: JsonSchema = withRequired(senderSchema, {
  is_sandbox: { type: 'boolean', description: "On the instance's sandbox domain: sends only to the instance's members (409 sandbox_relay_restricted otherwise)" },
});

export const senderCreateSchema = {
  type: 'object',
  required: ['email', 'name'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', minLength: 3, maxLength: 320, description: 'The From address' },
    name: { type: 'string', minLength: 1, maxLength: 255, description: 'The From name' },
    is_consent_required: { type: 'boolean', description: 'Send only to recipients who gave consent (default false)' },
  },
} as const satisfies JsonSchema;

export const senderPatchSchema = {
  type: 'object',
  required: ['is_consent_required'],
  additionalProperties: false,
  properties: { is_consent_required: { type: 'boolean' } },
} as const satisfies JsonSchema;

export const domainCreateSchema = {
  type: 'object',
  required: ['domain'],
  additionalProperties: false,
  properties: { domain: { type: 'string', minLength: 1, maxLength: 253, description: 'The domain name, e.g. mail.example.com' } },
} as const satisfies JsonSchema;

export const restrictionCreateSchema = {
  type: 'object',
  required: ['recipient'],
  additionalProperties: false,
  properties: {
    recipient: { type: 'string', format: 'email', maxLength: 320 },
    reason: { type: 'string', enum: [...RESTRICTION_REASONS], description: 'Default unspecified (a restriction made by hand)' },
  },
} as const satisfies JsonSchema;

const limits = {
  send_rate_per_second: { type: ['number', 'null'], exclusiveMinimum: 0, description: 'Mails per second (a fraction allowed); null: no limit' },
  send_burst: { type: ['integer', 'null'], minimum: 1, maximum: 2147483647, description: 'Mails sent at once before the rate applies; null: no limit' },
  monthly_quota: { type: ['integer', 'null'], minimum: 0, maximum: 2147483647, description: 'Mails per calendar month; null: no limit' },
} satisfies Record<string, JsonSchema>;

export const instanceSettingsSchema: JsonSchema = closedObject({
  slug: { type: 'string' },
  name: { type: 'string' },
  enabled: { type: 'boolean' },
  tz: { type: ['string', 'null'], description: 'IANA time zone of the date filters; null: UTC. Set at creation (cartero instance create --tz)' },
  ...limits,
  allowed_cidrs: { type: 'array', items: { type: 'string' }, description: 'Networks the instance’s API keys may be used from; empty: any' },
  dns_override: {
    type: 'boolean',
    description: 'The deployment lets the owner set a domain’s DNS checks by hand (PANEL_DNS_OVERRIDE=on): PUT /v1/private/domains/{id}/checks',
  },
  created_at: dateTime,
  updated_at: dateTime,
});

export const instanceLimitsPatchSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: limits,
};

export const instanceAllowListSchema: JsonSchema = {
  type: 'object',
  required: ['allowed_cidrs'],
  additionalProperties: false,
  properties: { allowed_cidrs: { ...cidrs, description: 'The whole list, replacing the current one; empty: every address allowed' } },
};

const checkStateBody: JsonSchema = { type: 'string', enum: ['pending', 'approved', 'failed'] };

/** The operator override's body: the checks to set, at least one; the others are left as they are. */
export const domainChecksSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { mx: checkStateBody, spf: checkStateBody, dkim: checkStateBody, dmarc: checkStateBody },
};
