import { createHash } from 'node:crypto';

/**
 * What the two Idempotency-Key doors share: form submissions (domain/forms/submit.ts, the key
 * scoped to the form) and sends (domain/mail/idempotency.ts, scoped to the instance). The
 * columns' CHECKs hold the same bound.
 */

/** Longest Idempotency-Key (the columns' CHECK). */
export const MAX_IDEMPOTENCY_KEY = 255;

/** JSON with every object's keys sorted, so two requests that differ only in key order are one. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What tells a retry from another request under the same key: a hash of the validated request. */
export function requestHash(validated: unknown): string {
  return createHash('sha256').update(canonicalJson(validated)).digest('hex');
}
