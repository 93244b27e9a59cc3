import { createServer, type RequestListener, type Server } from 'node:http';
import { createApp } from '../api/app.js';
import { trackingFastPath } from '../api/tracking.js';
import type { Route } from '../api/route.js';
import { createClickHouseClient } from '../analytics/client.js';
import { createPool } from '../sql/pool.js';
import { jobQueue } from './queue.js';
import type { Config, WebLimits } from './config.js';
import { runDyno } from './main.js';
import { required } from './shutdown.js';
import type { Logger } from 'pino';

export interface WebProcess {
  server: Server;
  url: string;
  stop(): Promise<void>;
}

/**
 * An HTTP server that a slow or idle client cannot hold for long (WEB_* in runtime/config.ts).
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
    handler,
  );
  // Behind a router keep-alive connections must outlive its idle timeout, or requests race closes.
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  return server;
}

/** Start the web dyno's HTTP server (also used in-process by tests). */
export async function startWeb(config: Config, logger: Logger, extraRoutes: Route[] = []): Promise<WebProcess> {
  const pool = createPool(required('DATABASE_URL', config.databaseUrl), { max: 20, application: 'cartero-web' });
  const clickhouse = createClickHouseClient(required('CLICKHOUSE_URL', config.clickhouseUrl));
  const queue = jobQueue(config.databaseUrl!);
  const app = createApp({ pool, clickhouse, config, logger, queue }, extraRoutes);
  // Opens and clicks are answered ahead of Express (api/tracking.ts, trackingFastPath: the hot
  // path of tracking); every other request, and any tracking request it does not take, is Express's.
  const fast = trackingFastPath(app);
  const server = boundedServer(config.webLimits, fast ? (req, res) => void (fast(req, res) || app(req, res)) : app);
  await new Promise<void>((resolve, reject) => {
    server.listen(config.port, () => resolve());
    server.once('error', reject);
  });
  const port = (server.address() as { port: number }).port;
  return {
    server,
    url: `http://localhost:${port}`,
    async stop() {
      // Stop accepting and let in-flight requests finish. A keep-alive connection becomes idle
      // only after its response, so idle ones are closed repeatedly, not once; past the
      // deadline whatever is left is cut. Then the pools those requests used are closed.
      await new Promise<void>((resolve) => {
        const idle = setInterval(() => server.closeIdleConnections(), 100);
        const deadline = setTimeout(() => server.closeAllConnections(), 10_000);
        server.close(() => {
          clearInterval(idle);
          clearTimeout(deadline);
          resolve();
        });
        server.closeIdleConnections();
      });
      await pool.end();
      await clickhouse.close();
    },
  };
}

runDyno(import.meta.url, 'web', async (config, logger) => {
  const web = await startWeb(config, logger);
  return { stop: () => web.stop(), describe: { url: web.url } };
});
