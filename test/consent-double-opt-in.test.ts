import { readFileSync } from 'node:fs';
import { simpleParser } from 'mailparser';
import t from 'tap';
import { createPurpose } from '../domain/consent/purposes.js';
import { registerEvent } from '../domain/consent/events.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { setSenderConsentRequired } from '../domain/senders/senders.js';
import { setInstanceLimits } from '../domain/tenancy/instances.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { signToken, unsubscribeToken } from '../domain/tracking/tokens.js';
import { createBoss, jobQueue } from '../workers/machinery/queue.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, messagesOf, startSendStack, waitFor } from './helpers/send-stack.js';

/**
 * Double opt-in (issue 14), end to end: a double_opt_in event registered over HTTP is pending and
 * authorizes nothing; a worker (its own process) sends the confirmation mail through the normal
 * pipeline to the real SMTP simulator; the test reads that mail from the mailbox, follows its link
 * (GET: a page, nothing confirmed) and posts the page's form (confirmed, with the request's address
 * and user agent kept). A second POST changes nothing; a changed byte of the token is a 404; an
 * event left unconfirmed is expired by the scheduled job, run by the worker, and its link refuses.
 */
const PUBLIC_URL = 'https://confirm.cartero.test';
const stack = await startSendStack(t, { label: 'consentdoi', publicUrl: PUBLIC_URL });
const { dbs } = stack;
const pool = dbs.pool;
const a = await makeTenant(pool, { scopes: ['mail:read', 'consent:read', 'consent:write'] });
// The job picks the first sender with a verified domain that does not require consent: not the
// unverified one (lowest id), not the consent-requiring one, but hello@.
await makeSenders(pool, a.tenant, { domain: 'unverified.example', verified: false, senders: [{ email: 'first', name: 'First' }] });
const [optinId, , otherId] = await makeSenders(pool, a.tenant, {
  domain: 'doi.example',
  senders: [{ email: 'optin', name: 'Opt-in' }, { email: 'hello', name: 'Hello' }, { email: 'forms', name: 'Forms' }],
});
await setSenderConsentRequired(a.tenant, pool, optinId!, true);
await setInstanceLimits(pool, a.slug, { monthly_quota: 1000 });
const api = mailApi(stack.url, a.headers);

const N = (await createPurpose(a.tenant, pool, { name: 'Newsletter' })).id;
const P = (await createPurpose(a.tenant, pool, { name: 'Profiling' })).id;
// A name that is HTML and merge-tag syntax: it must reach the mail and the page as text.
const TERM_NAME = 'News & <Offers> {{x}}';
const term = await createTerm(a.tenant, pool, { name: TERM_NAME, type: 'marketing', purposeIds: [N, P], channels: ['mail', 'sms'] });
await addTermVersion(a.tenant, pool, term.id, { version: '2026-01', body: 'We will write to you.\nTwice a month.' });
await setCurrentVersion(a.tenant, pool, term.id, '2026-01');

stack.spawnWorker();

async function doubleOptIn(contact: string, extra: object[] = []): Promise<number> {
  const r = await api.call('POST', '/v1/consent-events', {
    term_id: term.id,
    method: 'double_opt_in',
    rules: [
      { channel: 'mail', contact_type: 'email_address', contact, purpose_id: N, action: 'allow' },
      { channel: 'mail', contact_type: 'email_address', contact, purpose_id: P, action: 'allow' },
      ...extra,
    ],
  });
  if (r.status !== 201) throw new Error(`double opt-in for ${contact}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

async function eventRow(id: number) {
  const { rows } = await pool.query(
    `SELECT status, confirmed_at, host(confirmation_ip) AS ip, confirmation_user_agent AS ua, expired_at FROM consent_events WHERE id = $1`,
    [id],
  );
  return rows[0];
}

const outbox = async (id: number, kind: string) =>
  Number((await pool.query('SELECT count(*) AS n FROM event_outbox WHERE entity_id = $1 AND kind = $2', [id, kind])).rows[0].n);

async function verdicts(contact: string): Promise<Array<[number, string, number[]]>> {
  const r = await api.call('GET', `/v1/consent-rules/resolve?contacts=${encodeURIComponent(contact)}&contact_types=email_address&channel=mail&purpose_ids=${N},${P}`);
  if (r.status !== 200) throw new Error(`resolve: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.map((d: any) => [d.purpose_id, d.verdict, d.event_ids]);
}

/** The confirmation mail of an event, once the worker has sent it: its row and the link read from the real .eml. */
async function confirmationMail(eventId: number) {
  const row = await waitFor(`confirmation mail of event ${eventId}`, async () => {
    const { rows } = await pool.query('SELECT mail_id, to_email, sender, status FROM mails WHERE custom_msg_id = $1', [`consent-confirmation:${eventId}`]);
    return rows.length ? rows : undefined;
  });
  const final = await Promise.all(row.map((r: any) => api.waitFinal(r.mail_id)));
  const stored = messagesOf(stack.mailboxDir, row[0].mail_id);
  if (stored.length !== 1) throw new Error(`${stored.length} stored messages for ${row[0].mail_id}`);
  const raw = readFileSync(stored[0]!.file);
  const parsed = await simpleParser(raw);
  const link = /https:\/\/confirm\.cartero\.test\/c\/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/.exec(parsed.text ?? '');
  if (!link) throw new Error(`no confirmation link in ${parsed.text}`);
  return { rows: row, final, parsed, raw: raw.toString('utf8'), link: link[0], token: link[1]! };
}

const page = (token: string, method = 'GET', headers: Record<string, string> = {}) =>
  fetch(`${stack.url}/c/${token}`, {
    method,
    headers: { accept: 'text/html,application/xhtml+xml', ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    ...(method === 'POST' ? { body: '' } : {}),
  });

const annId = await doubleOptIn('Ann@Example.org', [{ channel: 'sms', contact_type: 'phone_number', contact: '+34600111222', purpose_id: N, action: 'allow' }]);
let ann: Awaited<ReturnType<typeof confirmationMail>>;

t.test('a double opt-in is pending, authorizes nothing, and its confirmation mail goes through the normal pipeline', async (t) => {
  const listed = await api.call('GET', `/v1/consent-events?contact=ann@example.org`);
  t.match(listed.body.data, [{ id: annId, status: 'pending', method: 'double_opt_in', confirmed_at: null, expired_at: null }]);
  t.same(await verdicts('ann@example.org'), [[N, 'no_consent', []], [P, 'no_consent', []]], 'pending authorizes nothing');

  ann = await confirmationMail(annId);
  t.same(ann.rows.map((r: any) => [r.to_email, r.sender]), [['ann@example.org', 'hello@doi.example']], 'one mail to the email contact (not the phone), from the first usable sender');
  t.equal(ann.final[0].status, 3, 'sent');
  t.equal(ann.final[0].custom_group_code, 'consent_confirmation', 'findable in GET /v1/mails');
  const quota = await pool.query('SELECT used FROM quota_usage WHERE instance_id = $1', [a.tenant.instanceId]);
  t.equal(quota.rows[0]?.used, 1, 'counted against the monthly quota like any send');

  t.equal(ann.parsed.subject, `Please confirm: ${TERM_NAME}`, 'the term name as text in the subject');
  t.match(ann.parsed.html, `<a href="${ann.link}">Confirm</a>`, 'the link, untracked, in the HTML part');
  t.match(ann.parsed.html, 'News &amp; &lt;Offers&gt; {{x}}', 'the term name escaped in HTML, merge-tag syntax left as text');
  t.notMatch(ann.raw, /\/t\/[oc]\//, 'no click redirect and no open pixel');
  t.match(ann.link, new RegExp(`^${PUBLIC_URL}/c/`), 'served under PUBLIC_URL');
});

t.test('following the link (GET, HEAD) shows a page and confirms nothing', async (t) => {
  for (let i = 0; i < 3; i++) {
    const res = await page(ann.token);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/html/);
    t.equal(res.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'", 'the public pages\' CSP');
    t.match(res.headers.get('cache-control'), /no-store/);
    const html = await res.text();
    t.match(html, '<form method="post"><button type="submit">Confirm</button></form>', 'one button, posting back to the link');
    t.match(html, '<strong>ann@example.org</strong>');
    t.match(html, 'News &amp; &lt;Offers&gt; {{x}}');
  }
  t.equal((await page(ann.token, 'HEAD')).status, 200);
  // A client that does not ask for HTML (a scanner's fetch) gets the same page: still nothing confirmed.
  t.equal((await fetch(`${stack.url}/c/${ann.token}`)).status, 200);
  t.match(await eventRow(annId), { status: 'pending', confirmed_at: null, ip: null, ua: null });
  t.same(await verdicts('ann@example.org'), [[N, 'no_consent', []], [P, 'no_consent', []]], 'the resolver still says no_consent');
  t.equal(await outbox(annId, 'consent.event.confirmed'), 0);
});

t.test('posting the page\'s form confirms the event and keeps the evidence', async (t) => {
  const res = await page(ann.token, 'POST', { 'user-agent': 'Browser/1.0 (confirming)' });
  t.equal(res.status, 200);
  t.match(await res.text(), '<h1>Thank you: confirmed</h1>');
  const row = await eventRow(annId);
  t.match(row, { status: 'confirmed', ip: '127.0.0.1', ua: 'Browser/1.0 (confirming)', expired_at: null });
  t.ok(row.confirmed_at instanceof Date, 'confirmed_at set');
  t.same(await verdicts('ann@example.org'), [[N, 'allowed', [annId]], [P, 'allowed', [annId]]], 'the resolver now allows');
  const listed = await api.call('GET', `/v1/consent-events?contact=ann@example.org`);
  t.match(listed.body.data, [{ id: annId, status: 'confirmed', confirmed_at: /^\d{4}-\d\d-\d\dT/ }]);
  const proof = await api.call('GET', '/v1/consent-events/proof?contact=ann@example.org');
  t.match(proof.body.events, [{ id: annId, confirmation: { confirmed_at: listed.body.data[0].confirmed_at, ip_address: '127.0.0.1', user_agent: 'Browser/1.0 (confirming)' } }], 'the proof shows the confirmation evidence');
  t.equal(await outbox(annId, 'consent.event.confirmed'), 1, 'consent.event.confirmed written');
});

t.test('a second POST shows "already confirmed" and changes nothing', async (t) => {
  const before = await eventRow(annId);
  const res = await page(ann.token, 'POST', { 'user-agent': 'Other/2.0' });
  t.equal(res.status, 200);
  t.match(await res.text(), '<h1>Already confirmed</h1>');
  t.same(await eventRow(annId), before, 'the first confirmation\'s evidence stays');
  t.equal(await outbox(annId, 'consent.event.confirmed'), 1, 'no second outbox row');
  const again = await (await page(ann.token)).text();
  t.match(again, '<h1>Already confirmed</h1>');
  t.notMatch(again, '<form', 'no button once confirmed');
});

t.test('a token that is not exactly one Cartero signed for this purpose is a 404', async (t) => {
  const [body, mac] = ann.token.split('.') as [string, string];
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const secret = await trackingSecret(pool);
  const tampered = {
    'a changed byte of the payload': `${flip(body, 5)}.${mac}`,
    'a changed byte of the signature': `${body}.${flip(mac, 10)}`,
    'another event under the same signature': `${Buffer.from(JSON.stringify({ kind: 'consent_confirm', instance_id: a.tenant.instanceId, event_id: annId + 1 })).toString('base64url')}.${mac}`,
    'another kind of link (the mail\'s unsubscribe token)': unsubscribeToken(secret, ann.rows[0].mail_id),
    'signed with another key': signToken('not-the-key', { kind: 'consent_confirm', instance_id: a.tenant.instanceId, event_id: annId }),
    'a signed confirmation of an event that does not exist': signToken(secret, { kind: 'consent_confirm', instance_id: a.tenant.instanceId, event_id: 999999 }),
  };
  const pendingId = await doubleOptIn('tamper@example.org');
  for (const [what, token] of Object.entries(tampered)) {
    const html = await page(token);
    t.equal(html.status, 404, `${what}: 404 page`);
    t.match(await html.text(), '<h1>Link not valid</h1>');
    const json = await fetch(`${stack.url}/c/${token}`, { headers: { accept: 'application/json' } });
    t.equal(json.status, 404);
    t.match(await json.json(), { status: 404, code: 'not_found' }, `${what}: a problem object otherwise`);
    t.equal((await page(token, 'POST')).status, 404, `${what}: POST 404`);
  }
  t.match(await eventRow(pendingId), { status: 'pending', confirmed_at: null }, 'nothing confirmed');
});

t.test('an event not confirmed within CONSENT_CONFIRM_DAYS is expired by the scheduled job; its link refuses', async (t) => {
  const lateId = await doubleOptIn('late@example.org');
  const late = await confirmationMail(lateId);
  await pool.query(`UPDATE consent_events SET created_at = now() - interval '7 days 1 minute' WHERE id = $1`, [lateId]);
  // Before the job has run, the window already closes the link (GET shows expired and writes nothing).
  const early = await page(late.token);
  t.equal(early.status, 410);
  t.match(await early.text(), '<h1>This link has expired</h1>');
  t.match(await eventRow(lateId), { status: 'pending' }, 'a GET writes nothing');

  // The schedule, forced: one run of the job in the worker process.
  const boss = createBoss(dbs.databaseUrl, { supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  t.teardown(() => boss.stop({ graceful: false, wait: true }));
  const runJob = async () => {
    const id = await boss.send('consent.expire-pending', {});
    t.ok(id, 'job sent');
    await waitFor('the expiry job', async () => {
      const job = await boss.getJobById('consent.expire-pending', id!);
      return job?.state === 'completed' ? true : undefined;
    });
  };
  await runJob();
  const row = await eventRow(lateId);
  t.match(row, { status: 'expired', confirmed_at: null });
  t.ok(row.expired_at instanceof Date, 'expired_at set');
  t.equal(await outbox(lateId, 'consent.event.expired'), 1, 'consent.event.expired written');
  t.match(await eventRow(annId), { status: 'confirmed' }, 'a confirmed event is not touched');

  const html = await page(late.token);
  t.equal(html.status, 410);
  const text = await html.text();
  t.match(text, '<h1>This link has expired</h1>');
  t.notMatch(text, '<form');
  t.equal(html.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  const json = await fetch(`${stack.url}/c/${late.token}`, { method: 'POST', headers: { accept: 'application/json' } });
  t.equal(json.status, 410);
  t.match(await json.json(), { status: 410, title: 'Gone', code: 'consent_event_expired' });
  t.equal((await page(late.token, 'POST')).status, 410, 'the form confirms nothing either');
  t.match(await eventRow(lateId), { status: 'expired', confirmed_at: null, ip: null });
  t.same(await verdicts('late@example.org'), [[N, 'no_consent', []], [P, 'no_consent', []]]);

  await runJob();
  t.same(await eventRow(lateId), row, 'a second run changes nothing');
  t.equal(await outbox(lateId, 'consent.event.expired'), 1);
});

t.test('a POST past the window expires the event itself, whether or not the job has run', async (t) => {
  const pastId = await doubleOptIn('past@example.org');
  const past = await confirmationMail(pastId);
  await pool.query(`UPDATE consent_events SET created_at = now() - interval '8 days' WHERE id = $1`, [pastId]);
  const res = await page(past.token, 'POST');
  t.equal(res.status, 410);
  t.match(await eventRow(pastId), { status: 'expired', confirmed_at: null });
  t.equal(await outbox(pastId, 'consent.event.expired'), 1);
  t.equal(await outbox(pastId, 'consent.event.confirmed'), 0);
});

t.test('a GET-only follower (a link scanner) never confirms', async (t) => {
  const scannedId = await doubleOptIn('scanned@example.org');
  const scanned = await confirmationMail(scannedId);
  for (const accept of ['text/html', '*/*', 'application/json']) {
    t.equal((await fetch(`${stack.url}/c/${scanned.token}`, { headers: { accept } })).status, 200);
    t.equal((await fetch(`${stack.url}/c/${scanned.token}`, { method: 'HEAD', headers: { accept } })).status, 200);
  }
  t.match(await eventRow(scannedId), { status: 'pending', confirmed_at: null });
  t.same(await verdicts('scanned@example.org'), [[N, 'no_consent', []], [P, 'no_consent', []]]);
  t.equal(await outbox(scannedId, 'consent.event.confirmed'), 0);
});

t.test('the sender: a named one (a form\'s auto_reply_sender_id) is used as named; none usable sends nothing', async (t) => {
  const queue = jobQueue(dbs.databaseUrl);
  const input = (contact: string) => ({
    term_id: term.id,
    method: 'double_opt_in' as const,
    rules: [{ channel: 'mail' as const, contact_type: 'email_address' as const, contact, purpose_id: N, action: 'allow' as const }],
  });
  const named = await registerEvent(a.tenant, pool, queue, input('named@example.org'), 'api', otherId!);
  const mail = await confirmationMail(named.id);
  t.equal(mail.rows[0].sender, 'forms@doi.example');

  // A consent-requiring sender named: refused, not swapped for another; the event stays pending.
  const refused = await registerEvent(a.tenant, pool, queue, input('refused@example.org'), 'api', optinId!);
  const job = await waitFor('the refused job', async () => {
    const { rows } = await pool.query(`SELECT state FROM pgboss.job WHERE name = 'consent.confirmation-mail' AND (data->>'event_id')::bigint = $1`, [refused.id]);
    return rows[0]?.state === 'completed' ? rows[0] : undefined;
  });
  t.equal(job.state, 'completed', 'completed, not retried');
  t.same((await pool.query('SELECT mail_id FROM mails WHERE custom_msg_id = $1', [`consent-confirmation:${refused.id}`])).rows, [], 'no mail');
  t.match(await eventRow(refused.id), { status: 'pending' });

  // A single opt-in enqueues nothing.
  const single = await api.call('POST', '/v1/consent-events', { ...input('single@example.org'), method: 'single_opt_in' });
  t.equal(single.status, 201);
  const jobs = await pool.query(`SELECT count(*) AS n FROM pgboss.job WHERE name = 'consent.confirmation-mail' AND (data->>'event_id')::bigint = $1`, [single.body.id]);
  t.equal(Number(jobs.rows[0].n), 0);
});

t.test('the public route follows the conventions of public links', async (t) => {
  const wrong = await fetch(`${stack.url}/c/abc`, { method: 'DELETE' });
  t.equal(wrong.status, 405);
  t.same(String(wrong.headers.get('allow')).split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
  const doc = await (await fetch(`${stack.url}/v1/openapi.json`)).json();
  const path = doc.paths['/c/{token}'];
  for (const op of [path.get, path.post]) {
    t.strictSame(op.security, []);
    t.equal(op['x-public'], true);
    t.match(op.responses['404'].content, { 'application/problem+json': {}, 'text/html': {} });
    t.match(op.responses['410'].content, { 'application/problem+json': {}, 'text/html': {} });
  }
  const big = await fetch(`${stack.url}/c/abc`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'x='.padEnd(2000, 'y') });
  t.equal(big.status, 413);
});
