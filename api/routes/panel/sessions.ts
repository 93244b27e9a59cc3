import { AppError } from '../../../domain/errors.js';
import { admitLogin, loginSucceeded } from '../../../domain/panel/login-limits.js';
import { endSession, login } from '../../../domain/panel/sessions.js';
import { defineRoute } from '../../http/route.js';
import { loginSchema, sessionSchema } from '../../schemas/panel.js';
import { TAGS } from '../tags.js';

/**
 * Panel login and logout (docs/panel.md, Sessions). Failed logins are counted per client address,
 * per account and client address, and per account over every address, in Postgres
 * (domain/panel/login-limits.ts); an attempt past its budgets is answered 429 with Retry-After
 * before its password is looked at. The lock falls on the addresses that failed: the right
 * password from an address that has not failed is never refused for the account's sake.
 */

const tag = TAGS.panel;

const INVALID = 'The email address or the password is not right';

export const panelSessionRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/private/sessions',
    operationId: 'createPanelSession',
    summary: 'Sign in to the operator panel',
    description:
      'Checks the email address and password of a panel user (cartero user create) and opens a session: 201 with its token, shown ' +
      'once, to send as Authorization: Bearer on every /v1/private call. The session expires when unused for ' +
      'PANEL_SESSION_TTL_SECONDS (each call moves expires_at ahead), and at the latest PANEL_SESSION_MAX_AGE_SECONDS after this login, however often it is used. ' +
      'An unknown address, a wrong password and a disabled user get ' +
      'one identical 401 invalid_credentials, in comparable time. Failed logins are limited per client address ' +
      '(PANEL_LOGIN_FAILURES_PER_ADDRESS) and per account from each client address (PANEL_LOGIN_FAILURES_PER_ACCOUNT) within ' +
      'PANEL_LOGIN_FAILURE_WINDOW_SECONDS, across every web dyno: past either, 429 rate_limit_exceeded with Retry-After, whatever the password. ' +
      'An account past PANEL_LOGIN_FAILURES_PER_ACCOUNT_TOTAL failures from all addresses gives each address one attempt per window; ' +
      'an address that has not failed is never refused for the account (docs/panel.md).',
    tag,
    auth: { kind: 'public' },
    body: loginSchema,
    success: { status: 201, description: 'The session', schema: sessionSchema },
    errors: [401, 429],
    handler: async ({ body, deps, client }, res) => {
      const panel = deps.config.panel;
      const attempt = await admitLogin(deps.pool, panel, body.email, client.ip);
      const outcome = await login(deps.pool, body, { ttlSeconds: panel.sessionTtlSeconds, maxAgeSeconds: panel.sessionMaxAgeSeconds });
      if (outcome.kind === 'invalid') throw new AppError('invalid_credentials', INVALID, {}, { 'WWW-Authenticate': 'Bearer' });
      await loginSucceeded(attempt);
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
