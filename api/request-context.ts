import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

// An incoming X-Request-Id (set by a router such as Heroku's) is kept when it is plain text, so a
// request can be followed across hops; anything else is replaced.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.get('x-request-id');
  const id = incoming && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}

export function requestIdOf(res: Response): string {
  return (res.locals.requestId as string | undefined) ?? 'unknown';
}
