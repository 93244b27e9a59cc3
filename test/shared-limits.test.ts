import nodemailer from 'nodemailer';
import { pino } from 'pino';
import t from 'tap';
import { freePort } from '../config/ports.js';
import { createForm } from '../domain/forms/definition.js';
import { startInboundSmtp } from '../smtp/inbound.js';
import { createPool } from '../sql/pool.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { childEnv, spawnNode, TEST_DKIM_KEY, spawnWebDyno } from './helpers/spawn.js';

/**
 * The per-client limits are one budget for every dyno on the database (issue 26;
 * sql/rate-limits.ts, rate-limiter-flexible's Postgres store over rate_limits): two web dynos as
 * separate processes behind a "router" (requests alternated between them) let one address submit
 * a hosted form FORM_PAGE_RATE_PER_MINUTE times in all, not that many times each; two inbound
 * listeners with their own connection pools (as two worker dynos have) share
 * INBOUND_RATE_PER_MINUTE per client address. Before, each process counted alone and both
 * budgets were twice as large.
 */

const dbs = await testDatabases(t, 'sharedlimits');
const logger = pino({ level: 'warn' }, pino.destination(2));

t.test('two web dynos share one budget of hosted form submissions per address', async (t) => {
  const LIMIT = 4;
  const a = await makeTenant(dbs.pool);
  const form = await createForm(a.tenant, dbs.pool, {
    name: 'Shared budget',
    kind: 'advanced',
    type: 'registration',
    requires_confirmation: false,
    settings: null,
    items: [{ type: 'field', field_key: 'email', label: 'Email', required: true }],
  });
  const email = form.items[0]!.id;
  const dyno = () => spawnWebDyno(t, dbs, { FORM_PAGE_RATE_PER_MINUTE: String(LIMIT) }, ['WEBHOOK_ALLOW_PRIVATE']);
  const webs = await Promise.all([dyno(), dyno()]);

  const post = (n: number, accept = 'text/html') =>
    fetch(`${webs[n % 2]!.base}/f/${form.public_token}`, {
      method: 'POST',
      headers: { accept, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ [`item_${email}`]: `shared${n}@example.org` }).toString(),
    });
  const statuses: number[] = [];
  for (let n = 0; n < LIMIT; n++) statuses.push((await post(n)).status);
  t.same(statuses, Array(LIMIT).fill(200), `${LIMIT} submissions, alternated between the two webs, accepted`);
  for (const n of [LIMIT, LIMIT + 1]) {
    const refused = await post(n);
    t.equal(refused.status, 429, `submission ${n + 1} (to web ${(n % 2) + 1}) refused: the budget is spent over both`);
    const retryAfter = Number(refused.headers.get('retry-after'));
    t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After within the minute (${retryAfter})`);
  }
  const problem = await post(LIMIT + 2, 'application/json');
  t.match(await problem.json(), { status: 429, code: 'rate_limit_exceeded' });
  const stored = await dbs.pool.query('SELECT count(*)::int AS n FROM form_submissions WHERE form_id = $1', [form.id]);
  t.equal(stored.rows[0].n, LIMIT, 'exactly the budget stored, over both webs');
  const rows = await dbs.pool.query<{ key: string; points: number }>("SELECT key, points FROM rate_limits WHERE key LIKE 'form_page:%'");
  // Each web wrote one refused point, then answered that address from its memory for the minute.
  t.equal(rows.rows.length, 1, 'one row for the address in Postgres');
  t.match(rows.rows[0], { key: new RegExp(`^form_page:${LIMIT}:(::ffff:)?127\\.0\\.0\\.1$`), points: LIMIT + 2 }, 'counted by both webs');
  for (const w of webs) t.equal((await fetch(`${w.base}/healthz`)).status, 200, 'both webs still up');
});

t.test('two inbound listeners share one per-client budget', async (t) => {
  const LIMIT = 4;
  // A pool each, as two worker processes have: the budget lives in Postgres, not in a shared object.
  const pools = [createPool(dbs.databaseUrl, { max: 2 }), createPool(dbs.databaseUrl, { max: 2 })];
  const listeners = await Promise.all(pools.map((pool) => startInboundSmtp({ pool, port: 0, logger, limits: { ratePerMinute: LIMIT } })));
  t.teardown(async () => {
    await Promise.all(listeners.map((l) => l.close()));
    await Promise.all(pools.map((p) => p.end()));
  });
  // Not a report, to a return path: 250 ignored. Each message is one point (counted at MAIL FROM).
  const send = async (port: number): Promise<number | undefined> => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    try {
      await transport.sendMail({ envelope: { from: '', to: ['bounce+x@send.example'] }, raw: 'Subject: hi\r\n\r\nnot a report\r\n' });
      return 250;
    } catch (err) {
      return (err as { responseCode?: number }).responseCode;
    } finally {
      transport.close();
    }
  };
  const codes: Array<number | undefined> = [];
  for (let n = 0; n < LIMIT + 2; n++) codes.push(await send(listeners[n % 2]!.port));
  t.same(codes, [...Array(LIMIT).fill(250), 421, 421], `${LIMIT} messages alternated between the listeners, then 421 from either`);
  const rows = await dbs.pool.query<{ key: string }>("SELECT key FROM rate_limits WHERE key LIKE 'inbound:%'");
  t.same(rows.rows, [{ key: `inbound:${LIMIT}:127.0.0.1` }], 'one row for the address, shared by both listeners');
});
