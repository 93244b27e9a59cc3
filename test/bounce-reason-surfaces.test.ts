import nodemailer from 'nodemailer';
import t from 'tap';
import { collectionSchema } from '../api/schemas/common.js';
import { mailLogSchema } from '../api/schemas/mails.js';
import { restrictionSchema } from '../api/schemas/restrictions.js';
import { freePort } from '../config/ports.js';
import { reportKeys } from '../domain/bounces/report-keys.js';
import { reportTag } from '../domain/bounces/report-tag.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { unsubscribeToken } from '../domain/tracking/tokens.js';
import { compile } from '../domain/validation.js';
import { buildDeliveryStatusNotification, type DsnOptions } from '../smtp/simulator.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, startSendStack, waitFor } from './helpers/send-stack.js';
import { startReceiver, verifies, type Received } from './helpers/webhook-receiver.js';

/**
 * Where integrators see why a mail bounced and whether it was judged hard or soft (issue 27):
 * the mail's logs (GET /v1/mails/{id}/logs), the mail.bounced webhook event, and the restriction
 * the bounce caused (GET /v1/mail-restrictions and restriction.created). All through the real
 * path: a worker dyno as its own process sending to the mailbox simulator, its own inbound
 * listener taking the DSNs (and running the soft-bounce threshold job it enqueues), the web app
 * over HTTP, and a real webhook receiver on loopback.
 */
const inboundPort = await freePort();
const stack = await startSendStack(t, {
  label: 'bouncesurfaces',
  publicUrl: 'https://track.cartero.test',
  inboundSmtpPort: inboundPort,
  webEnv: { WEBHOOK_ALLOW_PRIVATE: 'true' },
});
const { dbs } = stack;
stack.spawnWorker({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1' });
const receiver = await startReceiver(t);
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read', 'webhooks:write'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);
const hook = await api.call('POST', '/v1/webhooks', {
  name: 'bounces',
  url: receiver.url('/bounces'),
  events: ['mail.bounced', 'restriction.created'],
});
if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
const keys = await reportKeys(dbs.pool);
const secret = await trackingSecret(dbs.pool);

const logsPage = compile(collectionSchema(mailLogSchema), 'json');
const restrictionPage = compile(collectionSchema(restrictionSchema), 'json');

async function send(to: string): Promise<string> {
  const r = await api.send({ from: 'news@send.example', to: [{ email: to }], subject: 'Hello', text: 'Hello' });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  const id = r.body.mails[0].mail_id as string;
  await api.waitFinal(id);
  return id;
}

/** A DSN about a sent mail, delivered to the worker's inbound listener at its VERP return path. */
async function lateReport(mailId: string, recipient: string, opts: DsnOptions): Promise<void> {
  const mailFrom = `bounce+${mailId}.${reportTag(keys.current, mailId)}@send.example`;
  const raw = buildDeliveryStatusNotification(
    { raw: Buffer.from(`Subject: Hello\r\nTo: ${recipient}\r\n\r\n`), recipient, mailFrom, messageId: undefined },
    opts,
  );
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: inboundPort, secure: false, ignoreTLS: true });
  try {
    const answer = (await transport.sendMail({ envelope: { from: '', to: [mailFrom] }, raw })).response;
    if (!answer.startsWith('250 2.0.0 Ok: delivery status recorded')) throw new Error(`DSN for ${mailId}: ${answer}`);
  } finally {
    transport.close();
  }
}

async function logsOf(mailId: string): Promise<any[]> {
  const r = await api.call('GET', `/v1/mails/${mailId}/logs?page_size=100`);
  if (r.status !== 200) throw new Error(`logs: ${r.status} ${JSON.stringify(r.body)}`);
  logsPage(r.body);
  return r.body.data;
}

/** The restrictions of an address over the API (the schema the OpenAPI document publishes checks each page). */
async function restrictionsOf(recipient: string): Promise<any[]> {
  const r = await api.call('GET', `/v1/mail-restrictions?recipient=${encodeURIComponent(recipient)}`);
  if (r.status !== 200) throw new Error(`restrictions: ${r.status} ${JSON.stringify(r.body)}`);
  restrictionPage(r.body);
  return r.body.data.filter((x: any) => x.recipient === recipient);
}

const bounceOf = async (mailId: string) =>
  (await dbs.pool.query<{ id: string; class: string; reason: string | null }>('SELECT id, class, reason FROM mail_bounces WHERE mail_id = $1', [mailId])).rows;

/** The delivery of `type` about `match` at the receiver, verified with the webhook's secret. */
const delivery = (type: string, match: (data: any) => boolean): Promise<Received> =>
  waitFor(`${type} at the receiver`, async () => receiver.at('/bounces').find((r) => r.event?.type === type && match(r.event.data)), { ms: 30_000 });

// ---- fixtures, all before the first subtest ----------------------------------------------------
// A synchronous hard bounce: the simulator's bounce* recipient (550 5.1.1 at RCPT).
const hardSync = await send('bounce-gone@example.org');
// A late hard bounce: sent, then a DSN saying the domain does not exist.
const hardLate = await send('late-hard@example.org');
await lateReport(hardLate, 'late-hard@example.org', { status: '5.1.2', diagnostic: '550 5.1.2 <late-hard@example.org>: Host or domain name not found' });
// Three soft bounces of one address (SOFT_BOUNCE_THRESHOLD 3, the default): the third crosses it.
const softIds: string[] = [];
const SOFT_REPORTS: DsnOptions[] = [
  { status: '5.3.4', diagnostic: '552 5.3.4 Message size exceeds fixed maximum message size' },
  { status: '5.3.4', diagnostic: '552 5.3.4 Message size exceeds fixed maximum message size' },
  { status: '5.2.2', diagnostic: '552 5.2.2 <full@example.org>: Mailbox full, quota exceeded' },
];
for (const report of SOFT_REPORTS) {
  const id = await send('full@example.org');
  await lateReport(id, 'full@example.org', report);
  softIds.push(id);
}
// An unsubscribe: the one-click POST of the mail's List-Unsubscribe URL.
const leaving = await send('leaving@example.org');
const unsub = await fetch(`${stack.url}/u/${unsubscribeToken(secret, leaving)}`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: 'List-Unsubscribe=One-Click',
});
await unsub.body?.cancel();
if (unsub.status !== 200) throw new Error(`unsubscribe: ${unsub.status}`);

t.test('logs: the row of the move to bounced carries the reason and the class; no other row does', async (t) => {
  const sync = await logsOf(hardSync);
  t.match(sync.at(-1), { status: 6, smtp_code: 550, smtp_enhanced: '5.1.1', bounce_reason: 'userunknown', bounce_class: 'hard' });
  t.ok(sync.slice(0, -1).every((l) => l.bounce_reason === null && l.bounce_class === null), 'earlier rows: null');
  t.match((await logsOf(hardLate)).at(-1), { status: 6, reason: 'dsn', bounce_reason: 'hostunknown', bounce_class: 'hard' });
  const soft = await logsOf(softIds[2]!);
  t.match(soft.at(-1), { status: 6, reason: 'dsn', bounce_reason: 'mailboxfull', bounce_class: 'soft' });
  t.ok((await logsOf(leaving)).every((l) => 'bounce_class' in l && l.bounce_class === null), 'a delivered mail: the field, null');
});

t.test('mail.bounced: bounce_reason and bounce_class in the event data, as the receiver gets it', async (t) => {
  for (const [id, reason, cls] of [[hardSync, 'userunknown', 'hard'], [hardLate, 'hostunknown', 'hard'], [softIds[2], 'mailboxfull', 'soft']] as const) {
    const got = await delivery('mail.bounced', (d) => d.mail_id === id);
    t.ok(verifies(hook.body.secret, got), 'signed by the webhook');
    t.match(got.event.data, { mail_id: id, status: 6, bounce_reason: reason, bounce_class: cls }, `${id}: ${reason}, ${cls}`);
  }
});

t.test('the hard_bounce restriction shows the reason and class of its bounce, in the list and in restriction.created', async (t) => {
  for (const [id, recipient, reason] of [[hardSync, 'bounce-gone@example.org', 'userunknown'], [hardLate, 'late-hard@example.org', 'hostunknown']] as const) {
    const [b] = await bounceOf(id);
    t.match(b, { class: 'hard', reason });
    const rows = await restrictionsOf(recipient);
    t.match(rows, [{ reason: 'hard_bounce', deleted_at: null, bounce_reason: reason, bounce_class: 'hard' }], recipient);
    const created = await delivery('restriction.created', (d) => d.recipient === recipient);
    t.match(created.event.data, { restriction_id: rows[0].id, reason: 'hard_bounce', bounce_reason: reason, bounce_class: 'hard' });
  }
});

t.test('the soft_bounce restriction shows the reason of the bounce that crossed the threshold', async (t) => {
  const bounces = (await Promise.all(softIds.map(bounceOf))).map((rows) => rows[0]!);
  t.same(bounces.map((b) => b.class), ['soft', 'soft', 'soft']);
  t.not(bounces[0]!.reason, bounces[2]!.reason, 'the first and the third bounce differ in reason');
  const rows = await waitFor('the soft_bounce restriction', async () => {
    const r = await restrictionsOf('full@example.org');
    return r.length ? r : undefined;
  });
  t.match(rows, [{ reason: 'soft_bounce', bounce_reason: bounces[2]!.reason, bounce_class: 'soft' }], 'the third bounce: mailboxfull');
  t.equal(rows[0].bounce_reason, 'mailboxfull');
  const { rows: stored } = await dbs.pool.query('SELECT bounce_id FROM mail_restrictions WHERE id = $1', [rows[0].id]);
  t.same(stored, [{ bounce_id: bounces[2]!.id }], 'and names that bounce');
  const created = await delivery('restriction.created', (d) => d.recipient === 'full@example.org');
  t.match(created.event.data, { reason: 'soft_bounce', bounce_reason: 'mailboxfull', bounce_class: 'soft' });
});

t.test('an unsubscribe restriction: the fields are there, null', async (t) => {
  const rows = await restrictionsOf('leaving@example.org');
  t.equal(rows.length, 1);
  t.strictSame([rows[0].reason, rows[0].bounce_reason, rows[0].bounce_class], ['unsubscribe', null, null]);
  t.ok('bounce_reason' in rows[0] && 'bounce_class' in rows[0], 'present, not left out');
  const created = await delivery('restriction.created', (d) => d.recipient === 'leaving@example.org');
  t.strictSame([created.event.data.reason, created.event.data.bounce_reason, created.event.data.bounce_class], ['unsubscribe', null, null]);
  t.ok('bounce_reason' in created.event.data && 'bounce_class' in created.event.data, 'present in the event data too');
});

t.test('a bounce restriction keeps saying why after its bounce is purged with its mail', async (t) => {
  await dbs.pool.query('DELETE FROM mails WHERE mail_id = $1', [hardSync]);
  const [row] = await restrictionsOf('bounce-gone@example.org');
  t.match(row, { reason: 'hard_bounce', bounce_reason: 'userunknown', bounce_class: 'hard' });
});
