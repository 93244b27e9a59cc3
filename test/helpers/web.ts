import type { Route } from '../../api/http/route.js';
import { loadConfig, type Config } from '../../config/config.js';
import { createLogger } from '../../runtime/logger.js';
import { startWeb } from '../../runtime/web.js';
import type { RenderPool } from '../../domain/templates/render-pool.js';
import { testDatabases, type TestDatabases } from './databases.js';
import { makeTenant } from './fixtures.js';
import type { Teardown } from './wait.js';

/**
 * The real web app on an ephemeral loopback port, stopped at teardown. Its internal listener
 * (/healthz, /readyz, /metrics) is on another ephemeral loopback port, `internalUrl`, unless
 * the env given says otherwise.
 */
export async function startTestWeb(
  t: Teardown,
  dbs: Pick<TestDatabases, 'databaseUrl' | 'clickhouseUrl'>,
  opts: { extraRoutes?: Route[]; env?: Record<string, string> } = {},
): Promise<{ url: string; internalUrl: string | undefined; config: Config; templates: RenderPool }> {
  const config = loadConfig({ INTERNAL_PORT: '0', ...opts.env, PORT: '0', DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl });
  // Every answer held to its declaration (api/http/answer-check.ts): each API test checks the contract too.
  const web = await startWeb(config, createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'web'), opts.extraRoutes, { checkAnswers: true });
  t.teardown(() => web.stop());
  return { url: web.url.replace('localhost', '127.0.0.1'), internalUrl: web.internalUrl, config, templates: web.templates };
}

/**
 * The bench of an API test: its databases, the real web app, and instances A and B with an API
 * key each (A's with `scopes`, B's with `scopesOfB`), B to show that A's ids are 404 to it.
 */
export async function startApiBench(t: Teardown, label: string, scopes: string[], scopesOfB = scopes) {
  const dbs = await testDatabases(t, label);
  const { url } = await startTestWeb(t, dbs);
  const a = await makeTenant(dbs.pool, { scopes });
  const b = await makeTenant(dbs.pool, { scopes: scopesOfB });
  return { dbs, url, a, b };
}
