import { listFields } from '../../domain/fields/catalog.js';
import { listRoute } from './reads.js';
import { paginationQuery } from '../schemas/common.js';
import { fieldSchema } from '../schemas/fields.js';
import { TAGS } from './tags.js';

export const fieldRoutes = [
  listRoute({
    path: '/v1/fields',
    operationId: 'listFields',
    summary: 'List the field catalog',
    description: 'The typed fields dataset columns are declared with, oldest first (the system fields email and phone lead). Deleted fields are not listed.',
    tag: TAGS.datasets,
    scope: 'dataset:read',
    query: paginationQuery,
    page: { description: 'A page of fields', item: fieldSchema },
    list: listFields,
  }),
];
