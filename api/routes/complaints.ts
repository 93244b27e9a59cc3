import { listComplaints, type ComplaintFilter } from '../../domain/complaints/list.js';
import { defineRoute } from '../http/route.js';
import { collectionSchema } from '../schemas/common.js';
import { complaintSchema } from '../schemas/complaints.js';
import { mailEventFilterQuery } from '../schemas/mail-events.js';

export const complaintRoutes = [
  defineRoute<ComplaintFilter>({
    method: 'get',
    path: '/v1/mail-complaints',
    operationId: 'listMailComplaints',
    summary: 'List complaints',
    description:
      'Feedback-loop complaints (ARF reports), one row per mail, newest first (dates filter complained_at). A complaint alone ' +
      'does not restrict the address. Bounded by the retention of the mail: rows leave with it after 3 months. total_items is null.',
    tag: 'Restrictions',
    auth: { kind: 'api_key', scope: 'mail:read' },
    query: mailEventFilterQuery,
    success: { status: 200, description: 'A page of complaints, newest first', schema: collectionSchema(complaintSchema) },
    handler: ({ tenant, query, deps }) => listComplaints(tenant, deps.pool, query),
  }),
];
