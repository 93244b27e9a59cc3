/**
 * Every error code the service emits (and the few of the spec it never does, marked), in one place (the way Unkey keeps its own in one
 * module): the problem objects' `code` with its status and title, and the codes of a 422's
 * `errors[]` items, each with where the spec names it or, for ours, which document does.
 * AppError (errors/app-error.ts) takes a code of PROBLEM_CODES and reads its status and title
 * from here, so a site never states a status by hand and a code missing from this table does not
 * compile. The OpenAPI document and docs/api-conventions.md list codes from here
 * (errors/doc.ts), and test/error-catalog.test.ts fails on a code emitted that is not here.
 *
 * The bottom of the dependency graph: imports nothing, so sql/ (the pool throws
 * DependencyUnavailable), domain/, workers/, api/ and cli/ may all import it.
 *
 * Adding a code: one row below (or a resource in NOT_FOUND_RESOURCES), then
 * `node dist/errors/doc.js --write` to regenerate the table of docs/api-conventions.md.
 */

/** The spec's sections that name codes (shared/spec/api-spec.md). */
export const SPEC_LIST = 'spec: Errors > Error list';
export const SPEC_409 = 'spec: Errors > Business-rule 409 codes';
export const SPEC_422 = 'spec: Errors > Field errors (422)';
export const SPEC_FORMS = 'spec: POST /v1/forms/{id}/submissions';

/**
 * The problem's `title`: the reason phrase of its status (RFC 9110), as every answer has carried
 * it since the first release; a title per code would change the body of every error answered.
 */
export const STATUS_TITLES = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
} as const;

export type ErrorStatus = keyof typeof STATUS_TITLES;

export interface CatalogEntry {
  status: ErrorStatus;
  title: string;
  /** Where the code is named: a section of the spec, or "not in the spec: <the doc that says when>". */
  where: string;
  /** Only the command line answers it (its input: files, flags); the HTTP API never does. */
  cli?: true;
  /** A code of the spec this service never answers, and why (the feature is not here). */
  notEmitted?: string;
  /** Only the operator panel's /v1/private routes answer it (a session's login, its members). */
  panel?: true;
}

/** A code the spec does not name: the document that says when it is answered, or else the module that answers it. */
const ours = (doc: string) => `not in the spec: ${doc}`;

/** One of the spec's business-rule codes, as most 409 rows are. */
const SPEC_RULE = { status: 409, where: SPEC_409 } as const;

/** A command-line input refusal (docs of the area, or the command's --help). */
const CLI = { cli: true } as const;

/** A 400 only the command line answers: a refusal of its input, told where `ours` says. */
const cliInput = (doc: string) => ({ status: 400, where: ours(doc), ...CLI }) as const;

/**
 * Status and where, per code; the title is added from the status (see STATUS_TITLES). Grouped by
 * status, spec's codes first.
 */
const CODES = {
  // 400
  bad_request: { status: 400, where: SPEC_LIST },
  file_unreadable: cliInput('cli/read-text.ts'),
  file_not_json: cliInput('cli/commands/form.ts'),
  file_unwritable: cliInput('cli/commands/consent.ts'),
  unknown_scope: cliInput('domain/tenancy/api-keys.ts'),
  invalid_expiry: cliInput('domain/tenancy/api-keys.ts'),
  invalid_slug: cliInput('domain/tenancy/instances.ts'),
  invalid_time_zone: cliInput('domain/tenancy/instances.ts'),
  invalid_limit: cliInput('domain/tenancy/instances.ts'),
  // Also the panel's (docs/panel.md): a key's or the instance's networks, a domain added there.
  invalid_cidr: { status: 400, where: ours('domain/tenancy/ip.ts'), panel: true },
  // Also the panel's (docs/panel.md): a key's or the instance's networks, a domain added there.
  invalid_domain: { status: 400, where: ours('domain/domains/domains.ts'), panel: true },
  invalid_check_state: cliInput('domain/domains/domains.ts'),
  invalid_name: cliInput('domain/{datasets,lists,fields,consent,senders}'),
  invalid_description: cliInput('domain/datasets/datasets.ts'),
  invalid_channel: cliInput('docs/datasets.md'),
  invalid_identity_field: cliInput('docs/datasets.md'),
  invalid_max_rows: cliInput('domain/lists/lists.ts'),
  invalid_position: cliInput('domain/lists/lists.ts'),
  invalid_field_key: cliInput('docs/datasets.md'),
  invalid_purposes: cliInput('domain/consent/terms.ts'),
  invalid_channels: cliInput('domain/consent/terms.ts'),
  invalid_version: cliInput('domain/consent/terms.ts'),
  invalid_body: cliInput('docs/consent.md'),
  invalid_document_url: cliInput('docs/consent.md'),
  // Also the panel's (docs/panel.md): a sender created there.
  invalid_email: { status: 400, where: ours('domain/senders/senders.ts'), panel: true },
  dataset_import_header_duplicated: { status: 400, where: ours('docs/datasets.md') },
  dataset_import_column_not_found: { status: 400, where: ours('docs/datasets.md') },
  dataset_import_csv_invalid: { status: 400, where: ours('docs/datasets.md') },
  dataset_import_file_empty: { status: 400, where: ours('docs/datasets.md') },
  list_import_csv_invalid: { status: 400, where: ours('docs/datasets.md') },
  field_rule_not_applicable: cliInput('docs/datasets.md'),
  field_rule_invalid: cliInput('docs/datasets.md'),
  field_options_required: cliInput('docs/datasets.md'),
  field_options_invalid: cliInput('docs/datasets.md'),
  field_pattern_invalid: cliInput('docs/datasets.md'),
  field_pattern_unsafe: cliInput('docs/datasets.md'),
  invalid_password: cliInput('domain/panel/users.ts'),
  // 401, 403
  unauthorized: { status: 401, where: SPEC_LIST },
  // The panel's login refusal, one for an unknown address, a wrong password and a disabled user.
  invalid_credentials: { status: 401, where: ours('docs/panel.md'), panel: true },
  forbidden: { status: 403, where: SPEC_LIST },
  ip_not_allowed: { status: 403, where: SPEC_LIST },
  dns_override_disabled: { status: 403, where: ours('docs/panel.md'), panel: true },
  // 404 (and the <resource>_not_found codes, from NOT_FOUND_RESOURCES below)
  not_found: { status: 404, where: SPEC_LIST },
  mail_outside_retention: { status: 404, where: SPEC_LIST },
  // 405, 408
  method_not_allowed: { status: 405, where: SPEC_LIST },
  request_timeout: { status: 408, where: ours('docs/api-conventions.md, Errors') },
  // 409: the spec's business rules
  domain_already_exists: SPEC_RULE,
  domain_not_verified: SPEC_RULE,
  domain_sender_not_verified: SPEC_RULE,
  sender_already_exists: SPEC_RULE,
  template_not_public: SPEC_RULE,
  template_published: SPEC_RULE,
  template_read_only: SPEC_RULE,
  template_name_taken: SPEC_RULE,
  template_editor_unavailable: SPEC_RULE,
  api_key_scope_required: SPEC_RULE,
  sandbox_relay_restricted: SPEC_RULE,
  field_key_already_exists: SPEC_RULE,
  field_key_reserved: SPEC_RULE,
  field_is_system: SPEC_RULE,
  field_name_taken: SPEC_RULE,
  dataset_identity_field_required: SPEC_RULE,
  dataset_name_taken: SPEC_RULE,
  dataset_identity_value_missing: SPEC_RULE,
  dataset_required_column_missing: SPEC_RULE,
  dataset_column_not_declared: SPEC_RULE,
  dataset_field_not_found: SPEC_RULE,
  dataset_field_duplicated: SPEC_RULE,
  dataset_identity_field_missing: SPEC_RULE,
  dataset_import_field_id_required: SPEC_RULE,
  dataset_import_field_not_found: SPEC_RULE,
  form_dataset_columns_not_collected: SPEC_RULE,
  dataset_columns_not_collected_by_forms: SPEC_RULE,
  form_name_taken: SPEC_RULE,
  consent_channel_not_covered: SPEC_RULE,
  list_name_taken: SPEC_RULE,
  list_field_duplicated: SPEC_RULE,
  list_field_position_duplicated: SPEC_RULE,
  list_field_not_found: SPEC_RULE,
  list_field_inactive: SPEC_RULE,
  list_has_no_fields: SPEC_RULE,
  list_size_exceeded: SPEC_RULE,
  list_import_duplicated: SPEC_RULE,
  consent_term_inactive: SPEC_RULE,
  consent_term_no_current_version: SPEC_RULE,
  consent_contact_type_channel_mismatch: SPEC_RULE,
  consent_duplicate_rule: SPEC_RULE,
  consent_contact_pairs_mismatch: SPEC_RULE,
  user_already_member: SPEC_RULE,
  // 409: ours
  consent_identity_field_missing: { status: 409, where: `${SPEC_FORMS} (its code is not shown there); named in docs/forms.md` },
  instance_slug_taken: { status: 409, where: ours('domain/tenancy/instances.ts'), ...CLI },
  template_has_no_html: { status: 409, where: ours('docs/templates.md') },
  template_edit_conflict: { status: 409, where: ours('docs/templates.md') },
  dataset_identity_field_locked: { status: 409, where: ours('docs/datasets.md') },
  field_in_use: { status: 409, where: ours('docs/datasets.md') },
  consent_purpose_name_taken: { status: 409, where: ours('docs/consent.md') },
  consent_term_name_taken: { status: 409, where: ours('docs/consent.md') },
  consent_term_version_taken: { status: 409, where: ours('docs/consent.md') },
  form_confirmation_email_missing: { status: 409, where: ours('docs/forms.md') },
  webhook_inactive: { status: 409, where: ours('docs/webhooks.md') },
  webhook_limit_reached: { status: 409, where: ours('docs/webhooks.md') },
  user_already_exists: { status: 409, where: ours('domain/panel/users.ts'), ...CLI },
  member_last_owner: { status: 409, where: ours('docs/panel.md'), panel: true },
  sandbox_domain_managed: { status: 409, where: ours('docs/panel.md'), panel: true },
  // 410
  form_submission_expired: { status: 410, where: ours('docs/forms.md') },
  consent_event_expired: { status: 410, where: ours('docs/consent.md') },
  // 413, 415
  request_too_large: { status: 413, where: SPEC_LIST },
  unsupported_media_type: { status: 415, where: SPEC_LIST },
  // 422
  validation_error: { status: 422, where: SPEC_LIST },
  // The API answers these three as errors[] codes (of a validation_error); as a problem's own code
  // only the CLI does (cartero template --file, import-external).
  value_error: { status: 422, where: SPEC_422, ...CLI },
  invalid_document: { status: 422, where: SPEC_422, ...CLI },
  template_html_too_large: { status: 422, where: SPEC_422, ...CLI },
  idempotency_key_reused: { status: 422, where: ours('docs/forms.md, docs/sending.md') },
  // 429, 431, 500, 503
  rate_limit_exceeded: { status: 429, where: SPEC_LIST },
  request_header_fields_too_large: { status: 431, where: ours('docs/api-conventions.md, Errors') },
  internal_error: { status: 500, where: SPEC_LIST },
  service_unavailable: { status: 503, where: SPEC_LIST },
} as const satisfies Record<string, Omit<CatalogEntry, 'title'>>;

/**
 * What `<resource>_not_found` (404, "<resource> <id> not found") is emitted for. The spec's
 * examples first, then ours.
 */
export const NOT_FOUND_RESOURCES = {
  domain: SPEC_LIST,
  sender: SPEC_LIST,
  mail: SPEC_LIST,
  mail_template: SPEC_LIST,
  form: SPEC_LIST,
  webhook: SPEC_LIST,
  template_module: ours('docs/templates.md'),
  dataset: ours('docs/datasets.md'),
  list: ours('docs/datasets.md (lists)'),
  field: ours('docs/datasets.md (the field catalog)'),
  consent_term: ours('docs/consent.md'),
  consent_term_version: ours('docs/consent.md'),
  consent_purpose: ours('docs/consent.md'),
  consent_event: ours('domain/consent/events.ts'),
  webhook_delivery: ours('docs/webhooks.md'),
  instance: ours('domain/tenancy/instances.ts'),
  api_key: ours('domain/tenancy/api-keys.ts'),
  restriction: ours('cli/commands/restriction.ts'),
  user: ours('docs/panel.md'),
  member: ours('docs/panel.md'),
  invitation: ours('docs/panel.md (Invitations)'),
  import: ours('docs/panel.md (Datasets: an import\'s progress)'),
} as const;

export type NotFoundResource = keyof typeof NOT_FOUND_RESOURCES;
export type NotFoundCode = `${NotFoundResource}_not_found`;

/** Every code a problem object (or a CLI refusal) may carry. */
export type ErrorCode = keyof typeof CODES | NotFoundCode;

/** The codes of one status, e.g. CodeOf<409> for the business rules. */
export type CodeOf<S extends ErrorStatus> =
  | { [C in keyof typeof CODES]: (typeof CODES)[C]['status'] extends S ? C : never }[keyof typeof CODES]
  | (404 extends S ? NotFoundCode : never);

/** Resources only the CLI looks up; none since the panel API looks up keys and restrictions too. */
const CLI_RESOURCES: ReadonlySet<NotFoundResource> = new Set([]);
/** Resources only the panel's /v1/private routes look up by id (and the CLI: a key, a restriction by address). */
const PANEL_RESOURCES: ReadonlySet<NotFoundResource> = new Set(['member', 'invitation', 'api_key', 'restriction', 'import']);

function withTitle(entry: Omit<CatalogEntry, 'title'>): CatalogEntry {
  return { ...entry, title: STATUS_TITLES[entry.status] };
}

export const ERROR_CATALOG: Readonly<Record<ErrorCode, CatalogEntry>> = Object.freeze({
  ...(Object.fromEntries(Object.entries(CODES).map(([code, e]) => [code, withTitle(e)])) as Record<keyof typeof CODES, CatalogEntry>),
  ...(Object.fromEntries(
    Object.entries(NOT_FOUND_RESOURCES).map(([resource, where]) => [
      `${resource}_not_found`,
      withTitle({
        status: 404,
        where,
        ...(CLI_RESOURCES.has(resource as NotFoundResource) ? CLI : {}),
        ...(PANEL_RESOURCES.has(resource as NotFoundResource) ? { panel: true as const } : {}),
      }),
    ]),
  ) as Record<NotFoundCode, CatalogEntry>),
});

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, code);
}

/** The catalog's entry of a code; throws on one it lacks (a code cast past the type). */
export function catalogEntry(code: string): CatalogEntry {
  if (!isErrorCode(code)) throw new UnknownErrorCode(code);
  return ERROR_CATALOG[code];
}

export class UnknownErrorCode extends Error {
  constructor(readonly code: string) {
    super(`error code ${JSON.stringify(code)} is not in the catalog (errors/catalog.ts)`);
    this.name = 'UnknownErrorCode';
  }
}

/**
 * The codes of a 422's errors[] items: the spec's (JSON Schema keywords mapped to them in
 * domain/validation.ts) and ours. `value_error.<custom>` is the spec's family for custom rules; each
 * suffix used is listed, so a new one is a row here too.
 */
const FIELD_CODES = {
  // the spec's frequent values
  missing: SPEC_422,
  string_too_short: SPEC_422,
  string_too_long: SPEC_422,
  string_pattern_mismatch: SPEC_422,
  value_error: SPEC_422,
  int_parsing: SPEC_422,
  bool_parsing: SPEC_422,
  float_parsing: SPEC_422,
  enum: SPEC_422,
  literal_error: SPEC_422,
  field_value_invalid: SPEC_422,
  // templates' own (spec: "Endpoints add their own codes"); docs/templates.md lists the rules
  invalid_document: SPEC_422,
  essential_not_supported: SPEC_422,
  template_html_too_large: SPEC_422,
  template_render_timeout: ours('docs/templates.md, docs/security.md'),
  // JSON Schema keywords without a spec name (domain/validation.ts)
  string_type: ours('docs/api-conventions.md, Validation'),
  object_type: ours('docs/api-conventions.md, Validation'),
  array_type: ours('docs/api-conventions.md, Validation'),
  none_required: ours('domain/validation.ts'),
  type_error: ours('domain/validation.ts'),
  greater_than_equal: ours('docs/api-conventions.md, Validation'),
  less_than_equal: ours('docs/api-conventions.md, Validation'),
  greater_than: ours('domain/validation.ts'),
  less_than: ours('domain/validation.ts'),
  too_short: ours('docs/api-conventions.md, Validation'),
  too_long: ours('docs/api-conventions.md, Validation'),
  extra_forbidden: ours('docs/api-conventions.md, Validation'),
  date_parsing: ours('docs/api-conventions.md, Validation'),
  datetime_parsing: ours('docs/api-conventions.md, Validation'),
  finite_number: ours('docs/api-conventions.md, Validation'),
  'value_error.email': ours('domain/validation.ts (format email); domain/forms/definition.ts; domain/consent/vocabulary.ts'),
  'value_error.uri': ours('domain/validation.ts (format uri)'),
  'value_error.ipv4': ours('domain/validation.ts (format ipv4)'),
  'value_error.ipv6': ours('domain/validation.ts (format ipv6)'),
  'value_error.nul_character': ours('docs/api-conventions.md, Validation'),
  'value_error.lone_surrogate': ours('docs/api-conventions.md, Validation'),
  'value_error.too_deep': ours('docs/api-conventions.md, Validation'),
  'value_error.too_large': ours('docs/api-conventions.md, Validation; docs/consent.md'),
  'value_error.timezone': ours('docs/api-conventions.md, Validation'),
  'value_error.date_range': ours('docs/api-conventions.md, Validation'),
  'value_error.invalid_utf8': ours('docs/datasets.md (a CSV cell)'),
  // sending (docs/sending.md)
  'value_error.template_conflict': ours('docs/sending.md'),
  'value_error.template_empty': ours('domain/mail/accept.ts'),
  'value_error.header_name': ours('domain/mail/accept.ts'),
  'value_error.header_protected': ours('domain/mail/accept.ts'),
  'value_error.header_value': ours('domain/mail/accept.ts'),
  'value_error.duplicate_recipient': ours('docs/sending.md'),
  'value_error.merge_tags': ours('docs/sending.md'),
  'value_error.unknown_sender': ours('docs/sending.md'),
  'value_error.unknown_purpose': ours('docs/consent.md (consent at send)'),
  // consent (docs/consent.md)
  'value_error.empty_item': ours('api/routes/consent.ts'),
  'value_error.phone_number': ours('docs/consent.md'),
  'value_error.ip_address': ours('docs/consent.md'),
  'value_error.channel_not_in_term': ours('domain/consent/events.ts, domain/forms/definition.ts'),
  'value_error.purpose_not_in_term': ours('docs/consent.md'),
  // webhooks (docs/webhooks.md, docs/security.md)
  url_parsing: ours('docs/webhooks.md'),
  url_scheme: ours('docs/webhooks.md'),
  url_credentials: ours('docs/webhooks.md'),
  url_not_public: ours('docs/webhooks.md, docs/security.md'),
  // forms (docs/forms.md)
  'value_error.idempotency_key': ours('api/http/idempotency-key.ts'),
  'value_error.item_not_found': ours('domain/forms/definition.ts'),
  'value_error.field_not_found': ours('domain/forms/definition.ts'),
  'value_error.field_duplicated': ours('domain/forms/definition.ts'),
  'value_error.field_not_in_consent_form': ours('domain/forms/definition.ts'),
  'value_error.term_not_found': ours('domain/forms/definition.ts'),
  'value_error.dataset_not_found': ours('domain/forms/definition.ts'),
  'value_error.sender_not_found': ours('domain/forms/definition.ts'),
  'value_error.template_not_found': ours('domain/forms/definition.ts'),
  item_unknown: ours('docs/forms.md'),
  item_duplicated: ours('docs/forms.md'),
  field_value_missing: ours('docs/forms.md'),
  field_item_omitted: ours('docs/forms.md'),
  consent_item_omitted: ours('docs/forms.md'),
  consent_required: ours('docs/forms.md'),
  consent_term_version_stale: ours('docs/forms.md'),
} as const;

/** Every code an errors[] item may carry. */
export type FieldErrorCode = keyof typeof FIELD_CODES;

export const FIELD_ERROR_CATALOG: Readonly<Record<FieldErrorCode, string>> = Object.freeze(FIELD_CODES);

export function isFieldErrorCode(code: string): code is FieldErrorCode {
  return Object.hasOwn(FIELD_ERROR_CATALOG, code);
}
