import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { clickHouseFetch } from '../analytics/client.js';
import { freePort } from '../config/ports.js';
import { readServices } from '../config/services-file.js';
import { alive, childEnv, childrenOf, spawnNode, tempDataDir, waitDead } from './helpers/spawn.js';

/**
 * `npm start` with CLICKHOUSE_SHARDS=2: an embedded 2-shard ClickHouse cluster, listed shard by
 * shard in services.json, each URL usable as it stands; the dynos get shard 1's URL and
 * CLICKHOUSE_CLUSTER; rows written through that URL spread over both shards; Ctrl-C stops both.
 */

const DB_ENV = ['DATABASE_URL', 'CLICKHOUSE_URL', 'CLICKHOUSE_CLUSTER', 'DATA_DIR', 'PORT', 'WEBHOOK_ALLOW_PRIVATE'];

async function query(url: string, sql: string): Promise<string> {
  const res = await clickHouseFetch(url, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status} ${text}`);
  return text.trim();
}

t.test('npm start with CLICKHOUSE_SHARDS=2', async (t) => {
  const dir = tempDataDir(t);
  const port = await freePort();
  const env = childEnv({ DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'warn', CLICKHOUSE_SHARDS: '2' }, DB_ENV);
  const proc = spawnNode(t, 'dist/runtime/start.js', { env, detached: true });
  await proc.waitForStdout(new RegExp(`running at http://localhost:${port}\\b`), 180_000);

  const services = readServices(dir);
  const shards = services.clickhouse_shards ?? [];
  t.equal(shards.length, 2, 'services.json lists both shards');
  t.equal(services.clickhouse?.url, shards[0]?.url, "the `clickhouse` entry is shard 1, the dynos' CLICKHOUSE_URL");
  t.equal(services.clickhouse?.cluster, 'cartero');
  for (const [i, shard] of shards.entries()) {
    const cmdline = readFileSync(`/proc/${shard.pid}/cmdline`, 'utf8');
    t.ok(cmdline.includes(`--path=${join(dir, 'clickhouse-shards', `shard-${i + 1}`)}`), `shard ${i + 1}'s pid is its server`);
    t.ok(cmdline.includes(`--http_port=${shard.port}`), `shard ${i + 1} listens on its recorded port`);
    t.ok(new URL(shard.url).password, `shard ${i + 1}'s URL carries its credentials`);
    t.equal(await query(shard.url, "SELECT engine FROM system.tables WHERE database = 'cartero' AND name = 'mail_events'"), 'Distributed');
    t.equal(await query(shard.url, 'SELECT count() > 0 FROM cartero.schema_migrations'), '1', `shard ${i + 1} is migrated`);
  }

  // The dynos' environment: shard 1 and the cluster's name.
  const dynoEnvs = childrenOf(proc.pid).flatMap((pid) => {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return /dist\/runtime\/(web|worker)\.js/.test(cmd) ? [readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')] : [];
    } catch {
      return [];
    }
  });
  t.ok(dynoEnvs.length >= 2, `dynos found (${dynoEnvs.length})`);
  for (const e of dynoEnvs) {
    t.ok(e.includes('CLICKHOUSE_CLUSTER=cartero'), 'a dyno runs in cluster mode');
    t.ok(e.includes(`CLICKHOUSE_URL=${shards[0]!.url}`), "a dyno's CLICKHOUSE_URL is shard 1's");
  }

  // Rows written as the pump writes them (through shard 1's Distributed table) land on both shards.
  const rows = Array.from({ length: 200 }, (_, i) =>
    JSON.stringify({ instance_id: 1, event_type: 'open', occurred_at: '2026-11-01 10:00:00.000', event_id: i + 1, mail_id: `m${i}`, msg_id: `msg${i % 40}`, mail_received_at: '2026-11-01 09:00:00.000' }),
  ).join('\n');
  await query(shards[0]!.url, `INSERT INTO cartero.mail_events SETTINGS distributed_foreground_insert = 1 FORMAT JSONEachRow\n${rows}`);
  const perShard = await Promise.all(shards.map(async (s) => Number(await query(s.url, 'SELECT count() FROM cartero.mail_events_local'))));
  t.ok(perShard.every((n) => n > 0), `each shard holds part of the rows (${perShard.join(' + ')})`);
  t.equal(perShard[0]! + perShard[1]!, 200, 'and together all of them');
  t.equal(await query(shards[1]!.url, 'SELECT count() FROM cartero.mail_events'), '200', "any shard's Distributed table reads them all");

  proc.signal('SIGINT');
  const exit = await proc.waitExit(60_000);
  t.same(exit, { code: 0, signal: null }, 'Ctrl-C stops it cleanly');
  t.ok(await waitDead(shards.map((s) => s.pid), 10_000), `both shards are gone (${shards.map((s) => s.pid).filter(alive)})`);
});
