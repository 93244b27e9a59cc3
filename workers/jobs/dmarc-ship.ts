import type { Logger } from 'pino';
import { insertDmarcReports } from '../../analytics/dmarc/insert.js';
import type { ClickHouseClient } from '../../analytics/client.js';
import { claimUnshipped, markShipped } from '../../domain/dmarc/ship.js';
import { withTransaction, type Pool } from '../../sql/pool.js';
import { startTickLoop } from '../machinery/tick-loop.js';

/**
 * The DMARC shipper: brings the aggregate reports the inbound listener stored in Postgres
 * (dmarc_reports, sql/migrations/031) into ClickHouse's dmarc_reports and dmarc_records, where the
 * listings read them. One transaction per tick: claim the oldest unshipped reports (FOR UPDATE
 * SKIP LOCKED: the shippers of several workers share them), insert them into ClickHouse, mark
 * them shipped (their records leave Postgres), commit. A crash or a ClickHouse failure before the
 * commit leaves them unshipped, to be shipped again: ReplacingMergeTree collapses a report shipped
 * twice. Reports are rare (a few per domain a day), so the loop polls slowly; the listener wakes
 * it after each stored report (gathering those of the next 200 ms), so a report is listed within
 * moments of its 250.
 */
export interface DmarcShipper {
  /** Ship now (after a report was stored): the next tick starts at once. */
  wake(): void;
  stop(): Promise<void>;
}

export const DMARC_SHIP_DEFAULTS = { intervalMs: 5_000, gatherMs: 200, maxReports: 50, maxRecords: 50_000 } as const;

export function startDmarcShipper(opts: { pool: Pool; clickhouse: ClickHouseClient; logger: Logger; intervalMs?: number }): DmarcShipper {
  const logger = opts.logger.child({ job: 'dmarc-ship' });
  const intervalMs = opts.intervalMs ?? DMARC_SHIP_DEFAULTS.intervalMs;
  let nudged: (() => void) | undefined;
  let failures = 0;

  async function tick(): Promise<boolean> {
    const shipped = await withTransaction(opts.pool, async (c) => {
      const reports = await claimUnshipped(c, DMARC_SHIP_DEFAULTS.maxReports, DMARC_SHIP_DEFAULTS.maxRecords);
      if (!reports.length) return 0;
      await insertDmarcReports(opts.clickhouse, reports);
      await markShipped(
        c,
        reports.map((r) => r.id),
      );
      return reports.length;
    }).then(
      (n) => {
        if (failures) logger.info('clickhouse is back: DMARC reports are being shipped');
        failures = 0;
        return n;
      },
      (err) => {
        failures++;
        logger.warn({ err: (err as Error).message }, 'DMARC reports could not be shipped: they wait in Postgres');
        return -1;
      },
    );
    if (shipped > 0) logger.info({ reports: shipped }, 'DMARC reports shipped to ClickHouse');
    if (shipped === 0 || shipped < 0) await pause(shipped < 0 ? Math.min(intervalMs * 2 ** Math.min(failures, 4), 60_000) : intervalMs);
    return true;
  }

  /** The pause between polls, cut short by wake(). */
  function pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        nudged = undefined;
        resolve();
      }
      nudged = done;
    });
  }

  // A wake ships a moment later, not at once: the reports of a burst (providers send around
  // midnight UTC) go in one insert, not one ClickHouse part each.
  let soon: NodeJS.Timeout | undefined;
  const loop = startTickLoop({ tick, intervalMs: 0, logger, failure: 'dmarc shipper tick failed' });
  return {
    wake: () => {
      soon ??= setTimeout(() => {
        soon = undefined;
        nudged?.();
      }, DMARC_SHIP_DEFAULTS.gatherMs);
    },
    async stop() {
      if (soon) clearTimeout(soon);
      const stopping = loop.stop();
      nudged?.();
      await stopping;
    },
  };
}
