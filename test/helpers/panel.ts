import { randomBytes } from 'node:crypto';
import { addMember } from '../../domain/panel/members.js';
import type { PanelRole } from '../../domain/panel/roles.js';
import { createUser } from '../../domain/panel/users.js';
import type { Pool } from '../../sql/pool.js';
import { jsonCall } from './http.js';

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
