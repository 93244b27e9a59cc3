import type { Response } from 'express';
import type { FieldError } from '../../domain/errors.js';
import { catalogEntry, type ErrorCode } from '../../errors/catalog.js';

/** Problem `type` URIs end in the kebab-case form of the code (spec, Errors > Body). */
export const PROBLEM_BASE = 'https://cartero.dev/problems/';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  trace_id: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}

/**
 * The problem object of a code of the catalog (errors/catalog.ts), its status and title read from
 * there. A code the catalog lacks does not compile; one cast past the type throws
 * UnknownErrorCode here rather than leave with a status someone guessed.
 */
export function problem(code: ErrorCode, detail: string, traceId: string, extra: Record<string, unknown> = {}): Problem {
  const { status, title } = catalogEntry(code);
  return {
    type: PROBLEM_BASE + code.replace(/_/g, '-'),
    title,
    status,
    detail,
    code,
    trace_id: traceId,
    ...extra,
  };
}

/** The one way an error leaves the API. */
export function sendProblem(res: Response, body: Problem, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.status(body.status).type('application/problem+json').send(JSON.stringify(body));
}
