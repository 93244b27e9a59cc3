import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import type { Request, Response } from 'express';
import { AppError, NotFoundError, ValidationFailed } from '../../domain/errors.js';
import type { Tenant } from '../../domain/tenancy/context.js';

/**
 * An import's progress, for the page that sent it (docs/panel.md, Datasets: the import's
 * progress). The import itself runs in its POST request, streamed exactly as `cartero dataset
 * import` reads a file (domain/datasets/import.ts: one transaction, all or nothing), so there is
 * no job table, no queue and no file kept on the server beyond the rejects. While the request
 * runs, the page polls GET /v1/private/imports/{key} with the key it chose: this process answers
 * from the run it holds in memory (the bytes read of the Content-Length, then "merging", then
 * the summary), and keeps the rejects file in its temporary directory for an hour.
 *
 * The one condition of this design: the poll must reach the web process that runs the import.
 * With one web process (the default) it always does; behind a balancer across several, the
 * panel's /v1/private/imports paths need session affinity, or a poll may answer 404
 * import_not_found until the POST's own answer (which carries the whole summary) arrives.
 */

export type ImportKind = 'dataset_import' | 'list_upload';
export type ImportStatus = 'reading' | 'merging' | 'done' | 'failed';

/** The largest file the panel takes, as `cartero list upload` does (domain/lists/upload.ts). */
export const PANEL_IMPORT_MAX_BYTES = 512 * 1024 * 1024;
/** How long a finished run (and its rejects file) can be read back. */
const KEEP_MS = 60 * 60 * 1000;
/** Runs held at most; the oldest finished go first. */
const MAX_RUNS = 1000;

interface Run {
  key: string;
  instanceId: number;
  kind: ImportKind;
  targetId: number;
  status: ImportStatus;
  bytesRead: number;
  bytesTotal: number | null;
  startedAt: string;
  finishedAt: string | null;
  summary: Record<string, unknown> | null;
  error: { code: string; detail: string } | null;
  rejectsPath: string;
  rejected: number;
}

const runs = new Map<string, Run>();
const dir = join(tmpdir(), `cartero-panel-imports-${process.pid}`);

const id = (tenant: Tenant, key: string) => `${tenant.instanceId}:${key}`;

function forget(run: Run): void {
  runs.delete(`${run.instanceId}:${run.key}`);
  void unlink(run.rejectsPath).catch(() => {});
}

function makeRoom(): void {
  if (runs.size < MAX_RUNS) return;
  for (const run of runs.values()) {
    if (run.status === 'done' || run.status === 'failed') {
      forget(run);
      if (runs.size < MAX_RUNS) return;
    }
  }
  throw new AppError('service_unavailable', 'Too many imports are running; try again in a moment');
}

const rejectsUrl = (run: Run) => (run.status === 'done' && run.rejected > 0 ? `/v1/private/imports/${run.key}/rejects` : null);

/** What GET /v1/private/imports/{key} answers. */
export function progressOf(tenant: Tenant, key: string) {
  const run = runs.get(id(tenant, key));
  if (!run) throw new NotFoundError('import', key);
  const percent =
    run.status === 'done' ? 100 : run.bytesTotal ? Math.min(99, Math.floor((run.bytesRead * 100) / run.bytesTotal)) : run.bytesTotal === 0 ? 0 : null;
  return {
    key: run.key,
    kind: run.kind,
    target_id: run.targetId,
    status: run.status,
    bytes_read: run.bytesRead,
    bytes_total: run.bytesTotal,
    percent,
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    summary: run.summary,
    error: run.error,
    rejects_url: rejectsUrl(run),
  };
}

/** GET /v1/private/imports/{key}/rejects: the refused rows as the CLI writes them (formula-guarded cells). */
export function sendRejects(tenant: Tenant, key: string, res: Response): Promise<undefined> {
  const run = runs.get(id(tenant, key));
  if (!run || run.status !== 'done') throw new NotFoundError('import', key);
  res.status(200);
  res.set('Content-Type', 'text/csv; charset=utf-8');
  res.set('Content-Disposition', `attachment; filename="${run.kind === 'dataset_import' ? 'dataset' : 'list'}-${run.targetId}-rejects.csv"`);
  res.set('Cache-Control', 'no-store');
  return new Promise((resolve, reject) => {
    const file = createReadStream(run.rejectsPath);
    file.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' && !res.headersSent ? resolve(void res.end()) : reject(err)));
    file.on('end', () => resolve(undefined));
    file.pipe(res);
  });
}

/** The body of a CSV request as a stream of at most PANEL_IMPORT_MAX_BYTES, read once; 400 when there is none. */
export function csvBody(req: Request, onBytes: (bytes: number) => void): Readable {
  const length = req.headers['content-length'];
  if (length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined)) {
    throw new ValidationFailed([{ pointer: '', code: 'missing', message: 'A CSV body is required (Content-Type: text/csv)' }]);
  }
  let bytes = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > PANEL_IMPORT_MAX_BYTES) {
        return done(new AppError('request_too_large', `the file exceeds the maximum of ${PANEL_IMPORT_MAX_BYTES} bytes`, { max_bytes: PANEL_IMPORT_MAX_BYTES }));
      }
      onBytes(bytes);
      done(null, chunk);
    },
  });
  // Piped, not handed over: a refusal mid-file destroys the copy, never the request (its socket
  // carries the answer).
  const input = new PassThrough();
  req.pipe(limiter);
  limiter.on('error', (err) => input.destroy(err));
  limiter.pipe(input);
  input.on('close', () => {
    if (!req.complete) {
      req.unpipe(limiter);
      req.resume();
    }
  });
  return input;
}

export interface Tracked {
  key: string;
  rejects: WriteStream;
  rejectsPath: string;
  onBytes(bytes: number): void;
  onMerge(): void;
}

/**
 * Run `work` as the import `key` of the instance (a key of the page's choosing, or a new one),
 * recording its progress; the summary it returns gets key and rejects_url.
 */
export async function tracked<S extends { rejected: number }>(
  tenant: Tenant,
  kind: ImportKind,
  targetId: number,
  key: string | undefined,
  req: Request,
  work: (t: Tracked) => Promise<S>,
): Promise<S & { key: string; rejects_url: string | null }> {
  const chosen = key ?? randomBytes(12).toString('base64url');
  const existing = runs.get(id(tenant, chosen));
  if (existing) {
    if (existing.status === 'reading' || existing.status === 'merging') throw new AppError('bad_request', `import ${chosen} is running; choose another key`);
    forget(existing);
  }
  makeRoom();
  mkdirSync(dir, { recursive: true });
  const length = Number(req.headers['content-length']);
  const run: Run = {
    key: chosen,
    instanceId: tenant.instanceId,
    kind,
    targetId,
    status: 'reading',
    bytesRead: 0,
    bytesTotal: Number.isSafeInteger(length) && length >= 0 ? length : null,
    startedAt: new Date().toISOString(),
    finishedAt: null,
    summary: null,
    error: null,
    rejectsPath: join(dir, `${tenant.instanceId}-${randomBytes(9).toString('hex')}.csv`),
    rejected: 0,
  };
  runs.set(id(tenant, chosen), run);
  setTimeout(() => runs.get(id(tenant, chosen)) === run && forget(run), KEEP_MS).unref();
  const rejects = createWriteStream(run.rejectsPath);
  try {
    const summary = await work({
      key: chosen,
      rejects,
      rejectsPath: run.rejectsPath,
      onBytes: (bytes) => {
        run.bytesRead = bytes;
      },
      onMerge: () => {
        run.status = 'merging';
      },
    });
    run.rejected = summary.rejected;
    run.status = 'done';
    run.finishedAt = new Date().toISOString();
    const answer = { ...summary, key: chosen, rejects_url: rejectsUrl(run) };
    run.summary = answer as Record<string, unknown>;
    return answer;
  } catch (err) {
    rejects.destroy();
    run.status = 'failed';
    run.finishedAt = new Date().toISOString();
    run.error = err instanceof AppError ? { code: err.code, detail: err.message } : { code: 'internal_error', detail: 'The import failed' };
    void unlink(run.rejectsPath).catch(() => {});
    throw err;
  }
}
