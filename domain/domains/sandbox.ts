import { AppError, RuleViolation } from '../errors.js';
import type { Client, Pool } from '../../sql/pool.js';
import { withTransaction } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';

/**
 * Every instance's sandbox (docs/panel.md, The sandbox; sql/migrations/027_sandbox.sql): the
 * domain <slug>.<SANDBOX_DOMAIN>, owned and vouched for by the service, with its sender
 * sandbox@<that domain>. It sends only to the addresses of the instance's enabled panel members.
 */

/**
 * Makes the database's sandbox domain SANDBOX_DOMAIN (release and `npm start`, after migrating):
 * a change renames every instance's sandbox domain and its senders' addresses (after the
 * instance's current slug), and an instance without a sandbox gets one. Idempotent; runs as the
 * service role.
 */
export async function syncSandboxDomain(pool: Pool, base: string): Promise<void> {
  await withTransaction(pool, async (c) => {
    await c.query("UPDATE service_settings SET value = $1 WHERE name = 'sandbox_domain' AND value <> $1", [base]);
    await c.query(
      `UPDATE domains d SET name = i.slug || '.' || $1, updated_at = now()
         FROM instances i WHERE d.is_sandbox AND i.id = d.instance_id AND d.name <> i.slug || '.' || $1
          -- An instance that added that very name as its own domain keeps its sandbox as it was:
          -- the release does not fail on it (docs/panel.md, The sandbox).
          AND NOT EXISTS (SELECT 1 FROM domains o WHERE o.instance_id = d.instance_id AND o.name = i.slug || '.' || $1)`,
      [base],
    );
    await c.query(
      `UPDATE senders s SET email_address = split_part(s.email_address, '@', 1) || '@' || d.name, updated_at = now()
         FROM domains d WHERE d.is_sandbox AND d.instance_id = s.instance_id AND d.id = s.domain_id
          AND split_part(s.email_address, '@', 2) <> d.name`,
    );
    await c.query('SELECT cartero_ensure_sandbox(id) FROM instances ORDER BY id');
  });
}

/** 409 sandbox_domain_managed: the sandbox's checks and keys are the service's, not the instance's. */
export function refuseSandbox(domain: { name: string; is_sandbox: boolean }, step: string): void {
  if (domain.is_sandbox) {
    throw new AppError('sandbox_domain_managed', `${domain.name} is the instance's sandbox domain: the service owns its records, so it cannot be ${step}`);
  }
}

/**
 * Acceptance of a send from a sandbox sender: 409 sandbox_relay_restricted unless every
 * recipient is the address of one of the instance's enabled members. Inside the send's
 * transaction, as its tenant.
 */
export async function assertSandboxRecipients(tenant: Tenant, c: Client, recipients: string[]): Promise<void> {
  const { rows } = await c.query<{ outside: string[] }>(
    `SELECT coalesce(array_agg(DISTINCT r ORDER BY r), '{}') AS outside
       FROM unnest($1::text[]) AS r WHERE r NOT IN (SELECT cartero_member_addresses())`,
    [recipients.map((r) => r.toLowerCase())],
  );
  const outside = rows[0]!.outside;
  if (!outside.length) return;
  const named = outside.slice(0, 3).join(', ') + (outside.length > 3 ? ` and ${outside.length - 3} more` : '');
  throw new RuleViolation(
    'sandbox_relay_restricted',
    `a sandbox sender sends only to the members of instance ${tenant.slug}; not a member: ${named}`,
  );
}
