import { spawn } from 'node:child_process';
import t from 'tap';
import { loadPinoPretty, wantsPrettyLogs } from '../runtime/logger.js';
import { projectRoot } from '../config/paths.js';
import { freePort } from '../config/ports.js';
import { readServices } from '../config/services-file.js';
import { testDatabases } from './helpers/databases.js';
import { childEnv, sleep, spawnNode, tempDataDir, within } from './helpers/spawn.js';

/**
 * `npm start` in a terminal prints readable lines (pino-pretty), and JSON lines anywhere else (a
 * platform's log drain, a pipe), for the supervisor and for the web and worker dynos it runs.
 * The terminal is a real pseudo-terminal (util-linux `script`); the databases are this file's, so
 * the supervisor starts only the mailbox simulator and the two dynos.
 */

t.test('the decision: pretty only when stdout is a terminal', async (t) => {
  t.equal(wantsPrettyLogs({ isTTY: true }), true);
  t.equal(wantsPrettyLogs({ isTTY: false }), false);
  t.equal(wantsPrettyLogs({}), false, 'a pipe or a file has no isTTY at all');
});

t.test('pino-pretty is a development dependency: without it a terminal gets JSON lines, not a failed start', async (t) => {
  t.type(loadPinoPretty(), 'function', 'installed here (npm install brings development dependencies)');
  const missing = Object.assign(new Error("Cannot find module 'pino-pretty'"), { code: 'MODULE_NOT_FOUND' });
  t.equal(
    loadPinoPretty(() => {
      throw missing;
    }),
    undefined,
    'an install without development dependencies: no prettifier, so pino writes JSON',
  );
  t.throws(
    () =>
      loadPinoPretty(() => {
        throw new TypeError('broken');
      }),
    TypeError,
    'any other failure is not hidden',
  );
});

const dbs = await testDatabases(t, 'logs');
const env = async (dataDir: string) =>
  childEnv(
    { DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, DATA_DIR: dataDir, PORT: String(await freePort()), LOG_LEVEL: 'info' },
    ['SMTP_URL', 'INTERNAL_PORT', 'INBOUND_SMTP_PORT', 'NO_COLOR', 'FORCE_COLOR'],
  );
const DYNOS = ['start', 'web', 'worker'];
const READY = /Cartero is running at http:\/\/localhost:\d+/;

t.test('in a terminal: readable lines from the supervisor, web and worker, no JSON', async (t) => {
  const dataDir = tempDataDir(t);
  // script gives its command a pseudo-terminal as stdin, stdout and stderr, and copies what is
  // written there to its own stdout (with \r\n line ends and the colours a terminal gets).
  const child = spawn('script', ['-qfec', `${process.execPath} dist/runtime/start.js`, '/dev/null'], {
    cwd: projectRoot,
    env: await env(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  let raw = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (raw += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (raw += d));
  const text = () => raw.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');

  const deadline = Date.now() + 60_000;
  while (!READY.test(text()) && Date.now() < deadline && child.exitCode === null) await sleep(100);
  if (!t.match(text(), READY, 'the service started under a terminal')) return;
  // The dynos log "started" just before /healthz answers; give their last lines a moment.
  const started = (name: string) => new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] INFO \\(${name}/\\d+\\): ${name} started`, 'm');
  const settled = Date.now() + 15_000;
  while (!(started('web').test(text()) && started('worker').test(text())) && Date.now() < settled) await sleep(100);

  // Ctrl-C as a terminal would send it to the supervisor: the stop is logged too.
  process.kill(readServices(dataDir).web!.pid, 'SIGINT');
  t.equal(await within(exited, 30_000), 0, 'the supervisor stopped on SIGINT and exited 0');

  const out = text();
  for (const name of DYNOS) {
    t.match(out, new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] (INFO|WARN|ERROR) \\(${name}/\\d+\\): `, 'm'), `${name}: pretty lines ([time] LEVEL (name/pid): message)`);
  }
  t.match(out, started('web'), 'web says it started');
  t.match(out, started('worker'), 'worker says it started');
  t.match(out, /INFO \(start\/\d+\): stopped/, 'the supervisor says it stopped');
  t.same(out.split('\n').filter((l) => l.trimStart().startsWith('{"')), [], 'no JSON line on the terminal');
});

t.test('through a pipe: one JSON object per line, from the supervisor, web and worker', async (t) => {
  const dataDir = tempDataDir(t);
  const proc = spawnNode(t, 'dist/runtime/start.js', { env: await env(dataDir) });
  await proc.waitForStdout(READY, 60_000);
  // The web can be ready before the worker has said anything (it loads the template renderer
  // through the send path): stop only once both dynos have logged, as the terminal test does.
  await proc.waitForStdout(/"msg":"worker started"/, 60_000);
  proc.signal('SIGINT');
  t.same(await proc.waitExit(30_000), { code: 0, signal: null }, 'the supervisor stopped on SIGINT and exited 0');

  // Everything but the banner (the URL and hints printed for a person) is a log line.
  const banner = /^(Cartero is running at |  )/;
  const lines = proc.stdout().split('\n').filter((l) => l !== '' && !banner.test(l));
  const records = lines.map((l) => {
    try {
      return JSON.parse(l) as { dyno?: string; level?: number; msg?: string };
    } catch {
      return { notJson: l };
    }
  });
  t.same(records.filter((r) => 'notJson' in r), [], 'every log line is JSON');
  t.same([...new Set(records.map((r) => (r as { dyno?: string }).dyno))].sort(), DYNOS, 'from the supervisor, web and worker');
  t.ok(records.some((r) => (r as { msg?: string }).msg === 'web started'), 'web started');
  t.ok(records.some((r) => (r as { msg?: string }).msg === 'worker started'), 'worker started');
});
