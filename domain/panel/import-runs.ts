import { Writable } from 'node:stream';
import type { Pool } from '../../sql/pool.js';
import { AppError, NotFoundError } from '../errors.js';
import { withTenant, type Tenant } from '../tenancy/context.js';

/*
 * The panel's import runs (docs/panel.md, Datasets: the import's progress): a CSV import or list
 * upload runs in its POST request, streamed (domain/datasets/import.ts, domain/lists/upload.ts:
 * one transaction, all or nothing); its progress and its rejects file live here, in Postgres
 * (migration 028), so the page's polls and the download may reach any web dyno. The run's own
 * dyno refreshes its row while it works; a row no longer refreshed belongs to a dyno that died
 * mid-import, whose transaction Postgres rolled back: it reads as failed, import_interrupted.
 */

export type ImportKind = 'dataset_import' | 'list_upload';
export type ImportStatus = 'reading' | 'merging' | 'done' | 'failed';

/** How often a live run's row is refreshed when nothing else changed (the merge of a large file reads no bytes for minutes). */
const HEARTBEAT_MS = 15_000;
/** A run not refreshed for this long is no longer running anywhere. */
const STALE_SECONDS = 60;
/** How long a run (its summary, its rejects) can be read back after it ended. */
const KEEP = '1 hour';
/** Bytes-read updates at most this often: a poll every half second or so sees it move. */
const PROGRESS_EVERY_MS = 250;
/**
 * Imports running at once in one instance. Each holds a Postgres connection and a transaction
 * for its whole length; a fifth waits for one of them (503, Retry-After).
 */
const RUNNING_MAX = 4;
/** The rejects file is stored in pieces of this size (one row each), so neither side holds more. */
const REJECTS_CHUNK_BYTES = 1024 * 1024;

interface RunRow {
  key: string;
  kind: ImportKind;
  target_id: string;
  status: ImportStatus;
  bytes_read: string;
  bytes_total: string | null;
  rejected: string;
  summary: Record<string, unknown> | null;
  error: { code: string; detail: string } | null;
  started_at: Date;
  finished_at: Date | null;
  stale: boolean;
}

const INTERRUPTED = {
  code: 'import_interrupted',
  detail: 'The web process running this import stopped before it ended; nothing of the file was saved. Send it again.',
};

export const rejectsPath = (key: string) => `/v1/private/imports/${key}/rejects`;

/** What GET /v1/private/imports/{key} answers. */
export async function importProgress(tenant: Tenant, pool: Pool, key: string) {
  const run = await readRun(tenant, pool, key);
  if (!run) throw new NotFoundError('import', key);
  const interrupted = run.stale && (run.status === 'reading' || run.status === 'merging');
  const status: ImportStatus = interrupted ? 'failed' : run.status;
  const read = Number(run.bytes_read);
  const total = run.bytes_total === null ? null : Number(run.bytes_total);
  const percent = status === 'done' ? 100 : total ? Math.min(99, Math.floor((read * 100) / total)) : total === 0 ? 0 : null;
  return {
    key: run.key,
    kind: run.kind,
    target_id: Number(run.target_id),
    status,
    bytes_read: read,
    bytes_total: total,
    percent,
    started_at: run.started_at.toISOString(),
    finished_at: run.finished_at?.toISOString() ?? null,
    summary: run.summary,
    error: interrupted ? INTERRUPTED : run.error,
    rejects_url: run.status === 'done' && Number(run.rejected) > 0 ? rejectsPath(run.key) : null,
  };
}

async function readRun(tenant: Tenant, pool: Pool, key: string): Promise<RunRow | undefined> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<RunRow>(
      `SELECT key, kind, target_id, status, bytes_read, bytes_total, rejected, summary, error, started_at, finished_at,
              updated_at < now() - make_interval(secs => $3) AS stale
         FROM panel_imports WHERE instance_id = $1 AND key = $2 AND updated_at > now() - interval '${KEEP}'`,
      [tenant.instanceId, key, STALE_SECONDS],
    ),
  );
  return rows[0];
}

/** A run being recorded: its progress, its rejects stream, and its end. */
export interface ImportRun {
  key: string;
  /** Where the import writes its refused rows (stored as they come, outside its transaction). */
  rejects: Writable;
  onBytes(bytes: number): void;
  onMerge(): void;
  done(summary: Record<string, unknown> & { rejected: number }): Promise<void>;
  failed(error: { code: string; detail: string }): Promise<void>;
}

/**
 * Records a new run under `key`. A finished or interrupted run of that key is replaced; a live
 * one is not (400). Runs of the instance older than an hour go first.
 */
export async function startImportRun(
  tenant: Tenant,
  pool: Pool,
  run: { key: string; kind: ImportKind; targetId: number; bytesTotal: number | null },
): Promise<ImportRun> {
  // As the service role (the tenant role deletes nothing, migration 009), naming the instance.
  await pool.query(`DELETE FROM panel_imports WHERE instance_id = $1 AND updated_at < now() - interval '${KEEP}'`, [tenant.instanceId]);
  await withTenant(pool, tenant, async (c) => {
    // One start at a time per instance, so the count below is what the insert sees.
    await c.query(`SELECT pg_advisory_xact_lock(hashtext('panel_imports'), $1::int)`, [tenant.instanceId]);
    const { rows } = await c.query<{ key: string }>(
      `SELECT key FROM panel_imports
        WHERE instance_id = $1 AND status IN ('reading', 'merging') AND updated_at >= now() - make_interval(secs => $2)`,
      [tenant.instanceId, STALE_SECONDS],
    );
    if (rows.some((r) => r.key === run.key)) throw new AppError('bad_request', `import ${run.key} is running; choose another key`);
    if (rows.length >= RUNNING_MAX) {
      throw new AppError('service_unavailable', `${rows.length} imports of this instance are running, the most at once; try again when one has ended`, {}, { 'Retry-After': '10' });
    }
    await c.query(
      `INSERT INTO panel_imports (instance_id, key, kind, target_id, status, bytes_total) VALUES ($1, $2, $3, $4, 'reading', $5)
       ON CONFLICT (instance_id, key) DO UPDATE
         SET kind = $3, target_id = $4, status = 'reading', bytes_read = 0, bytes_total = $5, rejected = 0, summary = NULL, error = NULL,
             started_at = now(), updated_at = now(), finished_at = NULL`,
      [tenant.instanceId, run.key, run.kind, run.targetId, run.bytesTotal],
    );
  });
  // The rejects of the run this one replaces, if any; before this run writes its own.
  await dropRejects(tenant, pool, run.key);
  return recorder(tenant, pool, run.key);
}

function recorder(tenant: Tenant, pool: Pool, key: string): ImportRun {
  const update = (sql: string, params: unknown[]) =>
    withTenant(pool, tenant, (c) => c.query(`UPDATE panel_imports SET ${sql}, updated_at = now() WHERE instance_id = $1 AND key = $2`, [tenant.instanceId, key, ...params]));
  let bytes = 0;
  let written = -1;
  let lastWrite = 0;
  let writing: Promise<unknown> | undefined;
  let ended = false;
  // Progress is advisory: a write that fails is tried again with the next bytes or heartbeat.
  const flush = () => {
    if (writing || ended) return;
    lastWrite = Date.now();
    const value = bytes;
    writing = update('bytes_read = $3', [value])
      .then(() => (written = value))
      .catch(() => {})
      .finally(() => (writing = undefined));
  };
  const heartbeat = setInterval(flush, HEARTBEAT_MS).unref();
  const end = async (sql: string, params: unknown[]) => {
    ended = true;
    clearInterval(heartbeat);
    await writing;
    await update(`${sql}, finished_at = now()`, params);
  };
  return {
    key,
    rejects: rejectsWriter(tenant, pool, key),
    onBytes(n) {
      bytes = n;
      if (n !== written && Date.now() - lastWrite >= PROGRESS_EVERY_MS) flush();
    },
    onMerge() {
      void (async () => {
        await writing;
        if (!ended) await update(`status = 'merging', bytes_read = $3`, [bytes]).catch(() => {});
      })();
    },
    done: (summary) => end(`status = 'done', bytes_read = $3, rejected = $4, summary = $5`, [bytes, summary.rejected, JSON.stringify(summary)]),
    failed: async (error) => {
      await end(`status = 'failed', error = $3`, [JSON.stringify(error)]);
      // Its rejects describe an import that did not happen.
      await dropRejects(tenant, pool, key);
    },
  };
}

/** As the service role (the tenant role deletes nothing), naming the instance. */
async function dropRejects(tenant: Tenant, pool: Pool, key: string): Promise<void> {
  await pool.query(`DELETE FROM panel_import_rejects WHERE instance_id = $1 AND key = $2`, [tenant.instanceId, key]);
}

/** A stream that stores what is written to it as the run's rejects file, a chunk at a time, each in its own short transaction. */
function rejectsWriter(tenant: Tenant, pool: Pool, key: string): Writable {
  let pending: Buffer[] = [];
  let size = 0;
  let seq = 0;
  // Pieces of exactly REJECTS_CHUNK_BYTES (the last one shorter): one refused row can be larger
  // than a piece (a cell near CSV_MAX_CELL_BYTES, its quotes doubled by the CSV writer).
  const store = async (all: boolean) => {
    while (size >= REJECTS_CHUNK_BYTES || (all && size > 0)) {
      const joined = Buffer.concat(pending, size);
      const chunk = joined.subarray(0, REJECTS_CHUNK_BYTES);
      const rest = joined.subarray(chunk.length);
      pending = rest.length ? [rest] : [];
      size = rest.length;
      await withTenant(pool, tenant, (c) =>
        c.query(`INSERT INTO panel_import_rejects (instance_id, key, seq, chunk) VALUES ($1, $2, $3, $4)`, [tenant.instanceId, key, seq++, chunk]),
      );
    }
  };
  return new Writable({
    write(chunk: Buffer | string, encoding, callback) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
      pending.push(buf);
      size += buf.length;
      if (size < REJECTS_CHUNK_BYTES) return callback();
      store(false).then(() => callback(), callback);
    },
    final(callback) {
      store(true).then(() => callback(), callback);
    },
  });
}

/** The rejects file of a finished run, chunk by chunk; undefined when the run is unknown or not done. */
export async function importRejects(tenant: Tenant, pool: Pool, key: string): Promise<{ kind: ImportKind; targetId: number; chunks: AsyncGenerator<Buffer> } | undefined> {
  const run = await readRun(tenant, pool, key);
  if (!run || run.status !== 'done') return undefined;
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let seq = 0; ; seq++) {
      const { rows } = await withTenant(pool, tenant, (c) =>
        c.query<{ chunk: Buffer }>(`SELECT chunk FROM panel_import_rejects WHERE instance_id = $1 AND key = $2 AND seq = $3`, [tenant.instanceId, key, seq]),
      );
      if (!rows[0]) return;
      yield rows[0].chunk;
    }
  }
  return { kind: run.kind, targetId: Number(run.target_id), chunks: chunks() };
}
