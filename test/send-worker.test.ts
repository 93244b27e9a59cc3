// Fast retries for this file's queue: read when testDatabases creates the queues (release step).
process.env.SEND_RETRY_DELAY_SECONDS = '1';
process.env.SEND_RETRY_LIMIT = '2';

import { reportKeys } from '../domain/bounces/report-keys.js';
import { checkReportTag } from '../domain/bounces/report-tag.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { pino } from 'pino';
import t from 'tap';
import { createPurpose } from '../domain/consent/purposes.js';
import { setDomainChecks } from '../domain/domains/domains.js';
import { acceptSend } from '../domain/mail/accept.js';
import { setSenderConsentRequired } from '../domain/senders/senders.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { readTrackingToken } from '../domain/tracking/tokens.js';
import { loadConfig } from '../config/config.js';
import { createBoss, jobQueue } from '../workers/machinery/queue.js';
import { startWorker } from '../runtime/worker.js';
import { SEND_MAIL_QUEUE } from '../domain/job-queue.js';
import { testDatabases } from './helpers/databases.js';
import { startTestMailbox } from './helpers/mailbox.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailLogRows, sleep, waitFor } from './helpers/send-stack.js';
import { claimMonthlyQuota } from '../domain/mail/gates.js';
import { withTenant } from '../domain/tenancy/context.js';

const PUBLIC_URL = 'https://cartero.test';

const dbs = await testDatabases(t, 'sendworker');
const { simulator, mailboxDir } = await startTestMailbox(t);
// Sends are accepted by the API's own domain function (rows + jobs in one transaction).
const queue = jobQueue(dbs.databaseUrl);

interface MailRow {
  mail_id: string;
  status: number;
  bounce_class: string | null;
  attempts: number;
  queued_at: Date | null;
  sent_at: Date | null;
  received_at: Date;
  delay: number | null;
}

async function mail(id: string): Promise<MailRow> {
  return (await dbs.pool.query<MailRow>('SELECT mail_id, status, bounce_class, attempts, queued_at, sent_at, received_at, delay FROM mails WHERE mail_id = $1', [id])).rows[0]!;
}
const logs = (id: string) => mailLogRows(dbs.pool, id);

/** The .eml files the simulator stored for a mail (named after its Message-ID). */
function emlFiles(mailId: string): string[] {
  return readdirSync(mailboxDir).filter((f) => f.endsWith('.eml') && f.includes(mailId)).map((f) => join(mailboxDir, f));
}

/** Raw header fields of a stored message, unfolded, lower-cased names, in order. */
function rawHeaders(eml: Buffer): Array<[string, string]> {
  const text = eml.toString('utf8');
  const head = text.slice(0, text.search(/\r?\n\r?\n/)).replace(/\r?\n[ \t]+/g, ' ');
  return head.split(/\r?\n/).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()] as [string, string];
  });
}

// ---- fixtures, all accepted before any worker runs -------------------------------------------
const a = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }, { email: 'optin', name: 'Opt-in' }] });
await makeSenders(dbs.pool, a.tenant, { domain: 'later.example', senders: [{ email: 'news', name: 'Later' }] });
const optinId = (await dbs.pool.query<{ id: number }>("SELECT id FROM senders WHERE email_address = 'optin@send.example'")).rows[0]!.id;
await setSenderConsentRequired(a.tenant, dbs.pool, optinId, true);
const purpose = await createPurpose(a.tenant, dbs.pool, { name: 'Newsletter' });
await dbs.pool.query(`INSERT INTO mail_restrictions (instance_id, recipient, reason) VALUES ($1, 'blocked@example.org', 'unsubscribe')`, [a.tenant.instanceId]);

const quota0 = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, quota0.tenant, { domain: 'quota0.example', senders: [{ email: 'news', name: 'Q0' }] });
await dbs.pool.query('UPDATE instances SET monthly_quota = 0 WHERE id = $1', [quota0.tenant.instanceId]);
const quota1 = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, quota1.tenant, { domain: 'quota1.example', senders: [{ email: 'news', name: 'Q1' }] });
await dbs.pool.query('UPDATE instances SET monthly_quota = 1 WHERE id = $1', [quota1.tenant.instanceId]);

const html = `<!doctype html><html><body>
<p>Hello {{first_name}}, your plan is {{plan}}.</p>
<p><a href="https://shop.example/offer?id={{plan}}&amp;src=mail">Offer</a> <a href='http://docs.example/start'>Docs</a>
<a href="mailto:help@send.example">Write to us</a> <a href="#top">Top</a></p>
</body></html>`;
const normal = await acceptSend(a.tenant, dbs.pool, queue, {
  from: 'news@send.example',
  to: [{ email: 'Ann@Example.org', name: 'Ann', variables: { first_name: '<b>Ann</b>' } }],
  subject: 'Hi {{first_name}}',
  html,
  variables: { plan: 'pro' },
  reply_to: 'help@send.example',
  headers: { 'X-Campaign': 'fall' },
  attachments: [{ filename: 'hello.txt', content_type: 'text/plain', content: Buffer.from('hello attachment').toString('base64') }],
});
// Acceptance refuses protected headers (422); the renderer refuses them too, as a second wall
// for rows written any other way. The worker starts below, after this.
await dbs.pool.query(`UPDATE messages SET headers = headers || '{"Message-ID": "<forged@evil.example>"}' WHERE msg_id = $1`, [normal.msg_id]);
const outcomes = await acceptSend(a.tenant, dbs.pool, queue, {
  from: 'news@send.example',
  to: [{ email: 'bounce@example.org' }, { email: 'softbounce@example.org' }, { email: 'defer@example.org' }, { email: 'blocked@example.org' }],
  subject: 'Outcomes',
  text: 'Plain text for {{email}}',
});
const [bounce, softbounce, defer, blocked] = outcomes.mails.map((m) => m.mail_id) as [string, string, string, string];
const bulk = await acceptSend(a.tenant, dbs.pool, queue, {
  from: 'news@send.example',
  to: Array.from({ length: 40 }, (_, i) => ({ email: `bulk${i}@example.org`, variables: { n: i } })),
  subject: 'Bulk {{n}}',
  html: '<p>Number {{n}}</p>',
  test_mode: true,
});
const consent = await acceptSend(a.tenant, dbs.pool, queue, { from: 'optin@send.example', to: [{ email: 'someone@example.org' }], subject: 'c', text: 'c', purpose_ids: [purpose.id] });
const unverified = await acceptSend(a.tenant, dbs.pool, queue, { from: 'news@later.example', to: [{ email: 'later@example.org' }], subject: 'l', text: 'l' });
// The domain loses its verification after the send was accepted.
await setDomainChecks(a.tenant, dbs.pool, 'later.example', { dkim: 'failed' });
const q0 = await acceptSend(quota0.tenant, dbs.pool, queue, { from: 'news@quota0.example', to: [{ email: 'q0@example.org' }], subject: 'q', text: 'q' });
const q1 = await acceptSend(quota1.tenant, dbs.pool, queue, { from: 'news@quota1.example', to: [{ email: 'q1a@example.org' }, { email: 'q1b@example.org' }], subject: 'q', text: 'q' });

const allIds = [normal, outcomes, bulk, consent, unverified, q0, q1].flatMap((s) => s.mails.map((m) => m.mail_id));

// ---- the worker, in-process, on the real simulator -------------------------------------------
const config = loadConfig({ DATABASE_URL: dbs.databaseUrl, SMTP_URL: simulator.url, PUBLIC_URL: PUBLIC_URL, LOG_LEVEL: 'warn', CLICKHOUSE_URL: dbs.clickhouseUrl });
const worker = await startWorker(config, pino({ level: 'warn' }, pino.destination(2)));
t.teardown(() => worker.stop());

const started = Date.now();
await waitFor('every mail to settle', async () => {
  const { rows } = await dbs.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM mails WHERE mail_id = ANY ($1) AND status IN (3, 4, 6, 7)', [allIds]);
  return rows[0]!.n === allIds.length ? true : undefined;
});
t.comment(`${allIds.length} mails settled in ${Date.now() - started} ms`);
const secret = await trackingSecret(dbs.pool);

t.test('a normal mail is sent: logs 1,2,3, timestamps, and the stored message is complete', async (t) => {
  const id = normal.mails[0]!.mail_id;
  const row = await mail(id);
  t.equal(row.status, 3);
  t.equal(row.attempts, 1);
  t.ok(row.queued_at && row.sent_at && row.sent_at >= row.queued_at);
  t.ok(row.delay !== null && Math.abs(row.delay - (row.sent_at!.getTime() - row.received_at.getTime()) / 1000) < 0.01, 'delay = sent_at - received_at in seconds');
  const l = await logs(id);
  t.same(l.map((x) => x.status), [1, 2, 3]);
  t.equal(l[1]!.reason, 'handed_to_smtp');
  t.equal(l[2]!.smtp_code, 250);
  t.equal(l[2]!.smtp_enhanced, '2.0.0');
  t.match(l[2]!.smtp_reply, /^250 2\.0\.0 Ok: queued as /);
  t.equal(l[2]!.attempt, 1);

  const files = emlFiles(id);
  t.equal(files.length, 1, 'one message on disk');
  const raw = readFileSync(files[0]!);
  const headers = rawHeaders(raw);
  const header = (name: string) => headers.filter(([k]) => k === name).map(([, v]) => v);
  const tagged = new RegExp(`^${id}\\.1[0-9a-f]{20}$`); // the mail id and its report tag (key version 1)
  const [ownId] = header('x-cartero-mail-id');
  t.match(ownId, tagged, 'X-Cartero-Mail-Id: the mail id and its report tag');
  t.same(header('return-path'), [`<bounce+${ownId}@bounces.send.example>`], 'VERP envelope sender on the return-path host (RETURN_PATH_SUBDOMAIN), tagged alike');
  t.same(header('x-simulator-rcpt-to'), ['ann@example.org']);
  t.same(header('message-id'), [`<${ownId}@send.example>`], 'Message-ID embeds the tagged mail id; the custom one is refused');
  t.same(header('list-unsubscribe-post'), ['List-Unsubscribe=One-Click']);
  const unsub = header('list-unsubscribe');
  t.equal(unsub.length, 1);
  const unsubToken = /^<https:\/\/cartero\.test\/u\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)>$/.exec(unsub[0]!);
  t.ok(unsubToken, `List-Unsubscribe points at PUBLIC_URL/u/: ${unsub[0]}`);
  t.same(readTrackingToken(secret, unsubToken![1]!, 'unsubscribe'), { kind: 'unsubscribe', mail_id: id });
  t.equal(checkReportTag(await reportKeys(dbs.pool), id, ownId!.split('.')[1]!), 'valid', "the tag verifies under the service's report key");
  t.same(header('x-campaign'), ['fall']);
  t.same(header('subject'), ['Hi <b>Ann</b>'], 'subject rendered at acceptance, raw');
  t.match(header('reply-to')[0], /help@send\.example/);

  const parsed = await simpleParser(raw);
  const body = parsed.html as string;
  t.match(body, /Hello &lt;b&gt;Ann&lt;\/b&gt;, your plan is pro\./, 'merge tags filled and HTML-escaped in html');
  t.match(parsed.text, /Hello <b>Ann<\/b>, your plan is pro\./, 'raw in the text part');
  t.match(parsed.text, /Offer \[https:\/\/shop\.example\/offer\?id=pro&src=mail\]/, 'text part keeps the real link');
  const pixel = /<img src="https:\/\/cartero\.test\/t\/o\/([A-Za-z0-9_.-]+)" width="1" height="1" alt="" style="display:none">\s*<\/body>/.exec(body);
  t.ok(pixel, 'open pixel before </body>');
  t.same(readTrackingToken(secret, pixel![1]!, 'open'), { kind: 'open', mail_id: id });
  const hrefs = [...body.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
  const targets = hrefs.map((h) => {
    const m = /^https:\/\/cartero\.test\/t\/c\/(.+)$/.exec(h);
    const tok = m ? readTrackingToken(secret, m[1]!, 'click') : undefined;
    if (m) t.equal(tok?.mail_id, id, 'click token of this mail');
    return tok ? `tracked:${tok.url}` : h;
  });
  t.same(targets, ['tracked:https://shop.example/offer?id=pro&src=mail', 'tracked:http://docs.example/start', 'mailto:help@send.example', '#top']);
  t.same(parsed.attachments.map((x) => [x.filename, x.contentType, x.content.toString()]), [['hello.txt', 'text/plain', 'hello attachment']]);
});

t.test('bounce: 550 5.1.1 at RCPT is a hard bounce', async (t) => {
  const row = await mail(bounce);
  t.equal(row.status, 6);
  t.equal(row.bounce_class, 'hard');
  t.equal(row.attempts, 1);
  const l = await logs(bounce);
  t.same(l.map((x) => x.status), [1, 2, 6]);
  t.equal(l[2]!.smtp_code, 550);
  t.equal(l[2]!.smtp_enhanced, '5.1.1');
  t.match(l[2]!.smtp_reply, /User unknown/);
  t.same(emlFiles(bounce), []);
});

t.test('softbounce: deferred on every try, then a soft bounce after the last retry', async (t) => {
  const row = await mail(softbounce);
  t.equal(row.status, 6);
  t.equal(row.bounce_class, 'soft');
  t.equal(row.attempts, 3, 'first try plus SEND_RETRY_LIMIT=2 retries');
  const l = await logs(softbounce);
  t.same(l.map((x) => x.status), [1, 2, 5, 2, 5, 2, 6]);
  t.same(l.filter((x) => x.status === 5).map((x) => [x.smtp_code, x.smtp_enhanced, x.attempt]), [[452, '4.2.2', 1], [452, '4.2.2', 2]]);
  t.same(l.filter((x) => x.status === 2).map((x) => x.attempt), [1, 2, 3]);
  t.equal(l[6]!.reason, 'deferred_retries_exhausted');
  t.equal(l[6]!.smtp_code, 452);
  t.equal(l[6]!.attempt, 3);
  t.same(emlFiles(softbounce), []);
});

t.test('defer: 451 on the first try, sent on the retry', async (t) => {
  const row = await mail(defer);
  t.equal(row.status, 3);
  t.equal(row.attempts, 2);
  const l = await logs(defer);
  t.same(l.map((x) => x.status), [1, 2, 5, 2, 3]);
  t.equal(l[2]!.smtp_code, 451);
  t.equal(l[2]!.smtp_enhanced, '4.3.0');
  t.equal(l[4]!.smtp_code, 250);
  t.equal(emlFiles(defer).length, 1, 'delivered once');
  // Its job named the whole message (bounce, softbounce, defer, blocked): the deferral's backoff
  // held back none of the others (issue 42): the hard bounce was final before the retry began.
  const at = async (id: string, status: number) =>
    (await dbs.pool.query<{ at: Date }>('SELECT min(created_at) AS at FROM mail_logs WHERE mail_id = $1 AND status = $2', [id, status])).rows[0]!.at;
  const { rows: named } = await dbs.pool.query("SELECT 1 FROM pgboss.job WHERE name = 'mail.send' AND data->'mail_ids' ?& $1::text[]", [[bounce, softbounce, defer, blocked]]);
  t.equal(named.length, 1, 'one job named the four mails');
  const retried = (await dbs.pool.query<{ at: Date }>('SELECT max(created_at) AS at FROM mail_logs WHERE mail_id = $1 AND status = 2', [defer])).rows[0]!.at;
  t.ok((await at(bounce, 6)).getTime() < retried.getTime(), 'the hard bounce recorded before the deferred mail was tried again');
  t.ok(retried.getTime() - (await at(defer, 5)).getTime() >= 1_000, 'the retry waited its backoff (SEND_RETRY_DELAY_SECONDS=1)');
});

t.test('gates: restricted, consent, unverified domain, quota', async (t) => {
  const dropped = async (id: string, reason: string) => {
    const row = await mail(id);
    t.equal(row.status, 4, `${reason}: dropped`);
    t.equal(row.attempts, 0);
    t.equal(row.queued_at, null, 'never handed to SMTP');
    t.same((await logs(id)).map((x) => [x.status, x.reason]), [[1, 'accepted'], [4, reason]]);
    t.same(emlFiles(id), [], 'never contacted');
  };
  await dropped(blocked, 'restricted:unsubscribe');
  await dropped(consent.mails[0]!.mail_id, `no_consent:${purpose.id}=no_consent`);
  await dropped(unverified.mails[0]!.mail_id, 'sender_domain_unverified');

  const held = q0.mails[0]!.mail_id;
  t.equal((await mail(held)).status, 7);
  t.same((await logs(held)).map((x) => [x.status, x.reason]), [[1, 'accepted'], [7, 'monthly_quota_exceeded']]);
  t.same(emlFiles(held), []);
  const used0 = await dbs.pool.query('SELECT used FROM quota_usage WHERE instance_id = $1', [quota0.tenant.instanceId]);
  t.same(used0.rows, [], 'a quota of 0 claims nothing');

  const statuses = await Promise.all(q1.mails.map(async (m) => (await mail(m.mail_id)).status));
  t.same(statuses.sort(), [3, 7], 'quota 1: exactly one of two mails sent, the other on hold');
  const used1 = await dbs.pool.query<{ used: number }>('SELECT used FROM quota_usage WHERE instance_id = $1', [quota1.tenant.instanceId]);
  t.same(used1.rows.map((r) => r.used), [1]);
});

t.test('a batch of 40 (test_mode) is sent, one message each, merge tags per recipient', async (t) => {
  const { rows } = await dbs.pool.query<{ status: number; n: number }>(
    'SELECT status, count(*)::int AS n FROM mails WHERE msg_id = $1 GROUP BY status',
    [bulk.msg_id],
  );
  t.same(rows, [{ status: 3, n: 40 }]);
  for (const [i, m] of bulk.mails.entries()) {
    const files = emlFiles(m.mail_id);
    t.equal(files.length, 1);
    const parsed = await simpleParser(readFileSync(files[0]!));
    if (!String(parsed.html).includes(`Number ${i}`) || parsed.subject !== `Bulk ${i}`) t.fail(`mail ${i} rendered for another recipient`);
  }
});

async function runJob(data: object): Promise<void> {
  const boss = createBoss(dbs.databaseUrl, { supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  try {
    const id = (await boss.send(SEND_MAIL_QUEUE, data))!;
    await waitFor(`job ${id}`, async () => {
      const job = await boss.getJobById(SEND_MAIL_QUEUE, id);
      return job && job.state === 'completed' ? true : undefined;
    }, { ms: 20_000 });
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

t.test('a retried job for a sent mail does not send it again', async (t) => {
  const id = normal.mails[0]!.mail_id;
  const before = await logs(id);
  await runJob({ instance_id: a.tenant.instanceId, mail_id: id });
  t.same(await logs(id), before, 'no new state move');
  t.equal((await mail(id)).status, 3);
  t.equal(emlFiles(id).length, 1, 'still one message on disk');
});

t.test('a mail left queued by a crash (no recorded reply) is sent again by the retried job', async (t) => {
  // What a worker killed between the 250 and its write leaves behind: at-least-once means a
  // second delivery, the duplicate the kill test counts.
  const id = bulk.mails[0]!.mail_id;
  await dbs.pool.query('UPDATE mails SET status = 2 WHERE mail_id = $1', [id]);
  await runJob({ instance_id: a.tenant.instanceId, mail_id: id });
  t.equal((await mail(id)).status, 3);
  t.same((await logs(id)).map((x) => x.status), [1, 2, 3, 2, 3]);
  t.equal(emlFiles(id).length, 2, 'delivered twice');
});

t.test('a job naming a mail of another instance does nothing to it', async (t) => {
  const id = normal.mails[0]!.mail_id;
  // Reset to received so that a wrong tenant check would send it.
  await dbs.pool.query('UPDATE mails SET status = 1 WHERE mail_id = $1', [id]);
  try {
    await runJob({ instance_id: quota0.tenant.instanceId, mail_id: id });
    t.equal((await mail(id)).status, 1, 'untouched');
    t.equal(emlFiles(id).length, 1);
  } finally {
    await dbs.pool.query('UPDATE mails SET status = 3 WHERE mail_id = $1', [id]);
  }
});

/** Everything a send job can change: the mails, their logs, the outbox, the simulator's mailbox. */
async function footprint() {
  const q = async (sql: string) => (await dbs.pool.query(sql)).rows;
  return {
    mails: await q('SELECT mail_id, status, bounce_class, attempts, queued_at, sent_at, held_by FROM mails ORDER BY mail_id'),
    mailLogs: await q('SELECT count(*)::int AS n, max(id)::text AS last FROM mail_logs'),
    outbox: await q('SELECT count(*)::int AS n, max(id)::text AS last FROM event_outbox'),
    mailbox: readdirSync(mailboxDir).filter((f) => f.endsWith('.eml')).sort(),
  };
}

t.test('a malformed job is completed without effect', async (t) => {
  // A received mail each payload names in some wrong way: a parser that let one through (a
  // string instance id coerced, a missing one defaulted) would send it.
  const id = normal.mails[0]!.mail_id;
  const instance = a.tenant.instanceId;
  await dbs.pool.query('UPDATE mails SET status = 1 WHERE mail_id = $1', [id]);
  try {
    const payloads: object[] = [
      { mail_id: 42 },
      { mail_id: id },
      { instance_id: String(instance), mail_id: id },
      { instance_id: instance + 0.5, mail_id: id },
      { instance_id: -instance, mail_id: id },
      { instance_id: instance, mail_id: [id] },
      { instance_id: instance, mail_id: `${id}'` },
      { instanceId: instance, mailId: id },
    ];
    for (const data of payloads) {
      const before = await footprint();
      await runJob(data);
      t.strictSame(await footprint(), before, `${JSON.stringify(data)}: completed; no mail changed, no mail_logs row, no outbox event, nothing delivered`);
    }
    t.equal((await mail(id)).status, 1, 'the named mail is still received');
  } finally {
    await dbs.pool.query('UPDATE mails SET status = 3 WHERE mail_id = $1', [id]);
  }
});

t.test('the quota of a batch is claimed atomically across workers: two batches at once never pass it', async (t) => {
  const q = await makeTenant(dbs.pool);
  let claimedA!: () => void;
  const aClaimed = new Promise<void>((r) => (claimedA = r));
  let releaseA!: () => void;
  const aReleased = new Promise<void>((r) => (releaseA = r));
  // Batch A claims 4 of 5 and keeps its transaction open; batch B asks for 4 meanwhile.
  const a = withTenant(dbs.pool, q.tenant, async (c) => {
    const granted = await claimMonthlyQuota(q.tenant, c, 5, 4);
    claimedA();
    await aReleased;
    return granted;
  });
  await aClaimed;
  let bDone = false;
  const b = withTenant(dbs.pool, q.tenant, (c) => claimMonthlyQuota(q.tenant, c, 5, 4)).finally(() => (bDone = true));
  await sleep(300);
  t.notOk(bDone, 'B waits for A on the month\'s row');
  releaseA();
  t.same(await Promise.all([a, b]), [4, 1], 'A got 4, B the 1 left');
  const { rows } = await dbs.pool.query<{ used: number }>('SELECT used FROM quota_usage WHERE instance_id = $1', [q.tenant.instanceId]);
  t.same(rows.map((r) => r.used), [5], 'used: exactly the quota');
  t.equal(await withTenant(dbs.pool, q.tenant, (c) => claimMonthlyQuota(q.tenant, c, 5, 3)), 0, 'none left for the next batch');
});
