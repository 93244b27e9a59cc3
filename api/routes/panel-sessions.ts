import { createHash } from 'node:crypto';
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Config } from '../../config/config.js';
import { AppError, RateLimited } from '../../domain/errors.js';
import { endSession, login } from '../../domain/panel/sessions.js';
import type { Pool } from '../../sql/pool.js';
import { sharedRateLimiter } from '../../sql/rate-limits.js';
import { defineRoute } from '../http/route.js';
import { loginSchema, sessionSchema } from '../schemas/panel.js';
import { TAGS } from './tags.js';

/**
 * Panel login and logout (docs/panel.md, Sessions). Failed logins are counted per account and per
 * client address in Postgres (sql/rate-limits.ts: one budget for every web dyno); an account or
 * an address past its budget is answered 429 with Retry-After, before its password is looked at,
 * until its window ends. Every attempt takes its point before the password is checked (one atomic
 * upsert each), and a success gives it back: checking first and counting after would let a burst
 * of parallel guesses all pass the check. A success clears its account's count and returns its
 * address's point (only that one: an attacker holding one account cannot reset the address
 * budget with it).
 */

const tag = TAGS.panel;

interface LoginLimits {
  account: RateLimiterPostgres;
  address: RateLimiterPostgres;
}

// One pair of limiters per pool and sizes (each web app; test apps of other sizes count apart).
const limiters = new WeakMap<Pool, Map<string, LoginLimits>>();
function limitsOf(pool: Pool, panel: Config['panel']): LoginLimits {
  let bySize = limiters.get(pool);
  if (!bySize) limiters.set(pool, (bySize = new Map()));
  const size = `${panel.loginFailuresPerAccount}:${panel.loginFailuresPerAddress}:${panel.loginFailureWindowSeconds}`;
  let limits = bySize.get(size);
  if (!limits) {
    limits = {
      account: sharedRateLimiter(pool, 'panel_login_account', panel.loginFailuresPerAccount, panel.loginFailureWindowSeconds),
      address: sharedRateLimiter(pool, 'panel_login_address', panel.loginFailuresPerAddress, panel.loginFailureWindowSeconds),
    };
    bySize.set(size, limits);
  }
  return limits;
}

/** The account's key in rate_limits: a hash of the address, so the table holds no email addresses. */
const accountKey = (email: string) => createHash('sha256').update(email.trim().toLowerCase(), 'utf8').digest('base64url');

/** Takes one attempt's point; refused (the budget is spent) with a 429 saying when to retry. */
async function take(limiter: RateLimiterPostgres, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    throw new RateLimited(err.msBeforeNext / 1000);
  }
}

const INVALID = 'The email address or the password is not right';

export const panelSessionRoutes = [
  defineRoute<Record<string, never>, Record<string, never>, { email: string; password: string }>({
    method: 'post',
    path: '/v1/private/sessions',
    operationId: 'createPanelSession',
    summary: 'Sign in to the operator panel',
    description:
      'Checks the email address and password of a panel user (cartero user create) and opens a session: 201 with its token, shown ' +
      'once, to send as Authorization: Bearer on every /v1/private call. The session expires when unused for ' +
      'PANEL_SESSION_TTL_SECONDS (each call moves expires_at ahead). An unknown address, a wrong password and a disabled user get ' +
      'one identical 401 invalid_credentials, in comparable time. Failed logins are limited per account ' +
      '(PANEL_LOGIN_FAILURES_PER_ACCOUNT) and per client address (PANEL_LOGIN_FAILURES_PER_ADDRESS) within ' +
      'PANEL_LOGIN_FAILURE_WINDOW_SECONDS, across every web dyno: past either, 429 rate_limit_exceeded with Retry-After, whatever the password.',
    tag,
    auth: { kind: 'public' },
    body: loginSchema,
    success: { status: 201, description: 'The session', schema: sessionSchema },
    errors: [401, 429],
    handler: async ({ body, deps, client }, res) => {
      const panel = deps.config.panel;
      const limits = limitsOf(deps.pool, panel);
      const account = accountKey(body.email);
      const address = client.ip ?? 'unknown';
      await take(limits.address, address);
      await take(limits.account, account);
      const outcome = await login(deps.pool, body, panel.sessionTtlSeconds);
      if (outcome.kind === 'invalid') throw new AppError('invalid_credentials', INVALID, {}, { 'WWW-Authenticate': 'Bearer' });
      // Not a failure after all: the account starts again from zero, the address gets its point back.
      await limits.account.delete(account);
      await limits.address.reward(address, 1);
      res.status(201);
      return { token: outcome.token, expires_at: outcome.expires_at, user: outcome.user };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/private/sessions/current',
    operationId: 'deletePanelSession',
    summary: 'Sign out',
    description: 'Ends the session whose token authenticates this call: the token is refused (401) from now on. Other sessions of the user stay.',
    tag,
    auth: { kind: 'session' },
    success: { status: 204, description: 'Signed out' },
    handler: async ({ session, deps }, res) => {
      await endSession(deps.pool, session.id);
      res.status(204).end();
      return undefined;
    },
  }),
];
