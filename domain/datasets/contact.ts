import type { FieldError, RuleCode } from '../errors.js';
import { checkValue, type StoredValue } from '../fields/values.js';
import type { ContactTarget } from './datasets.js';

/**
 * One contact against its dataset's declaration: the rules POST /v1/datasets/{id}/contacts and
 * the CSV import both apply, so a contact is refused for the same reason however it arrives.
 * In the order a reader would fix them:
 *  1. a column the dataset does not declare: 409 dataset_column_not_declared;
 *  2. no identifier value (absent or empty): 409 dataset_identity_value_missing;
 *  3. a required column without a value: 409 dataset_required_column_missing;
 *  4. values that break their field's rules: 422, one field_value_invalid per value, at
 *     <base>/values/<field_key>, params.rule naming the rule (type, format, options, max_length,
 *     pattern, min, max) with the rule's own parameter beside it.
 */

export type ContactRefusal =
  | { status: 409; code: RuleCode; message: string }
  | { status: 422; code: 'validation_error'; message: string; errors: FieldError[] };

export type ContactCheck =
  | { ok: true; identifier: string; values: Record<string, StoredValue> }
  | { ok: false; refusal: ContactRefusal };

const escapePointer = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

function conflict(code: RuleCode, message: string): ContactCheck {
  return { ok: false, refusal: { status: 409, code, message } };
}

/**
 * `values` is what the contact carries (a JSON object, or a CSV row as field_key → cell);
 * `base` is the JSON Pointer of the contact in its request ('' alone, /contacts/<i> in a batch).
 */
export function checkContact(target: ContactTarget, values: unknown, base = ''): ContactCheck {
  if (values === null || typeof values !== 'object' || Array.isArray(values)) {
    return {
      ok: false,
      refusal: {
        status: 422,
        code: 'validation_error',
        message: 'The contact did not pass validation; see errors',
        errors: [{ pointer: `${base}/values`, code: values === undefined ? 'missing' : 'object_type', message: 'values must be an object of field_key to value' }],
      },
    };
  }
  // One pass over the keys per step, no intermediate arrays: the import runs this per CSV row.
  const given = values as Record<string, unknown>;
  const keys = Object.keys(given);
  let undeclared: string[] | undefined;
  for (const key of keys) if (!target.columns.has(key)) (undeclared ??= []).push(key);
  if (undeclared) {
    return conflict('dataset_column_not_declared', `the dataset does not declare ${undeclared.map((k) => JSON.stringify(k)).join(', ')}`);
  }
  const stored: Record<string, StoredValue> = {};
  let errors: FieldError[] | undefined;
  // A value given but invalid is a 422 about that value, not a missing one.
  let invalid: Set<string> | undefined;
  for (const key of keys) {
    const checked = checkValue(target.columns.get(key)!.field, given[key]);
    if (checked.kind === 'value') stored[key] = checked.value;
    else if (checked.kind === 'invalid') {
      (invalid ??= new Set()).add(key);
      (errors ??= []).push({ pointer: `${base}/values/${escapePointer(key)}`, code: 'field_value_invalid', message: checked.message, params: checked.params });
    }
  }
  const identityKey = target.identity.key;
  if (stored[identityKey] === undefined && !invalid?.has(identityKey)) {
    return conflict('dataset_identity_value_missing', `the contact has no value for the identifier ${identityKey}`);
  }
  let missing: string[] | undefined;
  for (const key of target.required) if (stored[key] === undefined && !invalid?.has(key)) (missing ??= []).push(key);
  if (missing) {
    return conflict('dataset_required_column_missing', `the contact has no value for the required column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  }
  if (errors) return { ok: false, refusal: { status: 422, code: 'validation_error', message: 'The contact did not pass validation; see errors', errors } };
  return { ok: true, identifier: String(stored[identityKey]), values: stored };
}
