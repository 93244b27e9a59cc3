import { addContact, addContacts } from '../../domain/datasets/contacts.js';
import { getDataset, listDatasets } from '../../domain/datasets/datasets.js';
import { ValidationFailed } from '../../domain/errors.js';
import { IDENTIFIER_OPERATORS, listRecords, type RecordSearch } from '../../domain/datasets/records.js';
import { defineRoute } from '../http/route.js';
import { listRoute, readRoute } from './reads.js';
import { collectionSchema, paginationQuery } from '../schemas/common.js';
import { contactBatchSchema, contactsBodySchema, datasetDetailSchema, datasetSchema, recordSchema } from '../schemas/datasets.js';
import { TAGS } from './tags.js';

const datasetId = { id: { type: 'integer', minimum: 1, maximum: 9007199254740991 } };

/** 1,000 contacts of a few dozen columns each fit with room to spare. */
const CONTACTS_BODY_MAX_BYTES = 8 * 1024 * 1024;

export const datasetRoutes = [
  listRoute({
    path: '/v1/datasets',
    operationId: 'listDatasets',
    summary: 'List datasets',
    description: 'Oldest first. The listing omits the identifier and the columns (GET /v1/datasets/{id} has them).',
    tag: TAGS.datasets,
    scope: 'dataset:read',
    query: paginationQuery,
    page: { description: 'A page of datasets', item: datasetSchema },
    list: listDatasets,
  }),
  readRoute<{ id: number }>({
    path: '/v1/datasets/{id}',
    operationId: 'getDataset',
    summary: 'Read a dataset with its identifier and columns',
    description:
      'The listing’s fields plus what adding a contact must respect: the identifier field (contacts are upserted on it) ' +
      'and the declared columns, named by field_key of the field catalog. A contact with an undeclared column, without ' +
      'a required column or without the identifier is refused with 409. 404 dataset_not_found.',
    tag: TAGS.datasets,
    scope: 'dataset:read',
    params: datasetId,
    found: { description: 'The dataset', schema: datasetDetailSchema },
    read: ({ tenant, params, deps }) => getDataset(tenant, deps.pool, params.id),
  }),
  defineRoute<Record<string, never>, { id: number }, { values?: Record<string, unknown>; contacts?: unknown[] }>({
    method: 'post',
    path: '/v1/datasets/{id}/contacts',
    operationId: 'addDatasetContacts',
    summary: 'Add or update contacts of a dataset (one, or a batch of up to 1,000)',
    description:
      "Upserted by the dataset's identifier. One contact {values}: 201 with the new record, 200 with the updated one; " +
      'refused with 409 (dataset_column_not_declared, dataset_identity_value_missing, dataset_required_column_missing) or ' +
      '422 field_value_invalid at /values/<field_key>. A batch {contacts: [{values}, ...]}: 200 with one result per contact, ' +
      'each the status and code it would get alone (422 pointers /contacts/<i>/values/<field_key>); a bad contact never blocks the others. ' +
      'An inactive dataset still receives contacts.',
    tag: TAGS.datasets,
    auth: { kind: 'api_key', scope: 'dataset:write' },
    params: datasetId,
    body: contactsBodySchema,
    maxBodyBytes: CONTACTS_BODY_MAX_BYTES,
    success: { status: 200, description: 'The updated record, or a batch\'s results', schema: { oneOf: [recordSchema, contactBatchSchema] } },
    alsoAnswers: { 201: { description: 'One contact whose record is new: the new record', body: 'success' } },
    errors: [404, 409, 413],
    handler: async ({ tenant, params, body, deps }, res) => {
      if (body.values !== undefined && body.contacts !== undefined) {
        throw new ValidationFailed([{ pointer: '', code: 'value_error', message: 'Give values (one contact) or contacts (a batch), not both' }]);
      }
      if (body.contacts !== undefined) return addContacts(tenant, deps.pool, params.id, body.contacts);
      if (body.values === undefined) throw new ValidationFailed([{ pointer: '/values', code: 'missing', message: 'Field required' }]);
      const { status, record } = await addContact(tenant, deps.pool, params.id, body.values);
      res.status(status).json(record);
      return undefined;
    },
  }),
  defineRoute<RecordSearch, { id: number }>({
    method: 'get',
    path: '/v1/datasets/{id}/records',
    operationId: 'listDatasetRecords',
    summary: "List or search a dataset's contacts",
    description:
      'Oldest first; total_items is null (use has_more). Search by exact identifier, identifier prefix ' +
      '(identifier_operator=starts_with), or column=value on a declared column (another column: 409 dataset_column_not_declared); ' +
      'given together they all apply. Identifiers are compared in their stored form (an email in any case finds its lower-case record). ' +
      'A search that runs too long answers 503 asking to narrow it.',
    tag: TAGS.datasets,
    auth: { kind: 'api_key', scope: 'dataset:read' },
    params: datasetId,
    query: {
      ...paginationQuery,
      identifier: { type: 'string', minLength: 1, maxLength: 1000, description: 'The identifier, or its start with identifier_operator=starts_with. A + must be sent as %2B.' },
      identifier_operator: { type: 'string', enum: [...IDENTIFIER_OPERATORS], description: 'equals (default) or starts_with.' },
      column: { type: 'string', maxLength: 63, description: 'A declared column (field_key) to search with value.' },
      value: { type: 'string', maxLength: 1000, description: "The column's value, exactly, read as the field's type (age=42 finds 42)." },
    },
    success: { status: 200, description: 'A page of contacts', schema: collectionSchema(recordSchema) },
    errors: [404, 409],
    handler: ({ tenant, params, query, deps }) => listRecords(tenant, deps.pool, params.id, query),
  }),
];
