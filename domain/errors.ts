/**
 * The one error vocabulary shared by api, workers and cli. Each carries the spec's `code`;
 * api/problem.ts maps them to HTTP problem objects. Domain code throws these and nothing
 * HTTP-specific.
 */
import { AppError } from '../sql/errors.js';

// The base and the dependency error live with the pool, which throws one (sql/errors.ts says why);
// every import of them from here keeps working.
export { AppError, DependencyUnavailable } from '../sql/errors.js';

/** 404 `<resource>_not_found`: "resource and id not found". */
export class NotFoundError extends AppError {
  constructor(resource: string, id: string | number) {
    super(404, `${resource}_not_found`, `${resource.replace(/_/g, ' ')} ${id} not found`);
  }
}

/** 409 with a code naming the business rule; a generic conflict code is never emitted. */
export class RuleViolation extends AppError {
  constructor(code: string, message: string, extra: Record<string, unknown> = {}) {
    super(409, code, message, extra);
  }
}

/** 429: the instance's bandwidth bucket is empty; retryAfter in whole seconds. */
export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number) {
    const s = Math.max(1, Math.ceil(retryAfterSeconds));
    super(429, 'rate_limit_exceeded', `Rate limit exceeded; retry after ${s} seconds`, {}, { 'Retry-After': String(s) });
  }
}

/** One field failure of a 422, before it is rendered (api/validation.ts renders these too). */
export interface FieldError {
  pointer: string;
  code: string;
  message: string;
  params?: Record<string, unknown>;
}

export class ValidationFailed extends AppError {
  constructor(readonly errors: FieldError[], code = 'validation_error') {
    super(422, code, 'The request did not pass validation; see errors');
  }
}
