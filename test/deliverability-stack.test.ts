import t from 'tap';
import { freePort } from '../config/ports.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { startTestDnsServer } from './helpers/dns-server.js';
import { mailApi, startSendStack, waitFor } from './helpers/send-stack.js';

/**
 * Issue 40's providers through the real path, as a deployment runs it: a worker dyno as its own
 * process sending to the mailbox simulator (its bounce+ and complaint+ recipients answer as
 * documented: a 550 at RCPT, a 250 then an ARF report to the worker's inbound listener), the
 * worker's resolve job looking company domains' MX up through DNS_SERVERS (the test DNS server),
 * its event pump shipping to ClickHouse, and GET /v1/deliverability/providers over HTTP.
 * test/deliverability-providers.test.ts holds each figure to the listings; this one holds the
 * whole chain together.
 */
const inboundPort = await freePort();
const stack = await startSendStack(t, { label: 'delivstack', publicUrl: 'https://track.cartero.test', inboundSmtpPort: inboundPort, fastRetries: true });
const { dbs } = stack;
const dns = await startTestDnsServer(t);
dns.mx('acme-corp.com', 'aspmx.l.google.com', 1);
dns.mx('contoso.com', 'contoso-com.mail.protection.outlook.com', 0);
stack.spawnWorker({ DNS_SERVERS: dns.address });
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);

async function send(to: string[]): Promise<string[]> {
  const r = await api.send({ from: 'news@send.example', to: to.map((email) => ({ email })), subject: 'Providers', text: 'Hello' });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body.mails as Array<{ mail_id: string }>).map((m) => m.mail_id);
}

const first = await send(['reader@gmail.com', 'bounce+1@gmail.com', 'reader@yahoo.com', 'complaint+1@yahoo.com', 'reader@outlook.com', 'first@acme-corp.com', 'first@contoso.com']);
await waitFor('the worker to look the company domains up', async () => {
  const r = await dbs.pool.query(`SELECT count(*)::int AS n FROM recipient_domains WHERE provider IS NOT NULL`);
  return r.rows[0].n === 2 ? true : undefined;
}, { ms: 60_000 });
const second = await send(['second@acme-corp.com', 'second@contoso.com']);
for (const id of [...first, ...second]) await api.waitFinal(id);
await waitFor('the complaint', async () => ((await dbs.pool.query('SELECT 1 FROM mail_complaints')).rowCount === 1 ? true : undefined), { ms: 60_000 });
await waitFor('everything shipped to ClickHouse', async () => {
  const left = await dbs.pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE stage < 2`);
  return left.rows[0].n === 0 ? true : undefined;
}, { ms: 60_000 });

t.test('per provider: the simulator\'s answers, the complaint report and the MX verdicts, counted', async (t) => {
  const res = await jsonCall(stack.url, 'GET', '/v1/deliverability/providers', undefined, a.headers);
  t.equal(res.status, 200, JSON.stringify(res.body));
  const rows = Object.fromEntries(res.body.data.map((r: any) => [r.provider, r]));
  t.match(rows.gmail, { sent: 2, delivered: 1, bounced_hard: 1, bounce_status: 'critical', complaint_status: 'no_data' });
  t.match(rows.yahoo, { sent: 2, delivered: 2, complaints: 1, complaint_rate: 0.5, complaint_status: 'critical', bounce_status: 'ok' });
  t.match(rows.microsoft, { sent: 1, delivered: 1, complaint_status: 'ok' });
  t.match(rows.google_workspace, { sent: 1, delivered: 1 }, 'the second mail to acme-corp.com, after its MX was known');
  t.match(rows.microsoft_365, { sent: 1, delivered: 1 });
  t.match(rows.other, { sent: 2, delivered: 2 }, 'the first mails to the company domains, before');
  t.equal(Object.keys(rows).length, 6);
});
