import { AppError, NotFoundError } from '../errors.js';
import type { Pool } from '../../sql/pool.js';
import type { PageRequest, Page } from '../pagination.js';
import { countWith, toCountedPage, window } from '../pagination.js';
import { isoUtc } from '../../sql/iso-time.js';
import { likeContains } from '../text.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { generateDkimKeyPair, insertDkimKey } from '../domains/dkim-keys.js';
import { normalizeDomainName } from '../domains/domain-name.js';
import type { KeyRing } from '../domains/key-encryption.js';
import { isEmailAddress } from '../email-address.js';

export interface Sender {
  id: number;
  name: string;
  email_address: string;
  domain_id: number;
  domain_is_verified: boolean;
  is_consent_required: boolean;
  /** ISO 8601 UTC with milliseconds, as the API writes every time (isoUtc). */
  created_at: string;
  updated_at: string;
}

export interface SenderFilter extends PageRequest {
  name?: string;
  email?: string;
  is_domain_verified?: boolean;
}

// domain_is_verified is read from the domain row at each query (spec: recomputed at each query).
// Times are formatted by Postgres: parsing them into Dates only to print them again cost the
// listing about a fifth of its throughput (docs/performance-history.md, GET /v1/senders).
const COLUMNS = `s.id, s.name, s.email_address, s.domain_id, d.is_verified AS domain_is_verified,
                 s.is_consent_required, ${isoUtc('s.created_at')} AS created_at, ${isoUtc('s.updated_at')} AS updated_at`;
const FROM = `FROM senders s JOIN domains d ON d.instance_id = s.instance_id AND d.id = s.domain_id`;
const SELECT = `SELECT ${COLUMNS} ${FROM}`;

// Filters are bound as nullable parameters so the statement text is constant (one plan, no string building).
const FILTER = `s.instance_id = $1
   AND ($2::text IS NULL OR s.name ILIKE $2)
   AND ($3::text IS NULL OR s.email_address ILIKE $3)
   AND ($4::boolean IS NULL OR d.is_verified = $4)`;

export async function listSenders(tenant: Tenant, pool: Pool, f: SenderFilter): Promise<Page<Sender>> {
  const { limit, offset } = window(f);
  const params = [
    tenant.instanceId,
    f.name != null ? likeContains(f.name) : null,
    f.email != null ? likeContains(f.email) : null,
    f.is_domain_verified ?? null,
  ];
  return withTenant(pool, tenant, async (c) => {
    // Named: the listing is the hot path of the API, planned once per connection.
    const rows = await c.query<Sender & { total_count: number }>({
      name: 'senders-page',
      text: `SELECT ${COLUMNS}, count(*) OVER ()::int AS total_count ${FROM} WHERE ${FILTER} ORDER BY s.id LIMIT $5 OFFSET $6`,
      values: [...params, limit, offset],
    });
    return toCountedPage(rows.rows, f, countWith(c, { name: 'senders-count', text: `SELECT count(*)::int AS n ${FROM} WHERE ${FILTER}`, values: params }));
  });
}

export async function getSender(tenant: Tenant, pool: Pool, id: number): Promise<Sender> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<Sender>(`${SELECT} WHERE s.instance_id = $1 AND s.id = $2`, [tenant.instanceId, id]),
  );
  if (!rows[0]) throw new NotFoundError('sender', id);
  return rows[0];
}

/** The panel's listing: each sender marked when it is on the instance's sandbox domain. */
export async function withSandboxFlag(tenant: Tenant, pool: Pool, page: Page<Sender>): Promise<Page<Sender & { is_sandbox: boolean }>> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<{ id: number }>('SELECT id::int FROM domains WHERE instance_id = $1 AND is_sandbox', [tenant.instanceId]),
  );
  const sandbox = rows[0]?.id;
  return { ...page, data: page.data.map((s) => ({ ...s, is_sandbox: Number(s.domain_id) === sandbox })) };
}

async function domainExists(tenant: Tenant, pool: Pool, name: string): Promise<boolean> {
  const { rows } = await withTenant(pool, tenant, (c) => c.query('SELECT 1 FROM domains WHERE instance_id = $1 AND name = $2', [tenant.instanceId, name]));
  return rows.length > 0;
}

/**
 * Create a sender (panel-only). Its domain is the address's domain; when the instance does not
 * have it yet it is added in the pending state, so the sender exists but cannot send until the
 * four DNS checks are approved. Given a key ring, such a new domain also gets its DKIM key, as
 * `domain add` gives one (docs/domains.md): without it DNS could never approve its DKIM check.
 * The ring is asked for only then, so a sender on a known domain needs no encryption key.
 */
export async function createSender(
  tenant: Tenant,
  pool: Pool,
  input: { email: string; name: string; consentRequired?: boolean },
  opts: { ring?: () => KeyRing } = {},
): Promise<Sender & { domain_created: boolean }> {
  const email = input.email.trim().toLowerCase();
  if (!isEmailAddress(email)) throw new AppError('invalid_email', `not an email address: ${input.email}`);
  if (!input.name.trim()) throw new AppError('invalid_name', 'a sender needs a name');
  const domain = normalizeDomainName(email.slice(email.lastIndexOf('@') + 1));
  // The key pair (~100 ms of CPU) is made before the transaction, and only for a domain the
  // instance lacks; one made for a domain a concurrent call adds first is dropped.
  const ring = opts.ring && !(await domainExists(tenant, pool, domain)) ? opts.ring() : undefined;
  const pair = ring ? await generateDkimKeyPair() : undefined;
  const result = await withTenant(pool, tenant, async (c) => {
    const created = await c.query<{ id: number }>(
      `INSERT INTO domains (instance_id, name) VALUES ($1, $2) ON CONFLICT (instance_id, name) DO NOTHING RETURNING id`,
      [tenant.instanceId, domain],
    );
    if (created.rows[0] && ring && pair) await insertDkimKey(tenant, c, ring, created.rows[0].id, pair);
    const inserted = await c.query<{ id: number }>(
      `INSERT INTO senders (instance_id, domain_id, name, email_address, is_consent_required)
       SELECT $1, d.id, $3, $4, $5 FROM domains d WHERE d.instance_id = $1 AND d.name = $2
       ON CONFLICT (instance_id, email_address) DO NOTHING RETURNING id`,
      [tenant.instanceId, domain, input.name.trim(), email, input.consentRequired ?? false],
    );
    return { id: inserted.rows[0]?.id, domainCreated: created.rowCount === 1 };
  });
  if (result.id === undefined) throw new AppError('sender_already_exists', `a sender with email ${email} exists`);
  return { ...(await getSender(tenant, pool, result.id)), domain_created: result.domainCreated };
}

export async function setSenderConsentRequired(tenant: Tenant, pool: Pool, id: number, value: boolean): Promise<Sender> {
  const { rowCount } = await withTenant(pool, tenant, (c) =>
    c.query('UPDATE senders SET is_consent_required = $3, updated_at = now() WHERE instance_id = $1 AND id = $2', [
      tenant.instanceId,
      id,
      value,
    ]),
  );
  if (!rowCount) throw new NotFoundError('sender', id);
  return getSender(tenant, pool, id);
}
