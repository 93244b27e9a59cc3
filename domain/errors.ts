/**
 * The one error vocabulary shared by api, workers and cli. Each carries a code of the catalog
 * (errors/catalog.ts), whose status and title it takes; api/http/problem.ts maps them to HTTP problem
 * objects. Domain code throws these and nothing HTTP-specific.
 */
import { AppError } from '../errors/app-error.js';
import type { CodeOf, FieldErrorCode, NotFoundResource } from '../errors/catalog.js';

// The base and the dependency error live at the bottom of the graph (errors/app-error.ts says
// why); every import of them from here keeps working.
export { AppError, DependencyUnavailable } from '../errors/app-error.js';
export type { ErrorCode, FieldErrorCode } from '../errors/catalog.js';

/** 404 `<resource>_not_found`: "resource and id not found"; the resources are the catalog's. */
export class NotFoundError extends AppError {
  constructor(resource: NotFoundResource, id: string | number) {
    super(`${resource}_not_found`, `${resource.replace(/_/g, ' ')} ${id} not found`);
  }
}

/** The catalog's 409 codes: each names a business rule; a generic conflict code is never emitted. */
export type RuleCode = CodeOf<409>;

/** 409 with a code naming the business rule. */
export class RuleViolation extends AppError {
  constructor(code: RuleCode, message: string, extra: Record<string, unknown> = {}) {
    super(code, message, extra);
  }
}

/** 429: the instance's bandwidth bucket is empty; retryAfter in whole seconds. */
export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number) {
    const s = Math.max(1, Math.ceil(retryAfterSeconds));
    super('rate_limit_exceeded', `Rate limit exceeded; retry after ${s} seconds`, {}, { 'Retry-After': String(s) });
  }
}

/** One field failure of a 422, before it is rendered (domain/validation.ts renders these too). */
export interface FieldError {
  pointer: string;
  code: FieldErrorCode;
  message: string;
  params?: Record<string, unknown>;
}

export class ValidationFailed extends AppError {
  constructor(readonly errors: FieldError[]) {
    super('validation_error', 'The request did not pass validation; see errors');
  }
}
