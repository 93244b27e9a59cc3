import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { clickHouseFetch, createClickHouseClient, databaseOf, pingClickHouse, type ClickHouseClient } from '../analytics/client.js';
import { startEmbeddedClickHouse, type EmbeddedClickHouse } from '../analytics/embedded/server.js';
import { migrateClickHouse } from '../analytics/migrate.js';
import { migrations } from '../analytics/migrations/index.js';
import { alive } from './helpers/spawn.js';

// Five server starts at ~0.2-0.5 s each, plus first-time gcc; generous for a loaded CI box.
t.setTimeout(120_000);

async function tempDir(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `cartero-${name}-`));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function start(dir: string, port?: number): Promise<EmbeddedClickHouse> {
  const server = await startEmbeddedClickHouse({ dir, port, log: (m) => t.comment(m) });
  t.teardown(() => server.stop()); // no-op when the test already stopped it
  return server;
}

function client(url: string): ClickHouseClient {
  const c = createClickHouseClient(url);
  t.teardown(() => c.close());
  return c;
}

async function rows<T>(c: ClickHouseClient, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await c.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}

t.test('databaseOf reads the URL path, defaulting to cartero', async (t) => {
  t.equal(databaseOf('http://127.0.0.1:8123'), 'cartero');
  t.equal(databaseOf('http://127.0.0.1:8123/'), 'cartero');
  t.equal(databaseOf('http://u:p@127.0.0.1:8123/analytics'), 'analytics');
  t.equal(databaseOf('http://127.0.0.1:8123/analytics/'), 'analytics');
  t.equal(databaseOf('https://ch.example/my%2Ddb?request_timeout=5000'), 'my-db');
  t.throws(() => databaseOf('http://127.0.0.1:8123/a/b'), /single database name/);
});

t.test('embedded server: migrate, write, read, survive a restart', async (t) => {
  const dir = await tempDir('ch');
  const started = Date.now();
  let server = await start(dir);
  t.comment(`started in ${Date.now() - started} ms (includes gcc on a cold cache)`);
  t.match(server.url, /^http:\/\/cartero:[0-9a-f]{64}@127\.0\.0\.1:\d+$/, 'the URL carries the credentials');
  t.equal(server.where, `http://127.0.0.1:${server.port}`);
  t.ok(alive(server.pid), 'launcher process is running');

  const url = `${server.url}/cartero_test`;
  t.same(await migrateClickHouse(url), { applied: migrations.map((m) => m.version) }, 'first run applies all');
  t.same(await migrateClickHouse(url), { applied: [] }, 'second run applies nothing');

  let ch = client(url);
  t.equal(await pingClickHouse(ch), true);
  t.same(await rows(ch, 'SELECT currentDatabase() AS db'), [{ db: 'cartero_test' }], 'client uses the URL database');

  await ch.insert({
    table: 'service_info',
    values: [
      { key: 'probe', value: 'hello', updated_at: '2026-01-01 00:00:00.000' },
      { key: 'other', value: 'not me', updated_at: '2026-01-01 00:00:00.000' },
    ],
    format: 'JSONEachRow',
  });
  const probe = 'SELECT value FROM service_info FINAL WHERE key = {key:String}';
  t.same(await rows(ch, probe, { key: 'probe' }), [{ value: 'hello' }]);

  // System logs are what fills small disks; this server must create none (see configXml).
  await ch.command({ query: 'SYSTEM FLUSH LOGS' });
  const logTables = await rows(ch, "SELECT name FROM system.tables WHERE database = 'system' AND endsWith(name, '_log')");
  t.same(logTables, [], 'no system.*_log tables');
  t.match(await readFile(join(dir, 'config.xml'), 'utf8'), /<clickhouse>/, 'config written into the data dir');

  const pid = server.pid;
  await server.stop();
  t.notOk(alive(pid), 'stop() waits for the process to exit');
  t.equal(await pingClickHouse(ch), false, 'nothing answers after stop');
  await server.stop(); // idempotent

  server = await start(dir);
  ch = client(`${server.url}/cartero_test`);
  t.same(await rows(ch, probe, { key: 'probe' }), [{ value: 'hello' }], 'data survives a restart');
  t.same(await migrateClickHouse(`${server.url}/cartero_test`), { applied: [] }, 'versions survive a restart');
  await server.stop();
});

t.test('the embedded server answers only its own credentials', async (t) => {
  const dir = await tempDir('ch-auth');
  const logged: string[] = [];
  let server = await startEmbeddedClickHouse({ dir, log: (m) => logged.push(m) });
  t.teardown(() => server.stop());
  const password = (await readFile(join(dir, 'password'), 'utf8')).trim();
  t.match(password, /^[0-9a-f]{64}$/, 'a password generated into the data dir');
  for (const file of ['password', 'users.xml', 'config.xml']) {
    t.equal((await stat(join(dir, file))).mode & 0o777, 0o600, `${file} is mode 0600`);
  }
  t.equal(new URL(server.url).password, password, 'the URL carries that password');

  // What a webhook (or any process on the machine) could send: none of it may run a query.
  const select = `${server.where}/?query=${encodeURIComponent('SELECT 1')}`;
  const basic = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });
  const refused: Array<[string, string, RequestInit]> = [
    ['no credentials, ?query=', select, {}],
    ['no credentials, POST', server.where, { method: 'POST', body: 'SELECT 1' }],
    ['the passwordless default user, Basic', select, { headers: basic('default', '') }],
    ['the passwordless default user, X-ClickHouse-User', select, { headers: { 'x-clickhouse-user': 'default' } }],
    ['the default user, ?user=', `${select}&user=default`, {}],
    ['the right user, ?user=&password=', `${select}&user=cartero&password=${password}`, {}],
    ['a wrong password', select, { headers: basic('cartero', 'x'.repeat(64)) }],
    ['another path', `${server.where}/play`, {}],
  ];
  for (const [what, url, init] of refused) {
    const res = await fetch(url, init);
    t.equal(res.status, 401, `refused: ${what}`);
    t.notMatch(await res.text(), /^1$/m, `no result: ${what}`);
  }
  t.equal((await fetch(`${server.where}/ping`)).status, 200, '/ping stays open');

  const accepted = async (headers: Record<string, string>) => (await fetch(`${server.where}/?query=${encodeURIComponent('SELECT currentUser()')}`, { headers })).text();
  t.equal(await accepted(basic('cartero', password)), 'cartero\n', 'Basic auth with the password');
  t.equal(await accepted({ 'x-clickhouse-user': 'cartero', 'x-clickhouse-key': password }), 'cartero\n', 'X-ClickHouse-User/Key with the password');
  t.equal(await (await clickHouseFetch(`${server.url}/?query=SELECT%201`)).text(), '1\n', 'clickHouseFetch sends the URL credentials');
  const ch = client(`${server.url}/system`);
  t.same(await rows(ch, 'SELECT currentUser() AS u'), [{ u: 'cartero' }], '@clickhouse/client takes the credentials from the URL');
  // default stays (clickhouse-local's own session needs it) but can do no more than its keep-alive.
  t.same(await rows(ch, 'SELECT name FROM system.users ORDER BY name'), [{ name: 'cartero' }, { name: 'default' }], 'no other user');
  const grants = await rows<{ g: string }>(ch, "SELECT access_type || ' ' || ifNull(database, '*') || '.' || ifNull(table, '*') AS g FROM system.grants WHERE user_name = 'default' ORDER BY g");
  t.same(grants.map((r) => r.g), ['SELECT system.numbers', 'SYSTEM LISTEN *.*'], 'default may only start the listener');

  const url = server.url;
  await server.stop();
  t.ok(logged.length >= 2, 'the launcher logged its start and stop');
  t.notOk(logged.some((m) => m.includes(password)), `no log line holds the password (${logged.join(' | ')})`);
  server = await start(dir, server.port);
  t.equal(server.url, url, 'a restart on the same dir reuses the password (and the port given)');
  t.equal((await fetch(select)).status, 401, 'and still refuses anonymous requests');
  await server.stop();
});

t.test('two embedded servers side by side are independent', async (t) => {
  const [a, b] = await Promise.all([start(await tempDir('ch-a')), start(await tempDir('ch-b'))]);
  t.not(a.port, b.port);
  for (const [server, value] of [[a, 'from a'], [b, 'from b']] as const) {
    await migrateClickHouse(`${server.url}/cartero`);
    await client(`${server.url}/cartero`).command({
      query: "INSERT INTO service_info (key, value, updated_at) SELECT 'who', {value:String}, now64(3, 'UTC')",
      query_params: { value },
    });
  }
  const probe = "SELECT value FROM service_info FINAL WHERE key = 'who'";
  t.same(await rows(client(`${a.url}/cartero`), probe), [{ value: 'from a' }]);
  t.same(await rows(client(`${b.url}/cartero`), probe), [{ value: 'from b' }]);

  // A port already served by another ClickHouse must not be mistaken for our own server.
  await t.rejects(start(await tempDir('ch-c'), a.port), /another server|Address already in use/);
  await Promise.all([a.stop(), b.stop()]);
});

t.test('migration runner', async (t) => {
  const server = await start(await tempDir('ch-m'));

  t.test('every migration can be re-run and reverted twice (crash between statement and record)', async (t) => {
    const url = `${server.url}/idempotent`;
    await migrateClickHouse(url);
    const ch = client(url);
    for (const m of migrations) {
      for (const query of m.up) await ch.command({ query });
    }
    for (const m of [...migrations].reverse()) {
      for (const query of [...m.down, ...m.down]) await ch.command({ query });
    }
    t.same(await rows(ch, "SELECT name FROM system.tables WHERE database = currentDatabase() AND name = 'service_info'"), []);
  });

  t.test('the sorted copies of opens and clicks: backfilled from what was there, then fed by their views', async (t) => {
    const url = `${server.url}/copies`;
    const ch = client(url);
    const byGroup = migrations.findIndex((m) => m.version === '005');
    await migrateClickHouse(url, { migrations: migrations.slice(0, 3) });
    const event = (event_id: number, event_type: string, custom_group_code: string | null, machine = '') => ({
      instance_id: 1, event_type, occurred_at: '2026-11-20 10:00:00.000', event_id, mail_id: `M${event_id}`, msg_id: 'G1',
      recipient: 'ann@example.com', subject: 'Hi', custom_group_code, mail_received_at: '2026-11-20 09:00:00.000', machine,
      user_agent: '', ip: '',
    });
    const insert = (values: object[]) => ch.insert({ table: 'mail_events', values, format: 'JSONEachRow' });
    // Before 004 and 005: an open and a click of a campaign, an open without one, a delivery move.
    await insert([event(1, 'open', 'spring'), event(2, 'click', 'spring'), event(3, 'open', null), event(4, 'status', 'spring')]);
    await migrateClickHouse(url, { migrations: migrations.slice(0, byGroup + 1) });
    // After: another campaign open, and event 1 re-shipped with a flag.
    await insert([event(5, 'open', 'autumn'), event(1, 'open', 'spring', 'prefetch')]);
    const ids = (table: string) =>
      rows<{ event_id: number; machine: string }>(ch, `SELECT event_id, machine FROM ${table} FINAL ORDER BY event_id`);
    const want = (list: number[]) => list.map((id) => ({ event_id: id, machine: id === 1 ? 'prefetch' : '' }));
    t.same(await ids('mail_events_by_msg'), want([1, 2, 3, 5]), 'by message: every open and click, no delivery move');
    t.same(await ids('mail_events_by_group'), want([1, 2, 5]), 'by campaign: the opens and clicks with a code');
    t.same(
      await rows(ch, `SELECT custom_group_code AS c, count() AS n FROM mail_events_by_group FINAL GROUP BY c ORDER BY c`),
      [{ c: 'autumn', n: 1 }, { c: 'spring', n: 2 }],
    );
  });

  t.test('a failing migration is not recorded and stops the run', async (t) => {
    const url = `${server.url}/failing`;
    const bad = [
      { version: '001', name: 'ok', up: ['CREATE TABLE IF NOT EXISTS a (x UInt8) ENGINE = MergeTree ORDER BY x'], down: [] },
      { version: '002', name: 'broken', up: ['CREATE TABLE nonsense'], down: [] },
      { version: '003', name: 'later', up: ['CREATE TABLE IF NOT EXISTS c (x UInt8) ENGINE = MergeTree ORDER BY x'], down: [] },
    ];
    await t.rejects(migrateClickHouse(url, { migrations: bad }));
    const versions = await rows(client(url), 'SELECT version FROM schema_migrations ORDER BY version');
    t.same(versions, [{ version: '001' }]);
  });

  t.test('out-of-order migrations are refused', async (t) => {
    const list = [
      { version: '002', name: 'b', up: [], down: [] },
      { version: '001', name: 'a', up: [], down: [] },
    ];
    await t.rejects(migrateClickHouse(`${server.url}/order`, { migrations: list }), /out of order/);
  });

  t.test('concurrent migrators under a lock apply each version once', async (t) => {
    let held = false;
    let calls = 0;
    let queue: Promise<unknown> = Promise.resolve();
    const lock = <T>(fn: () => Promise<T>): Promise<T> => {
      calls++;
      const next = queue.then(async () => {
        t.notOk(held, 'never two migrators inside the lock');
        held = true;
        try {
          return await fn();
        } finally {
          held = false;
        }
      });
      queue = next.catch(() => {});
      return next;
    };
    const url = `${server.url}/locked`;
    const results = await Promise.all([1, 2, 3].map(() => migrateClickHouse(url, { lock })));
    t.equal(calls, 3);
    t.same(results.flatMap((r) => r.applied).sort(), migrations.map((m) => m.version));
  });
});
