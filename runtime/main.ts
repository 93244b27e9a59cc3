import type { Logger } from 'pino';
import { loadConfigOrExit, type Config } from '../config/config.js';
import { isMain } from '../config/is-main.js';
import { createLogger } from './logger.js';
import { onShutdown } from './shutdown.js';

/**
 * A dyno's entry point (Procfile): configuration from the environment (a value not allowed
 * stops it here, exit 1), a logger named for the dyno, start, then a graceful stop on
 * SIGTERM/SIGINT. A failure to start exits 1.
 */
export function runDyno(
  moduleUrl: string,
  name: string,
  start: (config: Config, logger: Logger) => Promise<{ stop(): Promise<void>; describe: Record<string, unknown> }>,
): void {
  if (!isMain(moduleUrl)) return;
  const config = loadConfigOrExit(name);
  const logger = createLogger(config.logLevel, name);
  const started = start(config, logger);
  // The stop handler goes in before start finishes: a worker consumes jobs before its last
  // piece (the event pump, inbound SMTP) is up, and a SIGTERM in that window must still stop it
  // gracefully (exit 0), not kill it by the signal's default action. A stop asked for while
  // starting waits for the start, then stops what started.
  onShutdown(logger, async () => {
    const dyno = await started.catch(() => undefined);
    await dyno?.stop();
  });
  started.then(
    (dyno) => logger.info(dyno.describe, `${name} started`),
    (err) => {
      // The reason in the message itself: an operator reads this line first (a schema migrated by
      // newer code names both versions and what to do).
      logger.error({ err }, `${name} failed to start: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
