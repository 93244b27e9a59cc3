import { readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import t from 'tap';
import { clickHouseFetch } from '../analytics/client.js';
import { projectRoot } from '../config/paths.js';
import { freePort } from '../config/ports.js';
import { readServices } from '../config/services-file.js';
import { netWatchNodeOptions, outsideAttempts, recordedAttempts } from './helpers/net-watch.js';
import { childEnv, sh, sleep, spawnNode, tempDataDir, type ShellRun } from './helpers/spawn.js';

/**
 * The README's commands, run as written: the service started the way `npm start` starts it
 * (after its build), then every command of the README's shell blocks in order, through a shell:
 * the demo (and the curl lines it prints), then the manual quickstart on the same service.
 * Only what differs on a test machine is substituted: this file's DATA_DIR for `./.data`, a free
 * port for 3000, the key the README's `key create` printed for `<key>`, and `node bin/cartero.js`
 * for `npx cartero` (the same script, without npx's lookup).
 *
 * Every Node process of the run (the supervisor, its dynos, the CLI, the demo) loads the network
 * watch (helpers/net-watch.ts): at the end, no connection attempt and no name lookup may have
 * aimed outside loopback (issue 37: the demo once sent its webhook to example.com, then 1.1.1.1).
 */

/** The commands of each ```sh block of a Markdown text, `\` continuations joined. */
function shellBlocks(markdown: string): string[][] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) =>
    m[1]!
      .replace(/\\\n/g, '')
      .split('\n')
      .filter((l) => l.trim() !== ''),
  );
}


/** The command's output as JSON; fails the test (with the output) when it is not. */
function json(run: ShellRun, what: string): any {
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`${what}: expected JSON on stdout, exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`);
  }
}

t.test('the README quickstart works as written', async (t) => {
  const blocks = shellBlocks(readFileSync(join(projectRoot, 'README.md'), 'utf8'));
  const [install, ...quickstart] = blocks;
  const commands = quickstart.flat();
  const shape = [
    t.ok(install?.some((l) => l.includes('npm start')), 'the first block starts the service (npm start)'),
    t.ok(commands.some((c) => /key create .*--scopes \S*mail:send/.test(c) && /--scopes \S*mail:read/.test(c)), 'a key with mail:send and mail:read'),
    t.ok(commands.some((c) => /curl .*-X POST .*\/v1\/mails\/send/.test(c)), 'one curl to POST /v1/mails/send'),
    t.ok(commands.some((c) => /\.\/\.data\/mailbox\//.test(c)), 'where the message is: ./.data/mailbox/'),
    t.ok(commands.some((c) => /^npx cartero demo$/.test(c)), 'five minutes: npx cartero demo'),
    t.ok(commands.some((c) => /curl .*\/v1\/mails(\s|$)/.test(c) && !c.includes('-X POST')), 'one listing call (GET /v1/mails)'),
  ];
  if (shape.includes(false)) return;

  const dataDir = tempDataDir(t);
  const port = await freePort();
  const watch = join(dataDir, '..', `${basename(dataDir)}.net-watch.jsonl`);
  const env = childEnv(
    { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', NODE_OPTIONS: netWatchNodeOptions(), CARTERO_NET_WATCH_FILE: watch },
    ['DATABASE_URL', 'CLICKHOUSE_URL', 'SMTP_URL', 'INTERNAL_PORT', 'INBOUND_SMTP_PORT', 'WEBHOOK_ALLOW_PRIVATE', 'DNS_SERVERS'],
  );
  t.teardown(() => rmSync(watch, { force: true }));
  // `npm start` is its build (prestart) then this; the suite is already built.
  const service = spawnNode(t, 'dist/runtime/start.js', { env, detached: true });
  await service.waitForStdout(new RegExp(`Cartero is running at http://localhost:${port}\\b`), 120_000);

  let key: string | undefined;
  const asOnThisMachine = (command: string) => {
    let c = command
      .replace(/^npx cartero /, 'node bin/cartero.js ')
      .replaceAll('http://localhost:3000', `http://localhost:${port}`)
      .replaceAll('./.data', dataDir);
    if (c.includes('<key>')) {
      if (!key) throw new Error(`no key printed before: ${command}`);
      c = c.replaceAll('<key>', key);
    }
    return c;
  };

  let sent: { msg_id: string; mails: Array<{ mail_id: string; to: string; status: number }> } | undefined;
  for (const command of commands) {
    const run = () => sh(asOnThisMachine(command), env, /cartero demo/.test(command) ? 180_000 : 30_000);
    let r = await run();
    // Delivery is asynchronous ("a moment later"): the mailbox command again until it finds the message.
    for (const deadline = Date.now() + 30_000; /mailbox\//.test(command) && r.code !== 0 && Date.now() < deadline; r = await run()) await sleep(250);
    if (!t.equal(r.code, 0, `exit 0: ${command}`)) {
      t.comment(r.stdout + r.stderr);
      return;
    }
    if (/key create/.test(command)) {
      key = json(r, command).key;
      t.type(key, 'string', 'key create printed the key');
    } else if (/\/v1\/senders/.test(command)) {
      // The instance's sandbox sender (the README's paragraph on it), then the one created.
      t.same(json(r, command).data?.map((s: { email_address: string }) => s.email_address), ['sandbox@shop.sandbox.cartero.test', 'news@example.com'], 'the key reads the senders');
    } else if (/\/v1\/mails\/send/.test(command)) {
      sent = json(r, command);
      t.equal(sent?.mails?.length, 1, 'the send was accepted: one mail');
      t.match(sent?.mails?.[0], { to: 'ana@example.net', status: 1 }, 'received, to be sent by the worker');
    } else if (/cartero demo/.test(command)) {
      // The demo's printed guide, run as printed: each curl line answers 200, and /docs opens.
      const lines = r.stdout.split('\n');
      const curls = lines.filter((l) => l.startsWith('curl '));
      t.ok(curls.length >= 7, `the demo printed its curl lines (${curls.length})`);
      for (const line of curls) {
        const status = await sh(line.replace(/^curl /, `curl -o /dev/null -w '%{http_code}' `), env);
        t.equal(status.stdout, '200', `200: ${line.slice(0, 160)}`);
      }
      const docs = lines.find((l) => /^http:\/\/localhost:\d+\/docs$/.test(l));
      t.equal(docs, `http://localhost:${port}/docs`, 'and the /docs URL');
      if (docs) t.equal((await fetch(docs)).status, 200, '/docs answers 200');
    } else if (/mailbox\//.test(command)) {
      const files = r.stdout.split('\n').filter((f) => f.endsWith('.eml'));
      t.equal(files.length, 1, `the message is found (${r.stdout.trim()})`);
      const eml = files[0] ? readFileSync(files[0], 'utf8') : '';
      t.match(eml, /^X-Simulator-Rcpt-To: ana@example\.net$/m, 'delivered to the recipient');
      t.match(eml, /^Subject: Hello Ana$/m, 'with the merge tag rendered');
      t.ok(files[0]?.startsWith(join(dataDir, 'mailbox') + '/'), 'and it is in $DATA_DIR/mailbox/');
    } else if (/\/v1\/mails(\s|$)/.test(command)) {
      // The status moves to 3 (sent) when the worker records the relay's 250, just after the file.
      const deadline = Date.now() + 10_000;
      let mails = json(r, command).data as Array<{ mail_id: string; to: string; status: number }>;
      while (mails.some((m) => m.status !== 3) && Date.now() < deadline) {
        await sleep(250);
        r = await run();
        mails = json(r, command).data;
      }
      t.same(
        mails.map((m) => [m.mail_id, m.to, m.status]),
        [[sent?.mails?.[0]?.mail_id, 'ana@example.net', 3]],
        'the listing shows the mail, sent',
      );
    }
  }
  t.ok(key && sent, 'the quickstart created a key and sent a mail');

  // The worker shipped the mail's delivery moves to the embedded ClickHouse through the
  // CLICKHOUSE_URL npm start gave it, whose password an anonymous request lacks (issue 24).
  const clickhouse = readServices(dataDir).clickhouse!;
  const select = `SELECT count() FROM mail_events WHERE mail_id = '${sent?.mails?.[0]?.mail_id}' FORMAT TSV`;
  const root = Object.assign(new URL(clickhouse.url), { pathname: '/', search: '?database=cartero' }).toString();
  let shipped = '';
  for (const deadline = Date.now() + 30_000; Date.now() < deadline && Number(shipped) === 0; await sleep(250)) {
    shipped = await (await clickHouseFetch(root, { method: 'POST', body: select })).text();
  }
  t.ok(Number(shipped) > 0, `the mail's events are in ClickHouse (${shipped.trim()})`);
  const anonymous = await fetch(`http://127.0.0.1:${clickhouse.port}/?database=cartero`, { method: 'POST', body: select });
  t.equal(anonymous.status, 401, 'and a request without the password is refused');

  // Nothing left this machine: every attempt the service, its dynos, the CLI and the demo made
  // (they all ran with the watch) was to loopback. The count shows the watch saw them at all.
  const seen = recordedAttempts(watch);
  t.ok(seen > 50, `the watch recorded the run's connections and lookups (${seen})`);
  t.same(outsideAttempts(watch), [], 'no connection attempt or name lookup outside loopback');
});
