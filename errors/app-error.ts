import { catalogEntry, type ErrorCode, type ErrorStatus } from './catalog.js';

/**
 * The base of the one error vocabulary shared by api, workers and cli (domain/errors.ts adds the
 * domain's own errors), and the error of a dependency that did not answer. A site names a code of
 * the catalog (errors/catalog.ts) and says what happened; status and title come from the
 * catalog, so no site states a status by hand. Here, at the bottom of the graph, because the
 * lowest layer already throws one: the pool turns a lost Postgres connection into
 * DependencyUnavailable, and sql/ stands alone, depending on nothing of the domain.
 * api/http/problem.ts maps these to HTTP problem objects.
 */
export class AppError extends Error {
  readonly status: ErrorStatus;
  readonly title: string;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
    const entry = catalogEntry(code);
    this.status = entry.status;
    this.title = entry.title;
  }
}

/** 503: Postgres, ClickHouse or another dependency did not answer. Transient; retry. */
export class DependencyUnavailable extends AppError {
  constructor(dependency: string, cause?: unknown, detail = 'Service temporarily unavailable') {
    super('service_unavailable', detail, {}, { 'Retry-After': '1' });
    this.dependency = dependency;
    if (cause !== undefined) this.cause = cause;
  }
  dependency: string;
}
