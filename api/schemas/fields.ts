import { FIELD_TYPES } from '../../domain/fields/types.js';
import type { JsonSchema } from '../../domain/validation.js';
import { closedObject, dateTime } from './common.js';

/** A catalog field as GET /v1/fields lists it (spec: the field list, exactly). */
export const fieldSchema: JsonSchema = closedObject({
  id: { type: 'integer' },
  field_key: { type: 'string', description: 'What dataset columns, imports and lists name the field by; never reused, even after a delete.' },
  name: { type: 'string', description: 'Unique in the instance ignoring case and accents.' },
  type: { type: 'string', enum: [...FIELD_TYPES] },
  options: { type: ['array', 'null'], items: { type: 'string' }, description: 'The allowed values of a select field; null for other types.' },
  rules: {
    type: 'object',
    additionalProperties: false,
    required: ['max_length', 'pattern', 'min', 'max'],
    description: 'Each null when not set. max_length and pattern apply to text (max_length also to email), min and max to number.',
    properties: {
      max_length: { type: ['integer', 'null'], description: 'Characters (code points).' },
      pattern: { type: ['string', 'null'], description: 'ECMAScript regular expression (u flag) the whole value must match.' },
      min: { type: ['number', 'null'] },
      max: { type: ['number', 'null'] },
    },
  },
  is_system: { type: 'boolean', description: 'email and phone: present in every instance, never deletable.' },
  is_active: { type: 'boolean', description: 'A deactivated field keeps validating the columns that declare it but cannot be declared anew.' },
  created_at: dateTime,
  updated_at: dateTime,
});
