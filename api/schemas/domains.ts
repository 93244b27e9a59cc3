import { closedObject, dateTime, withRequired } from './common.js';
import type { JsonSchema } from '../../domain/validation.js';
import { CHECK_STATUSES, COMPLIANCE_RULES, RULE_PROVIDERS } from '../../domain/domains/compliance/check.js';

const checkState: JsonSchema = { type: 'string', enum: ['pending', 'approved', 'failed'] };

export const domainStatusSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  domain: { type: 'string' },
  is_verified: { type: 'boolean', description: 'True only when MX, SPF, DKIM and DMARC are all approved.' },
});

export const domainSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'domain', 'is_verified', 'mx_status', 'spf_status', 'dkim_status', 'dmarc_status', 'created_at', 'updated_at'],
  additionalProperties: false,
  properties: {
    ...(domainStatusSchema.properties as Record<string, JsonSchema>),
    mx_status: checkState,
    spf_status: checkState,
    dkim_status: checkState,
    dmarc_status: checkState,
    created_at: dateTime,
    updated_at: dateTime,
  },
};

const dnsRecordSchema: JsonSchema = {
  type: 'object',
  required: ['check', 'type', 'name', 'value', 'status'],
  additionalProperties: false,
  properties: {
    check: { type: 'string', enum: ['mx', 'spf', 'dkim', 'dmarc'], description: 'Which of the four checks this record serves.' },
    type: { type: 'string', enum: ['TXT', 'MX'] },
    name: { type: 'string', description: 'Fully qualified record name, without a trailing dot.' },
    value: { type: 'string', description: 'What to publish; for MX `<priority> <host>`.' },
    status: { ...checkState, description: "This record's check state (a DKIM record: its key's)." },
    selector: { type: 'string', description: 'DKIM records: the key selector.' },
    signing: { type: 'boolean', description: 'DKIM records: mail is signed with this key now.' },
  },
};

/** The single-domain read: the spec's fields plus what to publish in DNS (docs/domains.md). */
export const domainWithRecordsSchema: JsonSchema = withRequired(domainSchema, {
  return_path_domain: { type: 'string', description: 'Host of the bounce+<id>@ return path (MAIL FROM): RETURN_PATH_SUBDOMAIN.<domain>.' },
  dkim_selector: { type: ['string', 'null'], description: 'Selector of the key that signs mail now; null when the domain has no key.' },
  dns_checked_at: { ...dateTime, type: ['string', 'null'], description: 'When the records were last resolved; null: never.' },
  checks_overridden: { type: 'boolean', description: 'The checks were set by the operator without DNS; the scheduled verification skips the domain.' },
  is_sandbox: {
    type: 'boolean',
    description: "The instance's sandbox domain, <slug>.<SANDBOX_DOMAIN>: owned and vouched for by the service, its records the operator's; its senders send only to the instance's members.",
  },
  dns_records: { type: 'array', items: dnsRecordSchema },
});

/** GET /v1/domains/{domain_name}/compliance (docs/domains.md, Compliance). */
export const complianceCheckSchema: JsonSchema = closedObject({
  rule: {
    type: 'string',
    enum: [...COMPLIANCE_RULES],
    description: 'Stable id of the rule (docs/domains.md lists each with its logic); new rules may be added.',
  },
  status: {
    type: 'string',
    enum: [...CHECK_STATUSES],
    description: 'pass: met; warn: met short of the recommendation, or about to stop being met; fail: not met; unknown: nothing to judge it by yet.',
  },
  detail: { type: 'string', description: 'What was found, and what to do when it is not a pass.' },
  applies_to: {
    type: 'array',
    items: { type: 'string', enum: [...RULE_PROVIDERS] },
    description: 'The mailbox providers that publish this rule.',
  },
  source: { type: 'string', format: 'uri', description: "The provider's published page the rule comes from." },
});

export const domainComplianceSchema: JsonSchema = closedObject({
  domain: { type: 'string' },
  checks: { type: 'array', items: complianceCheckSchema },
});
