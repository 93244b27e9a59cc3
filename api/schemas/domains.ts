import { dateTime } from './common.js';
import type { JsonSchema } from '../validation.js';

const checkState: JsonSchema = { type: 'string', enum: ['pending', 'approved', 'failed'] };

export const domainStatusSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'domain', 'is_verified'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    domain: { type: 'string' },
    is_verified: { type: 'boolean', description: 'True only when MX, SPF, DKIM and DMARC are all approved.' },
  },
};

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
