import { listFields } from '../../domain/fields/catalog.js';
import type { PageRequest } from '../../domain/pagination.js';
import { defineRoute } from '../http/route.js';
import { collectionSchema, paginationQuery } from '../schemas/common.js';
import { fieldSchema } from '../schemas/fields.js';

export const fieldRoutes = [
  defineRoute<PageRequest>({
    method: 'get',
    path: '/v1/fields',
    operationId: 'listFields',
    summary: 'List the field catalog',
    description: 'The typed fields dataset columns are declared with, oldest first (the system fields email and phone lead). Deleted fields are not listed.',
    tag: 'Datasets',
    auth: { kind: 'api_key', scope: 'dataset:read' },
    query: paginationQuery,
    success: { status: 200, description: 'A page of fields', schema: collectionSchema(fieldSchema) },
    handler: ({ tenant, query, deps }) => listFields(tenant, deps.pool, query),
  }),
];
