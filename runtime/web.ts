import { createServer, type RequestListener, type Server } from 'node:http';
import { createApp, type AppOptions } from '../api/app.js';
import { answerClientError } from '../api/http/client-errors.js';
import { createInternalApp } from '../api/internal.js';
import { withEveryResponseHeaders } from '../api/http/response-headers.js';
import { createHttpMetrics } from '../api/http/metrics.js';
import { trackingFastPath } from '../api/tracking/fast-path.js';
import type { Route } from '../api/http/route.js';
import { createClickHouseClient } from '../analytics/client.js';
import { renderPool, type RenderPool } from '../domain/templates/render-pool.js';
import { checkSchemaVersion } from '../sql/migrate.js';
import { isConnectionFailure } from '../errors/connection.js';
import { createPool } from '../sql/pool.js';
import { jobQueue } from '../workers/machinery/queue.js';
import type { Config, WebLimits } from '../config/config.js';
import { runDyno } from './main.js';
import { required } from './shutdown.js';
import type { Logger } from 'pino';

export interface WebProcess {
  server: Server;
  url: string;
  /** The internal listener (/healthz, /readyz, /metrics), when INTERNAL_PORT is set. */
  internalUrl: string | undefined;
  /** The template render pool (its counters are what tests watch). */
  templates: RenderPool;
  stop(): Promise<void>;
}

/**
 * An HTTP server that a slow or idle client cannot hold for long (WEB_* in config/config.ts).
 * Node's requestTimeout covers receiving the request only, so a long streamed response (an
 * export) is never cut by it; a client that stops reading one is left to TCP and the router.
 * Node checks both timeouts on a timer, so they take effect within a quarter of the shorter one.
 */
function boundedServer(limits: WebLimits, handler: RequestListener): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(limits.headersTimeoutMs / 4))),
    },
    // Here, around whatever answers (Express, the tracking fast path, the internal app), so no response of any listener lacks them.
    withEveryResponseHeaders(handler),
  );
  // Behind a router keep-alive connections must outlive its idle timeout, or requests race closes.
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  // What Node's parser refuses (headers over 16 KB, too slow, not HTTP) is answered as a problem too.
  server.on('clientError', answerClientError);
  return server;
}

function listen(server: Server, port: number, host?: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as { port: number }).port));
  });
}

/**
 * Stop accepting and let in-flight requests finish. A keep-alive connection becomes idle only
 * after its response, so idle ones are closed repeatedly, not once; past the deadline whatever
 * is left is cut.
 */
function drain(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    const deadline = setTimeout(() => server.closeAllConnections(), 10_000);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Start the web dyno's HTTP server (also used in-process by tests). */
export async function startWeb(config: Config, logger: Logger, extraRoutes: Route[] = [], appOptions: AppOptions = {}): Promise<WebProcess> {
  // Bounded waits on Postgres: a request answers 503 rather than hang on a server that does not answer.
  const pool = createPool(required('DATABASE_URL', config.databaseUrl), {
    max: 20,
    application: 'cartero-web',
    queryTimeoutMs: config.databaseQueryTimeoutMs,
  });
  // Unbounded statements, for the panel's imports only (AppDeps.bulkPool); opened on first use.
  const bulkPool = createPool(config.databaseUrl!, { max: 8, application: 'cartero-web-bulk' });
  // A schema migrated by newer code stops the dyno here, before it serves anything (sql/migrate.ts).
  // A Postgres that does not answer does not: the web starts and answers 503 until it does.
  await checkSchemaVersion(pool).catch(async (err) => {
    if (isConnectionFailure(err)) return logger.warn({ err }, 'schema version not checked: Postgres does not answer');
    await Promise.all([pool.end(), bulkPool.end()]);
    throw err;
  });
  // A bounded wait: a ClickHouse that accepts connections but never answers (stopped, overloaded)
  // makes a listing answer 503 after CLICKHOUSE_REQUEST_TIMEOUT_MS instead of hanging, well
  // before a router's own limit (docs/operations.md, Bounded under a router).
  const clickhouseUrl = required('CLICKHOUSE_URL', config.clickhouseUrl);
  const clickhouse = createClickHouseClient(clickhouseUrl, undefined, { requestTimeoutMs: config.clickhouseRequestTimeoutMs });
  // The exports' own client: its timeout counts silence on the whole stream, so it is the bound
  // between chunks; the first byte has CLICKHOUSE_REQUEST_TIMEOUT_MS (analytics/export/stream.ts).
  const clickhouseExports = createClickHouseClient(clickhouseUrl, undefined, { requestTimeoutMs: config.clickhouseExportIdleTimeoutMs });
  const queue = jobQueue(config.databaseUrl!);
  const templates = renderPool(config.templateRender);
  const deps = { pool, bulkPool, clickhouse, clickhouseExports, config, logger, queue, templates };
  const metrics = createHttpMetrics();
  const app = createApp(deps, extraRoutes, metrics, appOptions);
  // Opens and clicks are answered ahead of Express (api/tracking/fast-path.ts: the hot path of
  // tracking) unless TRACKING_FAST_PATH=off; every other request, and any tracking request it
  // does not take, is Express's.
  const fast = config.trackingFastPath === 'on' ? trackingFastPath(app, deps, metrics) : undefined;
  const server = boundedServer(config.webLimits, fast ? (req, res) => void (fast(req, res) || app(req, res)) : app);
  const port = await listen(server, config.port);
  // The operator's endpoints on their own port (loopback unless INTERNAL_HOST says otherwise),
  // sharing the public app's metrics registry.
  const internal = config.internalPort === undefined ? undefined : boundedServer(config.webLimits, createInternalApp(deps, metrics));
  let internalPort: number | undefined;
  try {
    internalPort = internal ? await listen(internal, config.internalPort!, config.internalHost) : undefined;
  } catch (err) {
    // The port is taken (or the address wrong): nothing of this half-started web is left running.
    await drain(server);
    await Promise.all([pool.end(), bulkPool.end()]);
    await clickhouse.close();
    await clickhouseExports.close();
    await templates.close();
    throw err;
  }
  return {
    server,
    templates,
    url: `http://localhost:${port}`,
    internalUrl: internal ? `http://${config.internalHost.includes(':') ? `[${config.internalHost}]` : config.internalHost}:${internalPort}` : undefined,
    async stop() {
      await Promise.all([drain(server), ...(internal ? [drain(internal)] : [])]);
      // After the drain: no request is left waiting on a query or a render.
      await Promise.all([pool.end(), bulkPool.end(), clickhouse.close(), clickhouseExports.close(), templates.close()]);
    },
  };
}

runDyno(import.meta.url, 'web', async (config, logger) => {
  const web = await startWeb(config, logger);
  return { stop: () => web.stop(), describe: { url: web.url, ...(web.internalUrl ? { internal_url: web.internalUrl } : {}) } };
});
