import type { Logger } from 'pino';

/**
 * Run `stop` once on the first SIGTERM or SIGINT, then exit 0 (1 when it fails or outlasts
 * `graceMs`). Only a second Ctrl-C (a second SIGINT: the user insisting) exits at once, 1; a
 * SIGTERM never cuts a stop short. Ctrl-Cs are counted, not signals: a terminal's Ctrl-C reaches
 * every process of the group, and `npm start`'s supervisor, which gets it too, sends each dyno
 * SIGTERM. The two race, and a dyno that takes the supervisor's SIGTERM first must not take the
 * terminal's own SIGINT, arriving after it, for a second Ctrl-C (it did: exit 1 with requests in
 * flight unanswered, docs/operations.md). A platform's repeated SIGTERM is a reminder, not an order.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, graceMs = 20_000): void {
  let stopping = false;
  let ctrlCs = 0;
  const handler = (signal: NodeJS.Signals) => {
    if (signal === 'SIGINT') ctrlCs += 1;
    if (stopping) {
      if (ctrlCs < 2) {
        // Said at info: each signal taken is a line, so an operator (and a test) sees it arrived.
        logger.info({ signal }, 'already stopping gracefully; a second Ctrl-C exits now');
        return;
      }
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
