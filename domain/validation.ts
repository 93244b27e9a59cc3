import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { createRequire } from 'node:module';
import type { FieldError, FieldErrorCode } from './errors.js';
import { FIELD_ERROR_CATALOG } from '../errors/catalog.js';
import { ValidationFailed } from './errors.js';

export type JsonSchema = Record<string, unknown>;

// ajv-formats is CommonJS whose default export NodeNext types as the module object; require()
// gives the function itself.
const addFormats = createRequire(import.meta.url)('ajv-formats') as typeof import('ajv-formats').default;

/**
 * Two compilers over the same schemas: query strings and path segments arrive as text and are
 * coerced to the declared type (a failed coercion is the spec's *_parsing error); JSON bodies
 * are taken as typed and never coerced.
 */
function makeAjv(coerce: boolean): Ajv {
  // verbose: errors carry parentSchema, where the x-error-code annotation is read.
  const ajv = new Ajv({ allErrors: true, verbose: true, coerceTypes: coerce, useDefaults: true, strict: true, strictTypes: false });
  addFormats(ajv, ['date', 'date-time', 'email', 'uri', 'ipv4', 'ipv6']);
  // Schema annotations this codebase adds: the spec's error code for a keyword (e.g.
  // literal_error for lang), a code of the catalog's errors[] table, or the schema does not
  // compile; and OpenAPI-only metadata.
  ajv.addKeyword({ keyword: 'x-error-code', metaSchema: { enum: Object.keys(FIELD_ERROR_CATALOG) } });
  ajv.addVocabulary(['example', 'x-openapi-in']);
  return ajv;
}

const textAjv = makeAjv(true);
const jsonAjv = makeAjv(false);

const TYPE_CODES: Record<string, FieldErrorCode> = {
  integer: 'int_parsing',
  number: 'float_parsing',
  boolean: 'bool_parsing',
  string: 'string_type',
  object: 'object_type',
  array: 'array_type',
  null: 'none_required',
};

// Every format added above (an unknown one does not compile: strict).
const FORMAT_CODES: Record<string, FieldErrorCode> = {
  date: 'date_parsing',
  'date-time': 'datetime_parsing',
  email: 'value_error.email',
  uri: 'value_error.uri',
  ipv4: 'value_error.ipv4',
  ipv6: 'value_error.ipv6',
};

/** ajv's limit keywords: the spec's code, the params key that carries the limit, the message. */
const LIMITS: Record<string, { code: FieldErrorCode; param: string; message: (limit: unknown) => string }> = {
  minLength: { code: 'string_too_short', param: 'min_length', message: (n) => `String should have at least ${n} characters` },
  maxLength: { code: 'string_too_long', param: 'max_length', message: (n) => `String should have at most ${n} characters` },
  minimum: { code: 'greater_than_equal', param: 'ge', message: (n) => `Input should be greater than or equal to ${n}` },
  maximum: { code: 'less_than_equal', param: 'le', message: (n) => `Input should be less than or equal to ${n}` },
  exclusiveMinimum: { code: 'greater_than', param: 'gt', message: (n) => `Input should be greater than ${n}` },
  exclusiveMaximum: { code: 'less_than', param: 'lt', message: (n) => `Input should be less than ${n}` },
  minItems: { code: 'too_short', param: 'min_length', message: (n) => `List should have at least ${n} items` },
  maxItems: { code: 'too_long', param: 'max_length', message: (n) => `List should have at most ${n} items` },
};

function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function listText(values: unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v))).join(', ');
}

/** ajv's error objects → the spec's errors[] items (pointer, code, message, params). */
export function toFieldError(e: ErrorObject): FieldError {
  // The meta-schema above holds it to the catalog's codes.
  const custom = (e.parentSchema as JsonSchema | undefined)?.['x-error-code'] as FieldErrorCode | undefined;
  const p = e.params as Record<string, unknown>;
  let pointer = e.instancePath;
  let code: FieldErrorCode;
  let message: string;
  let params: Record<string, unknown> = {};
  switch (e.keyword) {
    case 'required':
      pointer += '/' + escapePointerToken(String(p.missingProperty));
      code = 'missing';
      message = 'Field required';
      break;
    case 'additionalProperties':
      pointer += '/' + escapePointerToken(String(p.additionalProperty));
      code = 'extra_forbidden';
      message = 'Extra inputs are not permitted';
      break;
    case 'type': {
      const expected = String(p.type).split(',').find((t) => t !== 'null') ?? 'null';
      code = TYPE_CODES[expected] ?? 'type_error';
      message = `Input should be a valid ${expected}`;
      break;
    }
    case 'enum':
      code = custom ?? 'enum';
      params = { expected: listText(p.allowedValues as unknown[]) };
      message = `Input should be ${params.expected}`;
      break;
    case 'const':
      code = custom ?? 'literal_error';
      params = { expected: listText([p.allowedValue]) };
      message = `Input should be ${params.expected}`;
      break;
    case 'pattern':
      code = 'string_pattern_mismatch';
      params = { pattern: p.pattern };
      message = `String should match pattern '${p.pattern}'`;
      break;
    case 'format':
      code = FORMAT_CODES[String(p.format)] ?? 'value_error';
      params = { format: p.format };
      message = `Input should be a valid ${p.format}`;
      break;
    default: {
      const limit = Object.hasOwn(LIMITS, e.keyword) ? LIMITS[e.keyword] : undefined;
      if (limit) {
        code = limit.code;
        params = { [limit.param]: p.limit };
        message = limit.message(p.limit);
      } else {
        code = 'value_error';
        message = e.message ?? 'Value error';
      }
    }
  }
  if (custom && e.keyword !== 'required') code = custom;
  const item: FieldError = { pointer, code, message };
  // "params: present only when not empty; non-scalar values arrive as text"
  const entries = Object.entries(params).filter(([, v]) => v !== undefined);
  if (entries.length) {
    item.params = Object.fromEntries(entries.map(([k, v]) => [k, v !== null && typeof v === 'object' ? JSON.stringify(v) : v]));
  }
  return item;
}

/** The deepest nesting a JSON body may have; bodyReader refuses deeper ones as they are parsed. */
export const MAX_JSON_DEPTH = 64;

// A lone UTF-16 surrogate: with the u flag a valid pair is one astral code point, never Cs.
const LONE_SURROGATE = /\p{Cs}/u;

/** An object or array being walked: where it is, and which of its members comes next. */
interface Frame {
  container: Record<string, unknown> | unknown[];
  /** The object's keys; undefined for an array. */
  keys: string[] | undefined;
  next: number;
  /** The container's depth; the root is 1. */
  depth: number;
  parent: Frame | undefined;
  /** The container's key or index in its parent. */
  token: string;
}

/** A member of a walked container: its value, depth and, for objects, its key. */
interface Member {
  value: unknown;
  depth: number;
  key: string | undefined;
  parent: Frame | undefined;
  index: number;
}

function tokenOf(frame: Frame, index: number): string {
  return frame.keys ? frame.keys[index]! : String(index);
}

/** RFC 6901 pointer of member `index` of `frame` (of the root when frame is undefined). */
function pointerOf(frame: Frame | undefined, index: number): string {
  if (!frame) return '';
  const tokens = [tokenOf(frame, index)];
  for (let f: Frame = frame; f.parent; f = f.parent) tokens.push(f.token);
  return '/' + tokens.reverse().map(escapePointerToken).join('/');
}

function frameOf(value: object, depth: number, parent: Frame | undefined, token: string): Frame {
  const keys = Array.isArray(value) ? undefined : Object.keys(value);
  return { container: value as Frame['container'], keys, next: 0, depth, parent, token };
}

/**
 * Visits every value of a parsed JSON document (or a query/path object) depth first, with an
 * explicit stack: a document nested 100,000 deep cannot overflow the call stack, and no record
 * is kept per visited value (a 10 MB array of zeros costs no more than its own parse). `visit`
 * returns true to stop.
 */
function walk(root: unknown, visit: (m: Member) => boolean | void): void {
  if (visit({ value: root, depth: 1, key: undefined, parent: undefined, index: 0 }) === true) return;
  if (root === null || typeof root !== 'object') return;
  const stack: Frame[] = [frameOf(root, 1, undefined, '')];
  while (stack.length) {
    const frame = stack[stack.length - 1]!;
    const index = frame.next++;
    if (index >= (frame.keys ?? (frame.container as unknown[])).length) {
      stack.pop();
      continue;
    }
    const key = frame.keys?.[index];
    const value = key === undefined ? (frame.container as unknown[])[index] : (frame.container as Record<string, unknown>)[key];
    const depth = frame.depth + 1;
    if (visit({ value, depth, key, parent: frame, index }) === true) return;
    if (value !== null && typeof value === 'object') stack.push(frameOf(value, depth, frame, tokenOf(frame, index)));
  }
}

/**
 * The one rule for text, applied to every string of every request (path and query values, body
 * values at any depth, object keys, free-form objects such as `variables` and `headers`):
 * Postgres text cannot hold NUL, and a lone surrogate is not Unicode (jsonb refuses it, text
 * columns would silently store U+FFFD). RFC 7493 (I-JSON) forbids both.
 */
function textError(text: string, pointer: () => string, what: string): FieldError | undefined {
  if (text.includes('\0')) {
    return { pointer: pointer(), code: 'value_error.nul_character', message: `${what} must not contain the NUL character (U+0000)` };
  }
  if (LONE_SURROGATE.test(text)) {
    return { pointer: pointer(), code: 'value_error.lone_surrogate', message: `${what} must be valid Unicode (it holds an unpaired UTF-16 surrogate)` };
  }
  return undefined;
}

/**
 * A 1 MiB body of `"\u0000"` strings would otherwise be answered with some 25 MB of errors: past
 * this many, the walk stops and the answer lists the first ones.
 */
export const MAX_RULE_ERRORS = 100;

/**
 * The rules every value of a request obeys whatever its schema, checked in one walk of the
 * validated (coerced) value: the text rule above for keys and strings, and numbers must be
 * finite. JSON.parse reads 1e400 as Infinity, and ajv coerces `?page=1e400` to Infinity and then
 * skips minimum/maximum for a number that is not finite, so without this it would reach SQL.
 */
export function valueRuleErrors(root: unknown, limit = MAX_RULE_ERRORS): FieldError[] {
  const errors: FieldError[] = [];
  walk(root, ({ value, key, parent, index }) => {
    const where = () => pointerOf(parent, index);
    // A key's error points at its member, whose pointer holds the key.
    let error = key !== undefined ? textError(key, where, 'A key') : undefined;
    if (!error && typeof value === 'string') error = textError(value, where, 'A string');
    if (!error && typeof value === 'number' && !Number.isFinite(value)) {
      error = { pointer: where(), code: 'finite_number', message: 'Input should be a finite number' };
    }
    if (error) errors.push(error);
    return errors.length >= limit;
  });
  return errors;
}

/**
 * The first array or object of a JSON document nested deeper than `maxDepth` (a root container
 * is depth 1, so `[[1]]` is 2 deep), if any.
 */
export function depthError(root: unknown, maxDepth = MAX_JSON_DEPTH): FieldError | undefined {
  let error: FieldError | undefined;
  walk(root, ({ value, depth, parent, index }) => {
    if (depth <= maxDepth || value === null || typeof value !== 'object') return false;
    error = {
      pointer: pointerOf(parent, index),
      code: 'value_error.too_deep',
      message: `JSON nesting must be at most ${maxDepth} levels deep`,
      params: { max_depth: maxDepth },
    };
    return true;
  });
  return error;
}

/**
 * Integers a schema leaves unbounded are bounded to what a JS number holds exactly (and so a
 * Postgres bigint): `?sender_id=18446744073709551616` coerces to 18446744073709552000, which
 * passes a bare `type: integer` and fails in SQL. The route's own schema (and so the OpenAPI
 * document) is left as declared; a tighter bound of its own wins.
 */
function withIntegerBounds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withIntegerBounds);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: JsonSchema = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, ['enum', 'const', 'default', 'example', 'examples'].includes(k) ? v : withIntegerBounds(v)]));
  const types = ([] as unknown[]).concat(out.type ?? []);
  if (types.includes('integer')) {
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = Number.MAX_SAFE_INTEGER;
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = -Number.MAX_SAFE_INTEGER;
  }
  return out;
}

/** One error per pointer: with allErrors, a nullable enum can fail both `type` and `enum`. */
function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => (seen.has(e.pointer) ? false : (seen.add(e.pointer), true)));
}

export interface Validator<T> {
  (value: unknown): T;
  schema: JsonSchema;
}

/**
 * Compile a schema into a function that returns the (coerced, defaulted) value or throws
 * ValidationFailed with the spec's errors[] (RFC 6901 pointers from the validated value's root).
 */
export function compile<T>(schema: JsonSchema, mode: 'text' | 'json'): Validator<T> {
  const validate: ValidateFunction = (mode === 'text' ? textAjv : jsonAjv).compile(withIntegerBounds(schema) as JsonSchema);
  const fn = ((value: unknown) => {
    const valid = validate(value);
    // After validation, so a coerced query value is judged as the handler would see it. The
    // value rules come first: a NUL is reported as such even where the schema also fails.
    const ruled = valueRuleErrors(value);
    if (valid && !ruled.length) return value as T;
    throw new ValidationFailed(dedupe([...ruled, ...(validate.errors ?? []).map(toFieldError)]));
  }) as Validator<T>;
  fn.schema = schema;
  return fn;
}
