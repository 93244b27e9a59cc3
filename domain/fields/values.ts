import { storedContact } from '../consent/vocabulary.js';
import { matchesPattern } from './pattern.js';
import type { FieldDefinition, FieldType } from './types.js';

/**
 * The one validator of a contact's values: POST /v1/datasets/{id}/contacts, the CSV import and
 * CSV lists all call checkValue, so a value means the same whichever way it arrives. It takes
 * what JSON carries (string, number, boolean, null) and what a CSV cell is (text), and gives the
 * stored form, typed as the field says:
 *  - text: the text, trimmed; max_length counts characters (code points); the pattern must match whole.
 *  - email: an address, trimmed and lower-cased (the rule consent uses for the same address:
 *    domain/consent/vocabulary.ts, so a dataset contact and a consent contact compare equal).
 *  - phone: E.164, as consent stores phones. Spaces, dots, dashes and parentheses are dropped and a
 *    leading 00 read as +, so "+34 600 11-22-33" and "0034600112233" are both +34600112233.
 *  - number: a JSON number or a decimal text (1, -2.5, 1e3), within min/max.
 *  - date: a calendar date YYYY-MM-DD, kept as that text.
 *  - boolean: true/false, or the text true, false, 1, 0 (any case).
 *  - select: one of the options, exactly (after trimming).
 * Empty means not given: null, a text of only spaces, an empty CSV cell. An empty value never
 * erases a stored one and does not count as present for required columns or the identifier.
 */

export type StoredValue = string | number | boolean;

export type ValueCheck =
  | { kind: 'value'; value: StoredValue }
  | { kind: 'empty' }
  | { kind: 'invalid'; rule: string; message: string; params: Record<string, string | number> };

/** The longest text any value may be, whatever its field says: bounds memory and every pattern's work. */
export const VALUE_MAX_LENGTH = 10_000;

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const PHONE_SEPARATORS = /[\s().-]/g;
const TRUE_TEXT = new Set(['true', '1']);
const FALSE_TEXT = new Set(['false', '0']);

const valueOf = (value: StoredValue): ValueCheck => ({ kind: 'value', value });
const EMPTY: ValueCheck = { kind: 'empty' };

function invalid(rule: string, message: string, params: Record<string, string | number> = {}): ValueCheck {
  return { kind: 'invalid', rule, message, params: { rule, ...params } };
}

const TYPE_NAMES: Record<FieldType, string> = {
  text: 'a text',
  email: 'an email address',
  phone: 'a phone number',
  number: 'a number',
  date: 'a date YYYY-MM-DD',
  boolean: 'true or false',
  select: 'one of the options',
};

function wrongType(field: FieldDefinition): ValueCheck {
  return invalid('type', `The value must be ${TYPE_NAMES[field.type]}`, { type: field.type });
}

/** Characters as the API counts them (code points, like the schemas' maxLength). */
function length(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function checkValue(field: FieldDefinition, raw: unknown): ValueCheck {
  if (raw === null || raw === undefined) return EMPTY;
  if (typeof raw === 'string') {
    if (raw.length > VALUE_MAX_LENGTH * 2 || length(raw) > VALUE_MAX_LENGTH) {
      return invalid('max_length', `The value has more than ${VALUE_MAX_LENGTH} characters`, { max_length: VALUE_MAX_LENGTH });
    }
    const text = raw.trim();
    return text === '' ? EMPTY : checkText(field, text);
  }
  if (typeof raw === 'number') {
    if (field.type !== 'number' || !Number.isFinite(raw)) return wrongType(field);
    return checkRange(field, raw);
  }
  if (typeof raw === 'boolean') return field.type === 'boolean' ? valueOf(raw) : wrongType(field);
  return wrongType(field);
}

/** A non-empty, trimmed text as the field's type reads it. */
function checkText(field: FieldDefinition, text: string): ValueCheck {
  switch (field.type) {
    case 'text': {
      if (field.maxLength !== null && length(text) > field.maxLength) {
        return invalid('max_length', `The value has more than ${field.maxLength} characters`, { max_length: field.maxLength });
      }
      if (field.pattern !== null && !matchesPattern(field.pattern, text)) {
        return invalid('pattern', 'The value does not match the field’s pattern', { pattern: field.pattern });
      }
      return valueOf(text);
    }
    case 'email': {
      const stored = storedContact('email_address', text);
      if (!('contact' in stored)) return invalid('format', 'The value is not an email address', { format: 'email' });
      if (field.maxLength !== null && length(stored.contact) > field.maxLength) {
        return invalid('max_length', `The value has more than ${field.maxLength} characters`, { max_length: field.maxLength });
      }
      return valueOf(stored.contact);
    }
    case 'phone': {
      const stored = storedContact('phone_number', phoneDigits(text));
      if (!('contact' in stored)) {
        return invalid('format', 'The value is not a phone number in international form (+ and 8 to 15 digits)', { format: 'e164' });
      }
      return valueOf(stored.contact);
    }
    case 'number': {
      if (!DECIMAL.test(text)) return wrongType(field);
      const n = Number(text);
      return Number.isFinite(n) ? checkRange(field, n) : wrongType(field);
    }
    case 'date': {
      const m = ISO_DATE.exec(text);
      if (!m) return invalid('format', 'The value is not a date YYYY-MM-DD', { format: 'date' });
      const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
      const date = new Date(Date.UTC(y, mo - 1, d));
      if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) {
        return invalid('format', 'The value is not a calendar date', { format: 'date' });
      }
      return valueOf(text);
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (TRUE_TEXT.has(lower)) return valueOf(true);
      if (FALSE_TEXT.has(lower)) return valueOf(false);
      return wrongType(field);
    }
    case 'select':
      return field.options?.includes(text)
        ? valueOf(text)
        : invalid('options', 'The value is not one of the field’s options', { options: (field.options ?? []).join(', ') });
  }
}

/** A phone as typed, without separators and with a leading 00 read as +: what E.164 is checked on. */
export function phoneDigits(text: string): string {
  const digits = text.replace(PHONE_SEPARATORS, '');
  return digits.startsWith('00') ? '+' + digits.slice(2) : digits;
}

function checkRange(field: FieldDefinition, n: number): ValueCheck {
  if (field.min !== null && n < field.min) return invalid('min', `The value is below ${field.min}`, { min: field.min });
  if (field.max !== null && n > field.max) return invalid('max', `The value is above ${field.max}`, { max: field.max });
  return valueOf(n);
}
