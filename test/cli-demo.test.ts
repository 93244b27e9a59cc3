import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { freePort } from '../config/ports.js';
import { DESIGN_FILE } from '../cli/demo/seed.js';
import { processDocument } from '../engines/beefree/document.js';
import { childEnv, sh, sleep, spawnNode, tempDataDir } from './helpers/spawn.js';

/**
 * `npx cartero demo` (issue 29) against a fresh service started as `npm start` starts it (its
 * own DATA_DIR and PORT), as a newcomer would run it: through bin/cartero.js, then every curl line
 * it printed, as printed (only `-o /dev/null -w '%{http_code}'` added to read the status), each
 * answering 200; what the listings and the mailbox show; a second run (idempotent, a new key);
 * and --reset.
 */


/** The printed guide: the key, each curl line (one command a line), the /docs URL. */
function guideOf(stdout: string): { key?: string; curls: string[]; docs?: string } {
  const lines = stdout.split('\n');
  return {
    key: lines.map((l) => /^ {2}(crt\.\S+)$/.exec(l)?.[1]).find(Boolean),
    curls: lines.filter((l) => l.startsWith('curl ')),
    docs: lines.find((l) => /^https?:\/\/\S+\/docs$/.test(l)),
  };
}

/** Each printed command answers 200: the command as printed, with curl told to print only the status. */
async function allAnswer200(t: Test, curls: string[], env: NodeJS.ProcessEnv, what: string): Promise<void> {
  for (const line of curls) {
    const r = await sh(line.replace(/^curl /, `curl -o /dev/null -w '%{http_code}' `), env);
    t.equal(r.stdout, '200', `${what}: 200 from ${line.replace(/Bearer [^']+/, 'Bearer <key>').slice(0, 140)}`);
  }
}

/** Polls the printed command until `ok` holds for its JSON answer (listings read ClickHouse, fed within about a second). */
async function answerOf(line: string, env: NodeJS.ProcessEnv, ok: (body: any) => boolean, ms = 15_000): Promise<any> {
  const deadline = Date.now() + ms;
  let body: any;
  do {
    const r = await sh(line, env);
    try {
      body = JSON.parse(r.stdout);
    } catch {
      body = r.stdout;
    }
    if (ok(body)) return body;
    await sleep(500);
  } while (Date.now() < deadline);
  return body;
}

t.test("the demo's design document checks clean: no error, no warning", async (t) => {
  const config = JSON.parse(readFileSync(DESIGN_FILE, 'utf8'));
  const { findings, html } = await processDocument(config, { subject: "November's roasts are here, {{first_name}}", preheader: 'Three new coffees' });
  t.same(findings.filter((f) => f.level !== 'suggestion'), [], 'no error or warning');
  t.ok(html && html.includes('Shop the November roasts'), 'rendered, its button included');
  t.ok((html?.match(/href="https:\/\/shop\./g) ?? []).length >= 4, 'with links to track');
});

t.test('npx cartero demo seeds a running service and every printed command answers 200', async (t) => {
  const dataDir = tempDataDir(t);
  const port = await freePort();
  const env = childEnv({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' }, ['DATABASE_URL', 'CLICKHOUSE_URL', 'SMTP_URL', 'INTERNAL_PORT', 'INBOUND_SMTP_PORT', 'WEBHOOK_ALLOW_PRIVATE']);
  const early = await sh('node bin/cartero.js demo', env);
  t.equal(early.code, 1, 'before npm start: exit 1');
  t.match(early.stderr, /no Cartero service answers at http:\/\/localhost:\d+ .*npm start/, 'saying to start the service first');
  t.same(readdirSync(dataDir), [], 'without starting a database for it');

  // `npm start` is its build (prestart) then this; the suite is already built.
  const service = spawnNode(t, 'dist/runtime/start.js', { env, detached: true });
  await service.waitForStdout(new RegExp(`Cartero is running at http://localhost:${port}\\b`), 120_000);
  const base = `http://localhost:${port}`;

  const started = Date.now();
  const first = await sh('node bin/cartero.js demo', env, 120_000);
  t.comment(`the demo took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (!t.equal(first.code, 0, 'exit 0')) {
    t.comment(first.stdout + first.stderr);
    return;
  }
  t.match(first.stderr, /50 mails accepted/, 'progress on stderr');
  t.match(first.stdout, /^Seeded instance "demo" at /m, 'says what it seeded');
  const guide = guideOf(first.stdout);
  t.match(guide.key, /^crt\.[0-9a-f]{16}\./, 'the key, printed once');
  t.equal(guide.docs, `${base}/docs`, 'the /docs URL');
  const find = (re: RegExp) => guide.curls.find((c) => re.test(c));
  const lines = {
    campaign: find(/\/v1\/mails\?custom_group_code=/),
    opens: find(/\/v1\/activities\/opens\?group_by=(mail_id|msg_id)/),
    clicks: find(/\/v1\/activities\/clicks/),
    unopened: find(/\/v1\/activities\/unopened/),
    csv: find(/\/export\?format=csv/),
    complaints: find(/\/v1\/mail-complaints/),
    submission: find(/-X POST .*\/v1\/forms\/\d+\/submissions/),
    resolve: find(/\/v1\/consent-rules\/resolve\?/),
  };
  for (const [name, line] of Object.entries(lines)) {
    t.ok(line, `a curl line for ${name}`);
    t.ok(line?.includes(`Bearer ${guide.key}`) && line.includes(base), `${name}: the key and the service's URL filled in`);
  }
  await allAnswer200(t, guide.curls, env, 'first run');

  // What the listings show: the campaign's bounces (6), deferrals (5), deliveries (3), opens and clicks.
  const campaign = await answerOf(lines.campaign!, env, (b) => b.data?.some((m: any) => m.opens > 0) && b.data?.some((m: any) => m.clicks > 0));
  const mails = campaign.data as Array<{ to: string; status: number; opens: number; clicks: number }>;
  t.equal(mails.length, 50, 'about 50 mails: 50 in the campaign');
  t.ok(mails.filter((m) => m.to.startsWith('bounce+')).every((m) => m.status === 6), 'bounce* bounced (6)');
  t.ok(mails.filter((m) => m.to.startsWith('softbounce+')).every((m) => m.status === 5), 'softbounce* deferred (5)');
  t.ok(mails.some((m) => m.status === 3 && m.opens > 0) && mails.some((m) => m.clicks > 0), 'delivered mails opened and clicked');
  const complaints = await answerOf(lines.complaints!, env, (b) => b.data?.length >= 3);
  t.same(complaints.data.map((c: any) => c.recipient).sort(), ['complaint+1@example.net', 'complaint+2@example.net', 'complaint+3@example.net'], 'complaint* complained (ARF reports)');
  const opens = await answerOf(lines.opens!, env, (b) => b.data?.length > 0);
  t.ok(opens.data.length >= 20, `opens grouped per recipient (${opens.data.length} recipients)`);
  const clicks = await answerOf(lines.clicks!, env, (b) => b.data?.length > 0);
  const humanClicks = await answerOf(lines.clicks!.replace(/'$/, "&exclude_machine=true'"), env, (b) => b.data?.length > 0);
  t.ok(humanClicks.data.length > 0 && humanClicks.data.length < clicks.data.length, `scanner clicks flagged machine-made (${clicks.data.length} clicks, ${humanClicks.data.length} by people)`);
  const unopened = await answerOf(lines.unopened!, env, (b) => b.data?.length > 0);
  t.ok(unopened.data.length > 0, 'delivered mails nobody opened');
  const csv = (await sh(lines.csv!, env)).stdout;
  t.match(csv, /^\uFEFF?"mail_id",/, 'the export is CSV with its header');
  t.ok(csv.trim().split('\n').length > 20, 'a row per open');
  t.match(await answerOf(lines.resolve!, env, (b) => b.data?.[0]?.verdict === 'allowed'), { data: [{ verdict: 'allowed' }] }, 'the double opt-in confirmed through its link: consent allowed');
  t.match(await answerOf(lines.submission!, env, () => true), { id: Number, status: 'pending' }, 'the submission line answers with the submission');
  // Private receivers refused (the default): no webhook at all, rather than one at an address the
  // demo does not run (it once fell back on example.com, then 1.1.1.1).
  t.notOk(find(/\/v1\/webhooks/), 'no webhook deliveries line');
  const webhooks = await answerOf(lines.campaign!.replace(/\/v1\/mails\?[^']*/, '/v1/webhooks'), env, () => true);
  t.same(webhooks.data, [], 'no webhook made');
  t.match(first.stdout, /No webhook: .*WEBHOOK_ALLOW_PRIVATE=true/, 'says how to see deliveries locally');

  // The mailbox: delivered and complained mails stored, bounced and deferred ones not.
  const stored = readdirSync(join(dataDir, 'mailbox'))
    .filter((f) => f.endsWith('.eml'))
    .map((f) => /^X-Simulator-Rcpt-To: (.*)$/m.exec(readFileSync(join(dataDir, 'mailbox', f), 'utf8'))?.[1] ?? '');
  t.ok(stored.some((to) => to.startsWith('complaint+')), 'complaint* mails in the mailbox');
  t.notOk(stored.some((to) => /^(soft)?bounce\+/.test(to)), 'no bounced or deferred mail in the mailbox');
  t.ok(stored.includes('lucia.fernandez@example.net'), 'the confirmation mail whose link was followed');

  const second = await sh('node bin/cartero.js demo', env, 60_000);
  t.equal(second.code, 0, 'a second run: exit 0');
  t.match(second.stdout, /^The demo exists: instance "demo"/m, 'says the demo exists');
  t.notMatch(second.stderr, /mails accepted/, 'and seeds nothing');
  const again = guideOf(second.stdout);
  t.ok(again.key && again.key !== guide.key, 'with a new key, said so');
  t.equal(again.curls.length, guide.curls.length, 'the same commands');
  await allAnswer200(t, again.curls, env, 'second run');

  const reset = await sh('node bin/cartero.js demo --reset', env, 120_000);
  t.equal(reset.code, 0, '--reset: exit 0');
  t.match(reset.stderr, /set aside as instance demo-retired-\d{14}/, 'the previous demo set aside');
  t.match(reset.stdout, /^Seeded instance "demo"/m, 'a new demo seeded');
  const fresh = guideOf(reset.stdout);
  await allAnswer200(t, fresh.curls, env, 'after --reset');
  const old = await sh(lines.resolve!.replace(/^curl /, `curl -o /dev/null -w '%{http_code}' `), env);
  t.equal(old.stdout, '401', "the first run's key does not open the new demo");
});
