// The embedded default's first Postgres start (sql/embedded.ts): the password initdb is given
// never sits in a file other local users can read (it used to be a 0644 file in /tmp).
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import t from 'tap';
import { Worker } from 'node:worker_threads';
import { writeInitdbPasswordFile } from '../sql/embedded.js';
import { freePort } from '../config/ports.js';

const mode = (path: string) => statSync(path).mode & 0o777;

t.test('the password file for initdb: beside the cluster dir, 0600, created exclusively', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'cartero-pwfile-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const dataDir = join(root, 'data');
  const oldUmask = process.umask(0);
  try {
    const file = writeInitdbPasswordFile(dataDir, 's3cret');
    t.equal(dirname(file), root, 'in the parent of the cluster dir (initdb wants the cluster dir empty)');
    t.equal(mode(file), 0o600, 'owner only, even under umask 0');
    t.equal(readFileSync(file, 'utf8'), 's3cret\n');
    const second = writeInitdbPasswordFile(dataDir, 'other');
    t.not(second, file, 'a fresh name each time');
  } finally {
    process.umask(oldUmask);
  }
});

t.test('a real first start: initdb reads the password, no readable copy appears anywhere, none is left', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'cartero-embpg-'));
  // Running as root, Postgres runs as the user postgres, which must reach the data dir.
  chmodSync(root, 0o755);
  const dir = join(root, 'pg');
  mkdirSync(dir);
  const password = `pw-${Date.now().toString(36)}-probe`;
  // Every file that appears in /tmp or in the data dir while Postgres initialises is looked at
  // the moment it appears: one holding the password must be private. The start runs in a worker
  // thread because initdb runs synchronously and would block this thread's watchers.
  const seen = new Map<string, number>();
  const look = (folder: string) => (_event: string, name: string | Buffer | null) => {
    if (!name) return;
    const path = join(folder, String(name));
    try {
      if (statSync(path).isFile() && readFileSync(path, 'utf8').includes(password)) seen.set(path, mode(path));
    } catch {
      /* gone already, or a folder */
    }
  };
  const watchers: FSWatcher[] = [watch(tmpdir(), look(tmpdir())), watch(dir, look(dir))];
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData.module).then(async (m) => {
       const server = await m.startEmbeddedPostgres(workerData.opts);
       parentPort.postMessage({ url: server.url });
       parentPort.once('message', async () => { await server.stop(); parentPort.postMessage({ stopped: true }); });
     }).catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));`,
    { eval: true, workerData: { module: new URL('../sql/embedded.js', import.meta.url).href, opts: { dir, port: await freePort(), password, database: 'cartero' } } },
  );
  const next = () => new Promise<any>((resolve) => worker.once('message', resolve));
  let started = false;
  t.teardown(async () => {
    for (const w of watchers) w.close();
    if (started) {
      const stopped = next();
      worker.postMessage('stop');
      await stopped;
    }
    await worker.terminate();
    await rm(root, { recursive: true, force: true });
  });
  const reply = await next();
  if (reply.error) throw new Error(reply.error);
  started = true;

  const client = new pg.Client({ connectionString: reply.url });
  await client.connect();
  t.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1, 'the cluster took the password initdb read from the file');
  await client.end();

  // Issue 24 ("any other embedded listener that accepts anyone on loopback"): this one does not.
  const attempt = async (password: string) => {
    const other = new pg.Client({ connectionString: Object.assign(new URL(reply.url), { password }).toString() });
    try {
      await other.connect();
      return 'connected';
    } catch (err) {
      return (err as { code?: string; message: string }).code ?? (err as Error).message;
    } finally {
      await other.end().catch(() => {});
    }
  };
  t.equal(await attempt('not-the-password'), '28P01', 'a wrong password is refused (invalid_password)');
  t.match(await attempt(''), /SASL|password/, 'without a password the server asks for one (SCRAM) and the client cannot answer');

  const initdbFiles = [...seen.keys()].filter((p) => p !== join(dir, 'password'));
  t.ok(initdbFiles.length >= 1, `the password file initdb read was observed: ${initdbFiles.join(', ')}`);
  for (const [path, m] of seen) {
    t.equal(m & 0o077, 0, `${path}: no group or other permission (${m.toString(8)})`);
    t.not(dirname(path), tmpdir(), `${path}: not in the shared ${tmpdir()}`);
  }
  t.same(readdirSync(dir).filter((f) => f.startsWith('.initdb-pw-')), [], 'removed after initdb');
});
