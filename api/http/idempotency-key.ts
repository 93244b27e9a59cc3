import { ValidationFailed } from '../../domain/errors.js';
import { MAX_IDEMPOTENCY_KEY } from '../../domain/idempotency-key.js';
import type { JsonSchema } from '../../domain/validation.js';

/**
 * The Idempotency-Key request header, as every route that takes one reads and documents it
 * (POST /v1/forms/{id}/submissions, POST /v1/mails/send): its bounds once, for the OpenAPI
 * parameter and the check, and each route's own sentence on what the key scopes and answers.
 */
export function idempotencyKeyHeader(description: string): JsonSchema {
  return { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY, description };
}

/** Idempotency-Key, read from the request (its bounds are idempotencyKeyHeader's, in the OpenAPI document). */
export function idempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length < 1 || raw.length > MAX_IDEMPOTENCY_KEY) {
    throw new ValidationFailed([
      { pointer: '', code: 'value_error.idempotency_key', message: `The Idempotency-Key header must have 1 to ${MAX_IDEMPOTENCY_KEY} characters`, params: { max_length: MAX_IDEMPOTENCY_KEY } },
    ]);
  }
  return raw;
}
