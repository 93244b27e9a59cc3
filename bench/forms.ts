/**
 * Benchmark (issue 15): form submissions through POST /v1/forms/{id}/submissions, against the
 * service started the way a user starts it (`node dist/runtime/start.js`: embedded Postgres and
 * ClickHouse, the mailbox simulator, web and worker, a fresh DATA_DIR).
 *
 *   npx tsc -p tsconfig.json && npm run bench:forms
 *
 * The form: 6 fields (email required, phone, first_name, last_name, city a select, age a number)
 * and 2 consents (a mail term, required; an sms term), plus a separator and a text block (never
 * sent). Each submission has a new address and phone and accepts both consents, so each one is a
 * submission row, two consent events with their rules, their outbox rows and its jobs.
 *
 * Measured, each for BENCH_DURATION seconds with BENCH_CONCURRENCY requests in flight (a client in
 * this process, keep-alive), after a warm-up:
 *  1. no Idempotency-Key, on a form without confirmation (status confirmed);
 *  2. a new Idempotency-Key on every submission, same form (the key's unique index in the write);
 *  3. retries: one key sent again and again (200 with the original body, nothing written);
 *  4. with confirmation: a form that requires it (status pending), so every submission enqueues its
 *     confirmation mail, which the worker renders and sends through the normal pipeline to the
 *     mailbox simulator while the run goes on; after the run the bench waits (up to BENCH_DRAIN
 *     seconds) until every one is a `mails` row and sent, and reports how long that took.
 * The target (issue 15) is ≥ 500 submissions/s accepted. Before measuring, the answers are checked
 * (201 confirmed, 201 pending, a retry 200 with the same id, a 422 for a bad value), so the
 * figures are for correct answers. Load averages (/proc/loadavg) and the busy cores of the
 * machine are printed with every run: the machine is shared.
 *
 * Environment (all optional):
 *   BENCH_DURATION     seconds per measured run (default 15)
 *   BENCH_CONCURRENCY  requests in flight (default 10)
 *   BENCH_DRAIN        seconds to wait for the confirmation mails after run 4 (default 180)
 *   BENCH_WAIT_IDLE    first wait (up to that long) for the shared machine to be idle
 *   BENCH_COUNT_QUERIES=1  count the web's Postgres round trips per submission, by statement (runs 1 and 2)
 *   BENCH_KEEP_DATA=1  keep the temp DATA_DIR (printed)
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { createField } from '../domain/fields/catalog.js';
import { createForm } from '../domain/forms/definition.js';
import type { Form } from '../domain/forms/read.js';
import { createSender } from '../domain/senders/senders.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import type { Tenant } from '../domain/tenancy/context.js';
import type { Pool } from '../sql/pool.js';
import { coresBetween, loadavg, percentile, round, sleep } from './proc.js';
import { assertBuilt, benchPreloads, benchService, cpuSnapshot, loadBeforeStart, machineInfo, readQueryCounts, runBench, startService, type QueryCounts, type Service } from './service.js';
import { benchTenant, verifiedDomain } from './fixtures.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const DRAIN = Number(process.env.BENCH_DRAIN ?? 180);
const COUNT_QUERIES = process.env.BENCH_COUNT_QUERIES === '1';
const TARGET = 500;
const DOMAIN = 'forms.bench.example';

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// ---------------------------------------------------------------- fixtures

interface Seeded {
  tenant: Tenant;
  headers: Record<string, string>;
  plain: Form;
  confirmed: Form;
}

async function seed(pool: Pool): Promise<Seeded> {
  const slug = 'bench-forms';
  const tenant = await benchTenant(pool, slug, 'Forms benchmark');
  const key = await createApiKey(pool, { instanceSlug: slug, scopes: ['form:read', 'form:write'] });
  await verifiedDomain(tenant, pool, DOMAIN);
  const sender = await createSender(tenant, pool, { email: `hello@${DOMAIN}`, name: 'Forms bench' });
  await createField(tenant, pool, { key: 'first_name', name: 'First name', type: 'text', maxLength: 60 });
  await createField(tenant, pool, { key: 'last_name', name: 'Last name', type: 'text', maxLength: 60 });
  await createField(tenant, pool, { key: 'city', name: 'City', type: 'select', options: ['Lisbon', 'Porto', 'Faro'] });
  await createField(tenant, pool, { key: 'age', name: 'Age', type: 'number', min: 16, max: 120 });
  const purpose = (await createPurpose(tenant, pool, { name: 'Newsletter' })).id;
  const terms: number[] = [];
  for (const [name, channel] of [['Newsletter by mail', 'mail'], ['Offers by SMS', 'sms']] as const) {
    const term = await createTerm(tenant, pool, { name, type: 'marketing', purposeIds: [purpose], channels: [channel] });
    await addTermVersion(tenant, pool, term.id, { version: '1', body: `${name}: we may write to you.` });
    await setCurrentVersion(tenant, pool, term.id, '1');
    terms.push(term.id);
  }
  const items = [
    { type: 'text' as const, text: 'Join us.' },
    { type: 'field' as const, field_key: 'email', label: 'Email', required: true },
    { type: 'field' as const, field_key: 'phone', label: 'Phone' },
    { type: 'field' as const, field_key: 'first_name', label: 'First name' },
    { type: 'field' as const, field_key: 'last_name', label: 'Last name' },
    { type: 'field' as const, field_key: 'city', label: 'City' },
    { type: 'field' as const, field_key: 'age', label: 'Age' },
    { type: 'separator' as const },
    { type: 'consent' as const, term_id: terms[0]!, channel: 'mail' as const, label: 'Newsletter', required: true },
    { type: 'consent' as const, term_id: terms[1]!, channel: 'sms' as const, label: 'SMS offers' },
  ];
  const plain = await createForm(tenant, pool, { name: 'Bench plain', kind: 'advanced', type: 'registration', items });
  const confirmed = await createForm(tenant, pool, {
    name: 'Bench double',
    kind: 'advanced',
    type: 'registration',
    requires_confirmation: true,
    auto_reply_sender_id: sender.id,
    items,
  });
  return { tenant, headers: { authorization: `Bearer ${key.key}`, 'x-instance-slug': slug, 'content-type': 'application/json' }, plain, confirmed };
}

// ---------------------------------------------------------------- requests

let serial = 0;

/** A new person's answers to `form`: every field and consent item once, both consents accepted. */
function submission(form: Form): string {
  const n = ++serial;
  const values: Record<string, unknown> = {
    email: `p${n}@people.bench.example`,
    phone: `+34${String(600_000_000 + n)}`,
    first_name: `Name${n}`,
    last_name: 'Bench',
    city: ['Lisbon', 'Porto', 'Faro'][n % 3],
    age: 16 + (n % 80),
  };
  const items = form.items.flatMap((i) => {
    if (i.type === 'field') return [{ item_id: i.id, value: values[i.field_key] ?? null }];
    if (i.type === 'consent') return [{ item_id: i.id, value: true, term_version_id: i.term_version_id }];
    return [];
  });
  return JSON.stringify({ items, ip_address: '203.0.113.7', user_agent: 'bench/forms' });
}

async function submit(url: string, headers: Record<string, string>, body: string, key?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: key ? { ...headers, 'idempotency-key': key } : headers, body });
  return { status: res.status, body: await res.json() };
}

// ---------------------------------------------------------------- measurement

interface Run {
  name: string;
  concurrency: number;
  duration_s: number;
  requests: number;
  accepted: number;
  accepted_per_s: number;
  latency_ms: { p50: number; p90: number; p99: number; max: number };
  errors: number;
  first_errors: string[];
  loadavg_before: string;
  loadavg_after: string;
  cpu_cores: { web: number; worker: number; postgres: number; bench_client: number; machine_busy: number; other: number };
}

/** `CONCURRENCY` loops, each sending its next request when the previous one answered, for DURATION seconds. */
async function closedLoop(service: Service, name: string, expect: number, call: () => Promise<{ status: number; body: any }>): Promise<Run> {
  const latencies: number[] = [];
  const errors: string[] = [];
  let accepted = 0;
  const loadBefore = loadavg();
  const s0 = cpuSnapshot(service);
  const end = performance.now() + DURATION * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = await call().catch((e: Error) => ({ status: 0, body: e.message }));
        latencies.push(performance.now() - t0);
        if (r.status === expect) accepted++;
        else if (errors.length < 1_000) errors.push(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
    }),
  );
  const s1 = cpuSnapshot(service);
  const wall = (s1.at - s0.at) / 1000;
  latencies.sort((x, y) => x - y);
  const per = (a: number, b: number) => round((b - a) / wall, 2);
  const machine = round(coresBetween(s0.machine, s1.machine).busy, 2);
  const ours = (s1.web - s0.web + s1.worker - s0.worker + s1.postgres - s0.postgres + s1.bench - s0.bench + s1.clickhouse - s0.clickhouse + s1.supervisor - s0.supervisor) / wall;
  const run: Run = {
    name,
    concurrency: CONCURRENCY,
    duration_s: round(wall, 1),
    requests: latencies.length,
    accepted,
    accepted_per_s: round(accepted / wall),
    latency_ms: {
      p50: round(percentile(latencies, 50), 1),
      p90: round(percentile(latencies, 90), 1),
      p99: round(percentile(latencies, 99), 1),
      max: round(latencies.at(-1) ?? NaN, 1),
    },
    errors: errors.length,
    first_errors: errors.slice(0, 3),
    loadavg_before: loadBefore,
    loadavg_after: loadavg(),
    cpu_cores: {
      web: per(s0.web, s1.web),
      worker: per(s0.worker, s1.worker),
      postgres: per(s0.postgres, s1.postgres),
      bench_client: per(s0.bench, s1.bench),
      machine_busy: machine,
      other: round(machine - ours, 2),
    },
  };
  log(
    `${name}: ${run.accepted_per_s} accepted/s, p50 ${run.latency_ms.p50} ms, p99 ${run.latency_ms.p99} ms, errors ${run.errors}; ` +
      `cpu web ${run.cpu_cores.web} worker ${run.cpu_cores.worker} pg ${run.cpu_cores.postgres} client ${run.cpu_cores.bench_client} other ${run.cpu_cores.other}; loadavg ${run.loadavg_after}`,
  );
  return run;
}

/** The web's round-trip counts so far (with BENCH_COUNT_QUERIES=1). */
async function webQueries(service: Service): Promise<QueryCounts | undefined> {
  return COUNT_QUERIES ? readQueryCounts(service, service.webPid) : undefined;
}

/** Round trips per request between two counts, by statement (the 60 first characters). */
function perRequest(a: QueryCounts | undefined, b: QueryCounts | undefined, n: number) {
  if (!a || !b || !n) return undefined;
  const by: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.by_statement)) {
    const d = (v - (a.by_statement[k] ?? 0)) / n;
    if (d >= 0.01) by[k] = round(d, 2);
  }
  return { round_trips: round((b.total - a.total) / n, 2), checkouts: round((b.checkouts - a.checkouts) / n, 2), by_statement: by };
}

function countEml(dir: string): number {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.eml')).length;
  } catch {
    return 0;
  }
}

/** After run 4: every confirmation mail a `mails` row, sent (status 3), and in the simulator's mailbox. */
async function drainConfirmations(pool: Pool, service: Service, tenant: Tenant, formId: number, runEnded: number) {
  const count = async () =>
    (
      await pool.query<{ submissions: number; mails: number; sent: number }>(
        `SELECT (SELECT count(*)::int FROM form_submissions WHERE instance_id = $1 AND form_id = $2) AS submissions,
                count(*)::int AS mails, count(*) FILTER (WHERE status = 3)::int AS sent
           FROM mails WHERE instance_id = $1 AND custom_msg_id LIKE 'form-confirmation:%'`,
        [tenant.instanceId, formId],
      )
    ).rows[0]!;
  let c = await count();
  const deadline = Date.now() + DRAIN * 1000;
  while (c.sent < c.submissions && Date.now() < deadline) {
    await sleep(1_000);
    c = await count();
  }
  const drained = (performance.now() - runEnded) / 1000;
  const out = { submissions: c.submissions, mails_generated: c.mails, mails_sent: c.sent, eml_in_mailbox: countEml(join(service.dataDir, 'mailbox')), seconds_after_run: round(drained, 1), all_sent: c.sent >= c.submissions };
  log(`confirmation mails: ${out.mails_generated} generated, ${out.mails_sent} sent for ${out.submissions} submissions, ${out.seconds_after_run} s after the run ended`);
  return out;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  assertBuilt();
  const busyBefore = await loadBeforeStart();
  const loadavgBefore = loadavg();
  const service = await startService({ prefix: 'cartero-bench-forms-', nodeOptions: benchPreloads({ cpuProfile: false, countQueries: COUNT_QUERIES }) });
  await benchService(service, 2, async (pool, stop) => {
    const seeded = await seed(pool);
    const { headers, plain, confirmed } = seeded;
    const plainUrl = `${service.url}/v1/forms/${plain.id}/submissions`;
    const confirmedUrl = `${service.url}/v1/forms/${confirmed.id}/submissions`;

    // Correct answers first.
    const one = await submit(plainUrl, headers, submission(plain), 'check-key');
    if (one.status !== 201 || one.body.status !== 'confirmed') throw new Error(`plain form answered ${one.status} ${JSON.stringify(one.body)}`);
    const again = await submit(plainUrl, headers, submission(plain), 'check-key');
    if (again.status !== 422 || again.body.code !== 'idempotency_key_reused') throw new Error(`key reuse answered ${again.status} ${JSON.stringify(again.body)}`);
    const pending = await submit(confirmedUrl, headers, submission(confirmed));
    if (pending.status !== 201 || pending.body.status !== 'pending') throw new Error(`confirmation form answered ${pending.status} ${JSON.stringify(pending.body)}`);
    const bad = await submit(plainUrl, headers, submission(plain).replace(/"value":\d+/, '"value":7'));
    if (bad.status !== 422 || bad.body.errors?.[0]?.code !== 'field_value_invalid') throw new Error(`a bad age answered ${bad.status} ${JSON.stringify(bad.body)}`);
    const retryBody = submission(plain);
    const original = await submit(plainUrl, headers, retryBody, 'retry-key');
    const retry = await submit(plainUrl, headers, retryBody, 'retry-key');
    if (retry.status !== 200 || retry.body.id !== original.body.id) throw new Error(`a retry answered ${retry.status} ${JSON.stringify(retry.body)}`);
    log('answers checked: 201 confirmed, 201 pending, 200 retry with the same id, 422 idempotency_key_reused, 422 field_value_invalid');

    await closedLoop(service, 'warm-up', 201, () => submit(plainUrl, headers, submission(plain)));
    const runs: Run[] = [];
    let k = 0;
    const q0 = await webQueries(service);
    runs.push(await closedLoop(service, 'no Idempotency-Key', 201, () => submit(plainUrl, headers, submission(plain))));
    const q1 = await webQueries(service);
    runs.push(await closedLoop(service, 'a new Idempotency-Key each', 201, () => submit(plainUrl, headers, submission(plain), `bench-${++k}`)));
    const q2 = await webQueries(service);
    const queries = COUNT_QUERIES
      ? { no_key: perRequest(q0, q1, runs[0]!.requests), with_key: perRequest(q1, q2, runs[1]!.requests) }
      : undefined;
    runs.push(await closedLoop(service, 'retries of one key (200, nothing written)', 200, () => submit(plainUrl, headers, retryBody, 'retry-key')));
    runs.push(await closedLoop(service, 'with confirmation (mail generated)', 201, () => submit(confirmedUrl, headers, submission(confirmed))));
    const confirmations = await drainConfirmations(pool, service, seeded.tenant, confirmed.id, performance.now());
    const loadavgAfter = loadavg();

    const stopped = await stop();
    const measured = runs.filter((r) => !r.name.startsWith('retries'));
    const summary = {
      benchmark: 'form submissions, POST /v1/forms/{id}/submissions, 6 fields + 2 consents (issue 15)',
      date: new Date().toISOString(),
      machine: machineInfo('the HTTP client runs in this process on the same cores as the service; the machine is shared with other sessions'),
      setup: { command: 'npm run bench:forms', duration_s: DURATION, concurrency: CONCURRENCY },
      machine_busy_cores_before_start: busyBefore,
      loadavg_before_start: loadavgBefore,
      loadavg_after_runs: loadavgAfter,
      target_accepted_per_s: TARGET,
      target_met_by_run: Object.fromEntries(measured.map((r) => [r.name, r.accepted_per_s >= TARGET])),
      runs,
      confirmation_mails: confirmations,
      ...(queries ? { web_postgres_round_trips_per_submission: queries } : {}),
      stop: stopped,
    };
    process.stdout.write(`\n| run | accepted/s | p50 ms | p99 ms | errors | web / worker / pg / other cores | loadavg after |\n|---|---:|---:|---:|---:|---|---|\n`);
    for (const r of runs) {
      process.stdout.write(
        `| ${r.name} | ${r.accepted_per_s} | ${r.latency_ms.p50} | ${r.latency_ms.p99} | ${r.errors} | ${r.cpu_cores.web} / ${r.cpu_cores.worker} / ${r.cpu_cores.postgres} / ${r.cpu_cores.other} | ${r.loadavg_after} |\n`,
      );
    }
    process.stdout.write('\n' + JSON.stringify(summary, null, 2) + '\n');
    if (runs.some((r) => r.errors) || !confirmations.all_sent) process.exitCode = 1;
  });
}

runBench(main);
