import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { AppError, ValidationFailed } from '../../domain/errors.js';
import { isClickHouseTimeout } from '../../analytics/client.js';
import { isConnectionFailure } from '../../errors/connection.js';
import { problem, sendProblem } from './problem.js';
import { requestIdOf } from './request-context.js';

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
  code?: string;
}


/** body-parser's failures in the spec's vocabulary. */
function fromBodyParser(err: BodyParserError, res: Response): AppError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new AppError('request_too_large', `Request body exceeds the maximum of ${err.limit} bytes`, {
        max_bytes: err.limit ?? res.locals.bodyLimit,
      });
    case 'entity.parse.failed':
      return new AppError('bad_request', 'Request body is not valid JSON');
    case 'encoding.unsupported':
      return new AppError('unsupported_media_type', 'Unsupported Content-Encoding; use gzip, deflate, br or none');
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'Unsupported charset; JSON bodies must be UTF-8');
    case 'request.size.invalid':
    case 'entity.verify.failed':
      return new AppError('bad_request', 'Request body length does not match Content-Length');
    default:
      // body-parser passes other read failures on as untyped http-errors 400s, e.g. zlib's
      // Z_DATA_ERROR for a body labelled gzip that is not.
      if (err.status === 400 && (err as { expose?: boolean }).expose) {
        return new AppError('bad_request', 'Request body could not be read (is it encoded as its Content-Encoding says?)');
      }
      return undefined;
  }
}

/**
 * The router decodes path parameters with decodeURIComponent and passes its URIError on marked
 * 400: a path segment that is not percent-encoded UTF-8 (`%zz`, `%FF`, `%ED%A0%80`) is
 * malformed before any schema applies.
 */
function fromPathDecoding(err: unknown): AppError | undefined {
  if (err instanceof URIError && (err as URIError & { status?: number }).status === 400) {
    return new AppError('bad_request', 'A path segment is not valid percent-encoded UTF-8');
  }
  return undefined;
}

/**
 * The last middleware: every error becomes a problem object. Anything not an AppError is a bug
 * or an outage we did not classify: logged in full, answered 500 with a generic detail, so no
 * stack trace or SQL ever reaches a client.
 */
export function errorHandler(logger: Logger) {
  return function handleError(err: unknown, req: Request, res: Response, _next: NextFunction): void {
    const traceId = requestIdOf(res);
    const e = err instanceof AppError ? err : (fromPathDecoding(err) ?? fromBodyParser(err as BodyParserError, res));
    if ((err as BodyParserError)?.type === 'request.aborted') {
      res.destroy();
      return;
    }
    if (e instanceof ValidationFailed) {
      sendProblem(res, problem(e.code, e.message, traceId, { errors: e.errors }));
      return;
    }
    if (e) {
      if (e.status >= 500) logger.warn({ err, traceId }, 'request failed: %s', e.code);
      sendProblem(res, problem(e.code, e.message, traceId, e.extra), e.headers);
      return;
    }
    // A dependency that does not answer (ClickHouse over HTTP, or anything not already mapped by
    // sql/pool.ts) is the spec's transient 503, never a 500.
    if (isConnectionFailure(err)) {
      logger.warn({ err, traceId }, 'dependency unavailable');
      sendProblem(res, problem('service_unavailable', 'Service temporarily unavailable', traceId), { 'Retry-After': '1' });
      return;
    }
    // ClickHouse accepted the connection and then said nothing for CLICKHOUSE_REQUEST_TIMEOUT_MS
    // (a stopped or overloaded server): as transient as a refusal, but it already cost the
    // client that long, so a longer Retry-After.
    if (isClickHouseTimeout(err)) {
      logger.warn({ err, traceId }, 'dependency unavailable: ClickHouse did not answer in time');
      sendProblem(res, problem('service_unavailable', 'Service temporarily unavailable', traceId), { 'Retry-After': '5' });
      return;
    }
    logger.error({ err, traceId, method: req.method, path: req.path }, 'unhandled error');
    sendProblem(res, problem('internal_error', 'An unexpected error occurred', traceId));
  };
}
