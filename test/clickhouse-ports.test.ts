import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { clickHouseFetch } from '../analytics/client.js';
import { startEmbeddedClickHouseCluster } from '../analytics/embedded/cluster.js';
import { startEmbeddedClickHouse, type EmbeddedClickHouse } from '../analytics/embedded/server.js';
import { listeningPorts, nativeAttempt, type NativeAttempt } from './helpers/clickhouse-native.js';
import { alive } from './helpers/spawn.js';
import { TEST_DIR } from './setup/env.js';

/**
 * Issue 37: every port an embedded ClickHouse opens (HTTP always, native TCP in cluster mode, and
 * whatever else the process may listen on: the ports are read from /proc, not from our options)
 * refuses the password-less `default` user clickhouse-local keeps for itself, and every other
 * login without the service's credentials; none of those can stop a listener or the server
 * itself. The shards still reach each other with the service's credentials (a Distributed
 * insert and select).
 */

// Three server starts at ~0.2-0.5 s each, plus a first-time gcc of the launcher.
t.setTimeout(120_000);

const dir = join(TEST_DIR, 'clickhouse', `ports-${process.pid}`);
const single = await startEmbeddedClickHouse({ dir: join(dir, 'single') });
const cluster = await startEmbeddedClickHouseCluster({ dir: join(dir, 'cluster'), shards: 2 });
t.teardown(async () => {
  await Promise.all([single.stop(), cluster.stop()]);
  await rm(dir, { recursive: true, force: true });
});

const servers: Array<{ label: string; server: EmbeddedClickHouse; expected: number[] }> = [
  { label: 'single server', server: single, expected: [single.port] },
  ...cluster.shards.map((s, i) => ({ label: `shard ${i + 1}`, server: s as EmbeddedClickHouse, expected: [s.port, s.tcpPort].sort((a, b) => a - b) })),
];

const password = (s: EmbeddedClickHouse) => decodeURIComponent(new URL(s.url).password);
const MARK = 'answered-as-';
const PROBE = `SELECT '${MARK}' || currentUser()`;

/** With the service's credentials: what the dynos do. */
async function query(s: EmbeddedClickHouse, sql: string): Promise<string> {
  const res = await clickHouseFetch(s.url, { method: 'POST', body: sql, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status} ${text}`);
  return text.trim();
}

/** An HTTP request without the service's credentials: status and body, or how it failed. */
async function anonymousHttp(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers, body: PROBE, signal: AbortSignal.timeout(15_000) });
    return { status: res.status, body: await res.text() };
  } catch (err) {
    return { status: 0, body: String((err as Error).cause ?? err) };
  }
}

const HTTP_AS_DEFAULT: Array<[string, string, Record<string, string>]> = [
  ['Basic auth default:<empty>', '/', { Authorization: `Basic ${Buffer.from('default:').toString('base64')}` }],
  ['?user=default', '/?user=default', {}],
  ['?user=default&password=', '/?user=default&password=', {}],
  ['X-ClickHouse-User: default', '/', { 'X-ClickHouse-User': 'default' }],
  ['X-ClickHouse-User: default, empty X-ClickHouse-Key', '/', { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': '' }],
  ['no credentials', '/', {}],
];

function describe(a: NativeAttempt): string {
  return JSON.stringify(a.hello.type === 'other' ? { ...a.hello, firstBytes: a.hello.firstBytes.slice(0, 60) } : a.hello);
}

t.test('each server listens on exactly the ports it was given', async (t) => {
  for (const { label, server, expected } of servers) {
    t.same(listeningPorts(server.pid), expected, `${label}: ${expected.join(', ')}`);
  }
});

t.test('no port takes the password-less default user, over HTTP or the native protocol', async (t) => {
  for (const { label, server } of servers) {
    for (const port of listeningPorts(server.pid)) {
      const what = `${label}, port ${port}${port === server.port ? ' (HTTP)' : ''}`;
      for (const [how, path, headers] of HTTP_AS_DEFAULT) {
        const res = await anonymousHttp(port, path, headers);
        t.notOk(res.body.includes(MARK), `${what}, HTTP ${how}: no query ran`);
        if (port === server.port) t.equal(res.status, 401, `${what}, HTTP ${how}: 401`);
        else t.ok(res.status < 200 || res.status >= 300, `${what}, HTTP ${how}: refused (${res.status})`);
      }
      // A ClientHello as default with an empty password.
      const hello = await nativeAttempt(port, { user: 'default', password: '' });
      t.not(hello.hello.type, 'hello', `${what}, native hello as default: no ServerHello (${describe(hello)})`);
      if (port === server.port) continue;
      // Then what an attacker would run with it (not on the HTTP port: it waits for the end of a
      // request line until the timeout, and the hello alone shows it refuses).
      const attempt = await nativeAttempt(port, { user: 'default', password: '' }, 'SYSTEM STOP LISTEN HTTP');
      t.equal(attempt.hello.type, 'exception', `${what}: the native port answers an Exception (${describe(attempt)})`);
      t.equal(attempt.query, undefined, `${what}: no query ran as default`);
    }
    t.match(await query(server, PROBE), `${MARK}cartero`, `${label}: the HTTP listener still answers the service`);
    t.same(listeningPorts(server.pid), servers.find((s) => s.server === server)!.expected, `${label}: every listener is still open`);
  }
});

t.test('a refused native login neither stops nor kills a shard; the service still logs in', async (t) => {
  for (const [i, shard] of cluster.shards.entries()) {
    for (const credentials of [
      { user: 'cartero', password: 'not-the-password' },
      { user: 'nobody', password: '' },
      { user: 'default', password: 'anything' },
    ]) {
      const attempt = await nativeAttempt(shard.tcpPort, credentials, 'SYSTEM STOP LISTEN HTTP');
      t.equal(attempt.hello.type, 'exception', `shard ${i + 1}: ${credentials.user} with a wrong password is refused (${describe(attempt)})`);
    }
    t.ok(alive(shard.pid), `shard ${i + 1} is still running`);
    t.match(await query(shard, PROBE), `${MARK}cartero`, `shard ${i + 1} still answers over HTTP`);
    // This client speaks the protocol well enough to be let in: the refusals above are real ones.
    const service = await nativeAttempt(shard.tcpPort, { user: 'cartero', password: password(shard) });
    t.equal(service.hello.type, 'hello', `shard ${i + 1}: the service's credentials get a ServerHello`);
  }
});

t.test('the shards reach each other with the service credentials: a Distributed insert and select', async (t) => {
  const [one, two] = cluster.shards;
  for (const shard of cluster.shards) {
    await query(shard, 'CREATE DATABASE IF NOT EXISTS ports_test');
    await query(shard, 'CREATE TABLE IF NOT EXISTS ports_test.n_local (n UInt32) ENGINE = MergeTree ORDER BY n');
    await query(shard, `CREATE TABLE IF NOT EXISTS ports_test.n AS ports_test.n_local ENGINE = Distributed(${cluster.name}, ports_test, n_local, n)`);
  }
  await query(one!, 'INSERT INTO ports_test.n SETTINGS distributed_foreground_insert = 1 SELECT number FROM numbers(100)');
  const local = await Promise.all(cluster.shards.map(async (s) => Number(await query(s, 'SELECT count() FROM ports_test.n_local'))));
  t.ok(local.every((n) => n > 0), `each shard holds part of the rows (${local.join(' + ')})`);
  t.equal(local[0]! + local[1]!, 100, 'and together all of them');
  t.equal(await query(two!, 'SELECT count(), sum(n) FROM ports_test.n'), '100\t4950', "shard 2's Distributed table reads them all back");
});
