import type { Client, Pool } from '../../sql/pool.js';
import { isoUtc } from '../../sql/iso-time.js';
import { AppError, NotFoundError, RuleViolation, ValidationFailed, type FieldError } from '../errors.js';
import { uniquelyNamed, type NameIndex } from '../unique-names.js';
import type { Page, PageRequest } from '../pagination.js';
import { countWith, toCountedPage, window } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { likeContains } from '../text.js';
import type { CheckFailure } from '../../engines/beefree/check/index.js';
import type { ProcessedDocument } from '../../engines/beefree/document.js';
import type { Finding } from '../../engines/beefree/findings.js';
import { MAX_CONFIG_BYTES, MAX_HTML_BYTES } from '../../engines/beefree/format/limits.js';
import { inProcess, type DocumentProcessor } from './render-pool.js';

/**
 * Mail templates: storage and the rules of the spec's "Mail template" resource and its state
 * table. A native template is made from a design document (`config`), from which html and a
 * plain-text alternative are generated (engines/beefree/document.ts); an external one holds
 * HTML imported from an editor no longer offered and is never edited. Only the panel (the CLI)
 * publishes, unpublishes and deletes.
 */
export const TEMPLATE_STATUSES = ['draft', 'public'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];
export type TemplateProvider = 'native' | 'external';

/** A template as listings show it: without html, config and findings. */
export interface TemplateSummary {
  id: number;
  name: string;
  subject: string | null;
  preheader: string | null;
  status: TemplateStatus;
  description: string | null;
  provider: TemplateProvider;
  created_at: string;
  updated_at: string;
}

/** A template as a read, create or PATCH answers it. */
export interface Template extends TemplateSummary {
  html: string | null;
  config: unknown;
  /** Warnings and suggestions of the stored document's last check (errors are never stored). */
  findings: Finding[];
}

/** Spec limits (Limits table), in characters; the config's, in bytes, is MAX_CONFIG_BYTES. */
export const TEMPLATE_LIMITS = { name: 255, subject: 254, preheader: 255, description: 5000 } as const;

/** The fields a create or PATCH may set; a PATCH carries only those that change. */
export interface TemplateFields {
  name?: string | null;
  subject?: string | null;
  preheader?: string | null;
  description?: string | null;
  config?: unknown;
}

export interface TemplateFilter extends PageRequest {
  name?: string;
  status?: TemplateStatus;
}

/**
 * Whether the platform's editor is offered here (TEMPLATE_EDITOR). Off, the API neither creates
 * nor validates native templates nor changes a draft's design (config, preheader): 409
 * template_editor_unavailable. Reads, name/subject/description edits, external templates and
 * sending are unaffected.
 */
export interface EditorSetting {
  editor: 'on' | 'off';
  /** Where documents are checked and rendered: the web dyno's thread pool; the caller's thread when absent (the CLI). */
  processor?: DocumentProcessor;
  /** Told of each optional check that threw and was skipped, with the template's id (null for validate). */
  onCheckFailure?: (failure: CheckFailure, templateId: number | null) => void;
}

const SUMMARY = `id, name, subject, preheader, status, description, provider,
  ${isoUtc('created_at')} AS created_at, ${isoUtc('updated_at')} AS updated_at`;
const FULL = `${SUMMARY}, html, config, findings`;

const FILTER = `instance_id = $1 AND deleted_at IS NULL
   AND ($2::text IS NULL OR name ILIKE $2)
   AND ($3::text IS NULL OR status = $3)`;

export async function listTemplates(tenant: Tenant, pool: Pool, f: TemplateFilter): Promise<Page<TemplateSummary>> {
  const { limit, offset } = window(f);
  const params = [tenant.instanceId, f.name != null ? likeContains(f.name) : null, f.status ?? null];
  return withTenant(pool, tenant, async (c) => {
    const rows = await c.query<TemplateSummary & { total_count: number }>(
      `SELECT ${SUMMARY}, count(*) OVER ()::int AS total_count FROM mail_templates WHERE ${FILTER} ORDER BY id LIMIT $4 OFFSET $5`,
      [...params, limit, offset],
    );
    return toCountedPage(rows.rows, f, countWith(c, `SELECT count(*)::int AS n FROM mail_templates WHERE ${FILTER}`, params));
  });
}

async function readTemplate(tenant: Tenant, c: Client, id: number): Promise<Template> {
  const { rows } = await c.query<Template>(`SELECT ${FULL} FROM mail_templates WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL`, [
    tenant.instanceId,
    id,
  ]);
  if (!rows[0]) throw new NotFoundError('mail_template', id);
  return rows[0];
}

export async function getTemplate(tenant: Tenant, pool: Pool, id: number): Promise<Template> {
  return withTenant(pool, tenant, (c) => readTemplate(tenant, c, id));
}

/**
 * The config as stored: its compact JSON text, whose UTF-8 bytes are what the 262144-byte limit
 * measures (so whitespace a client pretty-prints with does not count, and the bound is the size
 * of what is kept). Over it: 413 request_too_large with max_bytes, as the spec's Limits say.
 */
function configText(config: unknown): string | null {
  if (config === null || config === undefined) return null;
  const text = JSON.stringify(config);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) {
    throw new AppError('request_too_large', `config is ${bytes} bytes (compact JSON, UTF-8); at most ${MAX_CONFIG_BYTES}`, {
      max_bytes: MAX_CONFIG_BYTES,
    });
  }
  return text;
}

/** `name: null` is the one null a write refuses (spec: null empties, except name). */
function nameErrors(fields: TemplateFields): FieldError[] {
  return 'name' in fields && fields.name === null ? [{ pointer: '/name', code: 'value_error', message: 'name cannot be null' }] : [];
}

/** RFC 6901 pointer of the document's `pointer` inside a request body. */
function bodyPointer(pointer: string): string {
  return `/config${pointer}`;
}

/**
 * The document's errors as a 422's errors[]: one item per error finding, its code
 * (invalid_document, essential_not_supported, template_html_too_large), the pointer into the
 * body, and params with the rule and the uuid of the nearest node that has one. Non-scalar
 * params arrive as text (spec: Field errors).
 */
export function documentErrors(errors: Finding[]): FieldError[] {
  return errors.map((f) => {
    const params: Record<string, unknown> = { rule: f.rule, uuid: f.uuid };
    for (const [k, v] of Object.entries(f.params ?? {})) {
      if (k !== 'rule' && k !== 'uuid' && v !== undefined) params[k] = v !== null && typeof v === 'object' ? JSON.stringify(v) : v;
    }
    return { pointer: bodyPointer(f.pointer), code: f.code ?? 'invalid_document', message: f.message, params };
  });
}

export interface Generated {
  findings: Finding[];
  html: string | null;
  text: string | null;
}

async function processed(config: unknown, meta: { subject: string | null; preheader: string | null }, setting: EditorSetting): Promise<ProcessedDocument> {
  return (setting.processor ?? inProcess).process(config ?? null, meta);
}

/** Checks and renders a document; its errors are the 422. */
async function generate(config: unknown, meta: { subject: string | null; preheader: string | null }, setting: EditorSetting): Promise<Generated & { checkFailures: CheckFailure[] }> {
  const result = await processed(config, meta, setting);
  if (result.errors.length) throw new ValidationFailed(documentErrors(result.errors));
  return { findings: result.findings, html: result.html, text: result.text, checkFailures: result.checkFailures };
}

/**
 * The stored document again with a new subject (the subject is the HTML's <title> and has a
 * suggestion of its own). The document was accepted when stored; should a later version of the
 * checker call it an error, editing the subject is not refused for it: html and findings are
 * then left as they were.
 */
async function regenerate(config: unknown, meta: { subject: string | null; preheader: string | null }, setting: EditorSetting): Promise<(Generated & { checkFailures: CheckFailure[] }) | undefined> {
  const result = await processed(config, meta, setting);
  return result.errors.length ? undefined : { findings: result.findings, html: result.html, text: result.text, checkFailures: result.checkFailures };
}

function reportCheckFailures(setting: EditorSetting, failures: CheckFailure[], templateId: number | null): void {
  for (const failure of failures) setting.onCheckFailure?.(failure, templateId);
}

function editorAvailable(setting: EditorSetting): void {
  if (setting.editor === 'off') {
    throw new RuleViolation('template_editor_unavailable', "the template editor is not available in this environment (TEMPLATE_EDITOR=off)");
  }
}

/** The unique index on the name key (sql/migrations/012) is the one judge of a name collision. */
const TEMPLATE_NAME: NameIndex = { constraint: 'mail_templates_name_key', code: 'template_name_taken', noun: 'template' };

/** Runs a write; a name collision becomes 409 template_name_taken. */
const naming = <T>(name: string | null | undefined, write: () => Promise<T>): Promise<T> => uniquelyNamed(TEMPLATE_NAME, name ?? '', write);

export interface ValidateResult {
  findings: Finding[];
  html: string | null;
}

/** POST /v1/mail-templates/validate: the findings and the HTML a create would store; nothing is. */
export async function validateTemplate(fields: TemplateFields, setting: EditorSetting): Promise<ValidateResult> {
  editorAvailable(setting);
  configText(fields.config);
  const { findings, html, checkFailures } = await generate(fields.config, { subject: fields.subject ?? null, preheader: fields.preheader ?? null }, setting);
  reportCheckFailures(setting, checkFailures, null);
  return { findings, html };
}

/** A new native draft from a design document (POST /v1/mail-templates, `cartero template import`). */
export async function createTemplate(
  tenant: Tenant,
  pool: Pool,
  fields: TemplateFields & { name: string },
  setting: EditorSetting,
): Promise<Template> {
  editorAvailable(setting);
  const errors = nameErrors(fields);
  if (errors.length) throw new ValidationFailed(errors);
  const config = configText(fields.config);
  const meta = { subject: fields.subject ?? null, preheader: fields.preheader ?? null };
  // Before the transaction: no connection is held while the document renders.
  const generated = await generate(fields.config, meta, setting);
  const created = await naming(fields.name, () =>
    withTenant(pool, tenant, async (c) => {
      const { rows } = await c.query<{ id: number }>(
        `INSERT INTO mail_templates (instance_id, name, subject, preheader, description, provider, config, html, text_body, findings)
         VALUES ($1, $2, $3, $4, $5, 'native', $6::json, $7, $8, $9::jsonb) RETURNING id`,
        [
          tenant.instanceId, fields.name, meta.subject, meta.preheader, fields.description ?? null, config,
          generated.html, generated.text, JSON.stringify(generated.findings),
        ],
      );
      return readTemplate(tenant, c, rows[0]!.id);
    }),
  );
  reportCheckFailures(setting, generated.checkFailures, created.id);
  return created;
}

/** The columns a PATCH reads before rendering; config as its stored JSON text, to compare exactly. */
interface PatchBase {
  provider: TemplateProvider;
  status: TemplateStatus;
  subject: string | null;
  preheader: string | null;
  config_text: string | null;
}

/** How many times a PATCH renders before giving up on a design that keeps changing under it. */
const PATCH_RENDER_ATTEMPTS = 3;

/**
 * PATCH /v1/mail-templates/{id}: only the fields present change; null empties (name excepted).
 * html, its text alternative and the findings are regenerated when config or preheader is
 * present (the spec's rule), and when subject is: the subject is the HTML's <title> and has a
 * suggestion of its own. A change of name or description renders nothing.
 *
 * Rendering takes up to seconds, so it is done first, holding no connection and no lock: the
 * row is read, the document rendered from what the PATCH sends plus what the row holds, and
 * only then is the row locked and compared. If a field the rendering used but the PATCH does
 * not set (config, subject, preheader) changed meanwhile, the html would not match what is
 * stored: the PATCH renders again from the new row, up to PATCH_RENDER_ATTEMPTS times, then
 * answers 409 template_edit_conflict (send it again). Otherwise it writes under the lock, so
 * two PATCHes at once apply one after the other: neither loses the other's fields, and the html
 * always matches the stored config, preheader and subject.
 */
export async function patchTemplate(tenant: Tenant, pool: Pool, id: number, fields: TemplateFields, setting: EditorSetting): Promise<Template> {
  const errors = nameErrors(fields);
  if (errors.length) throw new ValidationFailed(errors);
  const has = (k: keyof TemplateFields) => Object.prototype.hasOwnProperty.call(fields, k) && fields[k] !== undefined;
  const newConfig = has('config') ? configText(fields.config) : undefined;
  const design = has('config') || has('preheader');
  const renders = design || (has('subject') && setting.editor === 'on');

  const readBase = async (c: Client, lock: boolean): Promise<PatchBase> => {
    const { rows } = await c.query<PatchBase>(
      `SELECT provider, status, subject, preheader, config::text AS config_text FROM mail_templates
        WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
      [tenant.instanceId, id],
    );
    const row = rows[0];
    if (!row) throw new NotFoundError('mail_template', id);
    if (row.provider === 'external') {
      throw new RuleViolation('template_read_only', `template ${id} comes from an editor no longer offered and cannot be edited`);
    }
    if (row.status === 'public') {
      throw new RuleViolation('template_published', `template ${id} is published; unpublish it in the panel first`);
    }
    if (design) editorAvailable(setting);
    return row;
  };
  /** The rendering's inputs a row gives (the PATCH's own fields win). */
  const inputs = (row: PatchBase) => ({
    subject: has('subject') ? (fields.subject ?? null) : row.subject,
    preheader: has('preheader') ? (fields.preheader ?? null) : row.preheader,
    configText: has('config') ? (newConfig ?? null) : row.config_text,
  });
  const sameInputs = (a: ReturnType<typeof inputs>, b: ReturnType<typeof inputs>) =>
    a.subject === b.subject && a.preheader === b.preheader && a.configText === b.configText;

  for (let attempt = 1; ; attempt++) {
    let generated: (Generated & { checkFailures: CheckFailure[] }) | undefined;
    let renderedFrom: ReturnType<typeof inputs> | undefined;
    if (renders) {
      // Outside any transaction: no connection or lock is held while the document renders.
      renderedFrom = inputs(await withTenant(pool, tenant, (c) => readBase(c, false)));
      const config = has('config') ? fields.config : renderedFrom.configText === null ? null : JSON.parse(renderedFrom.configText);
      const meta = { subject: renderedFrom.subject, preheader: renderedFrom.preheader };
      generated = design ? await generate(config, meta, setting) : await regenerate(config, meta, setting);
    }
    const written = await naming(fields.name, () =>
      withTenant(pool, tenant, async (c) => {
        const row = await readBase(c, true);
        if (renderedFrom && !sameInputs(renderedFrom, inputs(row))) return undefined;
        const set: Array<[column: string, value: unknown, cast?: string]> = [];
        if (has('name')) set.push(['name', fields.name]);
        if (has('subject')) set.push(['subject', fields.subject ?? null]);
        if (has('preheader')) set.push(['preheader', fields.preheader ?? null]);
        if (has('description')) set.push(['description', fields.description ?? null]);
        if (has('config')) set.push(['config', newConfig, 'json']);
        // Without the editor a subject still changes, but nothing is rendered: html keeps its title.
        if (generated) set.push(['findings', JSON.stringify(generated.findings), 'jsonb'], ['html', generated.html], ['text_body', generated.text]);
        if (set.length) {
          // Column names come from the literal list above, never from the request.
          const assignments = set.map(([column, , cast], i) => `${column} = $${i + 3}${cast ? `::${cast}` : ''}`);
          await c.query(`UPDATE mail_templates SET ${assignments.join(', ')}, updated_at = now() WHERE instance_id = $1 AND id = $2`, [
            tenant.instanceId,
            id,
            ...set.map(([, value]) => value),
          ]);
        }
        return readTemplate(tenant, c, id);
      }),
    );
    if (written) {
      if (generated) reportCheckFailures(setting, generated.checkFailures, id);
      return written;
    }
    if (attempt >= PATCH_RENDER_ATTEMPTS) {
      throw new RuleViolation(
        'template_edit_conflict',
        `template ${id}'s design changed while this PATCH rendered it, ${attempt} times in a row; send the PATCH again`,
      );
    }
  }
}

/**
 * `cartero template import-external`: HTML from an editor no longer offered, as a draft. Its
 * size bound is the one generated HTML has (template_html_too_large).
 */
export async function importExternalTemplate(tenant: Tenant, pool: Pool, input: { name: string; html: string }): Promise<Template> {
  const bytes = Buffer.byteLength(input.html, 'utf8');
  if (bytes > MAX_HTML_BYTES) {
    throw new AppError('template_html_too_large', `the HTML is ${bytes} bytes; at most ${MAX_HTML_BYTES}`);
  }
  if (input.html.includes('\0')) throw new AppError('value_error', 'the HTML holds a NUL character');
  return naming(input.name, () =>
    withTenant(pool, tenant, async (c) => {
      const { rows } = await c.query<{ id: number }>(
        `INSERT INTO mail_templates (instance_id, name, provider, html) VALUES ($1, $2, 'external', $3) RETURNING id`,
        [tenant.instanceId, input.name, input.html],
      );
      return readTemplate(tenant, c, rows[0]!.id);
    }),
  );
}

/**
 * Publish or unpublish (panel only). A template without html has nothing to send, so it is not
 * published: 409 template_has_no_html. Setting the status it already has changes nothing.
 */
export async function setTemplateStatus(tenant: Tenant, pool: Pool, id: number, status: TemplateStatus): Promise<Template> {
  return withTenant(pool, tenant, async (c) => {
    const current = await readTemplate(tenant, c, id);
    if (current.status === status) return current;
    if (status === 'public' && current.html === null) {
      throw new RuleViolation('template_has_no_html', `template ${id} has no html to send (its design is empty)`);
    }
    await c.query(`UPDATE mail_templates SET status = $3, updated_at = now() WHERE instance_id = $1 AND id = $2`, [tenant.instanceId, id, status]);
    return readTemplate(tenant, c, id);
  });
}

/** Soft delete (panel only): gone from reads and sends, its name free again. Returns it as it was. */
export async function deleteTemplate(tenant: Tenant, pool: Pool, id: number): Promise<Template> {
  return withTenant(pool, tenant, async (c) => {
    const current = await readTemplate(tenant, c, id);
    await c.query(`UPDATE mail_templates SET deleted_at = now() WHERE instance_id = $1 AND id = $2`, [tenant.instanceId, id]);
    return current;
  });
}
