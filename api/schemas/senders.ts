import { closedObject, dateTime } from './common.js';
import type { JsonSchema } from '../../domain/validation.js';

export const senderSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  name: { type: 'string', description: 'Display name.' },
  email_address: { type: 'string', description: 'Sending address, username@<domain>.' },
  domain_id: { type: 'integer' },
  domain_is_verified: { type: 'boolean', description: "Recomputed at each query from the domain's four DNS checks." },
  is_consent_required: { type: 'boolean', description: 'Sending requires the recipient’s consent; changeable only in the panel.' },
  created_at: dateTime,
  updated_at: dateTime,
});
