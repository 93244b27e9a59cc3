import type { JsonSchema } from '../../domain/validation.js';
import { dateTime } from './common.js';
import { mailRefProperties } from './mail-events.js';

export const unsubscribeSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'mail_id', 'msg_id', 'recipient', 'sender', 'subject', 'method', 'reason', 'comment', 'unsubscribed_at', 'updated_at',
    'custom_msg_id', 'custom_group_code'],
  properties: {
    id: { type: 'integer' },
    ...mailRefProperties,
    method: {
      type: 'string',
      enum: ['one_click', 'page'],
      description: "one_click: RFC 8058 one-click POST from the mail client; page: the unsubscribe page's form.",
    },
    reason: { type: ['string', 'null'], description: 'Reason given by the recipient, when any; may be completed after the event.' },
    comment: { type: ['string', 'null'], description: 'Free text left by the recipient, when any; may be completed after the event.' },
    unsubscribed_at: { ...dateTime, description: 'The first unsubscribe from this mail (later ones do not move it).' },
    updated_at: { ...dateTime, description: 'Last time reason or comment were completed.' },
  },
};
