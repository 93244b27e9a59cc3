import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { clickHouseFetch, databaseOf } from '../analytics/client.js';
import { freePort, portIsFree } from '../config/ports.js';
import { readServices } from '../config/services-file.js';
import { smtpDialog } from './helpers/smtp-dialog.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { sleep, waitFor } from './helpers/wait.js';
import {
  alive,
  childEnv,
  childrenOf,
  clickhousePid,
  cliRunner,
  oneJsonObject,
  postmasterPid,
  processesOf,
  spawnNode,
  tempDataDir,
  TEST_DKIM_KEY,
  waitDead,
  waitHttp,
  type Proc,
} from './helpers/spawn.js';

/**
 * The real entry points as separate OS processes: the Procfile dynos (web, worker, release) and
 * `npm start`'s supervisor with the embedded Postgres and ClickHouse, stopped the way a platform
 * (SIGTERM) or a terminal (Ctrl-C: SIGINT to the whole foreground process group) stops them.
 */

const DB_ENV = ['DATABASE_URL', 'CLICKHOUSE_URL', 'DATA_DIR', 'PORT', 'WEBHOOK_ALLOW_PRIVATE'];

/**
 * How long a stop may take and still be prompt. A prompt stop takes a few hundred ms on an idle
 * machine, but a loaded 2-core one can stretch that to seconds, so the bound sits just under the
 * shortest way a stop goes wrong: web's drain cuts connections still open only at its 10 s
 * deadline (runtime/web.ts), and a worker whose queue does not stop waits out pg-boss's 15 s
 * stop timeout (runtime/worker.ts), then the 20 s grace exits 1 (runtime/shutdown.ts).
 */
const PROMPT_STOP_MS = 8_000;

/** The server's reply lines after each SMTP command (its greeting first), over one plain connection. */
async function smtpReply(port: number, commands: string[]): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  const next = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const onData = (d: string) => {
        received += d;
        // A reply ends with a line "NNN text" (no dash after the code).
        if ((received.match(/^\d{3} /gm) ?? []).length >= count) {
          socket.off('data', onData);
          resolve();
        }
      };
      socket.on('data', onData);
      socket.once('error', reject);
    });
  try {
    await next(1);
    for (const [i, command] of commands.entries()) {
      socket.write(command + '\r\n');
      await next(i + 2);
    }
    return received;
  } finally {
    socket.destroy();
  }
}

/**
 * A free port below Linux's ephemeral range (32768 and up), for an npm start that binds its PORT
 * only after a minute of starting: meanwhile no port picked by bind(0) (freePort, the embedded
 * servers of the start beside it) and no connection's local port can land on it. Once a start's
 * web dynos met EADDRINUSE on a PORT from freePort for their whole start.
 */
async function quietPort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await portIsFree(port)) return port;
  }
  throw new Error('no free port between 20000 and 32000');
}

async function getJson(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/**
 * An HTTP request caught in flight: everything but the blank line ending its head is sent, so
 * the server has a connection with a request in progress until finish() is called. The socket
 * stays open after the response unless the server closes it (keep-alive, like a proxy's pool).
 * A whole /healthz request goes first on the same connection and is answered: the server has
 * accepted the connection before any signal is sent (one still in the kernel's queue when the
 * server stops listening would be reset, not drained).
 */
async function requestInFlight(port: number, path: string, headers: Record<string, string>) {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8').on('data', (d: string) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  await waitFor('the server to answer /healthz on the connection', () => (/\r\n\r\n\{"status":"ok"\}$/.test(received) ? true : socket.destroyed ? false : undefined), { ms: 30_000, every: 20 });
  if (!received.startsWith('HTTP/1.1 200')) throw new Error(`the connection was not accepted: ${JSON.stringify(received.slice(0, 200))}`);
  received = '';
  const head = [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  socket.write(head.join('\r\n') + '\r\n');
  return {
    socket,
    closed,
    received: () => received,
    finish: () => socket.write('\r\n'),
    /** The response head and body once the full body (Content-Length) has arrived. */
    async response(ms: number): Promise<{ status: number; head: string; body: string } | undefined> {
      const deadline = Date.now() + ms;
      for (;;) {
        const split = received.indexOf('\r\n\r\n');
        if (split >= 0) {
          const head = received.slice(0, split);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          const body = received.slice(split + 4);
          if (Buffer.byteLength(body) >= length) return { status: Number(head.split(' ')[1]), head, body };
        }
        if (socket.destroyed || Date.now() > deadline) return undefined;
        await sleep(20);
      }
    },
  };
}

t.test('web and worker run as separate processes against the same databases', async (t) => {
  const dbs = await testDatabases(t, 'procs');
  const port = await freePort();
  const internalPort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // /readyz is served on the internal listener (api/internal.ts).
  const internal = `http://127.0.0.1:${internalPort}`;
  const env = childEnv(
    { DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, PORT: String(port), INTERNAL_PORT: String(internalPort), LOG_LEVEL: 'warn', DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY },
    DB_ENV,
  );

  const web = spawnNode(t, 'dist/runtime/web.js', { env });
  await waitHttp(`${base}/healthz`, web);
  const a = await makeTenant(dbs.pool);
  const [newsId] = await makeSenders(dbs.pool, a.tenant, { domain: 'procs.example', senders: [{ email: 'news', name: 'News' }] });

  const list = await getJson(`${base}/v1/senders`, a.headers);
  t.equal(list.status, 200, 'the web process answers an authenticated call');
  // After the instance's sandbox sender, which every instance has (docs/panel.md, The sandbox).
  t.same(list.body.data.map((s: any) => [s.id, s.email_address]).slice(1), [[newsId, 'news@procs.example']]);

  const before = await getJson(`${internal}/readyz`);
  t.equal(before.status, 200, 'web is ready without a worker: commands wait in the queue');
  t.equal(before.body.status, 'ready');
  t.equal(before.body.worker_last_seen_at, null, 'no worker has consumed a job yet');

  const started = Date.now();
  const worker = spawnNode(t, 'dist/runtime/worker.js', { env });
  let seen: string | null = null;
  while (seen === null && Date.now() - started < 30_000) {
    if (worker.exit()) break;
    await sleep(250);
    seen = (await getJson(`${internal}/readyz`)).body.worker_last_seen_at;
  }
  if (!t.type(seen, 'string', `the worker consumed its heartbeat job from the shared queue (${Date.now() - started} ms)`)) t.comment(worker.stdout() + worker.stderr());
  t.ok(seen && Date.parse(seen) >= started - 1_000, 'the heartbeat is from this run');
  const rows = await dbs.pool.query<{ pid: number }>('SELECT pid FROM worker_heartbeats');
  t.same(rows.rows.map((r) => r.pid), [worker.pid], 'written by the worker process, not the web one');

  const stopAt = Date.now();
  web.signal('SIGTERM');
  worker.signal('SIGTERM');
  const [webExit, workerExit] = await Promise.all([web.waitExit(10_000), worker.waitExit(20_000)]);
  if (!t.same(webExit, { code: 0, signal: null }, 'web exits 0 on SIGTERM')) t.comment(web.stdout() + web.stderr());
  if (!t.same(workerExit, { code: 0, signal: null }, 'worker exits 0 on SIGTERM')) t.comment(worker.stdout() + worker.stderr());
  t.ok(Date.now() - stopAt < PROMPT_STOP_MS, `both stopped promptly (${Date.now() - stopAt} ms)`);
  t.notOk(alive(web.pid) || alive(worker.pid), 'no process left');
});

t.test('a worker stopped while it is still starting stops gracefully (exit 0)', async (t) => {
  // The stop handler is installed before start finishes (runtime/main.ts): a worker consumes
  // jobs before its last pieces are up, and a platform may stop a dyno at any moment.
  const dbs = await testDatabases(t, 'earlystop');
  const env = childEnv({ DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, LOG_LEVEL: 'warn', DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY }, DB_ENV);
  const worker = spawnNode(t, 'dist/runtime/worker.js', { env });
  const database = new URL(dbs.databaseUrl).pathname.slice(1);
  // Its first connection (the schema check) is the first step of its start: stop it right there.
  const deadline = Date.now() + 30_000;
  let connected = false;
  while (!connected && !worker.exit() && Date.now() < deadline) {
    const rows = await dbs.pool.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'cartero-worker'", [database]);
    connected = rows.rowCount! > 0;
    if (!connected) await sleep(5);
  }
  t.ok(connected, 'the worker connected');
  worker.signal('SIGTERM');
  const exit = await worker.waitExit(20_000);
  if (!t.same(exit, { code: 0, signal: null }, 'exits 0, not killed by the signal')) t.comment(worker.stdout() + worker.stderr());
});

t.test('web on SIGTERM answers a request in flight and still exits promptly with 0', async (t) => {
  // Behind a router, connections are kept alive: the one that carried the last request stays
  // open after its response. Stopping must not wait for the client to close it.
  const dbs = await testDatabases(t, 'drain');
  const port = await freePort();
  const env = childEnv({ DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, PORT: String(port), LOG_LEVEL: 'warn', DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY }, DB_ENV);
  const web = spawnNode(t, 'dist/runtime/web.js', { env });
  await waitHttp(`http://127.0.0.1:${port}/healthz`, web);
  const a = await makeTenant(dbs.pool);

  const req = await requestInFlight(port, '/v1/senders', a.headers);
  t.teardown(() => req.socket.destroy());
  const stopAt = Date.now();
  web.signal('SIGTERM');
  await sleep(300);
  req.finish();
  const res = await req.response(5_000);
  t.equal(res?.status, 200, 'the request in flight at SIGTERM is answered');
  const exit = await web.waitExit(Math.max(0, PROMPT_STOP_MS - (Date.now() - stopAt)));
  const took = Date.now() - stopAt;
  if (!t.same(exit, { code: 0, signal: null }, `web exits 0 within ${PROMPT_STOP_MS} ms of SIGTERM though the client keeps its idle connection (${exit ? `exited after ${took} ms` : 'still running'})`)) {
    t.comment(web.stdout() + web.stderr());
  }
});

t.test('a dyno stops gracefully whatever order its signals come in; only a second Ctrl-C cuts it short', async (t) => {
  // The Ctrl-C race under npm start, made deterministic: a terminal's Ctrl-C reaches a dyno as
  // SIGINT and the supervisor's SIGTERM follows, and which one the dyno takes first is the
  // scheduler's choice (runtime/shutdown.ts). Here each signal goes out only once the dyno has
  // logged the one before, so it takes them in the order written.
  const dbs = await testDatabases(t, 'signals');
  const a = await makeTenant(dbs.pool);
  const rows: Array<{ name: string; signals: NodeJS.Signals[]; graceful: boolean }> = [
    { name: "the supervisor's SIGTERM, then the terminal's own Ctrl-C (the race npm start lost at times)", signals: ['SIGTERM', 'SIGINT'], graceful: true },
    { name: "the terminal's Ctrl-C, then the supervisor's SIGTERM", signals: ['SIGINT', 'SIGTERM'], graceful: true },
    { name: 'a platform sending SIGTERM twice', signals: ['SIGTERM', 'SIGTERM'], graceful: true },
    { name: 'Ctrl-C twice: the user insisting', signals: ['SIGINT', 'SIGINT'], graceful: false },
    { name: 'the race, then Ctrl-C again: the user insisting', signals: ['SIGTERM', 'SIGINT', 'SIGINT'], graceful: false },
  ];
  // Every signal a dyno takes is one log line naming it (runtime/shutdown.ts).
  const taken = (out: string) => (out.match(/"signal":"SIG(?:TERM|INT)"/g) ?? []).length;
  for (const row of rows) {
    await t.test(`${row.signals.join(', ')}: ${row.name}`, async (t) => {
      const port = await freePort();
      const env = childEnv({ DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, PORT: String(port), LOG_LEVEL: 'info', DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY }, DB_ENV);
      const web = spawnNode(t, 'dist/runtime/web.js', { env });
      await waitHttp(`http://127.0.0.1:${port}/healthz`, web);
      const req = await requestInFlight(port, '/v1/senders', a.headers);
      t.teardown(() => req.socket.destroy());
      for (const [i, signal] of row.signals.entries()) {
        web.signal(signal);
        // The forcing signal ends the process: nothing more to wait for.
        if (!row.graceful && i === row.signals.length - 1) break;
        await waitFor(`the dyno to take signal ${i + 1} (${signal})`, () => (taken(web.stdout()) > i ? true : web.exit() ? false : undefined), { ms: 20_000, every: 20 });
      }
      if (row.graceful) {
        req.finish();
        const res = await req.response(10_000);
        if (!t.equal(res?.status, 200, 'the request in flight is answered')) t.comment(`received: ${JSON.stringify(req.received())}\n${web.stdout()}${web.stderr()}`);
        const exit = await web.waitExit(20_000);
        if (!t.same(exit, { code: 0, signal: null }, 'exits 0: a graceful stop')) t.comment(web.stdout() + web.stderr());
      } else {
        const exit = await web.waitExit(20_000);
        if (!t.same(exit, { code: 1, signal: null }, 'exits 1 at once, not after draining')) t.comment(web.stdout() + web.stderr());
        t.equal(await req.response(1_000), undefined, 'the request in flight is cut, as the user asked');
        t.match(web.stdout(), /second Ctrl-C, exiting now/);
      }
    });
  }
});

t.test('release is idempotent: a second and third run apply nothing and exit 0', async (t) => {
  const dbs = await testDatabases(t, 'release');
  const env = childEnv({ DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, LOG_LEVEL: 'info' }, DB_ENV);
  const counts = async () => {
    const pg = (await dbs.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations')).rows[0]!.n;
    const boss = (await dbs.pool.query<{ version: number }>('SELECT version FROM pgboss.version')).rows[0]!.version;
    // The file's database, named by the URL's path: the server's root, asked with ?database=.
    const chQuery = Object.assign(new URL(dbs.clickhouseUrl), { pathname: '/', search: `?database=${databaseOf(dbs.clickhouseUrl)}` });
    const res = await clickHouseFetch(chQuery.toString(), { method: 'POST', body: 'SELECT count() FROM schema_migrations FORMAT TSV' });
    return { pg, boss, ch: Number((await res.text()).trim()) };
  };
  const initial = await counts();
  t.ok(initial.pg > 0 && initial.ch > 0, `migrations already applied once by testDatabases (${JSON.stringify(initial)})`);

  for (const run of [1, 2]) {
    const release = spawnNode(t, 'dist/runtime/release.js', { env });
    const exit = await release.waitExit(60_000);
    if (!t.same(exit, { code: 0, signal: null }, `run ${run} exits 0 by itself`)) t.comment(release.stdout() + release.stderr());
    const logs = release.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; applied?: unknown[] });
    t.same(logs.find((l) => l.msg === 'postgres migrations')?.applied, [], `run ${run}: no Postgres migration applied`);
    t.same(logs.find((l) => l.msg === 'clickhouse migrations')?.applied, [], `run ${run}: no ClickHouse migration applied`);
    t.ok(logs.some((l) => l.msg === 'release done'), `run ${run}: release done`);
    t.same(await counts(), initial, `run ${run}: migration records unchanged`);
  }

  const bare = spawnNode(t, 'dist/runtime/release.js', { env: childEnv({ LOG_LEVEL: 'info' }, DB_ENV) });
  const exit = await bare.waitExit(20_000);
  t.ok(exit && exit.code !== null && exit.code !== 0, `without DATABASE_URL release exits non-zero (${JSON.stringify(exit)})`);
  t.match(bare.stderr(), /DATABASE_URL is required/);
});

t.test('npm start: embedded default end to end, two side by side, Ctrl-C, restart keeps data', async (t) => {
  // Records each node process's exit code (a process killed by a signal records nothing).
  const probeDir = mkdtempSync(join(tmpdir(), 'cartero-probe-'));
  t.teardown(() => rm(probeDir, { recursive: true, force: true }));
  const probe = join(probeDir, 'exit-probe.mjs');
  const exitLog = join(probeDir, 'exits.jsonl');
  writeFileSync(
    probe,
    `import { appendFileSync } from 'node:fs';\n` +
      `process.on('exit', (code) => appendFileSync(${JSON.stringify(exitLog)}, JSON.stringify({ pid: process.pid, script: process.argv[1], code }) + '\\n'));\n`,
  );
  const exitCodes = (): Map<number, number> => {
    if (!existsSync(exitLog)) return new Map();
    const lines = readFileSync(exitLog, 'utf8').split('\n').filter(Boolean);
    return new Map(lines.map((l) => JSON.parse(l) as { pid: number; code: number }).map((e) => [e.pid, e.code]));
  };

  const dirA = tempDataDir(t);
  const dirB = tempDataDir(t);
  const portA = await quietPort();
  const portB = await quietPort();
  const envOf = (dir: string, port?: number) =>
    childEnv({ DATA_DIR: dir, LOG_LEVEL: 'warn', ...(port ? { PORT: String(port), NODE_OPTIONS: `--import ${probe}` } : {}) }, DB_ENV);

  const start = (dir: string, port: number) => spawnNode(t, 'dist/runtime/start.js', { env: envOf(dir, port), detached: true });
  const ready = (proc: Proc, port: number) => proc.waitForStdout(new RegExp(`running at http://localhost:${port}\\b`), 120_000);

  /** What runs for a data dir while its supervisor is up: its servers and its dynos (by entry point). */
  const inventory = (dir: string, supervisor: Proc) => {
    const entry = (pid: number) => {
      try {
        return /dist\/runtime\/(web|worker)\.js/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))?.[1];
      } catch {
        return undefined;
      }
    };
    const named = childrenOf(supervisor.pid).flatMap((pid) => {
      const name = entry(pid);
      return name ? [{ pid, name }] : [];
    });
    return { pg: postmasterPid(dir), ch: clickhousePid(dir), named, dynos: named.map((d) => d.pid), names: named.map((d) => d.name).sort() };
  };

  /** Ctrl-C in a terminal: SIGINT to the supervisor's whole process group. */
  // signal false: the Ctrl-C was already sent, and a second one would be the user insisting (a
  // dyno still stopping then exits 1 at once, by design): only wait for the stop.
  const ctrlC = async (t: Test, proc: Proc, dir: string, pids: number[], label: string, signal = true) => {
    const at = Date.now();
    if (signal) proc.signal('SIGINT');
    const exit = await proc.waitExit(60_000);
    if (!t.same(exit, { code: 0, signal: null }, `${label}: the supervisor exits 0 after Ctrl-C (${Date.now() - at} ms)`)) t.comment(proc.stdout() + proc.stderr());
    t.ok(await waitDead(pids, 5_000), `${label}: Postgres, ClickHouse and both dynos are gone (${pids.filter(alive)})`);
    t.notOk(existsSync(join(dir, 'postgres', 'data', 'postmaster.pid')), `${label}: Postgres shut down cleanly (no postmaster.pid)`);
    t.same(processesOf(dir), [], `${label}: no process of the data dir remains`);
  };

  const tStart = Date.now();
  const a = start(dirA, portA);
  const b = start(dirB, portB);
  await Promise.all([ready(a, portA), ready(b, portB)]);
  t.comment(`two fresh embedded starts side by side: ${Date.now() - tStart} ms`);

  const urlA = `http://127.0.0.1:${portA}`;
  const urlB = `http://127.0.0.1:${portB}`;
  t.same((await getJson(`${urlA}/healthz`)).body, { status: 'ok' });
  t.same((await getJson(`${urlB}/healthz`)).body, { status: 'ok' });
  t.equal((await getJson(`${readServices(dirA).web_internal!.url}/readyz`)).body.status, 'ready', 'readiness on the internal listener');
  t.equal((await getJson(`${urlA}/readyz`)).status, 404, 'and not on the public port');

  const svcA = readServices(dirA);
  const svcB = readServices(dirB);
  const invA = inventory(dirA, a);
  const invB = inventory(dirB, b);
  t.ok(svcA.postgres?.port && svcA.clickhouse?.port, 'services.json records the Postgres and ClickHouse ports');
  t.equal(svcA.web?.port, portA);
  t.ok(invA.pg && invA.ch && invB.pg && invB.ch, `each data dir has its own Postgres and ClickHouse (${JSON.stringify({ invA, invB })})`);
  t.equal(Number(readFileSync(join(dirA, 'postgres', 'data', 'postmaster.pid'), 'utf8').split('\n')[3]), svcA.postgres?.port, 'the recorded Postgres port is the one Postgres listens on');
  t.match(svcA.clickhouse?.url, `:${svcA.clickhouse?.port}/`, 'the recorded ClickHouse URL uses the recorded port');
  t.equal(svcA.clickhouse?.pid, invA.ch, "services.json records the embedded ClickHouse's pid");
  // Every embedded server recorded (Postgres, ClickHouse, and any later one such as an SMTP simulator).
  const recordedPorts = (svc: Record<string, { port?: number } | undefined>) =>
    // (dynos: processes, not servers; they listen on the web's and the inbound listener's ports.)
    Object.entries(svc).filter(([name]) => name !== 'web' && name !== 'dynos').map(([, v]) => v?.port);
  const ports = [...recordedPorts(svcA as any), ...recordedPorts(svcB as any), portA, portB];
  t.ok(ports.length >= 6 && ports.every((p) => typeof p === 'number'), `ports recorded (${ports})`);
  t.equal(new Set(ports).size, ports.length, `side by side, every server has its own port (${ports})`);
  t.same(invA.names, ['web', 'worker'], 'web and worker run as two child processes of the supervisor');
  t.same(invB.names, ['web', 'worker']);

  // Issue 24: the embedded listeners that take commands want credentials, each generated once
  // into DATA_DIR (0600) and handed to the dynos in CLICKHOUSE_URL / SMTP_URL.
  const modeOf = (file: string) => statSync(file).mode & 0o777;
  const secrets = { clickhouse: join(dirA, 'clickhouse', 'password'), smtp: join(dirA, 'mailbox-simulator.password') };
  const chPassword = readFileSync(secrets.clickhouse, 'utf8').trim();
  const smtpPassword = readFileSync(secrets.smtp, 'utf8').trim();
  for (const file of [...Object.values(secrets), join(dirA, 'services.json')]) t.equal(modeOf(file), 0o600, `${file} is mode 0600`);
  // Issue 41: the workers' submission port, recorded and printed with the fingerprint of its
  // self-signed certificate (made once into DATA_DIR, 0600), which is the one it presents.
  const certFile = join(dirA, 'submission-tls.pem');
  t.equal(modeOf(certFile), 0o600, `${certFile} is mode 0600`);
  const fingerprint = new X509Certificate(readFileSync(certFile)).fingerprint256;
  t.match(a.stdout(), `${svcA.submission_smtp?.port}`, 'npm start prints the submission port');
  t.match(a.stdout(), `SHA-256 ${fingerprint}`, "and its certificate's fingerprint");
  const submission = await waitFor('the submission listener', () => smtpDialog(svcA.submission_smtp!.port).catch(() => undefined), { ms: 60_000, every: 100 });
  t.match(await submission.reply(), /^220 /);
  t.match(await submission.command('EHLO processes.test'), /STARTTLS/);
  await submission.starttls(readFileSync(certFile));
  t.pass('STARTTLS presents the certificate of DATA_DIR/submission-tls.pem');
  submission.close();
  t.equal(new URL(svcA.clickhouse!.url).password, chPassword, 'the recorded CLICKHOUSE_URL carries the ClickHouse password');
  t.equal(decodeURIComponent(new URL(svcA.smtp!.url).password), smtpPassword, 'the recorded SMTP_URL carries the simulator password');
  const anonymous = await fetch(`http://127.0.0.1:${svcA.clickhouse!.port}/?query=${encodeURIComponent('SELECT count() FROM cartero.schema_migrations')}`);
  t.equal(anonymous.status, 401, 'ClickHouse refuses a query without the password');
  const chRoot = (svc: typeof svcA) => Object.assign(new URL(svc.clickhouse!.url), { pathname: '/' }).toString();
  const migrated = async (svc: typeof svcA) =>
    (await clickHouseFetch(`${chRoot(svc)}?database=cartero`, { method: 'POST', body: 'SELECT count() > 0 FROM schema_migrations FORMAT TSV' })).text();
  t.equal(await migrated(svcA), '1\n', 'and answers with it (the migrations ran through CLICKHOUSE_URL)');
  const unauthenticatedSmtp = await smtpReply(svcA.smtp!.port, ['EHLO probe', 'MAIL FROM:<x@probe.example>']);
  t.match(unauthenticatedSmtp, /^530 /m, 'the mailbox simulator refuses MAIL FROM without AUTH');

  // The CLI with the same DATA_DIR reaches the running service's database.
  const cliA = cliRunner(t, childEnv({ DATA_DIR: dirA }, DB_ENV));
  oneJsonObject(await cliA('instance', 'create', '--slug', 'demo'));
  oneJsonObject(await cliA('domain', 'add', '--instance', 'demo', '--name', 'demo.example'));
  const domain = oneJsonObject(
    await cliA('domain', 'set-checks', '--instance', 'demo', '--name', 'demo.example', '--mx', 'approved', '--spf', 'approved', '--dkim', 'approved', '--dmarc', 'approved'),
  );
  t.equal(domain.is_verified, true);
  const sender = oneJsonObject(await cliA('sender', 'create', '--instance', 'demo', '--email', 'news@demo.example', '--name', 'News'));
  const key = oneJsonObject(await cliA('key', 'create', '--instance', 'demo', '--scopes', 'senders:read'));
  const auth = { authorization: `Bearer ${key.key}`, 'x-instance-slug': 'demo' };
  const listed = await getJson(`${urlA}/v1/senders`, auth);
  t.equal(listed.status, 200);
  t.same(
    listed.body.data.map((s: any) => [s.email_address, s.domain_is_verified]),
    [['sandbox@demo.sandbox.cartero.test', true], ['news@demo.example', true]],
    "the instance's sandbox sender, then the one made",
  );
  t.equal(listed.body.data[1].id, sender.id);
  t.equal(postmasterPid(dirA), invA.pg, 'the CLI used the running Postgres, it did not start one');

  // npm start leaves WEBHOOK_ALLOW_PRIVATE to the operator (default false): a receiver on loopback
  // is refused, and the embedded ClickHouse (which answers SQL over HTTP) is refused as one of the
  // service's own listeners whatever that variable says.
  const hooksKey = oneJsonObject(await cliA('key', 'create', '--instance', 'demo', '--scopes', 'webhooks:write'));
  const createHook = async (url: string) => {
    const res = await fetch(`${urlA}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${hooksKey.key}`, 'x-instance-slug': 'demo', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hook', url }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  t.match(await createHook(`http://127.0.0.1:${await freePort()}/hook`), { status: 422, body: { errors: [{ code: 'url_not_public', message: /not public/ }] } }, 'a loopback receiver is refused under npm start');
  t.match(await createHook(`http://127.0.0.1:${svcA.clickhouse!.port}/?query=SELECT%201`), { status: 422, body: { errors: [{ code: 'url_not_public' }] } }, 'so is the embedded ClickHouse');

  // B has a database of its own: the same slug is free there.
  const cliB = cliRunner(t, childEnv({ DATA_DIR: dirB }, DB_ENV));
  t.equal(oneJsonObject(await cliB('instance', 'create', '--slug', 'demo')).slug, 'demo');
  t.equal((await getJson(`${urlB}/v1/senders`, auth)).status, 401, "A's key means nothing to B");

  await t.test('Ctrl-C stops the second service cleanly while the first keeps running', async (t) => {
    await ctrlC(t, b, dirB, [invB.pg!, invB.ch!, ...invB.dynos], 'B');
    t.equal((await getJson(`${urlA}/healthz`)).status, 200, 'A still answers');
  });

  await t.test('Ctrl-C lets a request in flight finish before anything stops', async (t) => {
    // A terminal sends SIGINT to every process of the group: supervisor and dynos alike. The
    // request below is in flight at that moment and must still be answered from Postgres.
    const req = await requestInFlight(portA, '/v1/senders', { ...auth, connection: 'close' });
    t.teardown(() => req.socket.destroy());
    a.signal('SIGINT');
    await sleep(300);
    req.finish();
    const res = await req.response(10_000);
    t.equal(res?.status, 200, `the request in flight at Ctrl-C is answered (got ${JSON.stringify(req.received().slice(0, 200))})`);
    t.match(res?.body ?? '', 'news@demo.example');
    await ctrlC(t, a, dirA, [invA.pg!, invA.ch!, ...invA.dynos], 'A', false);
    const codes = exitCodes();
    for (const { pid, name } of invA.named) {
      t.equal(codes.get(pid), 0, `${name} dyno stopped gracefully (exit code 0, not cut short by a second signal)`);
    }
    // Once in CI the web dyno exited 1 without answering: what the dynos logged says why.
    if (res?.status !== 200 || invA.named.some(({ pid }) => codes.get(pid) !== 0)) {
      t.comment(`the service's output (last 4,000 characters):\n${(a.stdout() + a.stderr()).slice(-4_000)}`);
    }
  });

  await t.test('a second start reuses the data', async (t) => {
    const again = start(dirA, portA);
    await ready(again, portA);
    const inv = inventory(dirA, again);
    t.equal(readFileSync(secrets.clickhouse, 'utf8').trim(), chPassword, 'the ClickHouse password is reused');
    t.equal(readFileSync(secrets.smtp, 'utf8').trim(), smtpPassword, 'the simulator password is reused');
    t.equal(await migrated(readServices(dirA)), '1\n', 'the data answers with it');
    const res = await getJson(`${urlA}/v1/senders`, auth);
    t.equal(res.status, 200, 'the key survived the restart');
    t.same(res.body.data.map((s: any) => [s.id, s.email_address]).slice(1), [[sender.id, 'news@demo.example']], 'so did the sender');
    await ctrlC(t, again, dirA, [inv.pg!, inv.ch!, ...inv.dynos], 'A again');
  });
});

t.test('the CLI works before the first npm start, even in a private DATA_DIR', async (t) => {
  // Without a running service the CLI starts the data dir's Postgres for the one command.
  for (const priv of [false, true]) {
    const dir = tempDataDir(t, { private: priv });
    const label = priv ? 'DATA_DIR in a mode-0700 directory (a home directory, mkdtemp)' : 'DATA_DIR in a world-readable directory';
    const cli = cliRunner(t, childEnv({ DATA_DIR: dir }, DB_ENV));
    const r = await cli('instance', 'create', '--slug', 'early');
    t.equal(r.code, 0, `${label}: exit 0\n${r.stderr.slice(0, 1500)}`);
    if (r.code === 0) t.equal(oneJsonObject(r).slug, 'early');
    t.equal(postmasterPid(dir), undefined, `${label}: the Postgres started for the command is stopped after it`);
    t.same(processesOf(dir), [], `${label}: nothing left running`);
  }
});
