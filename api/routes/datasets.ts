import { getDataset, listDatasets } from '../../domain/datasets/datasets.js';
import type { PageRequest } from '../../domain/pagination.js';
import { defineRoute } from '../route.js';
import { collectionSchema, paginationQuery } from '../schemas/common.js';
import { datasetDetailSchema, datasetSchema } from '../schemas/datasets.js';

const datasetId = { id: { type: 'integer', minimum: 1, maximum: 9007199254740991 } };

export const datasetRoutes = [
  defineRoute<PageRequest>({
    method: 'get',
    path: '/v1/datasets',
    operationId: 'listDatasets',
    summary: 'List datasets',
    description: 'Oldest first. The listing omits the identifier and the columns (GET /v1/datasets/{id} has them).',
    tag: 'Datasets',
    auth: { kind: 'api_key', scope: 'dataset:read' },
    query: paginationQuery,
    success: { status: 200, description: 'A page of datasets', schema: collectionSchema(datasetSchema) },
    handler: ({ tenant, query, deps }) => listDatasets(tenant, deps.pool, query),
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'get',
    path: '/v1/datasets/{id}',
    operationId: 'getDataset',
    summary: 'Read a dataset with its identifier and columns',
    tag: 'Datasets',
    auth: { kind: 'api_key', scope: 'dataset:read' },
    params: datasetId,
    success: { status: 200, description: 'The dataset', schema: datasetDetailSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => getDataset(tenant, deps.pool, params.id),
  }),
];
