import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, startSendStack, waitFor } from './helpers/send-stack.js';
import { startTestWeb } from './helpers/web.js';

/**
 * Fault suite, a webhook receiver down for a while, then back, as one story against two worker
 * dynos (separate processes on one database) and a real HTTP receiver on loopback that goes down
 * by closing its server (connections refused) and comes back by listening again on the same port:
 *
 *   up      mails sent, their events delivered;
 *   down    more mails sent: their deliveries fail (no answer), are retried on the schedule, and
 *           after WEBHOOK_PAUSE_AFTER_FAILURES failures in a row the webhook pauses itself
 *           (is_active false, auto_paused_at set, its pending deliveries cancelled);
 *   paused  more mails sent: no delivery made, nothing attempted, even once the receiver is back;
 *   resumed PATCH {is_active: true}, then POST replay {since: down, until: resumed}; mails sent
 *           after the resume are delivered as usual.
 *
 * What must hold: nothing lost before the pause, nor during it: every event that occurred while
 * the receiver was down or the webhook paused reaches the receiver exactly once after the resume
 * (by the replay), every event before and after exactly once too (by its delivery), each verified
 * with the official library, in order per mail.
 */
const PUBLIC_URL = 'https://track.faulthooks.test';
const stack = await startSendStack(t, { label: 'faulthooks', publicUrl: PUBLIC_URL, fastRetries: true });
const { dbs } = stack;
const PAUSE_AFTER_FAILURES = 20;
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  // Ten attempts a second or two apart: a delivery is retried several times before the pause.
  WEBHOOK_RETRY_SCHEDULE: '0,1,1,2,2,2,2,2,2,2',
  WEBHOOK_TIMEOUT_SECONDS: '2',
  // The failure count decides the pause here, not the streak's age.
  WEBHOOK_PAUSE_AFTER: '1h',
  WEBHOOK_PAUSE_AFTER_FAILURES: String(PAUSE_AFTER_FAILURES),
};
// The stack's web refuses private receivers (the default); this one allows them, as the workers do.
const web = await startTestWeb(t, dbs, { env: { SMTP_URL: stack.simulator.url, PUBLIC_URL, WEBHOOK_ALLOW_PRIVATE: 'true' } });
const workers = [stack.spawnWorker(WEBHOOK_ENV), stack.spawnWorker(WEBHOOK_ENV)];

/** One request the receiver got. */
interface Received {
  headers: Record<string, string>;
  body: string;
  event: any;
}

/** A receiver that can go down (its server closed, connections cut) and come back on its port. */
async function startReceiver() {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers as Record<string, string>, body, event: JSON.parse(body) });
      res.writeHead(200).end('ok');
    });
  });
  server.keepAliveTimeout = 1000;
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const down = async () => {
    const closed = new Promise((r) => server.close(r));
    server.closeAllConnections();
    await closed;
  };
  t.teardown(() => (server.listening ? down() : undefined));
  return { received, url: `http://127.0.0.1:${port}/hook`, down, up: () => listen(port) };
}

const receiver = await startReceiver();
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read', 'webhooks:read', 'webhooks:write'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'faulthooks.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(web.url, a.headers);
const TYPES = ['mail.received', 'mail.sent'];

const dbNow = async (): Promise<string> => (await dbs.pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now.toISOString();
const hookState = async (id: number) => (await api.call('GET', `/v1/webhooks/${id}`)).body;

/** Sends `n` mails and waits until each is sent; returns their ids. */
async function sendMails(tag: string, n: number): Promise<string[]> {
  const r = await api.send({ from: 'news@faulthooks.example', to: Array.from({ length: n }, (_, i) => ({ email: `${tag}${i}@example.org` })), subject: tag, text: 'x' });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  const ids = r.body.mails.map((m: any) => m.mail_id as string);
  for (const id of ids) await api.waitFinal(id);
  return ids;
}

/** The fan-out has seen every event of the instance and nothing of the webhook is left to go out. */
async function quiet(hookId: number): Promise<void> {
  await waitFor(`webhook ${hookId}: nothing left to go out`, async () => {
    const { rows } = await dbs.pool.query<{ outbox: number; pending: number; jobs: number }>(
      `SELECT (SELECT count(*)::int FROM event_outbox WHERE instance_id = $1 AND NOT webhooks_done) AS outbox,
              (SELECT count(*)::int FROM webhook_deliveries WHERE webhook_id = $2 AND status = 'pending') AS pending,
              (SELECT count(*)::int FROM pgboss.job j JOIN webhook_deliveries d ON d.id = (j.data->>'delivery_id')::bigint
                WHERE j.name = 'webhook.deliver' AND j.state < 'completed' AND d.webhook_id = $2) AS jobs`,
      [a.tenant.instanceId, hookId],
    );
    const r = rows[0]!;
    return r.outbox === 0 && r.pending === 0 && r.jobs === 0 ? true : undefined;
  }, { ms: 60_000, every: 200 });
}

const key = (r: Received) => `${r.event.type} ${r.event.data.mail_id}`;

t.test('a receiver down, the webhook paused after the threshold, resumed with PATCH and replayed: every event once', async (t) => {
  const created = await api.call('POST', '/v1/webhooks', { name: 'down-then-back', url: receiver.url, events: TYPES });
  t.equal(created.status, 201, 'webhook created');
  const hook = created.body as { id: number; secret: string };

  // ---- up: delivered as they happen ------------------------------------------------------------
  const before = await sendMails('before', 3);
  await waitFor('the events before the outage delivered', async () => (receiver.received.length >= before.length * 2 ? true : undefined), { ms: 30_000 });

  // ---- down: failures, retries, the pause ------------------------------------------------------
  await receiver.down();
  const downAt = await dbNow();
  const whileDown = await sendMails('down', 4);
  const paused = await waitFor('the webhook paused by its failures', async () => {
    const h = await hookState(hook.id);
    return h.is_active ? undefined : h;
  }, { ms: 60_000, every: 200 });
  t.match(paused, { is_active: false, last_status_code: null }, 'paused; the last attempt had no answer');
  t.type(paused.auto_paused_at, 'string', 'auto_paused_at set');
  t.type(paused.failing_since, 'string', 'failing_since set');
  t.ok(paused.consecutive_failures >= PAUSE_AFTER_FAILURES, `paused after ${paused.consecutive_failures} failures in a row (threshold ${PAUSE_AFTER_FAILURES})`);
  const { rows: tries } = await dbs.pool.query<{ delivery_status: string; attempts: number; answered: number }>(
    `SELECT d.status AS delivery_status, count(a.id)::int AS attempts, count(a.status_code)::int AS answered
       FROM webhook_deliveries d LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
      WHERE d.webhook_id = $1 AND d.event_id IN (SELECT id FROM webhook_events WHERE occurred_at >= $2)
      GROUP BY d.id, d.status`,
    [hook.id, downAt],
  );
  t.ok(tries.length > 0, `${tries.length} deliveries made while down`);
  t.ok(tries.some((d) => d.attempts >= 2), `retried while down (attempts per delivery: ${tries.map((d) => d.attempts).join(',')})`);
  t.equal(tries.reduce((s, d) => s + d.answered, 0), 0, 'no attempt got an answer while the receiver was down');
  // The pause cancels what was pending; nothing of it is left to go out on its own.
  await quiet(hook.id);
  t.same([...new Set(tries.map((d) => d.delivery_status))].filter((s) => s !== 'cancelled' && s !== 'failed'), [], 'every delivery made while down was cancelled by the pause (or failed for good)');

  // ---- paused: mails keep happening; the receiver comes back; nothing goes out ----------------
  const whilePaused = await sendMails('paused', 3);
  await receiver.up();
  await quiet(hook.id);
  t.equal(receiver.received.length, before.length * 2, 'nothing delivered while down or paused, even with the receiver back');

  // ---- resumed: PATCH, replay of the outage, then business as usual ----------------------------
  const resumedAt = await dbNow();
  const resumed = await api.call('PATCH', `/v1/webhooks/${hook.id}`, { is_active: true });
  t.equal(resumed.status, 200, 'PATCH answers 200');
  t.match(resumed.body, { is_active: true, auto_paused_at: null, consecutive_failures: 0, failing_since: null }, 'PATCH resumes it and clears the streak');
  const replay = await api.call('POST', `/v1/webhooks/${hook.id}/replay`, { since: downAt, until: resumedAt });
  t.equal(replay.status, 202, 'replay accepted');
  const missed = [...whileDown, ...whilePaused];
  t.equal(replay.body.queued, missed.length * 2, `replay queued the ${missed.length * 2} events of the outage and the pause`);
  const after = await sendMails('after', 3);

  const all = [...before, ...missed, ...after];
  await waitFor('every event delivered', async () => (new Set(receiver.received.map(key)).size >= all.length * 2 ? true : undefined), { ms: 60_000, every: 200 });
  await quiet(hook.id);

  // ---- what must hold ------------------------------------------------------------------------
  const expected = all.flatMap((id) => TYPES.map((type) => `${type} ${id}`)).sort();
  t.same([...new Set(receiver.received.map(key))].sort(), expected, 'every event of every phase reached the receiver');
  const times = new Map<string, number>();
  for (const r of receiver.received) times.set(key(r), (times.get(key(r)) ?? 0) + 1);
  t.same([...times].filter(([, n]) => n !== 1), [], 'each exactly once (no duplicate after the resume and the replay)');
  const ids = receiver.received.map((r) => r.headers['webhook-id']);
  t.equal(new Set(ids).size, ids.length, 'each webhook-id received once');
  const wh = new Webhook(hook.secret);
  const unverified = receiver.received.filter((r) => {
    try {
      wh.verify(r.body, { 'webhook-id': r.headers['webhook-id']!, 'webhook-timestamp': r.headers['webhook-timestamp']!, 'webhook-signature': r.headers['webhook-signature']! });
      return false;
    } catch {
      return true;
    }
  });
  t.equal(unverified.length, 0, 'every delivery verifies with the official library');
  const outOfOrder = all.filter((id) => {
    const types = receiver.received.filter((r) => r.event.data.mail_id === id).map((r) => r.event.type);
    return types.join(',') !== TYPES.join(',');
  });
  t.same(outOfOrder, [], 'in order per mail (received before sent), replayed ones included');
  const final = await hookState(hook.id);
  t.match(final, { is_active: true, consecutive_failures: 0, last_status_code: 200 }, 'the webhook healthy again');
  t.comment(`${receiver.received.length} deliveries received: ${before.length * 2} before, ${missed.length * 2} by the replay, ${after.length * 2} after`);
  for (const w of workers) t.equal(w.exit(), undefined, 'the worker is still running');
});
