import type { Stringifier } from 'csv-stringify';
import { createHash } from 'node:crypto';
import { Transform, Writable, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import copyStreams from 'pg-copy-streams';
import type { Pool } from '../../sql/pool.js';
import type { CsvLimits } from '../../config/defaults.js';
import { copyField, readUpload, RejectLog, type CsvRecord, type CsvReject } from '../csv-input.js';
import { AppError, NotFoundError, RuleViolation } from '../errors.js';
import { fieldsById } from '../fields/catalog.js';
import type { FieldDefinition } from '../fields/types.js';
import { checkValue, type StoredValue } from '../fields/values.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { readList, type ListView } from './lists.js';
import type { UploadMode } from './modes.js';
import { purgeRetiredUploads } from './purge.js';

/** The largest file a list takes (spec: 413 for a list-import file above its limit). */
export const LIST_FILE_MAX_BYTES = 512 * 1024 * 1024;


export interface UploadOptions {
  /** Opens the file; called twice, to hash it and then to read its rows. */
  open(): Readable;
  fileName: string | null;
  mode: UploadMode;
  /** The first row is a header: skipped, not counted. */
  header: boolean;
  /** Receives every refused row as CSV: row, code, field, rule, detail, then the row's own cells (formula-guarded). */
  rejects: Writable;
  onProgress?: (bytes: number) => void;
  /** CSV_MAX_CELL_BYTES and CSV_MAX_RECORD_BYTES (domain/csv-input.ts); the defaults when not given. */
  limits?: CsvLimits;
}

export type UploadReject = CsvReject;

export interface UploadSummary {
  list: ListView;
  upload_id: number;
  /** Data rows in the file; rows = accepted + rejected. */
  rows: number;
  accepted: number;
  rejected: number;
  first_rejects: UploadReject[];
}

/** How long an append waits on an identical file another upload has not committed yet. */
const DUPLICATE_WAIT = '200ms';
const COPY_CHUNK = 64 * 1024;

async function sha256(input: Readable): Promise<Buffer> {
  const hash = createHash('sha256');
  let bytes = 0;
  await pipeline(
    input,
    new Writable({
      write(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        if (bytes > LIST_FILE_MAX_BYTES) {
          return done(new AppError('request_too_large', `the file exceeds the maximum of ${LIST_FILE_MAX_BYTES} bytes for a list`, { max_bytes: LIST_FILE_MAX_BYTES }));
        }
        hash.update(chunk);
        done();
      },
    }),
  );
  return hash.digest();
}

interface Column {
  field: FieldDefinition;
  /** 0-based index of the cell. */
  index: number;
}

/**
 * Rows in, COPY text out: each declared column's cell checked by the catalog's own validator
 * (domain/fields/values.ts, as dataset contacts are), a row with an invalid value or no value at
 * all refused to the rejects stream. The list's size is checked as rows arrive, so a file too big
 * stops at the first row over (list_size_exceeded) instead of at the end.
 */
class ListRowChecker extends Transform {
  rows = 0;
  accepted = 0;
  readonly refused: RejectLog;
  private pending = '';
  private skipHeader: boolean;

  constructor(
    private readonly columns: Column[],
    private readonly room: number,
    private readonly existing: number,
    private readonly maxRows: number,
    header: boolean,
    rejects: Stringifier,
  ) {
    super({ writableObjectMode: true, readableObjectMode: false });
    this.skipHeader = header;
    rejects.write(['row', 'code', 'field', 'rule', 'detail']);
    this.refused = new RejectLog(rejects);
  }

  override _transform(record: CsvRecord, _enc: BufferEncoding, done: TransformCallback): void {
    const { cells } = record;
    if (this.skipHeader) {
      this.skipHeader = false;
      const bad = record.unreadable;
      // Not stored, but a header that is not text says the file is not the UTF-8 CSV it should be.
      return done(bad ? new AppError('list_import_csv_invalid', `line ${record.line}: the header's cell ${bad.index + 1} ${bad.reason}`) : undefined);
    }
    const row = ++this.rows;
    if (row > this.room) {
      return done(new RuleViolation('list_size_exceeded',
        `the list holds ${this.existing} rows and takes at most ${this.maxRows}: the file has more than ${this.room} rows`));
    }
    const reject = this.check(row, record);
    if (!reject) return this.flushIfFull(done);
    this.refused.add(reject, cells, () => this.flushIfFull(done), done);
  }

  private check(row: number, record: CsvRecord): UploadReject | undefined {
    const { cells, unreadable: bad } = record;
    if (bad) {
      const field = this.columns.find((c) => c.index === bad.index)?.field.key ?? null;
      return { row, code: bad.code, field, rule: null, detail: `line ${record.line}, column ${bad.index + 1}: the cell ${bad.reason}` };
    }
    const values: Record<string, StoredValue> = {};
    for (const { field, index } of this.columns) {
      const checked = checkValue(field, cells[index] ?? '');
      if (checked.kind === 'invalid') {
        return { row, code: 'field_value_invalid', field: field.key, rule: checked.params.rule as string, detail: `${field.key}: ${checked.message}` };
      }
      if (checked.kind === 'value') values[field.key] = checked.value;
    }
    if (!Object.keys(values).length) return { row, code: 'row_empty', field: null, rule: null, detail: 'the row has no value in any declared column' };
    this.accepted++;
    this.pending += `${row}\t${copyField(JSON.stringify(values))}\n`;
    return undefined;
  }

  private flushIfFull(done: TransformCallback): void {
    if (this.pending.length < COPY_CHUNK) return done();
    const chunk = this.pending;
    this.pending = '';
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    done(null, this.pending || undefined);
  }
}

/**
 * Upload a CSV file to a list (panel-only), in one transaction: the file is in the list whole or
 * not at all. append adds its rows; overwrite replaces every row the list had. Refused: a list
 * without columns (list_has_no_fields), a declared field deactivated since (list_field_inactive),
 * more rows than the list takes counting what it holds plus the file (an overwrite counts only
 * the file: list_size_exceeded), and in an append a file identical by SHA-256 to one the list has
 * or to one still importing (list_import_duplicated).
 */
export async function uploadList(tenant: Tenant, pool: Pool, listId: number, opts: UploadOptions): Promise<UploadSummary> {
  const digest = await sha256(opts.open());
  const summary = await withTenant(pool, tenant, async (c) => {
    const { rows: lists } = await c.query<{ columns: Array<{ field_id: number; position: number }>; max_rows: number }>(
      'SELECT columns, max_rows FROM lists WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL',
      [tenant.instanceId, listId],
    );
    const list = lists[0];
    if (!list) throw new NotFoundError('list', listId);
    if (!list.columns.length) throw new RuleViolation('list_has_no_fields', 'the list declares no columns; a file has nothing to fill');
    const fields = await fieldsById(tenant, c, list.columns.map((col) => col.field_id));
    const columns = list.columns.map((col) => ({ field: fields.get(col.field_id)!, index: col.position - 1 }));
    const inactive = columns.filter((col) => !col.field.isActive).map((col) => col.field.key);
    if (inactive.length) throw new RuleViolation('list_field_inactive', `the list declares deactivated fields: ${inactive.join(', ')}`);

    // An overwrite retires what the list has first (under the list's lock), so the same file
    // may be put back; an append registers its file first, so an identical one still importing
    // is found at once rather than after it.
    if (opts.mode === 'overwrite') {
      await c.query('SELECT 1 FROM lists WHERE instance_id = $1 AND id = $2 FOR UPDATE', [tenant.instanceId, listId]);
      await c.query('UPDATE list_uploads SET replaced_at = now() WHERE instance_id = $1 AND list_id = $2 AND replaced_at IS NULL', [tenant.instanceId, listId]);
    }
    let uploadId: number;
    try {
      await c.query(`SET LOCAL lock_timeout = '${DUPLICATE_WAIT}'`);
      const { rows } = await c.query<{ id: number }>(
        'INSERT INTO list_uploads (instance_id, list_id, content_sha256, file_name, mode) VALUES ($1, $2, $3, $4, $5) RETURNING id',
        [tenant.instanceId, listId, digest, opts.fileName, opts.mode],
      );
      uploadId = rows[0]!.id;
      await c.query('SET LOCAL lock_timeout = 0');
    } catch (err) {
      const code = (err as { code?: string; constraint?: string }).code;
      if ((code === '23505' && (err as { constraint?: string }).constraint === 'list_uploads_content') || code === '55P03') {
        throw new RuleViolation('list_import_duplicated', code === '23505'
          ? `the list already has this file (SHA-256 ${digest.toString('hex')})`
          : `this file (SHA-256 ${digest.toString('hex')}) is being imported into the list right now`);
      }
      throw err;
    }
    if (opts.mode === 'append') await c.query('SELECT 1 FROM lists WHERE instance_id = $1 AND id = $2 FOR UPDATE', [tenant.instanceId, listId]);
    const { rows: held } = await c.query<{ n: number }>(
      'SELECT coalesce(sum(rows), 0)::int AS n FROM list_uploads WHERE list_id = $1 AND replaced_at IS NULL AND id <> $2',
      [listId, uploadId],
    );
    const existing = held[0]!.n;

    // COPY cannot write a table under row-level security: the rows go through a temporary table
    // and one INSERT, which the policy checks.
    await c.query('CREATE TEMPORARY TABLE list_upload_rows (row integer NOT NULL, values jsonb NOT NULL) ON COMMIT DROP');
    const copy = c.query(copyStreams.from('COPY list_upload_rows (row, values) FROM STDIN'));
    const checker = await readUpload(
      { ...opts, input: opts.open() },
      'list_import_csv_invalid',
      (rejects) => new ListRowChecker(columns, list.max_rows - existing, existing, list.max_rows, opts.header, rejects),
      copy,
    );
    await c.query(
      'INSERT INTO list_rows (instance_id, list_id, upload_id, row, values) SELECT $1, $2, $3, row, values FROM list_upload_rows',
      [tenant.instanceId, listId, uploadId],
    );
    await c.query('UPDATE list_uploads SET rows = $2, rejected = $3 WHERE id = $1', [uploadId, checker.accepted, checker.refused.count]);
    return {
      list: await readList(tenant, c, listId),
      upload_id: uploadId,
      rows: checker.rows,
      accepted: checker.accepted,
      rejected: checker.refused.count,
      first_rejects: checker.refused.first,
    };
  });
  if (opts.mode === 'overwrite') await purgeRetiredUploads(pool, listId);
  return summary;
}
