import type { Pool } from '../../sql/pool.js';
import { AppError, RuleViolation, ValidationFailed } from '../errors.js';
import { checkValue, phoneDigits } from '../fields/values.js';
import type { FieldDefinition } from '../fields/types.js';
import type { Page, PageRequest } from '../pagination.js';
import { toPage, window } from '../pagination.js';
import { likePrefix } from '../text.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { RECORD_COLUMNS, type DatasetRecord } from './contacts.js';
import { contactTarget } from './datasets.js';

export const IDENTIFIER_OPERATORS = ['equals', 'starts_with'] as const;
export type IdentifierOperator = (typeof IDENTIFIER_OPERATORS)[number];

export interface RecordSearch extends PageRequest {
  /** The identifier, exact (equals, the default) or a prefix of it (starts_with). */
  identifier?: string;
  identifier_operator?: IdentifierOperator;
  /** column=value: a declared column's field_key and the value it must hold, exactly. */
  column?: string;
  value?: string;
}

/**
 * How long a search may run before it answers 503 "narrow it" instead of holding a connection
 * (spec: 503 details). Every search shape has an index (docs/datasets.md, "Searching"), so only a
 * value shared by a large part of a big dataset, or a page far down one, comes near it.
 */
export const RECORD_SEARCH_TIMEOUT_MS = 3_000;

export const SEARCH_TOO_LONG =
  'The search took too long; narrow it with a more precise value, or search by exact identifier or prefix';

// The page of a plain listing walks the primary key (dataset_id, id) in order.
const LIST = `SELECT ${RECORD_COLUMNS('r')} FROM dataset_records r WHERE r.dataset_id = $1 ORDER BY r.id LIMIT $2 OFFSET $3`;

// A search: the matching rows first, through the index its shape has (the unique btree for an
// exact identifier or a prefix, C collation so LIKE 'abc%' is a range; the GIN index for
// containment), then the page in id order. MATERIALIZED keeps the planner from walking the
// primary key in id order and filtering, which for a rare value reads the whole dataset. The
// statement is unnamed on purpose: planned with its values, the NULL branches fold away and the
// LIKE prefix becomes an index range.
export const RECORD_SEARCH_SQL = `WITH m AS MATERIALIZED (
  SELECT * FROM dataset_records r
   WHERE r.dataset_id = $1
     AND ($2::text IS NULL OR r.identifier = $2)
     AND ($3::text IS NULL OR r.identifier LIKE $3)
     AND ($4::jsonb IS NULL OR r.values @> $4))
SELECT ${RECORD_COLUMNS('m')} FROM m ORDER BY m.id LIMIT $5 OFFSET $6`;

/** How an identifier typed by a person compares with the stored form (emails lower-case, phones E.164). */
function identifierForm(field: FieldDefinition, text: string, operator: IdentifierOperator): string | undefined {
  if (operator === 'equals') {
    const checked = checkValue(field, text);
    // A value that could not be stored as an identifier matches none.
    return checked.kind === 'value' ? String(checked.value) : undefined;
  }
  const typed = text.trim();
  if (field.type === 'email') return typed.toLowerCase();
  if (field.type === 'phone') return phoneDigits(typed);
  return typed;
}

/**
 * GET /v1/datasets/{id}/records: the contacts, oldest first, optionally searched by exact
 * identifier, identifier prefix, or column=value on a declared column (another column: 409
 * dataset_column_not_declared). total_items is null: counting a large dataset on every page costs
 * what the page does many times over. A search running past `timeoutMs` answers 503 with the
 * spec's "narrow it" detail.
 */
export async function listRecords(
  tenant: Tenant,
  pool: Pool,
  datasetId: number,
  search: RecordSearch,
  opts: { timeoutMs?: number } = {},
): Promise<Page<DatasetRecord>> {
  const { limit, offset } = window(search);
  const timeout = Math.max(1, Math.floor(opts.timeoutMs ?? RECORD_SEARCH_TIMEOUT_MS));
  try {
    return await withTenant(pool, tenant, async (c) => {
      const target = await contactTarget(tenant, c, datasetId, { lock: false });
      let contains: string | null = null;
      if (search.column !== undefined || search.value !== undefined) {
        if (search.column === undefined) throw new ValidationFailed([{ pointer: '/column', code: 'missing', message: 'column is required with value' }]);
        if (search.value === undefined) throw new ValidationFailed([{ pointer: '/value', code: 'missing', message: 'value is required with column' }]);
        const column = target.columns.get(search.column);
        if (!column) throw new RuleViolation('dataset_column_not_declared', `the dataset does not declare ${JSON.stringify(search.column)}`);
        const checked = checkValue(column.field, search.value);
        if (checked.kind === 'invalid') {
          throw new ValidationFailed([{ pointer: '/value', code: 'field_value_invalid', message: checked.message, params: checked.params }]);
        }
        if (checked.kind === 'empty') throw new ValidationFailed([{ pointer: '/value', code: 'missing', message: 'value is empty' }]);
        contains = JSON.stringify({ [search.column]: checked.value });
      }
      let exact: string | null = null;
      let prefix: string | null = null;
      if (search.identifier !== undefined) {
        const operator = search.identifier_operator ?? 'equals';
        const form = identifierForm(target.identity, search.identifier, operator);
        if (form === undefined || form === '') return toPage([], search, null);
        if (operator === 'equals') exact = form;
        else prefix = likePrefix(form);
      }
      await c.query(`SELECT set_config('statement_timeout', $1, true)`, [String(timeout)]);
      const { rows } =
        exact === null && prefix === null && contains === null
          ? await c.query<DatasetRecord>({ name: 'dataset-records-page', text: LIST, values: [datasetId, limit, offset] })
          : await c.query<DatasetRecord>(RECORD_SEARCH_SQL, [datasetId, exact, prefix, contains, limit, offset]);
      return toPage(rows, search, null);
    });
  } catch (err) {
    // 57014 query_canceled: the statement_timeout set above.
    if ((err as { code?: string }).code === '57014') throw new AppError('service_unavailable', SEARCH_TOO_LONG, {}, { 'Retry-After': '1' });
    throw err;
  }
}
