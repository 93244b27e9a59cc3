import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import typeis from 'type-is';
import { AppError, ValidationFailed } from '../domain/errors.js';
import type { Route } from './route.js';
import { DEFAULT_MAX_BODY_BYTES } from './route.js';
import type { JsonSchema, Validator } from './validation.js';
import { compile, depthError, MAX_JSON_DEPTH } from './validation.js';

/**
 * Body reading for a route: a body must be JSON (else 415), is measured after decompression
 * (body-parser inflates gzip/deflate/br and applies the limit to the inflated bytes), and a body
 * over the route's limit is 413 with max_bytes (mapped in errors.ts from body-parser's error).
 * A body nested deeper than MAX_JSON_DEPTH is refused as soon as it is parsed (422
 * value_error.too_deep at the first container too deep), before any code that recurses over it
 * (a schema, JSON.stringify for a jsonb column, a template) can run out of stack. V8's JSON.parse
 * is iterative, and so is the depth check: neither overflows on a 10 MB body of '['.
 */
export function bodyReader(route: Route) {
  const limit = route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const parse = express.json({ limit, strict: false, type: () => true, inflate: true });
  return function readBody(req: Request, res: Response, next: NextFunction): void {
    if (!typeis.hasBody(req)) return next();
    if (!typeis(req, ['application/json', 'application/*+json'])) {
      return next(new AppError(415, 'unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json)'));
    }
    res.locals.bodyLimit = limit;
    parse(req, res, (err?: unknown) => {
      if (err) return next(err);
      const tooDeep = depthError(req.body, MAX_JSON_DEPTH);
      next(tooDeep ? new ValidationFailed([tooDeep]) : undefined);
    });
  };
}

/** Path, query and body validators compiled once per route from its declaration. */
export interface InputValidators {
  params: Validator<unknown>;
  query: Validator<unknown>;
  body: Validator<unknown> | undefined;
}

function objectOf(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: true };
}

export function compileInputs(route: Route): InputValidators {
  const params = route.params ?? {};
  return {
    params: compile(objectOf(params, Object.keys(params)), 'text'),
    query: compile(objectOf(route.query ?? {}, []), 'text'),
    body: route.body ? compile(route.body, 'json') : undefined,
  };
}

/**
 * Query strings carry text only. An empty value means "no filter" (the spec's null); a scalar
 * parameter given twice is malformed before any schema applies, so 400 bad_request.
 */
export function normalizeQuery(route: Route, raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!route.query || !(key in route.query)) continue; // unknown parameters are ignored
    if (Array.isArray(value)) {
      throw new AppError(400, 'bad_request', `Query parameter ${key} was given more than once`);
    }
    if (value === '') continue;
    out[key] = value;
  }
  return out;
}
