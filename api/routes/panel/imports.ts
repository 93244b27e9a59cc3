import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import { AppError, NotFoundError, ValidationFailed } from '../../../domain/errors.js';
import { importRejects, rejectsPath, startImportRun, type ImportKind, type ImportRun } from '../../../domain/panel/import-runs.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import type { Pool } from '../../../sql/pool.js';

/**
 * The HTTP side of the panel's imports (docs/panel.md, Datasets: the import's progress). The
 * import runs in its POST request, streamed exactly as `cartero dataset import` reads a file;
 * while it runs, the page polls GET /v1/private/imports/{key} with the key it chose. The run's
 * progress and rejects file are kept in Postgres (domain/panel/import-runs.ts), so a poll or the
 * download may reach any web dyno.
 */

/** The largest file the panel takes, as `cartero list upload` does (domain/lists/upload.ts). */
export const PANEL_IMPORT_MAX_BYTES = 512 * 1024 * 1024;

/** GET /v1/private/imports/{key}/rejects: the refused rows as the CLI writes them (formula-guarded cells). */
export async function sendRejects(tenant: Tenant, pool: Pool, key: string, res: Response): Promise<undefined> {
  const run = await importRejects(tenant, pool, key);
  if (!run) throw new NotFoundError('import', key);
  res.status(200);
  res.set('Content-Type', 'text/csv; charset=utf-8');
  res.set('Content-Disposition', `attachment; filename="${run.kind === 'dataset_import' ? 'dataset' : 'list'}-${run.targetId}-rejects.csv"`);
  res.set('Cache-Control', 'no-store');
  for await (const chunk of run.chunks) {
    if (res.destroyed) break;
    if (!res.write(chunk)) await new Promise((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
  }
  res.end();
  return undefined;
}

/**
 * The body of a CSV request as a stream of at most PANEL_IMPORT_MAX_BYTES, read once; 400 when
 * there is none; 408 request_timeout when no byte of it arrives for `idleMs`
 * (IMPORT_IDLE_TIMEOUT_MS), counted from the request's start and then from each chunk.
 */
export function csvBody(req: Request, onBytes: (bytes: number) => void, idleMs: number): Readable {
  const length = req.headers['content-length'];
  if (length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined)) {
    throw new ValidationFailed([{ pointer: '', code: 'missing', message: 'A CSV body is required (Content-Type: text/csv)' }]);
  }
  let bytes = 0;
  let idle: NodeJS.Timeout | undefined;
  const stalled = () => {
    // Silence of our own making is no stall: the spool file not taking bytes as fast as they come
    // pauses the request (back-pressure), and a client still sending must not get a 408 for it.
    if (req.isPaused() || limiter.writableNeedDrain || input.writableNeedDrain) {
      idle?.refresh();
      return;
    }
    // The answer closes the connection: what the client might still send is not waited for.
    req.res?.setHeader('Connection', 'close');
    input.destroy(new AppError('request_timeout', `No byte of the file arrived for ${idleMs} ms (IMPORT_IDLE_TIMEOUT_MS); nothing was imported`, { idle_ms: idleMs }));
  };
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      idle?.refresh();
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
  idle = setTimeout(stalled, idleMs);
  input.once('close', () => clearTimeout(idle));
  limiter.once('end', () => clearTimeout(idle));
  req.pipe(limiter);
  limiter.on('error', (err) => input.destroy(err));
  limiter.pipe(input);
  input.on('close', () => {
    if (!req.complete) {
      req.unpipe(limiter);
      req.resume();
    }
  });
  // A client gone before the end of its file ends nothing by itself (a pipe waits for more):
  // the import fails and rolls back, and its run says why.
  req.once('close', () => {
    if (!req.complete) input.destroy(new AppError('bad_request', 'The upload was cut off before the whole file arrived; nothing was imported'));
  });
  return input;
}

/**
 * The CSV body spooled whole to a temporary file of this dyno (0600, removed when `use` ends),
 * then `use` with a way to read it. The file is on disk before `use` takes a connection of the
 * import pool, so a client that sends slowly, or stops, holds no database connection however long
 * it takes (issue 37): only a file already received is imported. The price is the disk (up to
 * PANEL_IMPORT_MAX_BYTES a running import) and reading the file after it arrives instead of as it
 * does.
 */
export async function withSpooledBody<T>(req: Request, onBytes: (bytes: number) => void, idleMs: number, use: (open: () => Readable) => Promise<T>): Promise<T> {
  const spool = join(tmpdir(), `cartero-import-${randomBytes(9).toString('hex')}.csv`);
  try {
    try {
      await pipeline(csvBody(req, onBytes, idleMs), createWriteStream(spool, { mode: 0o600 }));
    } catch (err) {
      // The dyno's disk is full: a fault of the service, to be retried, not of the client's file.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') throw new AppError('service_unavailable', 'This server has no room to receive the file now; nothing was imported. Try again later.', {}, { 'Retry-After': '60' });
      throw err;
    }
    return await use(() => createReadStream(spool));
  } finally {
    await unlink(spool).catch(() => {});
  }
}

/**
 * Run `work` as the import `key` of the instance (a key of the page's choosing, or a new one),
 * recording its progress; the summary it returns gets key and rejects_url.
 */
export async function tracked<S extends { rejected: number }>(
  tenant: Tenant,
  pool: Pool,
  kind: ImportKind,
  targetId: number,
  key: string | undefined,
  req: Request,
  work: (run: ImportRun) => Promise<S>,
): Promise<S & { key: string; rejects_url: string | null }> {
  const chosen = key ?? randomBytes(12).toString('base64url');
  const length = Number(req.headers['content-length']);
  const bytesTotal = Number.isSafeInteger(length) && length >= 0 ? length : null;
  const run = await startImportRun(tenant, pool, { key: chosen, kind, targetId, bytesTotal });
  let summary: S;
  try {
    summary = await work(run);
  } catch (err) {
    run.rejects.destroy();
    const error = err instanceof AppError ? { code: err.code, detail: err.message } : { code: 'internal_error', detail: 'The import failed' };
    await run.failed(error).catch(() => {});
    throw err;
  }
  const answer = { ...summary, key: chosen, rejects_url: summary.rejected > 0 ? rejectsPath(chosen) : null };
  await run.done(answer);
  return answer;
}
