import type { Logger } from 'pino';

/**
 * Run `stop` once on SIGTERM or SIGINT, then exit. A terminal's Ctrl-C reaches every process of
 * the group and `npm start`'s supervisor then sends SIGTERM too: that second, different signal
 * must not cut the graceful stop short. Only a repeated Ctrl-C (the user insisting), or a stop
 * that hangs past the grace period, exits at once.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, graceMs = 20_000): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      if (signal !== 'SIGINT') return;
      logger.warn({ signal }, 'second Ctrl-C, exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    setTimeout(() => {
      logger.error('graceful stop timed out');
      process.exit(1);
    }, graceMs).unref();
    stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

export function required(name: string, value: string | undefined): string {
  if (!value) {
    console.error(`${name} is required for this process (npm start sets it for the embedded default)`);
    process.exit(2);
  }
  return value;
}
