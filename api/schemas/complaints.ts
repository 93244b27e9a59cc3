import type { JsonSchema } from '../../domain/validation.js';
import { dateTime, nullableDateTime } from './common.js';
import { mailRefProperties } from './mail-events.js';

export const complaintSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'mail_id', 'msg_id', 'recipient', 'sender', 'subject', 'feedback_type', 'reported_by', 'arrival_date', 'complained_at',
    'custom_msg_id', 'custom_group_code'],
  properties: {
    id: { type: 'integer' },
    ...mailRefProperties,
    feedback_type: { type: 'string', description: 'Feedback-Type of the ARF report (RFC 5965), e.g. abuse.' },
    reported_by: { type: ['string', 'null'], description: 'The reporting system (User-Agent field of the report), when given.' },
    arrival_date: { ...nullableDateTime, description: 'Arrival-Date of the report (when the provider received the mail), when given.' },
    complained_at: { ...dateTime, description: 'When Cartero received the report.' },
  },
};
