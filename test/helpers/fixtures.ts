import { randomBytes } from 'node:crypto';
import { createApiKey } from '../../domain/tenancy/api-keys.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { createInstance } from '../../domain/tenancy/instances.js';
import { addDomain, setDomainChecks } from '../../domain/domains/domains.js';
import { createSender } from '../../domain/senders/senders.js';
import type { Pool } from '../../sql/pool.js';

export interface TestTenant {
  tenant: Tenant;
  slug: string;
  key: string;
  keyId: string;
  /** Headers for an authenticated call as this tenant. */
  headers: Record<string, string>;
}

/** An instance with one API key; fixtures go through the same domain functions as the CLI. */
export async function makeTenant(
  pool: Pool,
  opts: { scopes?: string[]; tz?: string; slug?: string; allowCidrs?: string[]; expiresAt?: Date } = {},
): Promise<TestTenant> {
  const slug = opts.slug ?? `t-${randomBytes(4).toString('hex')}`;
  const instance = await createInstance(pool, { slug, tz: opts.tz ?? null });
  const key = await createApiKey(pool, {
    instanceSlug: slug,
    scopes: opts.scopes ?? ['senders:read', 'domains:read'],
    allowCidrs: opts.allowCidrs,
    expiresAt: opts.expiresAt ?? null,
  });
  return {
    tenant: { instanceId: instance.id, slug, tz: instance.tz },
    slug,
    key: key.key,
    keyId: key.key_id,
    headers: { authorization: `Bearer ${key.key}`, 'x-instance-slug': slug },
  };
}

/** A domain (verified unless told otherwise) with senders on it. */
export async function makeSenders(
  pool: Pool,
  tenant: Tenant,
  opts: { domain?: string; verified?: boolean; senders: Array<{ email: string; name: string }> },
): Promise<number[]> {
  const domain = opts.domain ?? `${randomBytes(3).toString('hex')}.example.com`;
  await addDomain(tenant, pool, domain);
  if (opts.verified ?? true) await setDomainChecks(tenant, pool, domain, { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });
  const ids: number[] = [];
  for (const s of opts.senders) ids.push((await createSender(tenant, pool, { email: `${s.email}@${domain}`, name: s.name })).id);
  return ids;
}
