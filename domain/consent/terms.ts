import type { Client, Pool } from '../../sql/pool.js';
import { isoUtc } from '../../sql/iso-time.js';
import { AppError, NotFoundError, RuleViolation } from '../errors.js';
import { orNameTaken, violates } from '../unique-names.js';
import type { Page, PageRequest } from '../pagination.js';
import { countWith, toCountedPage, window } from '../pagination.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { unknownPurposes } from './purposes.js';
import type { ConsentChannel, TermType } from './vocabulary.js';

/**
 * Consent terms and their versions (spec: Consent term). Everything but the listing is
 * panel-only (the CLI): creating a term, publishing a version (which does not make it current),
 * marking a version current, activating and deactivating. The database holds the rules that must
 * not depend on this code: one current version per term, purposes frozen, published text frozen
 * (sql/migrations/013_consent.sql).
 */
export interface TermVersion {
  version: string;
  body: string;
  document_url: string | null;
  is_current: boolean;
  published_at: string | null;
}

export interface ConsentTerm {
  id: number;
  name: string;
  type: TermType;
  purpose_ids: number[];
  channels: ConsentChannel[];
  is_active: boolean;
  created_at: string;
  updated_at: string;
  versions: TermVersion[];
}

/** Longest version body (legal text), in UTF-8 bytes; a whole privacy policy is far below. */
export const MAX_TERM_BODY_BYTES = 1024 * 1024;

// purpose_ids through to_json: a bigint[] would arrive as strings. Versions in publishing order.
const COLUMNS = `t.id, t.name, t.type, to_json(t.purpose_ids) AS purpose_ids, t.channels, t.is_active,
  ${isoUtc('t.created_at')} AS created_at, ${isoUtc('t.updated_at')} AS updated_at,
  coalesce((SELECT json_agg(json_build_object('version', v.version, 'body', v.body, 'document_url', v.document_url,
                                              'is_current', v.is_current, 'published_at', ${isoUtc('v.published_at')}) ORDER BY v.id)
              FROM consent_term_versions v WHERE v.instance_id = t.instance_id AND v.term_id = t.id), '[]') AS versions`;

export async function listTerms(tenant: Tenant, pool: Pool, page: PageRequest): Promise<Page<ConsentTerm>> {
  const { limit, offset } = window(page);
  return withTenant(pool, tenant, async (c) => {
    const rows = await c.query<ConsentTerm & { total_count: number }>(
      `SELECT ${COLUMNS}, count(*) OVER ()::int AS total_count FROM consent_terms t WHERE t.instance_id = $1 ORDER BY t.id LIMIT $2 OFFSET $3`,
      [tenant.instanceId, limit, offset],
    );
    return toCountedPage(rows.rows, page, countWith(c, 'SELECT count(*)::int AS n FROM consent_terms WHERE instance_id = $1', [tenant.instanceId]));
  });
}

/** One term as the listing shows it, read in the caller's tenant transaction; 404 when not the instance's. */
export async function readTerm(tenant: Tenant, client: Client, id: number): Promise<ConsentTerm> {
  const { rows } = await client.query<ConsentTerm>(`SELECT ${COLUMNS} FROM consent_terms t WHERE t.instance_id = $1 AND t.id = $2`, [
    tenant.instanceId,
    id,
  ]);
  if (!rows[0]) throw new NotFoundError('consent_term', id);
  return rows[0];
}

/**
 * Create a term (panel-only): its purposes (at least one, each a purpose of the instance) and
 * channels are fixed from now on. Active, with no version yet: consent cannot be registered
 * until a version is published and marked current.
 */
export async function createTerm(
  tenant: Tenant,
  pool: Pool,
  input: { name: string; type: TermType; purposeIds: readonly number[]; channels: readonly ConsentChannel[] },
): Promise<ConsentTerm> {
  const name = input.name.trim();
  if (!name || name.length > 255) throw new AppError('invalid_name', 'a term needs a name of 1 to 255 characters');
  const purposeIds = [...new Set(input.purposeIds)];
  const channels = [...new Set(input.channels)];
  if (!purposeIds.length) throw new AppError('invalid_purposes', 'a term needs at least one purpose');
  if (!channels.length) throw new AppError('invalid_channels', 'a term needs at least one channel');
  try {
    return await withTenant(pool, tenant, async (c) => {
      const unknown = await unknownPurposes(tenant, c, purposeIds);
      if (unknown.length) throw new NotFoundError('consent_purpose', unknown.join(', '));
      const { rows } = await c.query<{ id: number }>(
        `INSERT INTO consent_terms (instance_id, name, type, purpose_ids, channels) VALUES ($1, $2, $3, $4::bigint[], $5::text[]) RETURNING id`,
        [tenant.instanceId, name, input.type, purposeIds, channels],
      );
      return readTerm(tenant, c, rows[0]!.id);
    });
  } catch (err) {
    throw orNameTaken(err, { constraint: 'consent_terms_name_key', code: 'consent_term_name_taken', noun: 'term' }, name);
  }
}

/** Lock the term (versions change one at a time per term), or 404. */
async function lockTerm(tenant: Tenant, c: Client, termId: number): Promise<void> {
  const { rowCount } = await c.query('SELECT 1 FROM consent_terms WHERE instance_id = $1 AND id = $2 FOR UPDATE', [tenant.instanceId, termId]);
  if (!rowCount) throw new NotFoundError('consent_term', termId);
}

/**
 * Publish a version of a term's text (panel-only). It does not become current (spec): a term may
 * have versions and none current. Labels are unique per term; the text never changes afterwards.
 */
export async function addTermVersion(
  tenant: Tenant,
  pool: Pool,
  termId: number,
  input: { version: string; body: string; documentUrl?: string },
): Promise<ConsentTerm> {
  const version = input.version.trim();
  if (!version || version.length > 64) throw new AppError('invalid_version', 'a version label has 1 to 64 characters');
  if (!input.body.trim()) throw new AppError('invalid_body', 'the version body (the legal text) is empty');
  if (Buffer.byteLength(input.body, 'utf8') > MAX_TERM_BODY_BYTES) {
    throw new AppError('request_too_large', `the version body is over ${MAX_TERM_BODY_BYTES} bytes`, { max_bytes: MAX_TERM_BODY_BYTES });
  }
  if (input.body.includes('\0')) throw new AppError('invalid_body', 'the version body contains the NUL character');
  if (input.documentUrl !== undefined && !isHttpUrl(input.documentUrl)) {
    throw new AppError('invalid_document_url', 'the document URL must be an http or https URL of at most 2048 characters');
  }
  try {
    return await withTenant(pool, tenant, async (c) => {
      await lockTerm(tenant, c, termId);
      await c.query(
        `INSERT INTO consent_term_versions (instance_id, term_id, version, body, body_sha256, document_url)
         VALUES ($1, $2, $3, $4, '', $5)`,
        [tenant.instanceId, termId, version, input.body, input.documentUrl ?? null],
      );
      await c.query('UPDATE consent_terms SET updated_at = now() WHERE instance_id = $1 AND id = $2', [tenant.instanceId, termId]);
      return readTerm(tenant, c, termId);
    });
  } catch (err) {
    if (violates(err, 'consent_term_versions_label_key')) {
      throw new RuleViolation('consent_term_version_taken', `term ${termId} already has a version ${JSON.stringify(version)}`);
    }
    throw err;
  }
}

/**
 * Make one published version the current one (panel-only): the version a consent registered from
 * now on freezes. The previous current version stops being current in the same transaction; the
 * term's row lock orders concurrent calls, and the partial unique index refuses two current
 * versions whatever the code does.
 */
export async function setCurrentVersion(tenant: Tenant, pool: Pool, termId: number, version: string): Promise<ConsentTerm> {
  return withTenant(pool, tenant, async (c) => {
    await lockTerm(tenant, c, termId);
    const target = await c.query<{ id: number; is_current: boolean }>(
      'SELECT id, is_current FROM consent_term_versions WHERE instance_id = $1 AND term_id = $2 AND version = $3',
      [tenant.instanceId, termId, version],
    );
    const row = target.rows[0];
    if (!row) throw new AppError('consent_term_version_not_found', `term ${termId} has no version ${JSON.stringify(version)}`);
    if (!row.is_current) {
      await c.query('UPDATE consent_term_versions SET is_current = false WHERE instance_id = $1 AND term_id = $2 AND is_current', [
        tenant.instanceId,
        termId,
      ]);
      await c.query('UPDATE consent_term_versions SET is_current = true WHERE instance_id = $1 AND id = $2', [tenant.instanceId, row.id]);
      await c.query('UPDATE consent_terms SET updated_at = now() WHERE instance_id = $1 AND id = $2', [tenant.instanceId, termId]);
    }
    return readTerm(tenant, c, termId);
  });
}

/** Activate or deactivate a term (panel-only). An inactive term receives no new consents (409 consent_term_inactive). */
export async function setTermActive(tenant: Tenant, pool: Pool, termId: number, active: boolean): Promise<ConsentTerm> {
  return withTenant(pool, tenant, async (c) => {
    // A term already in that state is left untouched (updated_at too) and printed as it stands.
    await c.query(
      `UPDATE consent_terms SET is_active = $3, updated_at = now()
        WHERE instance_id = $1 AND id = $2 AND is_active IS DISTINCT FROM $3`,
      [tenant.instanceId, termId, active],
    );
    return readTerm(tenant, c, termId);
  });
}

function isHttpUrl(text: string): boolean {
  if (text.length > 2048) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
