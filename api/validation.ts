import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { createRequire } from 'node:module';
import type { FieldError } from '../domain/errors.js';
import { ValidationFailed } from '../domain/errors.js';

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
  // Schema annotations this codebase adds: the spec's error code for a keyword
  // (e.g. literal_error for lang), and OpenAPI-only metadata.
  ajv.addVocabulary(['x-error-code', 'example', 'x-openapi-in']);
  return ajv;
}

const textAjv = makeAjv(true);
const jsonAjv = makeAjv(false);

const TYPE_CODES: Record<string, string> = {
  integer: 'int_parsing',
  number: 'float_parsing',
  boolean: 'bool_parsing',
  string: 'string_type',
  object: 'object_type',
  array: 'array_type',
  null: 'none_required',
};

const FORMAT_CODES: Record<string, string> = {
  date: 'date_parsing',
  'date-time': 'datetime_parsing',
};

function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function listText(values: unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v))).join(', ');
}

/** ajv's error objects → the spec's errors[] items (pointer, code, message, params). */
export function toFieldError(e: ErrorObject): FieldError {
  const custom = (e.parentSchema as JsonSchema | undefined)?.['x-error-code'] as string | undefined;
  const p = e.params as Record<string, unknown>;
  let pointer = e.instancePath;
  let code: string;
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
    case 'minLength':
      code = 'string_too_short';
      params = { min_length: p.limit };
      message = `String should have at least ${p.limit} characters`;
      break;
    case 'maxLength':
      code = 'string_too_long';
      params = { max_length: p.limit };
      message = `String should have at most ${p.limit} characters`;
      break;
    case 'pattern':
      code = 'string_pattern_mismatch';
      params = { pattern: p.pattern };
      message = `String should match pattern '${p.pattern}'`;
      break;
    case 'format':
      code = FORMAT_CODES[String(p.format)] ?? `value_error.${p.format}`;
      params = { format: p.format };
      message = `Input should be a valid ${p.format}`;
      break;
    case 'minimum':
      code = 'greater_than_equal';
      params = { ge: p.limit };
      message = `Input should be greater than or equal to ${p.limit}`;
      break;
    case 'maximum':
      code = 'less_than_equal';
      params = { le: p.limit };
      message = `Input should be less than or equal to ${p.limit}`;
      break;
    case 'exclusiveMinimum':
      code = 'greater_than';
      params = { gt: p.limit };
      message = `Input should be greater than ${p.limit}`;
      break;
    case 'exclusiveMaximum':
      code = 'less_than';
      params = { lt: p.limit };
      message = `Input should be less than ${p.limit}`;
      break;
    case 'minItems':
      code = 'too_short';
      params = { min_length: p.limit };
      message = `List should have at least ${p.limit} items`;
      break;
    case 'maxItems':
      code = 'too_long';
      params = { max_length: p.limit };
      message = `List should have at most ${p.limit} items`;
      break;
    default:
      code = 'value_error';
      message = e.message ?? 'Value error';
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
 * ValidationFailed with the spec's errors[]. `pointerPrefix` places the errors of a nested
 * document (e.g. the body) under a path when needed.
 */
export function compile<T>(schema: JsonSchema, mode: 'text' | 'json'): Validator<T> {
  const validate: ValidateFunction = (mode === 'text' ? textAjv : jsonAjv).compile(schema);
  const fn = ((value: unknown) => {
    if (validate(value)) return value as T;
    throw new ValidationFailed(dedupe((validate.errors ?? []).map(toFieldError)));
  }) as Validator<T>;
  fn.schema = schema;
  return fn;
}
