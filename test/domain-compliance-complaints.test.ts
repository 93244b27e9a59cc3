import t from 'tap';
import { complaintCheck } from '../domain/domains/compliance/complaint-rate.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { complainAbout, deliver, deliveryBench, startTestPump } from './helpers/delivered.js';
import { mailApi } from './helpers/send-stack.js';
import { waitFor } from './helpers/wait.js';

/**
 * The complaint_rate check of GET /v1/domains/{domain_name}/compliance (issue 40; docs/domains.md,
 * Compliance): the per-provider figures of GET /v1/deliverability/providers for the domain over
 * the last 7 days, from mail accepted by the API, taken through the send worker's steps with the
 * mailbox simulator's answers, a feedback-loop report over SMTP to the inbound listener, and the
 * event pump to ClickHouse. A provider at or over 0.3 % fails; none under complaint-reporting
 * providers, or no mail, is unknown; all under 0.1 % passes.
 */
const PUBLIC_URL = 'https://links.compliance.test';
const { dbs, url, pool, inboundPort } = await deliveryBench(t, 'compliancecomplaints', PUBLIC_URL);
const a = await makeTenant(pool, { scopes: ['mail:send', 'mail:read', 'domains:read'] });
for (const domain of ['complained.example', 'clean.example', 'gmail-only.example', 'quiet.example']) {
  await makeSenders(pool, a.tenant, { domain, senders: [{ email: 'news', name: 'News' }] });
}

async function send(from: string, recipients: string[]) {
  const r = await mailApi(url, a.headers).send({ from, to: recipients.map((email) => ({ email })), subject: 'Figures', text: 'Hello' });
  if (r.status !== 202) throw new Error(`send: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.mails as Array<{ mail_id: string; to: string }>;
}
const complained = await send('news@complained.example', ['reader@yahoo.com', 'complaint-y@yahoo.com', 'r2@yahoo.com', 'r3@outlook.com']);
const clean = await send('news@clean.example', ['a@yahoo.com', 'b@outlook.com']);
const gmail = await send('news@gmail-only.example', ['g@gmail.com']);
const delivered = await deliver(a.tenant, pool, [...complained, ...clean, ...gmail].map((m) => m.mail_id), { publicUrl: PUBLIC_URL });
await complainAbout(inboundPort, delivered.get(complained.find((m) => m.to === 'complaint-y@yahoo.com')!.mail_id)!);
startTestPump(t, dbs);
await waitFor('the outbox shipped to ClickHouse', async () => {
  const left = await pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE stage < 2`);
  return left.rows[0].n === 0 ? true : undefined;
}, { ms: 60_000 });

async function complaintOf(domain: string) {
  const r = await jsonCall(url, 'GET', `/v1/domains/${domain}/compliance`, undefined, a.headers);
  if (r.status !== 200) throw new Error(`compliance: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body.checks as Array<{ rule: string; status: string; detail: string; applies_to: string[] }>).find((c) => c.rule === 'complaint_rate');
}

t.test('a provider at or over 0.3 % -> fail, naming it and its figures; the same as GET /v1/deliverability/providers', async (t) => {
  const c = await waitFor('the complaint in the figures', async () => {
    const found = await complaintOf('complained.example');
    return found?.status === 'fail' ? found : undefined;
  }, { ms: 60_000 });
  t.match(c.detail, 'yahoo 33.33 % (1 of 3)');
  t.notMatch(c.detail, 'microsoft', 'only the providers over the line');
  t.same(c.applies_to, ['gmail', 'yahoo']);
  const figures = await jsonCall(url, 'GET', '/v1/deliverability/providers?domain=complained.example', undefined, a.headers);
  t.equal(figures.status, 200);
  t.match(figures.body.data.find((r: any) => r.provider === 'yahoo'), { delivered: 3, complaints: 1, complaint_status: 'critical' }, "the figures' own verdict");
});

t.test('no complaint at providers that report them -> pass', async (t) => {
  const c = (await complaintOf('clean.example'))!;
  t.equal(c.status, 'pass');
  t.match(c.detail, 'yahoo 0.00 % (0 of 1)');
  t.match(c.detail, 'microsoft 0.00 % (0 of 1)');
});

t.test('only Gmail (aggregate complaint figures only) -> unknown; no mail -> unknown', async (t) => {
  const g = (await complaintOf('gmail-only.example'))!;
  t.equal(g.status, 'unknown');
  t.match(g.detail, 'gmail sends no per-message complaint reports');
  t.equal((await complaintOf('quiet.example'))!.status, 'unknown');
});

t.test('the warning line: from 0.1 % -> warn (the figures say warning)', async (t) => {
  const c = complaintCheck([
    { provider: 'yahoo', delivered: 1000, complaints: 2, complaint_rate: 0.002, complaint_status: 'warning' },
    { provider: 'microsoft', delivered: 500, complaints: 0, complaint_rate: 0, complaint_status: 'ok' },
  ]);
  t.equal(c.status, 'warn');
  t.match(c.detail, 'yahoo 0.20 % (2 of 1000)');
  t.equal(complaintCheck('unavailable').status, 'unknown', 'figures that could not be read');
});
