import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import t from 'tap';
import { freePort } from '../config/ports.js';
import { PROCESS_NEEDS } from '../config/needs.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { childEnv, cliRunner, spawnNode } from './helpers/spawn.js';

/**
 * Each Procfile process type refuses to start without what it needs (config/needs.ts), naming
 * it, before it listens: a web dyno given a real, migrated DATABASE_URL but no
 * DKIM_KEY_ENCRYPTION_KEY used to start and answer 500 to the first sender creation (issue 37).
 * With the key, the same dynos start.
 */

const KEY = 'DKIM_KEY_ENCRYPTION_KEY';
const dbs = await testDatabases(t, 'needs');

/** Whether something accepts TCP connections on the port (a refusal: nothing listens). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function dynoEnv(extra: Record<string, string | undefined>) {
  return childEnv(
    {
      DATABASE_URL: dbs.databaseUrl,
      CLICKHOUSE_URL: dbs.clickhouseUrl,
      PORT: String(await freePort()),
      INTERNAL_PORT: String(await freePort()),
      INBOUND_SMTP_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      ...extra,
    },
    ['DATA_DIR', 'SMTP_URL', 'WEBHOOK_ALLOW_PRIVATE', KEY],
  );
}

t.test('the declaration: web and worker need the DKIM key encryption key, each with a reason', async (t) => {
  for (const dyno of ['web', 'worker'] as const) {
    const need = PROCESS_NEEDS[dyno].find((n) => n.name === KEY);
    t.ok(need && need.why.length > 20, `${dyno} declares ${KEY} with why`);
  }
});

for (const dyno of ['web', 'worker'] as const) {
  t.test(`${dyno} with a migrated DATABASE_URL and no ${KEY}: exits non-zero naming it, without listening`, async (t) => {
    const env = await dynoEnv({});
    const ports = [env.PORT, env.INTERNAL_PORT, env.INBOUND_SMTP_PORT].map(Number);
    const proc = spawnNode(t, `dist/runtime/${dyno}.js`, { env });
    // Poll the ports while it runs: it must never have listened, not only be gone at the end.
    // (A dyno that starts anyway is given time to listen, then stopped by the teardown.)
    let listened = false;
    const deadline = Date.now() + 60_000;
    while (!proc.exit() && !listened && Date.now() < deadline) {
      for (const p of ports) if (await listening(p)) listened = true;
      await proc.waitExit(50);
    }
    const exit = proc.exit();
    t.ok(exit && exit.code !== 0 && exit.code !== null, `exits non-zero by itself (${JSON.stringify(exit)})`);
    const lines = proc.stderr().trim().split('\n');
    t.equal(lines.length, 1, `one line on stderr: ${proc.stderr()}`);
    t.match(lines[0], new RegExp(`^cartero ${dyno}: cannot start: ${KEY} is required \\(.+\\)`), 'naming the variable and why');
    t.notMatch(lines[0], /DATABASE_URL|CLICKHOUSE_URL/, 'and only what is missing');
    t.notOk(listened, `never listened on ${ports.join(', ')}`);
    t.notMatch(proc.stdout(), /started/, 'started nothing');
  });
}

t.test(`web and worker with ${KEY}: both start`, async (t) => {
  const env = await dynoEnv({ [KEY]: randomBytes(32).toString('hex') });
  const web = spawnNode(t, 'dist/runtime/web.js', { env });
  const worker = spawnNode(t, 'dist/runtime/worker.js', { env });
  await web.waitForStdout(/"msg":"web started"/, 60_000);
  await worker.waitForStdout(/"msg":"worker started"/, 60_000);
  t.ok(await listening(Number(env.PORT)), 'the web dyno listens on PORT');
  const health = await fetch(`http://127.0.0.1:${env.PORT}/healthz`);
  t.equal(health.status, 200, '/healthz answers');
  web.signal('SIGTERM');
  worker.signal('SIGTERM');
  t.equal((await web.waitExit(20_000))?.code, 0, 'web stops cleanly');
  t.equal((await worker.waitExit(25_000))?.code, 0, 'worker stops cleanly');
});

t.test(`the CLI with DATABASE_URL and no ${KEY}: the commands that seal a key refuse, naming it`, async (t) => {
  const a = await makeTenant(dbs.pool);
  const cli = cliRunner(t, childEnv({ DATABASE_URL: dbs.databaseUrl }, ['CLICKHOUSE_URL', 'PORT', 'DATA_DIR', KEY]));
  for (const args of [
    ['domain', 'add', '--instance', a.slug, '--name', 'needs.example'],
    ['sender', 'create', '--instance', a.slug, '--email', 'news@needs.example', '--name', 'News'],
  ]) {
    const r = await cli(...args);
    t.not(r.code, 0, `${args.slice(0, 2).join(' ')}: a failure exit`);
    t.match(r.stderr, `${KEY} is not set`, `${args.slice(0, 2).join(' ')}: says which variable: ${r.stderr.trim()}`);
  }
  const domains = await dbs.pool.query("SELECT 1 FROM domains WHERE name = 'needs.example'");
  t.equal(domains.rowCount, 0, 'nothing added');
});
