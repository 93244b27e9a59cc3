import { listComplaints } from '../../domain/complaints/list.js';
import { listRoute } from './reads.js';
import { complaintSchema } from '../schemas/complaints.js';
import { mailEventFilterQuery } from '../schemas/mail-events.js';
import { TAGS } from './tags.js';

export const complaintRoutes = [
  listRoute({
    path: '/v1/mail-complaints',
    operationId: 'listMailComplaints',
    summary: 'List complaints',
    description:
      'Feedback-loop complaints (ARF reports), one row per mail, newest first (dates filter complained_at). A complaint alone ' +
      'does not restrict the address. Bounded by the retention of the mail: rows leave with it after 3 months. total_items is null.',
    tag: TAGS.restrictions,
    scope: 'mail:read',
    query: mailEventFilterQuery,
    page: { description: 'A page of complaints, newest first', item: complaintSchema },
    list: listComplaints,
  }),
];
