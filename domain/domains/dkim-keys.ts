import { createPrivateKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { NotFoundError, RuleViolation } from '../errors.js';
import type { Client, Pool } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import type { DnsCheckState } from './check-states.js';
import { normalizeDomainName } from './domain-name.js';
import type { KeyRing } from './key-encryption.js';
import { refuseSandbox } from './sandbox.js';

/**
 * A sending domain's DKIM keys (table dkim_keys, sql/migrations/019_dkim.sql): RSA 2048, one
 * selector each, the private key sealed by the key ring and never returned by any read here
 * except to the send worker (signingKeys).
 *
 * Which key signs: the newest live key whose record has verified; before any has, the newest
 * live key (a new domain's mail is signed from the start, and a domain approved by the operator
 * override `domain set-checks` signs too). So after `rotate-dkim` the old key keeps signing until
 * the new record verifies; then verification retires the older keys (dns-verify.ts).
 */
export interface DkimKey {
  id: number;
  selector: string;
  /** base64 DER SubjectPublicKeyInfo: the record's p= value. */
  public_key: string;
  status: DnsCheckState;
  created_at: Date;
}

const generateRsa = promisify(generateKeyPair);

/** `cartero<yyyymm>`, then `cartero<yyyymm>-2`, -3 ... for further keys of the same month. */
export function selectorFor(now: Date, taken: readonly string[]): string {
  const base = `cartero${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  if (!taken.includes(base)) return base;
  for (let n = 2; ; n++) if (!taken.includes(`${base}-${n}`)) return `${base}-${n}`;
}

export interface DkimKeyPair {
  /** base64 DER SubjectPublicKeyInfo. */
  publicKey: string;
  /** PKCS#8 PEM: sealed before it is stored, and never returned. */
  privateKeyPem: string;
}

/** RSA 2048, generated off the event loop (libuv's pool: about 100 ms of CPU), before any transaction. */
export async function generateDkimKeyPair(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generateRsa('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
}

/** Stores a key pair for a domain, sealed, under the next free selector; the caller's transaction holds the domain row. */
export async function insertDkimKey(tenant: Tenant, c: Client, ring: KeyRing, domainId: number, pair: DkimKeyPair, now = new Date()): Promise<DkimKey> {
  const taken = await c.query<{ selector: string }>('SELECT selector FROM dkim_keys WHERE instance_id = $1 AND domain_id = $2', [tenant.instanceId, domainId]);
  const selector = selectorFor(now, taken.rows.map((r) => r.selector));
  const { rows } = await c.query<DkimKey>(
    `INSERT INTO dkim_keys (instance_id, domain_id, selector, public_key, private_key_enc, key_ring_id)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::int, selector, public_key, status, created_at`,
    [tenant.instanceId, domainId, selector, pair.publicKey, ring.seal(pair.privateKeyPem), ring.id],
  );
  return rows[0]!;
}

/** The live keys of a domain, newest first. */
export async function liveKeys(tenant: Tenant, c: Client, domainId: number): Promise<DkimKey[]> {
  const { rows } = await c.query<DkimKey>(
    `SELECT id::int, selector, public_key, status, created_at FROM dkim_keys
      WHERE instance_id = $1 AND domain_id = $2 AND retired_at IS NULL ORDER BY id DESC`,
    [tenant.instanceId, domainId],
  );
  return rows;
}

/** The key that signs a domain's mail now (rule above), or undefined when the domain has none. */
export function signingKeyOf<K extends { status: DnsCheckState }>(live: readonly K[]): K | undefined {
  return live.find((k) => k.status === 'approved') ?? live[0];
}

/**
 * `cartero domain rotate-dkim`: a new key beside the live ones. The domain keeps signing with its
 * verified key until the new record verifies. A domain without any key (added before keys
 * existed) gets its first one this way. 409 domain_not_verified for a domain that has a key and
 * is not verified yet; 409 sandbox_domain_managed for the sandbox.
 */
export async function rotateDkimKey(tenant: Tenant, pool: Pool, ring: KeyRing, name: string): Promise<{ domainId: number; key: DkimKey }> {
  const pair = await generateDkimKeyPair();
  return withTenant(pool, tenant, async (c) => {
    // The domain row locked: two rotations at once pick different selectors.
    const d = await c.query<{ id: number; name: string; is_verified: boolean; is_sandbox: boolean; has_live_key: boolean }>(
      `SELECT d.id::int, d.name, d.is_verified, d.is_sandbox,
              EXISTS (SELECT 1 FROM dkim_keys k WHERE k.instance_id = d.instance_id AND k.domain_id = d.id AND k.retired_at IS NULL) AS has_live_key
         FROM domains d WHERE d.instance_id = $1 AND d.name = $2 FOR UPDATE`,
      [tenant.instanceId, normalizeDomainName(name)],
    );
    const domain = d.rows[0];
    if (!domain) throw new NotFoundError('domain', name);
    refuseSandbox(domain, 'given a DKIM key');
    // Rotation replaces a key that works. Before the domain verifies there is nothing to keep
    // signing: publishing the current record is the step, and a second pending key would only
    // be a second record to publish. A domain without a key gets its first one here.
    if (!domain.is_verified && domain.has_live_key) {
      throw new RuleViolation('domain_not_verified', `${domain.name} is not verified yet: publish its DKIM record and verify it before rotating the key`);
    }
    return { domainId: domain.id, key: await insertDkimKey(tenant, c, ring, domain.id, pair) };
  });
}

/** What the send worker signs with: per domain name, its selector and private key. */
export interface SigningKey {
  domain: string;
  selector: string;
  privateKey: KeyObject;
}

// Opened keys by row id (a key row never changes its key): a batch costs one query, not a
// decryption. Least recently used first, and bounded: retired keys and domains that stopped
// sending fall out instead of staying for the life of the worker.
const opened = new Map<number, KeyObject>();
const MAX_OPENED = 10_000;

function openedKey(id: number, open: () => KeyObject): KeyObject {
  let key = opened.get(id);
  if (key) opened.delete(id);
  else key = open();
  opened.set(id, key);
  if (opened.size > MAX_OPENED) opened.delete(opened.keys().next().value!);
  return key;
}

/** The signing key of each of these domains that has one (send worker, once per batch and instance). */
export async function signingKeys(tenant: Tenant, pool: Pool, ring: () => KeyRing, domains: readonly string[]): Promise<Map<string, SigningKey>> {
  const out = new Map<string, SigningKey>();
  if (!domains.length) return out;
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<{ id: number; domain: string; selector: string; status: DnsCheckState; private_key_enc: Buffer; key_ring_id: string }>(
      `SELECT k.id::int, d.name AS domain, k.selector, k.status, k.private_key_enc, k.key_ring_id
         FROM dkim_keys k JOIN domains d ON d.instance_id = k.instance_id AND d.id = k.domain_id
        WHERE k.instance_id = $1 AND d.name = ANY ($2::text[]) AND k.retired_at IS NULL
        ORDER BY k.id DESC`,
      [tenant.instanceId, [...domains]],
    ),
  );
  // The choice is signingKeyOf's, the rule the domain's records show (domain-records.ts).
  const live = new Map<string, typeof rows>();
  for (const r of rows) (live.get(r.domain) ?? live.set(r.domain, []).get(r.domain)!).push(r);
  for (const [domain, keys] of live) {
    const r = signingKeyOf(keys)!;
    const key = openedKey(r.id, () => createPrivateKey(ring().open(r.private_key_enc, r.key_ring_id)));
    out.set(domain, { domain, selector: r.selector, privateKey: key });
  }
  return out;
}
