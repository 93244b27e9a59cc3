import { randomBytes } from 'node:crypto';
import { addMember } from '../../domain/panel/members.js';
import type { PanelRole } from '../../domain/panel/roles.js';
import { createUser } from '../../domain/panel/users.js';
import { createInstance } from '../../domain/tenancy/instances.js';
import type { Pool } from '../../sql/pool.js';
import { testDatabases } from './databases.js';
import { jsonCall } from './http.js';
import type { Teardown } from './wait.js';
import { startApiBench, startTestWeb } from './web.js';

/** A panel user made through the same domain functions as `cartero user create` and `member add`. */
export interface PanelUserFixture {
  id: number;
  email: string;
  password: string;
}

export async function makePanelUser(pool: Pool, memberships: Array<{ instanceId: number; role: PanelRole }> = []): Promise<PanelUserFixture> {
  const email = `user-${randomBytes(4).toString('hex')}@example.org`;
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = await createUser(pool, { email, password });
  for (const m of memberships) await addMember(m.instanceId, pool, { email, role: m.role });
  return { id: user.id, email, password };
}

/** Signs in over HTTP; the session token (fails the test's fixture when the login is refused). */
export async function panelLogin(url: string, user: Pick<PanelUserFixture, 'email' | 'password'>): Promise<string> {
  const res = await jsonCall(url, 'POST', '/v1/private/sessions', { email: user.email, password: user.password }, {});
  if (res.status !== 201) throw new Error(`login of ${user.email}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token as string;
}

/** Headers of a /v1/private call with a session, for an instance when a slug is given. */
export function panelHeaders(token: string, slug?: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, ...(slug ? { 'x-instance-slug': slug } : {}) };
}

/**
 * The cast of a panel API test: instance A's owner, admin and viewer and instance B's owner,
 * each made a user and signed in at `url`, and `call` for a session's request to A (another
 * instance's slug when given).
 */
export async function panelCast(url: string, pool: Pool, a: { tenant: { instanceId: number }; slug: string }, b: { tenant: { instanceId: number } }) {
  const [owner, admin, viewer] = await Promise.all(
    (['owner', 'admin', 'viewer'] as const).map(async (role) => panelLogin(url, await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role }]))),
  );
  const ownerOfB = await panelLogin(url, await makePanelUser(pool, [{ instanceId: b.tenant.instanceId, role: 'owner' }]));
  const call = (token: string, method: string, path: string, body?: unknown, slug = a.slug) => jsonCall(url, method, path, body, panelHeaders(token, slug));
  return { owner, admin, viewer, ownerOfB, call };
}

/**
 * The bench of a panel API test: its databases, the real web app, instances A and B (A's API key
 * with `scopes`, B's with `scopesOfB`), the cast of panelCast, and `publicCall` for the public API
 * with A's key (other headers when given).
 */
export async function panelApiBench(t: Teardown, label: string, scopes: string[], scopesOfB = scopes) {
  const { dbs, url, a, b } = await startApiBench(t, label, scopes, scopesOfB);
  const cast = await panelCast(url, dbs.pool, a, b);
  const publicCall = (method: string, path: string, body?: unknown, headers = a.headers) => jsonCall(url, method, path, body, headers);
  return { dbs, pool: dbs.pool, url, a, b, ...cast, publicCall };
}

/**
 * The bench of a panel page test: its databases, the real web app (`env` added to its
 * configuration), the instance Acme (slug acme-<tag>, a fresh tag each run, with `name` and `tz`)
 * and one panel user per role in `roles`, a member of Acme with that role. The seven panel-web
 * files set up the same way; one place keeps them the same.
 */
export async function panelWebBench<R extends PanelRole>(
  t: Teardown,
  label: string,
  instance: { name: string; tz?: string },
  roles: readonly R[],
  env?: Record<string, string>,
) {
  const dbs = await testDatabases(t, label);
  const pool = dbs.pool;
  const web = await startTestWeb(t, dbs, env ? { env } : {});
  const tag = randomBytes(3).toString('hex');
  const acme = await createInstance(pool, { slug: `acme-${tag}`, ...instance });
  const users = {} as Record<R, PanelUserFixture>;
  for (const role of roles) users[role] = await makePanelUser(pool, [{ instanceId: acme.id, role }]);
  return { dbs, pool, web, tag, acme, users };
}
