import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import typeis from 'type-is';
import { AppError, ValidationFailed } from '../../domain/errors.js';
import type { Route } from './route.js';
import { DEFAULT_MAX_BODY_BYTES } from './route.js';
import type { JsonSchema, Validator } from '../../domain/validation.js';
import { compile, depthError, MAX_JSON_DEPTH } from '../../domain/validation.js';

/** Body reading for a route, as its bodyType says: JSON (the API) or a form (public pages). */
export function bodyReader(route: Route) {
  if (route.bodyType === 'csv') return csvReader;
  return route.bodyType === 'form' ? formReader(route) : jsonReader(route);
}

/**
 * A CSV body is left unread for the handler to stream (res.req): only its type is checked
 * here, so a body of any other type is refused before the handler reads a byte. A request
 * without a body reaches the handler, which says what is missing after its own lookups.
 */
function csvReader(req: Request, _res: Response, next: NextFunction): void {
  if (!typeis.hasBody(req) || req.headers['content-length'] === '0') return next();
  if (!typeis(req, ['text/csv', 'text/plain'])) return next(new AppError('unsupported_media_type', 'This request body must be CSV (Content-Type: text/csv)'));
  next();
}

/**
 * A JSON body must be JSON (else 415), is measured after decompression
 * (body-parser inflates gzip/deflate/br and applies the limit to the inflated bytes), and a body
 * over the route's limit is 413 with max_bytes (mapped in errors.ts from body-parser's error).
 * A body nested deeper than MAX_JSON_DEPTH is refused as soon as it is parsed (422
 * value_error.too_deep at the first container too deep), before any code that recurses over it
 * (a schema, JSON.stringify for a jsonb column, a template) can run out of stack. V8's JSON.parse
 * is iterative, and so is the depth check: neither overflows on a 10 MB body of '['.
 */
function jsonReader(route: Route) {
  const limit = route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const parse = express.json({ limit, strict: false, type: () => true, inflate: true });
  return function readBody(req: Request, res: Response, next: NextFunction): void {
    // An empty body (Content-Length: 0, what fetch sends for a bodiless POST) is no body: routes
    // whose body is optional (rotate-secret) answer it, routes that need one say it is missing.
    if (!typeis.hasBody(req) || req.headers['content-length'] === '0') return next();
    if (!typeis(req, ['application/json', 'application/*+json'])) {
      return next(new AppError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json)'));
    }
    res.locals.bodyLimit = limit;
    parse(req, res, (err?: unknown) => {
      if (err) return next(err);
      const tooDeep = depthError(req.body, MAX_JSON_DEPTH);
      next(tooDeep ? new ValidationFailed([tooDeep]) : undefined);
    });
  };
}

/**
 * A form body (an HTML form's POST, or an RFC 8058 one-click POST from a mail client) becomes an
 * object of text fields, the first value of a repeated name winning. multipart/form-data is
 * parsed by Node's own fetch implementation (undici); any other body is read as urlencoded,
 * whatever its Content-Type says: mail clients label one-click bodies loosely (or not at all),
 * and a one-click unsubscribe must not fail for it. Its limit applies after decompression, as a
 * JSON body's does (413 with max_bytes). NUL characters are dropped as the fields are read: no
 * browser sends one, Postgres text cannot hold one, and a person's unsubscribe must not fail for
 * one. File parts are ignored: no public page takes uploads.
 */
function formReader(route: Route) {
  const limit = route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const read = express.raw({ limit, type: () => true, inflate: true });
  return function readForm(req: Request, res: Response, next: NextFunction): void {
    res.locals.bodyLimit = limit;
    read(req, res, (err?: unknown) => {
      if (err) return next(err);
      formFields(req).then((fields) => {
        req.body = fields;
        next();
      }, next);
    });
  };
}

async function formFields(req: Request): Promise<Record<string, string>> {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const type = req.get('content-type') ?? '';
  let entries: Iterable<[string, unknown]>;
  if (typeis.is(type, ['multipart/form-data'])) {
    try {
      entries = await new globalThis.Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
    } catch {
      throw new AppError('bad_request', 'The request body is not valid multipart/form-data');
    }
  } else {
    entries = new URLSearchParams(raw.toString('utf8'));
  }
  const fields = new Map<string, string>();
  for (const [name, value] of entries) {
    const key = withoutNul(name);
    if (typeof value === 'string' && !fields.has(key)) fields.set(key, withoutNul(value));
  }
  // fromEntries defines own properties: a field named __proto__ is a field like any other.
  return Object.fromEntries(fields);
}

const withoutNul = (text: string) => text.replace(/\u0000/g, '');

/** Path, query and body validators compiled once per route from its declaration. */
export interface InputValidators {
  params: Validator<unknown>;
  query: Validator<unknown>;
  body: Validator<unknown> | undefined;
}

function objectOf(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: true };
}

/**
 * By route declaration: a declaration is a constant, and its validators hold no state between
 * calls, so a second app built in the same process (the tests build several, with different
 * settings) reuses them instead of compiling every route's schemas again (about a second of CPU
 * per app). A dyno builds one app: each route is still compiled once, at start.
 */
const compiled = new WeakMap<Route, InputValidators>();

export function compileInputs(route: Route): InputValidators {
  let inputs = compiled.get(route);
  if (inputs === undefined) {
    const params = route.params ?? {};
    inputs = {
      params: compile(objectOf(params, Object.keys(params)), 'text'),
      query: compile(objectOf(route.query ?? {}, []), 'text'),
      // Form fields arrive as text, like query values: coerced to the declared type.
      body: route.body ? compile(route.body, route.bodyType === 'form' ? 'text' : 'json') : undefined,
    };
    compiled.set(route, inputs);
  }
  return inputs;
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
      throw new AppError('bad_request', `Query parameter ${key} was given more than once`);
    }
    if (value === '') continue;
    out[key] = value;
  }
  return out;
}
