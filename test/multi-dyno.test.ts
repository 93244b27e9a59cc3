// Queue settings are read when testDatabases creates the queues (the release step): set first.
// A send job left active by a killed worker is retried after 20 s (+ the 1 s retry delay), found
// by pg-boss's maintenance every 2 s. Not 5 s as test/send-kill.test.ts: the send lease lives a
// quarter of the expiry (workers/machinery/send-lease.ts), and with four dynos on a busy 2-core
// machine one run at 5 s sent a mail twice that the killed worker did not hold: most likely a
// live worker's 2 s lease lapsing between refreshes (not confirmed: that run kept no logs).
process.env.SEND_JOB_EXPIRE_SECONDS = '20';
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.QUEUE_MAINTENANCE_SECONDS = '2';

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import t from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { freePort } from '../config/ports.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { createForm } from '../domain/forms/definition.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { startTestMailbox } from './helpers/mailbox.js';
import { type MailApi, mailApi, mailboxCopies, readMailbox, waitFor } from './helpers/send-stack.js';
import { childEnv, sleep, spawnNode, type Proc, TEST_DKIM_KEY, waitHttp } from './helpers/spawn.js';
import { startReceiver } from './helpers/webhook-receiver.js';
import { JOBS } from '../workers/jobs/index.js';

/**
 * Exactly once with N dynos (issue 26): 2 web and 2 worker dynos, each its own process from
 * dist/runtime/web.js and dist/runtime/worker.js, on one Postgres and one ClickHouse; requests
 * alternate between the two webs as a router would spread them. Through them: a 2,000-mail send,
 * opens and clicks of the delivered mails (read from the real mailbox), webhook deliveries to a
 * real receiver counting them by webhook-id, and hosted-form submissions whose double opt-in
 * confirmation mails go through the same queue; one worker SIGKILLed in the middle and a new one
 * started. What must hold:
 *  - every mail sent (mails table) and in the mailbox; copies beyond one only for mails the
 *    killed worker had in flight (queued) at the kill, and at most what one worker holds;
 *  - every tracking hit counted once: mails.opens/clicks and ClickHouse (FINAL) equal the hits;
 *  - every webhook event delivered: each webhook-id answered 200 at least once, and more than
 *    once only for deliveries in flight at the kill (attempts left unfinished by the killed worker);
 *  - one confirmation mail per submission (mails table), one in the mailbox unless in flight;
 *  - each minute schedule run at most once per minute with two workers (pg-boss's records).
 */
const PUBLIC_URL = 'https://dynos.cartero.test';
const BATCH_SIZE = 50;
const CONCURRENCY = 2;
/** What one worker can hold at SMTP at once. */
const IN_FLIGHT = BATCH_SIZE * CONCURRENCY;
const SENDS = 20;
const PER_SEND = 100;
const TOTAL = SENDS * PER_SEND;
const SUBMISSIONS = 60;
/** Mails whose pixel and a link are fetched, half before the kill, half after. */
const TRACKED = 200;
/** Killed once at least this many are sent. */
const KILL_AFTER = 600;

const dbs = await testDatabases(t, 'multidyno');
const { simulator, mailboxDir } = await startTestMailbox(t);
const receiver = await startReceiver(t);
const ch = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => ch.close());

const common = {
  DATABASE_URL: dbs.databaseUrl,
  CLICKHOUSE_URL: dbs.clickhouseUrl,
  SMTP_URL: simulator.url,
  PUBLIC_URL,
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY,
};
const INHERITED = ['DATA_DIR', 'PORT', 'INTERNAL_PORT', 'INBOUND_SMTP_PORT'];
const workerEnv = childEnv(
  {
    ...common,
    SEND_RETRY_DELAY_SECONDS: process.env.SEND_RETRY_DELAY_SECONDS,
    SEND_JOB_EXPIRE_SECONDS: process.env.SEND_JOB_EXPIRE_SECONDS,
    QUEUE_MAINTENANCE_SECONDS: process.env.QUEUE_MAINTENANCE_SECONDS,
    SEND_BATCH_SIZE: String(BATCH_SIZE),
    SEND_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1',
    WEBHOOK_TIMEOUT_SECONDS: '4',
    // Attempts in flight per webhook, across workers: enough that few deliveries wait in a drain's
    // memory (a killed worker's held ones come back only through the minute sweep, 2 min later).
    WEBHOOK_CONCURRENCY: '200',
  },
  INHERITED,
);
const spawnWorker = () => spawnNode(t, 'dist/runtime/worker.js', { env: workerEnv });

const count = async (sql: string, params: unknown[] = []): Promise<number> => Number((await dbs.pool.query(sql, params)).rows[0].n);

t.test('2 web + 2 worker dynos, one worker killed: every mail, hit, delivery and confirmation once', async (t) => {
  const testStart = Date.now();
  // ---- the dynos ------------------------------------------------------------------------------
  const webs: Array<{ base: string; proc: Proc }> = [];
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const env = childEnv({ ...common, PORT: String(port), INTERNAL_PORT: String(await freePort()), FORM_PAGE_RATE_PER_MINUTE: '100000' }, INHERITED);
    webs.push({ base: `http://127.0.0.1:${port}`, proc: spawnNode(t, 'dist/runtime/web.js', { env }) });
  }
  await Promise.all(webs.map((w) => waitHttp(`${w.base}/healthz`, w.proc, 300_000)));
  // Started once the webs answer: four dynos starting at once on a busy 2-core machine took minutes.
  const workers = [spawnWorker(), spawnWorker()];
  let turn = 0;
  /** The next web, round robin (a router). */
  const nextWeb = () => webs[turn++ % 2]!.base;
  /** A public link of a mail, pointed at the next web instead of PUBLIC_URL. */
  const local = (link: string) => nextWeb() + link.slice(PUBLIC_URL.length);

  const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read', 'webhooks:read', 'webhooks:write', 'form:read'] });
  const [, helloId] = await makeSenders(dbs.pool, a.tenant, { domain: 'dynos.example', senders: [{ email: 'news', name: 'News' }, { email: 'hello', name: 'Hello' }] });
  const apis: MailApi[] = webs.map((w) => mailApi(w.base, a.headers));
  const api = () => apis[turn++ % 2]!;

  const hook = await api().call('POST', '/v1/webhooks', { name: 'all', url: receiver.url('/hook'), events: ['mail.sent', 'form.submission.created'] });
  if (!t.equal(hook.status, 201, 'webhook created')) return t.comment(JSON.stringify(hook.body));

  const purpose = (await createPurpose(a.tenant, dbs.pool, { name: 'Newsletter' })).id;
  const term = await createTerm(a.tenant, dbs.pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [purpose], channels: ['mail'] });
  await addTermVersion(a.tenant, dbs.pool, term.id, { version: 'v1', body: 'We write twice a month.' });
  await setCurrentVersion(a.tenant, dbs.pool, term.id, 'v1');
  const versionId = Number((await dbs.pool.query('SELECT id FROM consent_term_versions WHERE term_id = $1', [term.id])).rows[0].id);
  const form = await createForm(a.tenant, dbs.pool, {
    name: 'Join',
    kind: 'consent',
    type: 'registration',
    requires_confirmation: true,
    auto_reply_sender_id: helloId!,
    items: [{ type: 'field', field_key: 'email', required: true }, { type: 'consent', term_id: term.id, required: true }],
  });
  const [emailItem, consentItem] = form.items.map((i) => i.id) as [number, number];

  // ---- accept 2,000 mails and the form submissions, alternating webs --------------------------
  const ids: string[] = [];
  const submit = async (n: number) => {
    const res = await fetch(`${nextWeb()}/f/${form.public_token}`, {
      method: 'POST',
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        submission_key: randomBytes(16).toString('base64url'),
        [`item_${emailItem}`]: `sub${n}@example.org`,
        [`item_${consentItem}`]: 'true',
        [`term_version_${consentItem}`]: String(versionId),
      }).toString(),
    });
    await res.arrayBuffer();
    return res.status;
  };
  const submitted: number[] = [];
  for (let s = 0; s < SENDS; s++) {
    const r = await api().send({
      from: 'news@dynos.example',
      // No merge tags: their render time limit at acceptance is not what this test is about (a
      // loaded CI machine tripped it).
      to: Array.from({ length: PER_SEND }, (_, i) => ({ email: `r${s}-${i}@example.org` })),
      subject: 'Dynos',
      html: '<p>A mail <a href="https://shop.example/a">shop</a></p>',
    });
    if (!t.equal(r.status, 202, `send ${s} accepted`)) return t.comment(JSON.stringify(r.body));
    ids.push(...r.body.mails.map((m: any) => m.mail_id as string));
    for (let k = 0; k < SUBMISSIONS / SENDS; k++) submitted.push(await submit(submitted.length));
  }
  t.equal(new Set(ids).size, TOTAL, `${TOTAL} distinct mail ids`);
  t.same(submitted, Array(SUBMISSIONS).fill(200), `${SUBMISSIONS} hosted-form submissions answered 200`);
  t.comment(`accepted in ${Date.now() - testStart} ms (dynos' start included)`);
  const idSet = new Set(ids);
  const sentCount = () => count('SELECT count(*) AS n FROM mails WHERE mail_id = ANY ($1) AND status = 3', [ids]);

  // ---- tracking hits on delivered mails, through both webs ------------------------------------
  const tracked = new Set<string>();
  let hits = { opens: 0, clicks: 0 };
  async function hitSome(n: number): Promise<void> {
    const stored = readMailbox(mailboxDir).filter((m) => m.mailId && idSet.has(m.mailId) && !tracked.has(m.mailId));
    for (const m of stored.slice(0, n)) {
      tracked.add(m.mailId!);
      const html = String((await simpleParser(readFileSync(m.file))).html);
      const pixel = /<img[^>]+src="([^"]+\/t\/o\/[^"]+)"/.exec(html)![1]!;
      const click = /href="([^"]+\/t\/c\/[^"]+)"/.exec(html)![1]!;
      const px = await fetch(local(pixel));
      await px.arrayBuffer();
      const c = await fetch(local(click), { redirect: 'manual' });
      await c.arrayBuffer();
      if (px.status !== 200 || c.status !== 302) throw new Error(`hit answered ${px.status} / ${c.status}`);
      hits = { opens: hits.opens + 1, clicks: hits.clicks + 1 };
    }
  }

  // ---- one worker killed mid-send -------------------------------------------------------------
  const sentAtKill = await waitFor(
    `${KILL_AFTER} mails sent`,
    async () => {
      for (const w of workers) if (w.exit()) throw new Error(`a worker exited on its own: ${JSON.stringify(w.exit())}\n${w.stderr()}`);
      const n = await sentCount();
      return n >= KILL_AFTER ? n : undefined;
    },
    { ms: 300_000, every: 50 },
  );
  await hitSome(TRACKED / 2);
  const victim = workers[0]!;
  victim.signal('SIGKILL');
  t.same(await victim.waitExit(10_000), { code: null, signal: 'SIGKILL' }, 'worker 1 died of SIGKILL');
  await sleep(500); // sessions the kill cut are finished by the simulator
  const queuedAtKill = new Set(
    (
      await dbs.pool.query<{ mail_id: string }>('SELECT mail_id FROM mails WHERE instance_id = $1 AND status = 2 AND held_by LIKE $2', [
        a.tenant.instanceId,
        `%:${victim.pid}:%`,
      ])
    ).rows.map((r) => r.mail_id),
  );
  t.ok(queuedAtKill.size <= IN_FLIGHT, `at most ${IN_FLIGHT} mails held at SMTP by the killed worker: ${queuedAtKill.size}`);
  const unfinishedAttempts = await count('SELECT count(*) AS n FROM webhook_attempts WHERE NOT finished');
  t.comment(`killed with ${sentAtKill}+ of ${TOTAL} sent; ${queuedAtKill.size} mails held by the killed worker, ${unfinishedAttempts} webhook attempts unfinished`);
  workers[0] = spawnWorker();

  await hitSome(TRACKED / 2);
  t.equal(tracked.size, TRACKED, `${TRACKED} mails opened and clicked, half before the kill, half after`);

  // ---- everything settles -----------------------------------------------------------------------
  await waitFor(
    'every mail sent',
    async () => {
      for (const w of workers) if (w.exit()) throw new Error(`a worker exited: ${JSON.stringify(w.exit())}\n${w.stderr()}`);
      return (await sentCount()) === TOTAL ? true : undefined;
    },
    { ms: 400_000, every: 250 },
  );
  t.comment(`all ${TOTAL} sent after ${Date.now() - testStart} ms`);
  const confirmations = await waitFor(
    'a confirmation mail sent per submission',
    async () => {
      const { rows } = await dbs.pool.query<{ custom_msg_id: string; n: number; sent: number }>(
        `SELECT custom_msg_id, count(*)::int AS n, count(*) FILTER (WHERE status = 3)::int AS sent FROM mails
          WHERE instance_id = $1 AND custom_msg_id LIKE 'form-confirmation:%' GROUP BY custom_msg_id`,
        [a.tenant.instanceId],
      );
      return rows.length === SUBMISSIONS && rows.every((r) => r.sent >= 1) ? rows : undefined;
    },
    { ms: 120_000, every: 250 },
  );
  const subIds = (await dbs.pool.query<{ id: number }>('SELECT id FROM form_submissions WHERE form_id = $1 ORDER BY id', [form.id])).rows.map((r) => r.id);
  t.equal(subIds.length, SUBMISSIONS, 'one submission row per POST');
  t.same(
    confirmations.map((r) => r.custom_msg_id).sort(),
    subIds.map((id) => `form-confirmation:${id}`).sort(),
    'a confirmation mail for each submission',
  );
  t.ok(confirmations.every((r) => r.n === 1 && r.sent === 1), 'exactly one confirmation mail row per submission, sent');

  // ---- mails: none lost, duplicates only from the kill ------------------------------------------
  const { stored, copies } = mailboxCopies(mailboxDir);
  t.same(ids.filter((id) => !copies.has(id)), [], 'none lost: every mail of the send is in the mailbox');
  const duplicated = [...copies].filter(([, n]) => n > 1).map(([id]) => id);
  const extra = [...copies.values()].reduce((s, n) => s + n - 1, 0);
  t.comment(`DUPLICATES: ${duplicated.length} mails in the mailbox more than once (${extra} extra messages, ${stored.length} files for ${TOTAL + SUBMISSIONS} mails)`);
  const unexplained = duplicated.filter((id) => !queuedAtKill.has(id));
  if (!t.same(unexplained, [], 'only mails the killed worker held at SMTP arrived twice')) {
    for (const id of unexplained) {
      const { rows } = await dbs.pool.query('SELECT status, reason, attempt, created_at::text FROM mail_logs WHERE mail_id = $1 ORDER BY id', [id]);
      t.comment(`${id}: ${JSON.stringify(rows)}`);
    }
    for (const w of [victim, ...workers]) t.comment(`worker ${w.pid}:\n${w.stderr().slice(-3000)}${w.stdout().slice(-3000)}`);
  }
  t.ok(duplicated.length <= IN_FLIGHT, `duplicates bounded by one worker's in flight: ${duplicated.length} <= ${IN_FLIGHT}`);
  const confirmationMailIds = (
    await dbs.pool.query<{ mail_id: string }>("SELECT mail_id FROM mails WHERE instance_id = $1 AND custom_msg_id LIKE 'form-confirmation:%'", [a.tenant.instanceId])
  ).rows.map((r) => r.mail_id);
  t.same(confirmationMailIds.filter((id) => !copies.has(id)), [], 'every confirmation mail is in the mailbox');
  const confirmationCopies = confirmationMailIds.filter((id) => copies.get(id)! > 1);
  t.comment(`confirmation mails in the mailbox more than once: ${confirmationCopies.length}`);

  // ---- tracking: each hit counted once in Postgres and in ClickHouse ----------------------------
  const counted = (await dbs.pool.query<{ opens: number; clicks: number }>('SELECT sum(opens)::int AS opens, sum(clicks)::int AS clicks FROM mails WHERE mail_id = ANY ($1)', [ids]))
    .rows[0]!;
  t.same(counted, hits, `mails.opens and mails.clicks: exactly the hits (${hits.opens} + ${hits.clicks})`);
  const chCount = async (final: boolean) => {
    const rs = await ch.query({
      query: `SELECT event_type, count() AS n FROM mail_events ${final ? 'FINAL' : ''} WHERE event_type IN ('open', 'click') AND status IS NULL GROUP BY event_type`,
      format: 'JSONEachRow',
    });
    const rows = (await rs.json()) as Array<{ event_type: string; n: string | number }>;
    return { opens: Number(rows.find((r) => r.event_type === 'open')?.n ?? 0), clicks: Number(rows.find((r) => r.event_type === 'click')?.n ?? 0) };
  };
  const inClickHouse = await waitFor(
    'every hit in ClickHouse',
    async () => {
      const c = await chCount(true);
      return c.opens >= hits.opens && c.clicks >= hits.clicks && (await count("SELECT count(*) AS n FROM event_outbox WHERE kind IN ('open', 'click') AND stage < 2")) === 0
        ? c
        : undefined;
    },
    { ms: 60_000, every: 500 },
  );
  t.same(inClickHouse, hits, 'ClickHouse (FINAL): exactly the hits');
  const raw = await chCount(false);
  t.comment(`ClickHouse rows before merges (no FINAL): ${JSON.stringify(raw)} for ${JSON.stringify(hits)} hits`);

  // ---- webhooks: every event delivered, twice only when in flight at the kill --------------------
  const expectedEvents = await count(
    `SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = $1`,
    [hook.body.id],
  );
  t.equal(expectedEvents, TOTAL + SUBMISSIONS * 2, `a delivery per mail.sent (${TOTAL} + ${SUBMISSIONS} confirmations) and per form.submission.created`);
  const delivered = await waitFor(
    'every delivery succeeded',
    async () =>
      (await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'succeeded'`, [hook.body.id])) === expectedEvents
        ? receiver.at('/hook')
        : undefined,
    { ms: 240_000, every: 500 },
  );
  const byId = new Map<string, number>();
  for (const r of delivered) if (r.answered === 200) byId.set(r.headers['webhook-id']!, (byId.get(r.headers['webhook-id']!) ?? 0) + 1);
  t.equal(byId.size, expectedEvents, 'every event answered 200 at the receiver');
  // An event reaches the receiver again only through a new attempt of its delivery (a retry step
  // after a failed one: a timeout on a loaded machine, an attempt the kill interrupted): every
  // request the receiver got is one attempt in the log, and each delivery succeeded once.
  const receipts = new Map<string, number>();
  for (const r of delivered) receipts.set(r.headers['webhook-id']!, (receipts.get(r.headers['webhook-id']!) ?? 0) + 1);
  const { rows: attempts } = await dbs.pool.query<{ event_id: string; n: number; ok: number; errors: string[] }>(
    `SELECT event_id::text, count(*)::int AS n, count(*) FILTER (WHERE succeeded)::int AS ok,
            array_agg(coalesce(error, 'status ' || status_code) ORDER BY id) FILTER (WHERE NOT succeeded) AS errors
       FROM webhook_attempts WHERE webhook_id = $1 GROUP BY event_id`,
    [hook.body.id],
  );
  const attemptsOf = new Map(attempts.map((r) => [`msg_${r.event_id}`, r]));
  t.same([...receipts].filter(([id, n]) => n > (attemptsOf.get(id)?.n ?? 0)), [], 'no event reached the receiver more often than it was attempted (each request is one logged attempt)');
  t.same(attempts.filter((r) => r.ok !== 1).map((r) => r.event_id), [], 'each delivery succeeded exactly once in the log');
  const twice = [...byId].filter(([, n]) => n > 1).map(([id]) => id);
  const why = new Map<string, number>();
  for (const id of twice) for (const e of attemptsOf.get(id)?.errors ?? []) why.set(e.replace(/\d+/g, 'N').slice(0, 60), (why.get(e.replace(/\d+/g, 'N').slice(0, 60)) ?? 0) + 1);
  const interrupted = attempts.reduce((s, r) => s + (r.errors ?? []).filter((e) => e.startsWith('interrupted')).length, 0);
  t.comment(`WEBHOOK DUPLICATES: ${twice.length} of ${expectedEvents} events answered 200 more than once; their failed attempts: ${JSON.stringify(Object.fromEntries(why))}; ${interrupted} attempts closed as interrupted by the kill`);
  t.same(twice.filter((id) => !(attemptsOf.get(id)?.errors ?? []).length), [], 'an event delivered twice always had a failed attempt first (a retry step), never two attempts of one step');

  // ---- schedules: once per minute with two workers ----------------------------------------------
  // pg-boss's cron fires on minute boundaries: a quick run may not have crossed one yet, so wait
  // for the first tick of the workers' schedules (at most a minute and a bit), then judge them.
  await waitFor(
    'a schedule tick (the next minute boundary)',
    async () => ((await dbs.pool.query(`SELECT 1 FROM pgboss.job WHERE name = '__pgboss__send-it' UNION ALL SELECT 1 FROM pgboss.archive WHERE name = '__pgboss__send-it' LIMIT 1`)).rowCount ? true : undefined),
    { ms: 90_000, every: 500 },
  );
  const { rows: ticks } = await dbs.pool.query<{ name: string; minute: string; n: number }>(
    `SELECT name, date_trunc('minute', created_on)::text AS minute, count(*)::int AS n FROM (
       SELECT name, created_on, data FROM pgboss.job UNION ALL SELECT name, created_on, data FROM pgboss.archive
     ) j WHERE name = '__pgboss__send-it' OR name IN (SELECT name FROM pgboss.schedule)
     GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  const sendIts = await dbs.pool.query<{ queue: string; minute: string; n: number }>(
    `SELECT data->>'name' AS queue, date_trunc('minute', created_on)::text AS minute, count(*)::int AS n FROM (
       SELECT created_on, data, name FROM pgboss.job UNION ALL SELECT created_on, data, name FROM pgboss.archive
     ) j WHERE name = '__pgboss__send-it' GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  t.comment(`schedule ticks (queue, minute, jobs): ${JSON.stringify(sendIts.rows.map((r) => [r.queue, r.minute.slice(11, 16), r.n]))}`);
  t.ok(sendIts.rows.length > 0, 'the schedules ticked during the run');
  t.same(sendIts.rows.filter((r) => r.n > 1), [], 'each schedule ticked at most once a minute across the workers');
  const runs = ticks.filter((r) => r.name !== '__pgboss__send-it');
  t.comment(`scheduled queues' jobs per minute: ${JSON.stringify(runs.map((r) => [r.name, r.minute.slice(11, 16), r.n]))}`);
  // A schedule with a start-up run (runAtStart: the heartbeat, the deliverability rollup) also
  // runs once at each worker's start: 3 starts here (two, then the restarted one), in whatever
  // minutes they fell (a quick run has all three and a tick in one minute). So its runs are at
  // most one tick per minute plus the 3 starts. Every other schedule: one a minute.
  const atStart = new Set(JOBS.filter((j) => j.runAtStart).map((j) => j.name));
  t.ok(atStart.has('worker.heartbeat'));
  t.same(runs.filter((r) => !atStart.has(r.name) && r.n > 1), [], 'each schedule without a start-up run ran at most once a minute');
  const workerStarts = 3;
  for (const name of atStart) {
    const of = runs.filter((r) => r.name === name);
    const total = of.reduce((sum, r) => sum + r.n, 0);
    t.ok(total <= of.length + workerStarts, `${name}: a tick a minute plus one run per worker start, at most (${total} runs in ${of.length} minutes, ${workerStarts} starts)`);
  }
  t.comment(`whole run ${Date.now() - testStart} ms`);
});
