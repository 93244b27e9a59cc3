import type { Response } from 'express';
import type { FieldError } from '../domain/errors.js';

/** Problem `type` URIs end in the kebab-case form of the code (spec, Errors > Body). */
export const PROBLEM_BASE = 'https://cartero.dev/problems/';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

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

export function problem(
  status: number,
  code: string,
  detail: string,
  traceId: string,
  extra: Record<string, unknown> = {},
): Problem {
  return {
    type: PROBLEM_BASE + code.replace(/_/g, '-'),
    title: TITLES[status] ?? 'Error',
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
