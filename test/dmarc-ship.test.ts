import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import t from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { addDomain } from '../domain/domains/domains.js';
import { storeReport } from '../domain/dmarc/store.js';
import { parseAggregateReport } from '../engines/dmarc/parse.js';
import { withTransaction } from '../sql/pool.js';
import { startDmarcShipper } from '../workers/jobs/dmarc-ship.js';
import { corpusPath } from './helpers/corpus.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { waitFor } from './helpers/wait.js';

/**
 * The DMARC shipper (workers/jobs/dmarc-ship.ts) when ClickHouse does not answer: stored reports
 * wait in Postgres, records and all, and are shipped whole once a shipper reaches ClickHouse
 * again; shipped twice, a report is still one row.
 */

const dbs = await testDatabases(t, 'dmarc-ship');
const logger = pino({ level: 'silent' });
const a = await makeTenant(dbs.pool);
const domain = await addDomain(a.tenant, dbs.pool, 'example.com');
const report = parseAggregateReport(readFileSync(corpusPath('dmarc', 'samples', 'rfc9990-example.net_example.com_1700000000_1700086399.xml')));
const id = await withTransaction(dbs.pool, (c) => storeReport(a.tenant, c, domain.id, report, false));
const unshipped = async () => (await dbs.pool.query(`SELECT shipped_at IS NULL AS waiting, jsonb_array_length(records) AS records FROM dmarc_reports WHERE id = $1`, [id])).rows[0];
const good = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => good.close());
const count = async (table: string) => Number(((await (await good.query({ query: `SELECT count() AS n FROM ${table} FINAL`, format: 'JSONEachRow' })).json()) as Array<{ n: string }>)[0]!.n);

t.test('ClickHouse unreachable: the report waits in Postgres, records and all', async (t) => {
  // Port 1 on loopback: nothing listens, every insert is refused.
  const down = createClickHouseClient('http://127.0.0.1:1/cartero', undefined, { requestTimeoutMs: 2_000 });
  const failed: string[] = [];
  const shipper = startDmarcShipper({ pool: dbs.pool, clickhouse: down, logger: pino({ level: 'warn' }, { write: (line: string) => void failed.push(line) }), intervalMs: 50 });
  await waitFor('a failed shipment', () => (failed.length >= 2 ? true : undefined));
  await shipper.stop();
  await down.close();
  t.same(await unshipped(), { waiting: true, records: report.records.length }, 'still waiting, with its records');
  t.match(failed[0], /could not be shipped: they wait in Postgres/);
  t.equal(await count('dmarc_reports'), 0, 'nothing in ClickHouse');
});

t.test('ClickHouse back: shipped whole; shipped again, still one row', async (t) => {
  const shipper = startDmarcShipper({ pool: dbs.pool, clickhouse: good, logger, intervalMs: 50 });
  await waitFor('the shipment', async () => ((await unshipped()).waiting ? undefined : true));
  await shipper.stop();
  t.same(await unshipped(), { waiting: false, records: null }, 'shipped; the records left Postgres');
  t.same([await count('dmarc_reports'), await count('dmarc_records')], [1, report.records.length]);
  // As if a shipper died after ClickHouse's acknowledgement and before its commit: the same report again.
  await dbs.pool.query(`UPDATE dmarc_reports SET shipped_at = NULL, records = $2 WHERE id = $1`, [id, JSON.stringify(report.records)]);
  const again = startDmarcShipper({ pool: dbs.pool, clickhouse: good, logger, intervalMs: 50 });
  await waitFor('the second shipment', async () => ((await unshipped()).waiting ? undefined : true));
  await again.stop();
  t.same([await count('dmarc_reports'), await count('dmarc_records')], [1, report.records.length], 'one report, its records once');
});
