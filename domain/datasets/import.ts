import { Transform, type Readable, type TransformCallback, type Writable } from 'node:stream';
import copyStreams from 'pg-copy-streams';
import type { Client, Pool } from '../../sql/pool.js';
import type { Stringifier } from 'csv-stringify';
import type { CsvLimits } from '../../config/defaults.js';
import { copyField, readUpload, RejectLog, type CsvRecord, type CsvReject } from '../csv-input.js';
import { AppError, RuleViolation } from '../errors.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { checkContact } from './contact.js';
import { contactTarget, type ContactTarget } from './datasets.js';

/**
 * Bulk import of a CSV into a dataset (panel-only: `cartero dataset import`), any size, in one
 * transaction: the import is whole or is not at all (a failure or a killed process rolls it
 * back). The file streams once, with back-pressure end to end, so memory does not grow with it:
 *
 *   file → csv-parse (cells decoded as strict UTF-8) → each row checked by checkContact (the
 *   very check of POST /v1/datasets/{id}/contacts) → valid rows COPY'd into a temporary table;
 *                                   → refused rows to the rejects stream, with the reason
 *
 * A row with a cell that is not UTF-8 text or holds NUL is refused like any invalid row, saying
 * which line and column; a header that is not is the file's refusal (400, saying the line).
 *
 * then one statement merges the temporary table into the dataset as the API's upsert does
 * (merged column by column, a contact already stored as sent not rewritten), taking the rows of
 * one identifier in file order, as if each row had been sent alone one after the other.
 */

/** How one CSV column is read: into a field (map) or not at all (skip). */
export interface ImportColumn {
  column: string;
  action: 'map' | 'skip';
  /** The field_key of a mapped column; its absence is 409 dataset_import_field_id_required. */
  field?: string;
}

export type ImportReject = CsvReject;

export interface ImportSummary {
  dataset_id: number;
  /** Data rows read (the header not counted). */
  rows: number;
  /** Rows that passed the checks; rows = accepted + rejected. */
  accepted: number;
  rejected: number;
  /** Contacts new to the dataset. */
  created: number;
  /** Contacts already there whose values changed. */
  updated: number;
  /** Contacts already there with these very values. */
  unchanged: number;
  /** Accepted rows merged into an earlier row of the same identifier in this file. */
  duplicates: number;
  /** The first refused rows with their reasons (all of them are in the rejects stream). */
  first_rejects: ImportReject[];
}

export interface ImportOptions {
  input: Readable;
  /** Columns not listed map to the field whose key is their header. */
  map?: ImportColumn[];
  /** Receives every refused row as CSV: row, code, field, rule, detail, then the row's own cells (formula-guarded). */
  rejects: Writable;
  /** Bytes of the input read so far (a progress bar's measure). */
  onProgress?: (bytes: number) => void;
  /** Reading is over; the merge into the dataset starts. */
  onMerge?: (accepted: number) => void;
  /** CSV_MAX_CELL_BYTES and CSV_MAX_RECORD_BYTES (domain/csv-input.ts); the defaults when not given. */
  limits?: CsvLimits;
}

const COPY_CHUNK = 64 * 1024;
const MERGE_WORK_MEM = '64MB';

/** Which field each CSV column feeds (by column index), checked against the header and the dataset. */
function resolveColumns(header: string[], target: ContactTarget, catalog: ReadonlySet<string>, map: ImportColumn[]): Array<string | null> {
  const seen = new Map<string, number>();
  header.forEach((name, i) => {
    if (seen.has(name)) throw new AppError('dataset_import_header_duplicated', `the header names column ${JSON.stringify(name)} twice`);
    seen.set(name, i);
  });
  const byColumn = new Map<string, ImportColumn>();
  for (const entry of map) {
    if (!seen.has(entry.column)) {
      throw new AppError('dataset_import_column_not_found', `--map names ${JSON.stringify(entry.column)}, which the header does not have`);
    }
    byColumn.set(entry.column, entry);
  }
  const fields = header.map((name) => {
    const entry = byColumn.get(name) ?? { column: name, action: 'map' as const, field: name };
    if (entry.action === 'skip') return null;
    if (!entry.field) throw new RuleViolation('dataset_import_field_id_required', `column ${JSON.stringify(name)} is mapped with no field`);
    if (!catalog.has(entry.field)) {
      throw new RuleViolation(
        'dataset_import_field_not_found',
        `column ${JSON.stringify(name)} maps to ${JSON.stringify(entry.field)}, which is not a field of the catalog (map it to one, or to skip)`,
      );
    }
    if (!target.columns.has(entry.field)) {
      throw new RuleViolation('dataset_column_not_declared', `column ${JSON.stringify(name)} maps to ${entry.field}, which the dataset does not declare`);
    }
    return entry.field;
  });
  const mapped = new Set<string>();
  for (const field of fields) {
    if (field === null) continue;
    if (mapped.has(field)) throw new RuleViolation('dataset_field_duplicated', `two columns map to ${field}`);
    mapped.add(field);
  }
  // A file that cannot give any row the identifier or a required column is refused whole.
  if (!mapped.has(target.identity.key)) {
    throw new RuleViolation('dataset_identity_value_missing', `no column maps to the identifier ${target.identity.key}`);
  }
  const unmapped = [...target.columns.entries()].filter(([key, col]) => col.required && !mapped.has(key)).map(([key]) => key);
  if (unmapped.length) throw new RuleViolation('dataset_required_column_missing', `no column maps to the required ${unmapped.join(', ')}`);
  return fields;
}

/**
 * The rows' checks, as a stream stage: CSV records in, COPY text out (in chunks), refused rows to
 * the rejects stringifier. The header (the first record) resolves the columns.
 */
class RowChecker extends Transform {
  fields: Array<string | null> | undefined;
  header: string[] = [];
  rows = 0;
  accepted = 0;
  readonly refused: RejectLog;
  private pending = '';

  constructor(
    private readonly target: ContactTarget,
    private readonly catalog: ReadonlySet<string>,
    private readonly mapping: ImportColumn[],
    private readonly rejects: Stringifier,
  ) {
    super({ writableObjectMode: true, readableObjectMode: false });
    this.refused = new RejectLog(rejects);
  }

  override _transform(record: CsvRecord, _enc: BufferEncoding, done: TransformCallback): void {
    const { cells } = record;
    if (!this.fields) {
      const bad = record.unreadable;
      if (bad) return done(new AppError('dataset_import_csv_invalid', `line ${record.line}: the header's cell ${bad.index + 1} ${bad.reason}`));
      try {
        this.header = cells;
        this.fields = resolveColumns(cells, this.target, this.catalog, this.mapping);
        this.rejects.write(['row', 'code', 'field', 'rule', 'detail', ...cells]);
      } catch (err) {
        return done(err as Error);
      }
      return done();
    }
    const row = ++this.rows;
    const reject = this.check(row, record);
    if (reject) this.refused.add(reject, cells, () => this.flushIfFull(done), done);
    else this.flushIfFull(done);
  }

  private flushIfFull(done: TransformCallback): void {
    if (this.pending.length >= COPY_CHUNK) {
      const chunk = this.pending;
      this.pending = '';
      done(null, chunk);
    } else done();
  }

  override _flush(done: TransformCallback): void {
    if (!this.fields) return done(new AppError('dataset_import_file_empty', 'the file has no header row'));
    done(null, this.pending || undefined);
  }

  /** undefined when the row is accepted (and queued for COPY), else why it is refused. */
  private check(row: number, record: CsvRecord): ImportReject | undefined {
    const fields = this.fields!;
    const { cells, unreadable: bad } = record;
    if (bad) {
      const column = this.header[bad.index] !== undefined ? JSON.stringify(this.header[bad.index]) : `${bad.index + 1} (past the header)`;
      return { row, code: bad.code, field: fields[bad.index] ?? null, rule: null, detail: `line ${record.line}, column ${column}: the cell ${bad.reason}` };
    }
    if (cells.length > fields.length && cells.slice(fields.length).some((c) => c.trim() !== '')) {
      return { row, code: 'row_malformed', field: null, rule: null, detail: `the row has ${cells.length} cells, the header ${fields.length}` };
    }
    const values: Record<string, string> = {};
    fields.forEach((field, i) => {
      if (field !== null) values[field] = cells[i] ?? '';
    });
    const checked = checkContact(this.target, values);
    if (checked.ok) {
      this.accepted++;
      this.pending += `${row}\t${copyField(checked.identifier)}\t${copyField(JSON.stringify(checked.values))}\n`;
      return undefined;
    }
    const r = checked.refusal;
    if (r.status === 409) return { row, code: r.code, field: null, rule: null, detail: r.message };
    const first = r.errors[0]!;
    return {
      row,
      code: first.code,
      field: first.pointer.replace(/^\/values\//, ''),
      rule: (first.params?.rule as string | undefined) ?? null,
      detail: r.errors.map((e) => `${e.pointer.replace(/^\/values\//, '')}: ${e.message}`).join('; '),
    };
  }
}

// The rows of one identifier merged in file order (running merge; the last row of each holds
// all), inserted in identifier order as the API's upsert is (the same lock order), merged into
// a stored record column by column, an unchanged record left alone. One statement; the counts
// come back with it.
const MERGE = `
WITH merged AS (
  SELECT identifier, vals
    FROM (SELECT identifier,
                 cartero_jsonb_merge(values) OVER w AS vals,
                 lead(line) OVER w IS NULL AS last
            FROM import_rows
          WINDOW w AS (PARTITION BY identifier ORDER BY line ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) s
   WHERE last
),
up AS (
  INSERT INTO dataset_records AS r (instance_id, dataset_id, identifier, values)
  SELECT $1, $2, identifier, vals FROM merged ORDER BY identifier
  ON CONFLICT (dataset_id, identifier) DO UPDATE SET values = r.values || excluded.values, updated_at = now()
   WHERE NOT r.values @> excluded.values
  RETURNING r.xmax = 0 AS created
)
SELECT count(*) FILTER (WHERE created)::int AS created,
       count(*) FILTER (WHERE NOT created)::int AS updated,
       (SELECT count(DISTINCT identifier)::int FROM import_rows) AS contacts
  FROM up`;

async function catalogKeys(tenant: Tenant, c: Client): Promise<Set<string>> {
  const { rows } = await c.query<{ key: string }>('SELECT field_key AS key FROM fields WHERE instance_id = $1 AND deleted_at IS NULL', [tenant.instanceId]);
  return new Set(rows.map((r) => r.key));
}

export async function importContacts(tenant: Tenant, pool: Pool, datasetId: number, opts: ImportOptions): Promise<ImportSummary> {
  return withTenant(pool, tenant, async (c) => {
    const target = await contactTarget(tenant, c, datasetId);
    const catalog = await catalogKeys(tenant, c);
    await c.query('CREATE TEMPORARY TABLE import_rows (line bigint NOT NULL, identifier text COLLATE "C" NOT NULL, values jsonb NOT NULL) ON COMMIT DROP');
    const copy = c.query(copyStreams.from('COPY import_rows (line, identifier, values) FROM STDIN'));
    const checker = await readUpload(opts, 'dataset_import_csv_invalid', (rejects) => new RowChecker(target, catalog, opts.map ?? [], rejects), copy);
    opts.onMerge?.(checker.accepted);
    // The merge sorts every row by identifier and feeds the GIN index's pending list, which it
    // flushes within work_mem: the default 4 MB splits both into many small runs.
    await c.query(`SET LOCAL work_mem = '${MERGE_WORK_MEM}'`);
    const { rows } = await c.query<{ created: number; updated: number; contacts: number }>(MERGE, [tenant.instanceId, datasetId]);
    const { created, updated, contacts } = rows[0]!;
    return {
      dataset_id: datasetId,
      rows: checker.rows,
      accepted: checker.accepted,
      rejected: checker.refused.count,
      created,
      updated,
      unchanged: contacts - created - updated,
      duplicates: checker.accepted - contacts,
      first_rejects: checker.refused.first,
    };
  });
}
