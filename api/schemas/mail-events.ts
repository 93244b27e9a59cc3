import type { JsonSchema } from '../../domain/validation.js';
import { dateFilterQuery, paginationQuery } from './common.js';
import { activityFilterQuery } from './mails.js';

/**
 * What the per-mail event logs (unsubscribes, complaints) share: the activity listings' filters
 * that make sense on them, with the same meaning, and the fields read from the event's mail.
 */
export const mailEventFilterQuery = {
  ...paginationQuery,
  ...dateFilterQuery,
  recipient: activityFilterQuery.recipient,
  recipient_operator: activityFilterQuery.recipient_operator,
  mail_id: activityFilterQuery.mail_id,
  msg_id: activityFilterQuery.msg_id,
} satisfies Record<string, JsonSchema>;

export const mailRefProperties: Record<string, JsonSchema> = {
  mail_id: { type: 'string', description: 'The mail (one recipient of a send) the event belongs to.' },
  msg_id: { type: 'string', description: 'The message id shared by the recipients of the send.' },
  recipient: { type: 'string', description: 'The address of the mail.' },
  sender: { type: ['string', 'null'], description: 'Sender address of the mail; null when it has no registered sender.' },
  subject: { type: 'string', description: 'Subject of the mail.' },
  custom_msg_id: { type: ['string', 'null'] },
  custom_group_code: { type: ['string', 'null'] },
};
