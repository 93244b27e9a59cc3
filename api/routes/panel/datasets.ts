import { createDataset, getDataset, setDatasetActive, updateDataset, type DatasetDetail } from '../../../domain/datasets/datasets.js';
import type { DatasetChannel } from '../../../domain/datasets/declaration.js';
import type { ImportColumn } from '../../../domain/datasets/import.js';
import { ValidationFailed } from '../../../domain/errors.js';
import { fieldErrors } from '../field-errors.js';
import { createField, deleteField, setFieldActive } from '../../../domain/fields/catalog.js';
import type { FieldType } from '../../../domain/fields/types.js';
import type { ConnectedFormsChoice } from '../../../domain/forms/dataset-columns.js';
import { createList, deleteList, getList, listLists } from '../../../domain/lists/lists.js';
import type { UploadMode } from '../../../domain/lists/modes.js';
import { importProgress } from '../../../domain/panel/import-runs.js';
import { defineRoute, type ApiKeyRoute } from '../../http/route.js';
import { resourceId } from '../../schemas/common.js';
import { datasetDetailSchema } from '../../schemas/datasets.js';
import { fieldSchema } from '../../schemas/fields.js';
import {
  datasetCreateSchema,
  datasetPatchSchema,
  fieldCreateSchema,
  fieldKeyParam,
  importKey,
  importProgressSchema,
  importQuery,
  importSummarySchema,
  listCreateSchema,
  listSchema,
  uploadQuery,
  uploadSummarySchema,
} from '../../schemas/panel-datasets.js';
import { datasetRoutes } from '../datasets.js';
import { fieldRoutes } from '../fields.js';
import { PANEL_IMPORT_MAX_BYTES, sendRejects, tracked, withSpooledBody } from './imports.js';
import { panelMirror } from './mirror.js';
import { TAGS } from '../tags.js';
import { activationRoute } from './activation.js';

/**
 * Datasets, fields and CSV lists in the panel (docs/panel.md, Datasets). Reads: the public
 * field catalog, datasets and contact search, mirrored for any member; adding contacts (POST
 * /v1/datasets/{id}/contacts) mirrored for admins. Changes, an admin's: the panel-only
 * operations of the spec, through the functions `cartero field create|activate|deactivate|delete`,
 * `dataset create|update|activate|deactivate|import` and `cartero list create|upload|show|delete`
 * call, so the panel and the CLI cannot disagree on a rule. An import or upload runs in its
 * request, streamed; its progress is polled (api/routes/panel/imports.ts).
 */

const tag = TAGS.panel;

/** The domain's refusals of an input the CLI passes unchecked, answered as the 422 of the field they concern. */
const asFieldErrors = fieldErrors({
  invalid_name: '/name',
  invalid_field_key: '/key',
  invalid_description: '/description',
  invalid_channel: '/channel',
  invalid_identity_field: '/identity_field',
  invalid_max_rows: '/max_rows',
  invalid_position: '/columns',
  field_rule_not_applicable: '',
  field_rule_invalid: '',
  field_options_required: '/options',
  field_options_invalid: '/options',
  field_pattern_invalid: '/pattern',
  field_pattern_unsafe: '/pattern',
});

/** ?map={"Header": "field_key", "Other": null}: how CSV columns are read (null: skipped). */
function importMap(text: string | undefined): ImportColumn[] {
  if (text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || Object.values(parsed).some((v) => v !== null && typeof v !== 'string')) {
    throw new ValidationFailed([{ pointer: '/map', code: 'value_error', message: 'map is a JSON object: each CSV header to a field_key, or to null to skip it' }]);
  }
  return Object.entries(parsed as Record<string, string | null>).map(([column, field]) =>
    field === null ? { column, action: 'skip' as const } : { column, action: 'map' as const, field: field || undefined },
  );
}

const datasetId = { id: resourceId };
const listId = { id: resourceId };

type FieldBody = { key: string; name: string; type: FieldType; max_length?: number; pattern?: string; min?: number; max?: number; options?: string[] };
type Columns = Array<{ key: string; required?: boolean }>;
type DatasetBody = { name: string; description?: string | null; channel?: DatasetChannel[] | null; identity_field?: string | null; columns: Columns };
type DatasetPatch = Partial<DatasetBody> & { connected_forms?: ConnectedFormsChoice; is_active?: boolean };

const mirrored = [
  ...(fieldRoutes as ApiKeyRoute[]).map((r) => panelMirror(r, 'viewer')),
  ...(datasetRoutes as ApiKeyRoute[]).filter((r) => r.method === 'get').map((r) => panelMirror(r, 'viewer')),
  ...(datasetRoutes as ApiKeyRoute[]).filter((r) => r.method === 'post').map((r) => panelMirror(r, 'admin')),
];

export const panelDatasetRoutes = [
  ...mirrored,
  // The field catalog.
  defineRoute<Record<string, never>, Record<string, never>, FieldBody>({
    method: 'post',
    path: '/v1/private/fields',
    operationId: 'createPanelField',
    summary: 'Add a field to the catalog',
    description:
      'max_length and pattern apply to text (max_length also to email), min and max to number, options to select. 409 field_key_already_exists, ' +
      'field_key_reserved (the key of a deleted field: reserved forever), field_name_taken (ignoring case and accents). Admin or owner; `cartero field create`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: fieldCreateSchema,
    success: { status: 201, description: 'The new field, as GET /v1/fields lists it', schema: fieldSchema },
    errors: [409],
    handler: ({ tenant, body, deps }) =>
      asFieldErrors(() =>
        createField(tenant, deps.pool, {
          key: body.key,
          name: body.name,
          type: body.type,
          maxLength: body.max_length,
          pattern: body.pattern,
          min: body.min,
          max: body.max,
          options: body.options,
        }),
      ),
  }),
  activationRoute<{ key: string }>({
    path: '/v1/private/fields/{key}',
    operationId: 'updatePanelField',
    summary: 'Activate or deactivate a field',
    description:
      'A deactivated field keeps validating the columns that declare it but cannot be declared anew. 409 field_is_system for email and phone. ' +
      '404 field_not_found. Admin or owner; `cartero field deactivate|activate`.',
    params: { key: fieldKeyParam },
    meaning: 'false: it keeps validating the columns that declare it but cannot be declared anew (a system field: 409 field_is_system).',
    answer: { description: 'The field', schema: fieldSchema },
    errors: [404, 409],
    set: (tenant, pool, params, active) => setFieldActive(tenant, pool, params.key, active),
  }),
  defineRoute<Record<string, never>, { key: string }>({
    method: 'delete',
    path: '/v1/private/fields/{key}',
    operationId: 'deletePanelField',
    summary: 'Delete a field',
    description:
      'Its name is free again; its key is reserved forever (creating it again: 409 field_key_reserved). 409 field_is_system for email and phone, ' +
      'field_in_use while a dataset or list declares it. 404 field_not_found. Admin or owner; `cartero field delete`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: { key: fieldKeyParam },
    success: { status: 200, description: 'The field as it was', schema: fieldSchema },
    errors: [404, 409],
    handler: ({ tenant, params, deps }) => deleteField(tenant, deps.pool, params.key),
  }),
  // Datasets.
  defineRoute<Record<string, never>, Record<string, never>, DatasetBody>({
    method: 'post',
    path: '/v1/private/datasets',
    operationId: 'createPanelDataset',
    summary: 'Create a dataset',
    description:
      'With exactly one channel the identifier is fixed (mail: email; sms, wsp: phone); with several or none, identity_field names it ' +
      '(absent: 409 dataset_identity_field_required). The columns must include the identity field (409 dataset_identity_field_missing); ' +
      '409 dataset_field_not_found, dataset_field_duplicated, dataset_name_taken. Admin or owner; `cartero dataset create`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: datasetCreateSchema,
    success: { status: 201, description: 'The dataset, as GET /v1/datasets/{id} shows it', schema: datasetDetailSchema },
    errors: [409],
    handler: ({ tenant, body, deps }) =>
      asFieldErrors(() =>
        createDataset(tenant, deps.pool, {
          name: body.name,
          description: body.description ?? null,
          channel: body.channel ?? null,
          identityField: body.identity_field ?? null,
          columns: body.columns.map((c) => ({ key: c.key, required: c.required ?? false })),
        }),
      ),
  }),
  defineRoute<Record<string, never>, { id: number }, DatasetPatch>({
    method: 'patch',
    path: '/v1/private/datasets/{id}',
    operationId: 'updatePanelDataset',
    summary: 'Change a dataset: channels, identity field, columns, name, description; activate or deactivate it',
    description:
      'Each property given replaces that part, the rest stay; columns replaces the whole declaration. The identity field cannot change ' +
      'once the dataset holds contacts (409 dataset_identity_field_locked). A change that makes a column required which a connected form does ' +
      'not collect is refused (409 dataset_columns_not_collected_by_forms) unless connected_forms says align or keep. is_active false: no longer ' +
      'offered to forms; it still receives contacts. Admin or owner; `cartero dataset update|activate|deactivate`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: datasetId,
    body: datasetPatchSchema,
    success: { status: 200, description: 'The dataset', schema: datasetDetailSchema },
    errors: [404, 409],
    handler: ({ tenant, params, body, deps }) =>
      asFieldErrors(async () => {
        const { is_active: active, connected_forms: connectedForms, ...rest } = body;
        let out: DatasetDetail | undefined;
        if (Object.keys(rest).length || connectedForms !== undefined) {
          out = await updateDataset(tenant, deps.pool, params.id, {
            name: rest.name,
            description: rest.description === undefined ? undefined : rest.description || null,
            channel: rest.channel,
            identityField: rest.identity_field,
            columns: rest.columns?.map((c) => ({ key: c.key, required: c.required ?? false })),
            connectedForms,
          });
        }
        if (active !== undefined) out = await setDatasetActive(tenant, deps.pool, params.id, active);
        return out ?? getDataset(tenant, deps.pool, params.id);
      }),
  }),
  defineRoute<{ key?: string; map?: string }, { id: number }>({
    method: 'post',
    path: '/v1/private/datasets/{id}/imports',
    operationId: 'importPanelDatasetCsv',
    summary: 'Import a CSV file of contacts into a dataset (one transaction: all or nothing)',
    description:
      'The body is the file (text/csv, UTF-8, comma-separated, header row first), streamed as `cartero dataset import` reads it: each row checked as ' +
      'POST /v1/datasets/{id}/contacts checks a contact and upserted by the identifier; refused rows go to the rejects file with their reason. ' +
      'The request answers when the import is over, with the summary; meanwhile GET /v1/private/imports/{key} tells its progress. 409 ' +
      'dataset_import_field_id_required, dataset_import_field_not_found, dataset_column_not_declared, dataset_field_duplicated, ' +
      'dataset_identity_value_missing, dataset_required_column_missing for a mapping the file cannot satisfy; 400 dataset_import_csv_invalid, ' +
      'dataset_import_header_duplicated, dataset_import_column_not_found, dataset_import_file_empty. Admin or owner.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: datasetId,
    query: importQuery,
    bodyType: 'csv',
    maxBodyBytes: PANEL_IMPORT_MAX_BYTES,
    success: { status: 200, description: 'The summary: rows, accepted, rejected, created, updated, unchanged, duplicates, first_rejects, rejects_url', schema: importSummarySchema },
    errors: [404, 409],
    handler: async ({ tenant, params, query, deps }, res) => {
      await getDataset(tenant, deps.pool, params.id);
      const map = importMap(query.map);
      res.set('Cache-Control', 'no-store');
      return tracked(tenant, deps.pool, 'dataset_import', params.id, query.key, res.req, (run) =>
        withSpooledBody(res.req, run.onBytes, deps.config.imports.idleTimeoutMs, async (open) => {
          const { importContacts } = await import('../../../domain/datasets/import.js');
          return importContacts(tenant, deps.bulkPool, params.id, { input: open(), map, rejects: run.rejects, onMerge: run.onMerge, limits: deps.config.csv });
        }),
      );
    },
  }),
  defineRoute<Record<string, never>, { key: string }>({
    method: 'get',
    path: '/v1/private/imports/{key}',
    operationId: 'getPanelImport',
    summary: "An import's or upload's progress",
    description:
      'The bytes read of the request\'s Content-Length while reading, then merging, then done with the summary (or failed with the problem). ' +
      'Any web process answers (the run is kept in Postgres) for an hour after it ends; a run whose web process stopped mid-import reads as failed, ' +
      'import_interrupted (nothing of it was saved). 404 import_not_found. Admin or owner.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: { key: importKey },
    success: { status: 200, description: 'The progress', schema: importProgressSchema },
    errors: [404],
    handler: async ({ tenant, params, deps }, res) => {
      res.set('Cache-Control', 'no-store');
      return importProgress(tenant, deps.pool, params.key);
    },
  }),
  defineRoute<Record<string, never>, { key: string }>({
    method: 'get',
    path: '/v1/private/imports/{key}/rejects',
    operationId: 'getPanelImportRejects',
    summary: "The rejects file of a finished import or upload",
    description:
      'CSV: row, code, field, rule, detail, then the row\'s own cells, each formula-guarded (a cell starting with = + - @ gets an apostrophe), ' +
      'as `cartero dataset import` writes it. 404 import_not_found before the import is done. Admin or owner.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: { key: importKey },
    success: { status: 200, description: 'The refused rows', contentType: 'text/csv' },
    errors: [404],
    handler: ({ tenant, params, deps }, res) => sendRejects(tenant, deps.pool, params.key, res),
  }),
  // CSV lists.
  defineRoute<Record<string, never>, Record<string, never>>({
    method: 'get',
    path: '/v1/private/lists',
    operationId: 'listPanelLists',
    summary: 'The CSV lists',
    description: 'Oldest first, each as GET /v1/private/lists/{id} shows it (at most 200). Any member.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    success: { status: 200, description: 'The lists', schema: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: listSchema } } } },
    handler: async ({ tenant, deps }) => ({ data: await listLists(tenant, deps.pool) }),
  }),
  defineRoute<Record<string, never>, Record<string, never>, { name: string; columns?: Array<{ key: string; position: number }>; max_rows?: number }>({
    method: 'post',
    path: '/v1/private/lists',
    operationId: 'createPanelList',
    summary: 'Create a CSV list: each column a catalog field at a position of the file',
    description:
      '409 list_field_duplicated, list_field_position_duplicated, list_field_not_found, list_field_inactive, list_name_taken. Admin or owner; `cartero list create`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: listCreateSchema,
    success: { status: 201, description: 'The list', schema: listSchema },
    errors: [409],
    handler: ({ tenant, body, deps }) =>
      asFieldErrors(() => createList(tenant, deps.pool, { name: body.name, columns: body.columns ?? [], maxRows: body.max_rows })),
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'get',
    path: '/v1/private/lists/{id}',
    operationId: 'getPanelList',
    summary: 'A list: its columns, row count and live uploads',
    description: '404 list_not_found. Any member; `cartero list show`.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    params: listId,
    success: { status: 200, description: 'The list', schema: listSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => getList(tenant, deps.pool, params.id),
  }),
  defineRoute<Record<string, never>, { id: number }>({
    method: 'delete',
    path: '/v1/private/lists/{id}',
    operationId: 'deletePanelList',
    summary: 'Delete a list and its rows (its name is free again)',
    description: '404 list_not_found. Admin or owner; `cartero list delete`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: listId,
    success: { status: 200, description: 'The list as it was', schema: listSchema },
    errors: [404],
    handler: ({ tenant, params, deps }) => deleteList(tenant, deps.pool, params.id),
  }),
  defineRoute<{ key?: string; mode?: UploadMode; header?: boolean }, { id: number }>({
    method: 'post',
    path: '/v1/private/lists/{id}/uploads',
    operationId: 'uploadPanelListCsv',
    summary: 'Upload a CSV file to a list: append its rows, or overwrite the list with them (all or nothing)',
    description:
      'The body is the file (text/csv). mode append (default) adds rows, overwrite replaces every row. Each declared column is read from its ' +
      'position and checked as a dataset contact value is; a row with an invalid value goes to the rejects file. 409 list_has_no_fields, ' +
      'list_field_inactive, list_size_exceeded, list_import_duplicated (an append of a file the list has: same SHA-256); 400 ' +
      'list_import_csv_invalid. Progress at GET /v1/private/imports/{key}. Admin or owner; `cartero list upload`.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: listId,
    query: uploadQuery,
    bodyType: 'csv',
    maxBodyBytes: PANEL_IMPORT_MAX_BYTES,
    success: { status: 200, description: 'The summary: the list, upload_id, rows, accepted, rejected, first_rejects, rejects_url', schema: uploadSummarySchema },
    errors: [404, 409],
    handler: async ({ tenant, params, query, deps }, res) => {
      await getList(tenant, deps.pool, params.id);
      res.set('Cache-Control', 'no-store');
      // An upload reads its file twice (its SHA-256, then its rows), from the spooled body.
      return tracked(tenant, deps.pool, 'list_upload', params.id, query.key, res.req, (run) =>
        withSpooledBody(res.req, run.onBytes, deps.config.imports.idleTimeoutMs, async (open) => {
          run.onMerge();
          const { uploadList } = await import('../../../domain/lists/upload.js');
          return uploadList(tenant, deps.bulkPool, params.id, {
            open,
            fileName: null,
            mode: query.mode ?? 'append',
            header: query.header ?? false,
            rejects: run.rejects,
            limits: deps.config.csv,
          });
        }),
      );
    },
  }),
];
