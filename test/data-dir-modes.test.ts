import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { projectRoot } from '../config/paths.js';
import { freePort } from '../config/ports.js';
import { secureDataDir } from '../config/data-dir.js';
import { childEnv, cliRunner, oneJsonObject, sleep, spawnNode, tempDataDir, type Proc } from './helpers/spawn.js';
import { waitFor } from './helpers/wait.js';

/**
 * Issue 37: DATA_DIR (sent mails with their signed links, every tenant's ClickHouse parts, the
 * logs, the embedded servers' passwords) is private to the user Cartero runs as: directories
 * 0700, files 0600 (0700 when executable), with one exception as root: DATA_DIR itself is 0710
 * with the group `postgres`, whose embedded Postgres must pass through to its cluster
 * (config/data-dir.ts). A data directory an earlier version left readable is tightened at start,
 * said once; what cannot be tightened is a refusal to start that names it.
 */

const DB_ENV = ['DATABASE_URL', 'CLICKHOUSE_URL', 'SMTP_URL', 'DATA_DIR', 'PORT', 'INTERNAL_PORT', 'INBOUND_SMTP_PORT', 'WEBHOOK_ALLOW_PRIVATE'];
const NOTICE = /made private to this user/;
const asRoot = process.getuid?.() === 0;
const postgresGid = asRoot ? Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()) : undefined;

/** Every entry below dir (dir included), symlinks listed but never followed. */
function walk(dir: string): Array<{ path: string; mode: number; gid: number; link: boolean; isDir: boolean }> {
  const out: Array<{ path: string; mode: number; gid: number; link: boolean; isDir: boolean }> = [];
  const visit = (path: string) => {
    try {
      const st = lstatSync(path);
      out.push({ path, mode: st.mode & 0o7777, gid: st.gid, link: st.isSymbolicLink(), isDir: st.isDirectory() });
      if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    } catch (err) {
      // A running Postgres or ClickHouse removes files as it goes (temporary files, merged parts).
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  };
  visit(dir);
  return out;
}

/** Entries some other user may read, write or enter (DATA_DIR's own exception as root allowed). */
function loose(dir: string): string[] {
  return walk(dir)
    .filter((e) => !e.link)
    .filter((e) => {
      if (e.path === dir && asRoot) return !(e.mode === 0o710 && e.gid === postgresGid);
      return (e.mode & 0o077) !== 0;
    })
    .map((e) => `${e.mode.toString(8)} ${e.path}`);
}

const octal = (path: string) => (statSync(path).mode & 0o7777).toString(8);


t.test('npm start keeps DATA_DIR private: fresh, then one an earlier version left readable', async (t) => {
  // The parent stays 0755 (tempDataDir), as a project folder is: DATA_DIR itself is Cartero's to create.
  const dataDir = join(tempDataDir(t), 'data');
  const port = await freePort();
  const env = childEnv({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' }, DB_ENV);
  const start = () => spawnNode(t, 'dist/runtime/start.js', { env, detached: true });
  const ready = (p: Proc) => p.waitForStdout(new RegExp(`Cartero is running at http://localhost:${port}\\b`), 120_000);
  const stop = async (t: Test, p: Proc) => {
    p.signal('SIGINT');
    t.same(await p.waitExit(60_000), { code: 0, signal: null }, 'stopped with Ctrl-C');
  };

  const first = start();
  await ready(first);

  await t.test('a fresh DATA_DIR: nothing for group or others, mails and ClickHouse parts included', async (t) => {
    // A mail through the whole path, so mailbox/ holds an .eml with its signed links.
    const cli = cliRunner(t, childEnv({ DATA_DIR: dataDir }, DB_ENV));
    oneJsonObject(await cli('instance', 'create', '--slug', 'modes'));
    oneJsonObject(await cli('domain', 'add', '--instance', 'modes', '--name', 'modes.example'));
    oneJsonObject(await cli('domain', 'set-checks', '--instance', 'modes', '--name', 'modes.example', '--mx', 'approved', '--spf', 'approved', '--dkim', 'approved', '--dmarc', 'approved'));
    oneJsonObject(await cli('sender', 'create', '--instance', 'modes', '--email', 'news@modes.example', '--name', 'News'));
    const key = oneJsonObject(await cli('key', 'create', '--instance', 'modes', '--scopes', 'mail:send'));
    const sent = await fetch(`http://127.0.0.1:${port}/v1/mails/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'x-instance-slug': 'modes', 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'news@modes.example', to: [{ email: 'ana@example.net' }], subject: 'Hello', html: '<p>Hi <a href="https://shop.example/">shop</a></p>' }),
    });
    t.equal(sent.status, 202, 'the send is accepted');
    const mailbox = join(dataDir, 'mailbox');
    const eml = await waitFor('an .eml in mailbox/', () => readdirSync(mailbox).find((f) => f.endsWith('.eml')));

    const entries = walk(dataDir);
    t.ok(entries.length > 100, `walked ${entries.length} entries (ClickHouse parts included)`);
    t.same(loose(dataDir), [], 'no entry other users may read, write or enter');
    t.equal(octal(join(mailbox, eml)), '600', 'the stored mail is 0600');
    t.equal(octal(mailbox), '700', 'mailbox/ is 0700');
    t.equal(octal(join(dataDir, 'clickhouse', 'clickhouse.log')), '600', 'clickhouse.log is 0600');
    t.equal(octal(join(dataDir, 'postgres', 'postgres.log')), '600', 'postgres.log is 0600');
    t.ok(
      entries.some((e) => e.path.includes(`${join(dataDir, 'clickhouse', 'store')}/`) && e.path.endsWith('.bin')),
      'ClickHouse wrote its parts (and they are private, above)',
    );
    t.equal(octal(dataDir), asRoot ? '710' : '700', asRoot ? 'DATA_DIR 0710: only the group postgres may pass through' : 'DATA_DIR 0700');
    if (asRoot) {
      t.equal(statSync(dataDir).gid, postgresGid, "DATA_DIR's group is postgres");
      t.ok(lstatSync(join(dataDir, 'postgres', 'data')).isDirectory(), 'so the Postgres cluster lives inside DATA_DIR');
    }
    t.notMatch(first.stdout() + first.stderr(), NOTICE, 'a fresh DATA_DIR has nothing to tighten and says nothing');
  });
  await stop(t, first);

  await t.test('a DATA_DIR an earlier version left readable is tightened, said once', async (t) => {
    // What a version without this fix left: everything it wrote under umask 022 (dirs 0755, files
    // 0644), DATA_DIR root's group unchanged; the Postgres cluster itself is 0700 in any version
    // (initdb, and Postgres refuses anything looser). Plus a symlink out of DATA_DIR.
    const cluster = join(dataDir, 'postgres', 'data');
    let loosened = 0;
    for (const e of walk(dataDir)) {
      if (e.link || e.path === cluster || e.path.startsWith(cluster + '/')) continue;
      const mode = e.mode | (e.isDir ? 0o055 : 0o044);
      if (mode !== e.mode) loosened++;
      chmodSync(e.path, mode);
    }
    if (asRoot) chownSync(dataDir, 0, 0);
    const outside = join(tempDataDir(t), 'outside.txt');
    writeFileSync(outside, 'not DATA_DIR\'s\n', { mode: 0o644 });
    symlinkSync(outside, join(dataDir, 'mailbox', 'link-out'));
    t.ok(loose(dataDir).length >= loosened && loosened > 100, `${loosened} entries made readable, as an earlier version left them`);

    const second = start();
    await ready(second);
    const notices = (second.stdout() + second.stderr()).split('\n').filter((l) => NOTICE.test(l));
    t.equal(notices.length, 1, `said once (${notices.join(' | ')})`);
    t.equal(JSON.parse(notices[0] ?? '{}').tightened, loosened, 'with the number of entries tightened');
    t.same(loose(dataDir), [], 'and now nothing is readable by others');
    t.equal(octal(outside), '644', 'the symlink out of DATA_DIR was not followed');
    if (asRoot) t.ok(lstatSync(cluster).isDirectory(), 'the embedded Postgres still reaches its cluster inside DATA_DIR');
    await stop(t, second);

    const third = start();
    await ready(third);
    t.notMatch(third.stdout() + third.stderr(), NOTICE, 'the next start says nothing');
    await stop(t, third);
  });
});

/** Whether chattr +i works in the temporary directory (ext4 and the like, not tmpfs). */
function immutableFilesWork(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'cartero-chattr-'));
  const file = join(dir, 'probe');
  writeFileSync(file, '');
  try {
    if (spawnSync('chattr', ['+i', file]).status !== 0) return false;
    spawnSync('chattr', ['-i', file]);
    return true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const noChattr = asRoot && immutableFilesWork() ? false : 'needs root and chattr +i in the temporary directory';
t.test('what cannot be made private is a refusal to start that names it', { skip: noChattr }, async (t) => {
  const dataDir = tempDataDir(t);
  const mailbox = join(dataDir, 'mailbox');
  mkdirSync(mailbox, { mode: 0o755 });
  chmodSync(mailbox, 0o755);
  const stuck = join(mailbox, 'old.eml');
  writeFileSync(stuck, 'Subject: old\r\n\r\nhi\r\n', { mode: 0o644 });
  chmodSync(stuck, 0o644);
  // Immutable: a change of mode that even root cannot make (a read-only mount is the other such case).
  t.equal(spawnSync('chattr', ['+i', stuck]).status, 0, 'chattr +i');
  t.teardown(() => void spawnSync('chattr', ['-i', stuck]));

  const port = await freePort();
  const service = spawnNode(t, 'dist/runtime/start.js', { env: childEnv({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' }, DB_ENV), detached: true });
  const exit = await service.waitExit(60_000);
  t.same(exit, { code: 1, signal: null }, 'exit 1');
  t.match(service.stderr(), `cartero start: DATA_DIR ${dataDir} holds an entry other local users may read or write`, 'says why');
  t.match(service.stderr(), `${stuck}: mode 0644: EPERM`, 'naming the entry, its mode and the error');
  // tempDataDir made DATA_DIR itself as npm start would: only mailbox/ was left to tighten.
  t.match(service.stderr(), '(1 other entry was made private.)', 'after tightening what it could (mailbox/)');
  t.equal(octal(mailbox), '700', 'mailbox/ was tightened');
  t.notOk(existsSync(join(dataDir, 'postgres')), 'nothing was started');
});

t.test("another user's entry cannot be made private by a user that is not root: refused", { skip: asRoot ? false : "needs root to prepare another user's file" }, async (t) => {
  // DATA_DIR belongs to nobody (65534), who runs the check; a file in it belongs to root.
  const dataDir = tempDataDir(t);
  chownSync(dataDir, 65534, 65534);
  chmodSync(dataDir, 0o700);
  writeFileSync(join(dataDir, 'services.json'), '{}\n', { mode: 0o644 });
  chmodSync(join(dataDir, 'services.json'), 0o644);
  const script =
    `import { secureDataDir } from ${JSON.stringify(join(projectRoot, 'dist', 'config', 'data-dir.js'))};\n` +
    `try { secureDataDir(process.argv[1]); console.log('tightened'); } catch (err) { console.log(err.message); process.exit(3); }`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, dataDir], { uid: 65534, gid: 65534, encoding: 'utf8', env: childEnv({}) });
  // (Its stderr is left out: tap's process-info hook, injected into every child, cannot write its
  // record as nobody and says so there.)
  t.equal(r.status, 3, `refused (${r.stdout.trim()})`);
  t.match(r.stdout, `${join(dataDir, 'services.json')}: mode 0644, owned by uid 0: EPERM`, "names the entry and its owner");
  t.equal(octal(join(dataDir, 'services.json')), '644', 'left as it was');

  // Root itself can: the same call in this process tightens it and says how many.
  t.same(secureDataDir(dataDir), { tightened: 1 }, 'root tightens it');
  t.throws(() => secureDataDir(join(dataDir, 'services.json')), { name: 'Error', message: /is not a directory/ }, 'a DATA_DIR that is a file is refused');
});
