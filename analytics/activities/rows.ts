import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ClickHouseClient } from '@clickhouse/client';
import { ACTIVITY_SETTINGS, type ActivityQuery, type ResultColumn } from './query.js';

/**
 * The check of the rows a listing reads from ClickHouse, before they become a response: exactly
 * the query's columns, each of its kind (text a string, number a JSON number, datetime the ISO
 * 8601 UTC text that ACTIVITY_SETTINGS asks for), NULL only where the column says so. The schema
 * comes from the same column list as the SELECT, so it is one definition per row shape.
 *
 * A mismatch is a bug (a query and its columns that drifted apart, a setting lost on the way), not
 * bad input: it throws RowShapeMismatch, which the API answers 500 internal_error and logs.
 */

const ISO_UTC = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$';

const KIND_SCHEMAS: Record<ResultColumn['kind'], Record<string, unknown>> = {
  text: { type: 'string' },
  number: { type: 'number' },
  datetime: { type: 'string', pattern: ISO_UTC },
};

/** The JSON Schema of one row of these columns. */
export function rowSchema(columns: readonly ResultColumn[]): Record<string, unknown> {
  const properties = Object.fromEntries(
    columns.map((c) => {
      const schema = KIND_SCHEMAS[c.kind];
      return [c.name, c.nullable ? { ...schema, type: [schema.type, 'null'] } : schema];
    }),
  );
  return { type: 'object', additionalProperties: false, required: columns.map((c) => c.name), properties };
}

export class RowShapeMismatch extends Error {
  constructor(
    readonly query: string,
    readonly row: number,
    readonly problems: string[],
  ) {
    // Column names and what was wrong, never the values (they hold addresses and subjects).
    super(`${query}: row ${row} read from ClickHouse does not match the listing's row shape: ${problems.join('; ')}`);
    this.name = 'RowShapeMismatch';
  }
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
/** Validators by column list: a handful of row shapes, each compiled once per process. */
const validators = new Map<string, ValidateFunction>();

function validatorOf(columns: readonly ResultColumn[]): ValidateFunction {
  const key = JSON.stringify(columns);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(rowSchema(columns));
    validators.set(key, validate);
  }
  return validate;
}

function describe(e: ErrorObject): string {
  const where = e.instancePath || '/';
  if (e.keyword === 'additionalProperties') return `unexpected column ${String(e.params.additionalProperty)}`;
  if (e.keyword === 'required') return `missing column ${String(e.params.missingProperty)}`;
  return `${where} ${e.message ?? e.keyword}`;
}

/** The rows as the listing returns them, once each has passed its row shape; else throws. */
export function checkRows(query: Pick<ActivityQuery, 'name' | 'columns'>, rows: unknown[]): Array<Record<string, unknown>> {
  const validate = validatorOf(query.columns);
  rows.forEach((row, i) => {
    if (!validate(row)) throw new RowShapeMismatch(query.name, i, (validate.errors ?? []).map(describe));
  });
  return rows as Array<Record<string, unknown>>;
}

/** A one-page aggregate read (the dashboard, the deliverability figures): its SQL and row shape. */
export interface CheckedQuery {
  name: string;
  sql: string;
  params: Record<string, unknown>;
  columns: ResultColumn[];
}

/** Runs an aggregate read with the listings' settings, its rows checked against its shape. */
export async function readChecked(ch: ClickHouseClient, q: CheckedQuery): Promise<Array<Record<string, unknown>>> {
  const rs = await ch.query({
    query: q.sql,
    query_params: q.params,
    format: 'JSONEachRow',
    clickhouse_settings: { ...ACTIVITY_SETTINGS, log_comment: q.name },
  });
  return checkRows(q, await rs.json<unknown>());
}
