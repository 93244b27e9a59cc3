/**
 * The base of the one error vocabulary shared by api, workers and cli (domain/errors.ts
 * re-exports it with the domain's own errors), and the error of a dependency that did not answer.
 * Here rather than in domain/ because the lowest layer already throws one: the pool turns a lost
 * Postgres connection into DependencyUnavailable, and sql/ (the pool, migrations) stands alone,
 * depending on nothing of the domain. Each error carries the spec's `code`; api/problem.ts maps
 * them to HTTP problem objects.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 503: Postgres, ClickHouse or another dependency did not answer. Transient; retry. */
export class DependencyUnavailable extends AppError {
  constructor(dependency: string, cause?: unknown, detail = 'Service temporarily unavailable') {
    super(503, 'service_unavailable', detail, {}, { 'Retry-After': '1' });
    this.dependency = dependency;
    if (cause !== undefined) this.cause = cause;
  }
  dependency: string;
}
