import type { Route } from '../../api/http/route.js';
import { loadConfig, type Config } from '../../config/config.js';
import { createLogger } from '../../runtime/logger.js';
import { startWeb } from '../../runtime/web.js';
import type { RenderPool } from '../../domain/templates/render-pool.js';
import type { TestDatabases } from './databases.js';
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
