import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { freePort } from '../config/ports.js';
import { readServices } from '../config/services-file.js';
import { DEFAULT_BACKOFF, nextStreak, restartDelay } from '../runtime/dynos.js';
import { createPool } from '../sql/pool.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { alive, childEnv, childrenOf, clickhousePid, postmasterPid, processesOf, spawnNode, tempDataDir, waitDead } from './helpers/spawn.js';
import { sleep, waitFor } from './helpers/wait.js';

/**
 * `npm start` with WEB_DYNOS=2 WORKER_DYNOS=2 (runtime/start.ts, runtime/dynos.ts): four dynos
 * behind one PORT, each listed with its pid in services.json, each restarted with backoff when
 * it dies, and all stopped by one SIGTERM. One start serves every subtest (a start costs seconds
 * to a minute on a loaded machine), so they run in order, each leaving the service up.
 *
 * Which dyno answered a request is read from the dynos' own logs: a 4xx is logged at info with
 * its request id and the process's pid (api/http/request-context.ts), and the X-Request-Id a
 * client sends is kept. Each request goes on a fresh connection, as a new client's would.
 */

interface LogRecord {
  msg?: string;
  pid?: number;
  name?: string;
  reqId?: string;
  process?: string;
  dyno_pid?: number;
  code?: number | null;
  signal?: string | null;
  restart_in_ms?: number;
  time?: number;
}

const WAIT_MS = 120_000;

/** How the dynos' states are waited for: a restart waits out its backoff on a loaded machine. */
const DYNOS = { ms: WAIT_MS, every: 200 };

/** GET path on a new connection with this X-Request-Id; the status, or the error's code. */
function probe(port: number, path: string, requestId: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false, headers: { 'x-request-id': requestId }, timeout: 15_000 }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode!));
    });
    req.once('timeout', () => req.destroy(Object.assign(new Error('no answer'), { code: 'TIMEOUT' })));
    req.once('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
  });
}

const dataDir = tempDataDir(t);
const port = await freePort();
const env = childEnv(
  // One render thread per web dyno (default 2): nothing here renders, and each thread loads MJML.
  { DATA_DIR: dataDir, PORT: String(port), WEB_DYNOS: '2', WORKER_DYNOS: '2', LOG_LEVEL: 'info', TEMPLATE_RENDER_THREADS: '1' },
  ['DATABASE_URL', 'CLICKHOUSE_URL', 'SMTP_URL', 'INTERNAL_PORT', 'INBOUND_SMTP_PORT', 'WEBHOOK_ALLOW_PRIVATE'],
);
const started = Date.now();
const service = spawnNode(t, 'dist/runtime/start.js', { env, detached: true });
await service.waitForStdout(new RegExp(`Cartero is running at http://localhost:${port}\\b`), 240_000);

const records = (): LogRecord[] =>
  service
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as LogRecord];
      } catch {
        return [];
      }
    });
const dynos = () => readServices(dataDir).dynos ?? [];
const pidOf = (name: string) => dynos().find((d) => d.name === name)?.pid ?? null;
/** The pid of the process that logged the refusal of the request with this id. */
const servedBy = (requestId: string) => waitFor(`the refusal of ${requestId} logged`, () => records().find((r) => r.msg === 'request refused' && r.reqId === requestId)?.pid, { ms: 10_000, every: 50 }).catch(() => undefined);
const hasStarted = (pid: number, kind: string) => records().some((r) => r.pid === pid && r.msg === `${kind} started`);

// Every dyno up (its own "started" line), not only the first web that answered /healthz.
const allUp = await waitFor('the four dynos started', () => (dynos().length === 4 && dynos().every((d) => d.pid !== null && hasStarted(d.pid, d.name.split('.')[0]!))) || undefined, DYNOS);
t.ok(allUp, `the four dynos started (${Math.round((Date.now() - started) / 1000)} s after npm start)`);
let probes = 0;
const nextId = () => `dynos-probe-${++probes}-${process.pid}`;

// Declared after the top-level awaits: a subtest finished before them would end the file's
// root test, whose teardown stops npm start.
t.test('the backoff: 1 s doubling to 30 s, from 1 s again after a minute up', async (t) => {
  t.same([1, 2, 3, 4, 5, 6, 7, 20].map((n) => restartDelay(n)), [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  t.equal(nextStreak(0, 10), 1, 'the first death');
  t.equal(nextStreak(3, DEFAULT_BACKOFF.stableMs - 1), 4, 'dead again within a minute: one more in a row');
  t.equal(nextStreak(5, DEFAULT_BACKOFF.stableMs), 1, 'after a minute up: the first again');
});

t.test('services.json lists each dyno by its Heroku name and each server with its pid', async (t) => {
  const svc = readServices(dataDir);
  const list = svc.dynos ?? [];
  t.same(list.map((d) => d.name), ['web.1', 'web.2', 'worker.1', 'worker.2'], 'web.1, web.2, worker.1, worker.2');
  const pids = list.map((d) => d.pid!);
  t.ok(pids.every((p) => typeof p === 'number' && alive(p)), `every dyno pid is alive (${pids})`);
  t.equal(new Set(pids).size, 4, 'four distinct processes');
  const children = childrenOf(service.pid);
  for (const d of list) {
    t.ok(children.includes(d.pid!), `${d.name} is a child of npm start's process`);
    const entry = readFileSync(`/proc/${d.pid}/cmdline`, 'utf8');
    t.match(entry, `dist/runtime/${d.name.split('.')[0]}.js`, `${d.name} runs its Procfile entry point`);
  }
  t.equal(svc.postgres?.pid, postmasterPid(dataDir), 'postgres: the postmaster pid, beside its port and URL');
  t.equal(svc.clickhouse?.pid, clickhousePid(dataDir), "clickhouse: the launcher's pid");
  t.equal(svc.smtp?.pid, service.pid, 'smtp: the simulator runs inside npm start');
  t.equal(svc.web?.pid, service.pid, "web: npm start's process, which holds the public socket");
  t.ok([svc.postgres!.pid!, svc.clickhouse!.pid!].every(alive), 'the servers are alive');
});

t.test('one PORT and one INTERNAL_PORT, answered by both web dynos', async (t) => {
  const web = [pidOf('web.1')!, pidOf('web.2')!];
  const seen = new Set<number>();
  const statuses = new Set<number | string>();
  // The kernel hands each new connection to one of the dynos accepting on the shared socket;
  // a few requests see both unless the spread is badly skewed, many surely do.
  for (let i = 0; i < 200 && seen.size < 2; i++) {
    const id = nextId();
    statuses.add(await probe(port, '/v1/senders', id));
    const pid = await servedBy(id);
    if (pid) seen.add(pid);
  }
  t.same([...statuses], [401], 'every request answered (401 without a key)');
  t.same([...seen].sort(), [...web].sort(), `served by both web pids (${[...seen]})`);
  const internal = readServices(dataDir).web_internal!;
  const ready = await fetch(`${internal.url}/readyz`);
  t.equal(ready.status, 200, 'the internal listener answers too');
});

t.test('a web dyno killed: the URL keeps answering, and it comes back with a new pid', async (t) => {
  const old = pidOf('web.1')!;
  const other = pidOf('web.2')!;
  process.kill(old, 'SIGKILL');
  const exited = await waitFor('the death of web.1 logged', () => records().find((r) => r.process === 'web.1' && r.dyno_pid === old && r.restart_in_ms !== undefined), DYNOS);
  t.match(exited, { name: 'start', signal: 'SIGKILL', restart_in_ms: 1000, msg: `web.1 (pid ${old}) exited with signal SIGKILL; restarting in 1000 ms` }, 'npm start logs the death, the signal and the delay');
  // While web.1 is down (or starting again), web.2 answers everything.
  const answers: Array<number | string> = [];
  const pids = new Set<number>();
  for (let i = 0; i < 10; i++) {
    const id = nextId();
    answers.push(await probe(port, '/v1/senders', id));
    const pid = await servedBy(id);
    if (pid) pids.add(pid);
  }
  t.same(answers, Array(10).fill(401), 'ten requests after the kill, all answered');
  t.notOk(pids.has(old), 'none by the dead dyno');
  t.ok([...pids].every((p) => p === other || p === pidOf('web.1')), `by the survivor or the restarted dyno (${[...pids]})`);

  const fresh = await waitFor('web.1 with a new pid', () => {
    const pid = pidOf('web.1');
    return pid !== null && pid !== old && alive(pid) ? pid : undefined;
  }, DYNOS);
  t.ok(fresh, `services.json lists web.1 with a new pid (${old} -> ${fresh})`);
  t.ok(await waitFor('the restart of web.1 logged', () => records().some((r) => r.msg === `web.1 restarted (pid ${fresh})`) || undefined, { ms: 10_000, every: 200 }), 'and the restart is logged');
  const serving = await waitFor('the restarted web.1 to serve', async () => {
    const id = nextId();
    return ((await probe(port, '/v1/senders', id)) === 401 && (await servedBy(id)) === fresh) || undefined;
  }, DYNOS);
  t.ok(serving, 'the restarted web.1 serves the same URL');
});

t.test('a worker dyno killed is restarted, and a mail sent after it is delivered once', async (t) => {
  const old = pidOf('worker.1')!;
  process.kill(old, 'SIGKILL');
  const exited = await waitFor('the death of worker.1 logged', () => records().find((r) => r.process === 'worker.1' && r.dyno_pid === old && r.restart_in_ms !== undefined), DYNOS);
  t.match(exited, { signal: 'SIGKILL', restart_in_ms: 1000 }, 'npm start logs the death and the delay');
  const fresh = await waitFor('worker.1 with a new pid, started', () => {
    const pid = pidOf('worker.1');
    return pid !== null && pid !== old && alive(pid) && hasStarted(pid, 'worker') ? pid : undefined;
  }, DYNOS);
  t.ok(fresh, `worker.1 is back with a new pid (${old} -> ${fresh}) and started`);

  const pool = createPool(readServices(dataDir).postgres!.url, { max: 2, application: 'cartero-test' });
  t.teardown(() => pool.end());
  const tenant = await makeTenant(pool, { scopes: ['mail:send'] });
  const [senderId] = await makeSenders(pool, tenant.tenant, { domain: 'dynos.example', senders: [{ email: 'news', name: 'News' }] });
  t.ok(senderId, 'a verified sender');
  const to = `ana-${process.pid}@example.net`;
  const res = await fetch(`http://127.0.0.1:${port}/v1/mails/send`, {
    method: 'POST',
    headers: { ...tenant.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ from: 'news@dynos.example', to: [{ email: to }], subject: 'After the kill', text: 'Sent by a worker dyno.' }),
  });
  t.equal(res.status, 202, 'the send is accepted');
  const mailbox = join(dataDir, 'mailbox');
  const delivered = () =>
    existsSync(mailbox) ? readdirSync(mailbox).filter((f) => f.endsWith('.eml') && readFileSync(join(mailbox, f), 'utf8').includes(`X-Simulator-Rcpt-To: ${to}`)) : [];
  t.ok(await waitFor('the mail in the mailbox', () => delivered().length > 0 || undefined, { ms: 60_000, every: 200 }), `the mail is in $DATA_DIR/mailbox/`);
  await sleep(1_000);
  t.equal(delivered().length, 1, 'once');
});

t.test('a dyno that dies again at once is restarted after a growing delay', async (t) => {
  const delays: number[] = [];
  const gaps: number[] = [];
  let pid = pidOf('web.2')!;
  for (let round = 0; round < 3; round++) {
    process.kill(pid, 'SIGKILL');
    const dead = pid;
    // The line of its death (the line of its restart names the new pid).
    const exit = await waitFor(`death ${round + 1} of web.2 logged`, () => records().find((r) => r.process === 'web.2' && r.dyno_pid === dead && r.restart_in_ms !== undefined), DYNOS);
    if (!t.ok(exit, `web.2 death ${round + 1} logged`)) return;
    delays.push(exit!.restart_in_ms!);
    const next = await waitFor(`web.2 restarted after death ${round + 1}`, () => {
      const p = pidOf('web.2');
      return p !== null && p !== dead ? p : undefined;
    }, DYNOS);
    if (!t.ok(next, `web.2 restarted after death ${round + 1}`)) return;
    const restarted = await waitFor(`the restart of web.2 logged`, () => records().find((r) => r.msg === `web.2 restarted (pid ${next})`), { ms: 10_000, every: 200 }).catch(() => undefined);
    gaps.push(restarted ? restarted.time! - exit!.time! : NaN);
    pid = next!;
  }
  t.same(delays, [1000, 2000, 4000], `each restart in a row waits twice as long (${delays} ms)`);
  // A timer never fires early; the margin is for the clock's millisecond rounding.
  t.ok(gaps.every((g, i) => g >= delays[i]! - 5), `and waited that long (${gaps} ms between the death and the fork)`);
});

t.test('SIGTERM to npm start stops every dyno and server, exit 0, nothing left', async (t) => {
  const svc = readServices(dataDir);
  const pids = [...(svc.dynos ?? []).flatMap((d) => (d.pid ? [d.pid] : [])), svc.postgres!.pid!, svc.clickhouse!.pid!];
  const at = Date.now();
  process.kill(service.pid, 'SIGTERM');
  const exit = await service.waitExit(60_000);
  if (!t.same(exit, { code: 0, signal: null }, `npm start exits 0 (${Date.now() - at} ms)`)) t.comment(service.stdout().slice(-3000) + service.stderr());
  t.ok(await waitDead(pids, 10_000), `dynos, Postgres and ClickHouse are gone (${pids.filter(alive)})`);
  t.same(processesOf(dataDir), [], 'no process of the data dir remains');
  t.notOk(existsSync(join(dataDir, 'postgres', 'data', 'postmaster.pid')), 'Postgres shut down cleanly');
  t.notOk(records().some((r) => r.process && r.time! >= at), 'no dyno was restarted while stopping');
});
