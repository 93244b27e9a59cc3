import { pino } from 'pino';
import t from 'tap';
import { createClickHouseClient } from '../analytics/client.js';
import { acceptSend } from '../domain/mail/accept.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { startEventPump } from '../workers/jobs/event-pump.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { waitFor } from './helpers/send-stack.js';

/**
 * The event pump on its own (no web, no send worker), so the test decides what the outbox holds
 * before each tick. Every fixture is in place before the first subtest (tap ends an idle root
 * test once a teardown is registered).
 */
const dbs = await testDatabases(t, 'eventpump');
const ch = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => ch.close());
const a = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
const accepted = await acceptSend(a.tenant, dbs.pool, jobQueue(dbs.databaseUrl), {
  from: 'news@send.example',
  to: [{ email: 'scanned@example.org' }],
  subject: 'Hello',
  text: 'Body',
});
const mailId = accepted.mails[0]!.mail_id;
await dbs.pool.query(`UPDATE mails SET status = 3, sent_at = now() - interval '1 hour' WHERE mail_id = $1`, [mailId]);

t.test('a scanner click keeps its own flag whichever batch it falls in; the click it bursts with is flagged', async (t) => {
  // Two clicks on different links 300 ms apart, the second from an HTTP library: both committed
  // before the pump runs, and a batch of one, so the first click's tick sees the second one
  // still unjudged (stage 0).
  const at = new Date(Date.now() - 60_000);
  const { rows } = await dbs.pool.query<{ id: string }>(
    `INSERT INTO event_outbox (instance_id, mail_id, kind, url, user_agent, occurred_at)
     VALUES ($1, $2, 'click', 'https://shop.example/a', 'Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0', $3),
            ($1, $2, 'click', 'https://shop.example/b', 'python-requests/2.31', $3::timestamptz + interval '300 milliseconds')
     RETURNING id`,
    [a.tenant.instanceId, mailId, at],
  );
  const pump = startEventPump({ pool: dbs.pool, clickhouse: ch, logger: pino({ level: 'silent' }), batchSize: 1, intervalMs: 20 });
  t.teardown(() => pump.stop());
  const flags = await waitFor('both clicks shipped', async () => {
    const r = await dbs.pool.query<{ machine: string | null; stage: number }>(
      `SELECT machine, stage FROM event_outbox WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [rows.map((r) => r.id)],
    );
    return r.rows.every((x) => x.stage === 2) ? r.rows.map((x) => x.machine) : undefined;
  }, { ms: 20_000 });
  t.same(flags, ['click_burst', 'link_scanner']);
  const m = await dbs.pool.query(`SELECT clicks, human_clicks FROM mails WHERE mail_id = $1`, [mailId]);
  t.equal(m.rows[0].clicks, 2, 'both counted');
  // The first click was counted human in its own tick; the second one's tick re-flagged it.
  t.equal(m.rows[0].human_clicks, 0, 'the re-flagged click left human_clicks');
  const mirror = await waitFor('the mirror row after the re-flag', async () => {
    const rs = await ch.query({ query: `SELECT clicks, human_clicks FROM mails FINAL WHERE mail_id = {m:String}`, query_params: { m: mailId }, format: 'JSONEachRow' });
    const r = (await rs.json()) as Array<{ clicks: number; human_clicks: number }>;
    return r[0]?.clicks === 2 && r[0].human_clicks === 0 ? r[0] : undefined;
  }, { ms: 20_000 });
  t.ok(mirror, 'ClickHouse\'s mirror says the same');
});
