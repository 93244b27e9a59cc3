import type { Logger } from 'pino';

/**
 * A stage that drains a table continuously (the event pump, the webhook fan-out): `tick` does one
 * batch and says whether it was full; a full batch is followed at once by the next, anything less
 * by a pause of `intervalMs` (a schedule's minute would be the latency floor). A failed tick is
 * logged and the loop goes on. `stop` ends it after the tick in progress.
 */
export function startTickLoop(opts: { tick: () => Promise<boolean>; intervalMs: number; logger: Logger; failure: string }): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  async function loop(): Promise<void> {
    if (stopped) return;
    let full = false;
    try {
      full = await (running = opts.tick());
    } catch (err) {
      if (!stopped) opts.logger.error({ err }, opts.failure);
    }
    if (!stopped) timer = setTimeout(() => void loop(), full ? 0 : opts.intervalMs);
  }
  timer = setTimeout(() => void loop(), 0);

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running.catch(() => {});
    },
  };
}
