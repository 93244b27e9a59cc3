/**
 * Benchmark (issue 3): sending. 20,000 mails accepted through POST /v1/mails/send (batches of
 * 100 recipients, a few concurrent request streams) and delivered by the worker to the mailbox
 * simulator, against the service started the way a user starts it (`node dist/runtime/start.js`:
 * embedded Postgres, ClickHouse and simulator under a fresh DATA_DIR). Then, in the same run
 * and against the same simulator, a bare nodemailer pooled loop sends 20,000 equivalent
 * messages: the ratio Cartero end-to-end / bare loop is the figure to quote.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/send.js
 *
 * Environment (all optional):
 *   BENCH_MAILS              mails to send (default 20000)
 *   BENCH_BATCH              recipients per POST (default 100)
 *   BENCH_STREAMS            concurrent request streams (default 4)
 *   BENCH_BASELINE_INFLIGHT  sendMail calls in flight in the bare loop (default
 *                            SEND_BATCH_SIZE x SEND_CONCURRENCY, what the worker has in flight)
 *   BENCH_BASELINE=0         skip the bare nodemailer loop
 *   BENCH_BASELINE_SIGNED=0  skip the second bare loop, which DKIM-signs every message with
 *                            nodemailer's own `dkim` option (an RSA-2048 key of its own): the
 *                            equivalent of Cartero's signed mail (issue 28); run when BENCH_DKIM is on
 *   BENCH_BASELINE_RAW=1     diagnostics: also time the bare loop sending the same messages
 *                            pre-built into one Buffer each (sendMail({ envelope, raw }))
 *   BENCH_POLL_MS            progress poll of Postgres (default 1000: the end-to-end figure is read
 *                            from max(sent_at), not from the poll, and the poll's count of every mail
 *                            is Postgres work the bare loop does not pay; issue 28)
 *   BENCH_TIMEOUT            seconds to wait for every mail to be sent (default 900)
 *   BENCH_SINGLES            after the bulk, this many one-recipient sends one at a time, each
 *                            waited for: a single mail's accept-to-delivered latency (default 20;
 *                            0 skips; issue 42)
 *   SEND_BATCH_SIZE, SEND_CONCURRENCY   passed through to the worker (defaults 100 and 4)
 *   BENCH_CPU_PROF_DIR=DIR   the service's processes write DIR/<entry>.<pid>.cpuprofile when they
 *                            stop (via bench/cpu-profiler.ts); summarise with
 *                            node dist/bench/cpuprofile-summary.js DIR/worker.<pid>.cpuprofile
 *   BENCH_COUNT_QUERIES=1    count the worker's and web's Postgres round trips per mail
 *   BENCH_PG_STATS=1         diagnostics: restart the embedded Postgres once with pg_stat_statements
 *                            preloaded (ALTER SYSTEM on the fresh DATA_DIR) and report the
 *                            statements that took Postgres' time during the Cartero phase
 *   BENCH_WAIT_IDLE=SECONDS  first wait (up to that long) for the shared machine to be idle
 *   BENCH_KEEP_DATA=1        keep the temp DATA_DIR (printed) instead of deleting it
 *   BENCH_DKIM=off           the sender domain is created without a DKIM key, so mail goes out
 *                            unsigned (default on: created as `cartero domain add` does, with a
 *                            key, and every mail DKIM-signed); compare runs on and off for what
 *                            signing costs end to end (docs/domains.md)
 *
 * The load generator (HTTP client, then the bare loop) runs in this process, on the same two
 * cores as the service, Postgres and the simulator.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { configuredKeyRing } from '../domain/domains/key-encryption.js';
import { createSender } from '../domain/senders/senders.js';
import { newId } from '../domain/mail/ids.js';
import { recipientVariables, renderText } from '../domain/mail/merge-tags.js';
import { renderMail, type RenderedMail } from '../domain/mail/render.js';
import { createPool, type Pool } from '../sql/pool.js';
import { readServices } from '../config/services-file.js';
import { SEND_DEFAULTS } from '../workers/jobs/send-mail/index.js';
import { assertBuilt, benchPreloads, checkStopped, cleanUp, cpuSnapshot, partsBetween, machineInfo, runBench, startService, readQueryCounts, stopService, type CpuSnapshot, type QueryCounts, type Service, type Stopped } from './service.js';
import { benchTenant, verifiedDomain } from './fixtures.js';
import { renderInput } from '../test/helpers/render-input.js';
import { coresBetween, cpuSeconds, latencyStats, machineLoad, memoryMiB, percentile, round, sleep } from './proc.js';

const intEnv = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return process.env[name] && Number.isInteger(v) && v > 0 ? v : fallback;
};
const MAILS = intEnv('BENCH_MAILS', 20_000);
const DKIM = process.env.BENCH_DKIM !== 'off';
const BATCH = intEnv('BENCH_BATCH', 100);
const STREAMS = intEnv('BENCH_STREAMS', 4);
// What the worker will use: it inherits this environment, else its own defaults.
const WORKER_BATCH = intEnv('SEND_BATCH_SIZE', SEND_DEFAULTS.batchSize);
const WORKER_LOOPS = intEnv('SEND_CONCURRENCY', SEND_DEFAULTS.loops);
const BASELINE_INFLIGHT = intEnv('BENCH_BASELINE_INFLIGHT', WORKER_BATCH * WORKER_LOOPS);
const BASELINE = process.env.BENCH_BASELINE !== '0';
const BASELINE_RAW = process.env.BENCH_BASELINE_RAW === '1';
const BASELINE_SIGNED = process.env.BENCH_BASELINE_SIGNED !== '0';
const TIMEOUT_S = intEnv('BENCH_TIMEOUT', 900);
const POLL_MS = intEnv('BENCH_POLL_MS', 1000);
const SINGLES = process.env.BENCH_SINGLES === '0' ? 0 : intEnv('BENCH_SINGLES', 20);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
const COUNT_QUERIES = process.env.BENCH_COUNT_QUERIES === '1';
const PG_STATS = process.env.BENCH_PG_STATS === '1';
/** The worker's pool (smtp/transport.ts): 5 connections, 1000 messages each. */
const SMTP_MAX_CONNECTIONS = 5;
const SMTP_MAX_MESSAGES = 1000;
const TARGET_MAILS_PER_S = 500;

const SENDER_LOCAL = 'news';
const SENDER_NAME = 'Example Co';
const DOMAIN = 'mail.bench.example.com';
const SUBJECT = '{{first_name}}, your October summary is ready';
/** A realistic small transactional/newsletter body: one merge tag, two links. */
const HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Your October summary</title></head>
<body style="margin:0;padding:0;background:#f4f4f7;font-family:Arial,Helvetica,sans-serif;color:#222">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center" style="padding:24px">
<table role="presentation" width="560" cellpadding="0" cellspacing="0" style="background:#ffffff;border-radius:6px">
<tr><td style="padding:32px">
<h1 style="font-size:20px;margin:0 0 16px">Hello {{first_name}},</h1>
<p style="font-size:15px;line-height:22px">Your October summary is ready. You sent 42 invoices this month; 3 are still waiting
for payment, and two customers opened their invoice more than once.</p>
<p style="text-align:center;margin:28px 0"><a href="https://app.example.com/summary?month=2026-10&amp;utm_source=email&amp;utm_campaign=monthly"
 style="background:#2563eb;color:#ffffff;padding:12px 20px;border-radius:4px;text-decoration:none">See your summary</a></p>
<p style="font-size:13px;line-height:20px;color:#555">Questions? Reply to this email or read
<a href="https://help.example.com/articles/monthly-summary">how the summary is computed</a>.</p>
</td></tr></table>
<p style="font-size:11px;color:#999">Example Co &middot; 1 Main Street &middot; Springfield</p>
</td></tr></table>
</body></html>`;

const FIRST_NAMES = ['Ann', 'Bruno', 'Chloé', 'Dev', 'Eun-ji', 'Farid', 'Greta', 'Hugo', "O'Neil", 'Zoë'];
const recipient = (i: number) => ({
  email: `rcpt${i}@inbox${i % 7}.example.org`,
  name: `Recipient ${i}`,
  variables: { first_name: FIRST_NAMES[i % FIRST_NAMES.length]! },
});

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// ---------------------------------------------------------------- process accounting (/proc)

// ---------------------------------------------------------------- the service


/** CPU seconds spent by each process between two snapshots, and cores used (CPU s / wall s). */
function cpuBetween(a: CpuSnapshot, b: CpuSnapshot) {
  const wall = (b.at - a.at) / 1000;
  const keys = ['worker', 'web', 'postgres', 'supervisor', 'clickhouse', 'bench'] as const;
  const seconds = Object.fromEntries(keys.map((k) => [k, round(b[k] - a[k], 1)])) as Record<(typeof keys)[number], number>;
  const cores = Object.fromEntries(keys.map((k) => [k, round((b[k] - a[k]) / wall, 2)])) as Record<(typeof keys)[number], number>;
  const machine = round(coresBetween(a.machine, b.machine).busy, 2);
  const ours = keys.reduce((sum, k) => sum + (b[k] - a[k]) / wall, 0);
  // Busy cores not charged to the service or to this process: other work on the shared machine
  // (plus kernel work not charged to any process).
  return {
    wall_s: round(wall, 2),
    cpu_seconds: seconds,
    cores,
    machine_busy_cores: machine,
    other_cores: round(machine - ours, 2),
    steal_cores: round(coresBetween(a.machine, b.machine).steal, 2),
    /** Per dyno and per shard when there are several (WORKER_DYNOS, WEB_DYNOS, CLICKHOUSE_SHARDS). */
    cpu_seconds_by_part: partsBetween(a, b),
  };
}

// ---------------------------------------------------------------- fixtures

async function seed(pool: Pool, dataDir: string): Promise<{ slug: string; key: string; from: string; tenant: Tenant }> {
  const slug = 'bench-send';
  const tenant = await benchTenant(pool, slug, 'Send benchmark');
  const key = await createApiKey(pool, { instanceSlug: slug, scopes: ['mail:send', 'mail:read'] });
  // With a key, sealed by the data dir's generated encryption key, which the service's worker shares.
  await verifiedDomain(tenant, pool, DOMAIN, DKIM ? { ring: configuredKeyRing({ dataDir, databaseUrl: undefined, domains: { keyEncryptionKey: undefined } }) } : {});
  const sender = await createSender(tenant, pool, { email: `${SENDER_LOCAL}@${DOMAIN}`, name: SENDER_NAME });
  return { slug, key: key.key, from: sender.email_address, tenant };
}

/** Whether a stored mail carries a DKIM signature (a check that BENCH_DKIM measured what it says). */
function firstMailSigned(dir: string): boolean {
  const file = readdirSync(dir).find((f) => f.endsWith('.eml'));
  return !!file && /^DKIM-Signature: /m.test(readFileSync(join(dir, file), 'utf8'));
}

function countEml(dir: string): number {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.eml')).length;
  } catch {
    return 0;
  }
}

async function queryCounts(service: Service, pid: number): Promise<QueryCounts | undefined> {
  return COUNT_QUERIES ? readQueryCounts(service, pid) : undefined;
}
function perMail(a: QueryCounts | undefined, b: QueryCounts | undefined, n: number) {
  if (!a || !b) return undefined;
  const by: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.by_statement)) {
    const d = v - (a.by_statement[k] ?? 0);
    if (d > 0) by[k] = round(d / n, 3);
  }
  const sorted = Object.fromEntries(Object.entries(by).sort((x, y) => y[1] - x[1]));
  return { round_trips: round((b.total - a.total) / n, 2), pool_checkouts: round((b.checkouts - a.checkouts) / n, 3), by_statement: sorted };
}

/**
 * Rows pg-boss's tables took so far (pg_stat_user_tables: inserted, and inserted + updated +
 * deleted), for the send queue's partition and for every queue together (issue 42: queue rows
 * written per mail). The counters reach the view when a backend reports them (about once a
 * second): read after a pause.
 */
async function queueWrites(pool: Pool): Promise<{ send: { ins: number; all: number }; every: { ins: number; all: number } }> {
  await sleep(1_500);
  const { rows } = await pool.query<{ send: boolean; ins: string; all: string }>(
    `SELECT t.relname = (SELECT partition_name FROM pgboss.queue WHERE name = 'mail.send') AS send,
            sum(n_tup_ins) AS ins, sum(n_tup_ins + n_tup_upd + n_tup_del) AS all
       FROM pg_stat_user_tables t WHERE schemaname = 'pgboss' GROUP BY 1`,
  );
  const of = (r: { ins: string; all: string } | undefined) => ({ ins: Number(r?.ins ?? 0), all: Number(r?.all ?? 0) });
  return { send: of(rows.find((r) => r.send)), every: { ins: rows.reduce((n, r) => n + Number(r.ins), 0), all: rows.reduce((n, r) => n + Number(r.all), 0) } };
}
function queueWritesPerMail(a: Awaited<ReturnType<typeof queueWrites>>, b: Awaited<ReturnType<typeof queueWrites>>, mails: number) {
  const per = (x: number, y: number) => round((y - x) / mails, 4);
  return {
    send_queue_rows_inserted: per(a.send.ins, b.send.ins),
    send_queue_row_writes: per(a.send.all, b.send.all),
    all_queues_rows_inserted: per(a.every.ins, b.every.ins),
    all_queues_row_writes: per(a.every.all, b.every.all),
  };
}

/** CPU seconds of the live Postgres processes, by application_name (backends) or backend_type. */
async function postgresCpuByRole(pool: Pool, service: Service): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ pid: number; who: string }>(
    `SELECT pid, coalesce(nullif(application_name, ''), backend_type) AS who FROM pg_stat_activity`,
  );
  const out: Record<string, number> = {};
  for (const r of rows) out[r.who] = (out[r.who] ?? 0) + cpuSeconds(r.pid);
  // Backends and autovacuum workers that exited: charged to the postmaster's reaped children.
  out['(exited processes)'] = cpuSeconds(service.postgresPid, true) - cpuSeconds(service.postgresPid);
  out['(postmaster)'] = cpuSeconds(service.postgresPid);
  return out;
}
function cpuByRoleBetween(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = round((b[k] ?? 0) - (a[k] ?? 0), 1);
    if (d > 0) out[k] = d;
  }
  return Object.fromEntries(Object.entries(out).sort((x, y) => y[1] - x[1]));
}

/** BENCH_PG_STATS=1: preload pg_stat_statements, which takes a Postgres restart. */
async function enablePgStatStatements(pool: Pool): Promise<void> {
  await pool.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
  await pool.query(`ALTER SYSTEM SET pg_stat_statements.track = 'all'`);
  await pool.query(`ALTER SYSTEM SET pg_stat_statements.track_planning = on`);
}
async function topStatements(pool: Pool, mails: number) {
  const { rows } = await pool.query<{ query: string; calls: number; exec_ms: number; plan_ms: number; rows: number }>(
    `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::int, total_exec_time AS exec_ms, total_plan_time AS plan_ms, rows::int
       FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 20`,
  );
  const total = (
    await pool.query<{ ms: number }>(`SELECT coalesce(sum(total_exec_time + total_plan_time), 0) AS ms FROM pg_stat_statements`)
  ).rows[0]!.ms;
  return {
    total_ms: round(total),
    per_mail_ms: round(total / mails, 3),
    top: rows.map((r) => ({
      query: r.query.slice(0, 160),
      calls: r.calls,
      total_ms: round(r.exec_ms + r.plan_ms),
      plan_ms: round(r.plan_ms),
      share: round((r.exec_ms + r.plan_ms) / total, 3),
      rows: r.rows,
    })),
  };
}

// ---------------------------------------------------------------- phase 1+2: Cartero

async function runCartero(service: Service, pool: Pool, auth: { slug: string; key: string; from: string }) {
  const requests = Math.ceil(MAILS / BATCH);
  const bodies: string[] = [];
  for (let r = 0; r < requests; r++) {
    const to = [];
    for (let i = r * BATCH; i < Math.min(MAILS, (r + 1) * BATCH); i++) to.push(recipient(i));
    bodies.push(JSON.stringify({ from: auth.from, to, subject: SUBJECT, html: HTML, custom_group_code: 'bench-send' }));
  }
  const headers = { authorization: `Bearer ${auth.key}`, 'x-instance-slug': auth.slug, 'content-type': 'application/json' };
  const mailbox = join(service.dataDir, 'mailbox');
  const emlBefore = countEml(mailbox);

  const rss: Array<{ t: number; worker: number; web: number }> = [];
  const sampleRss = () => {
    const w = memoryMiB(service.workerPid);
    const b = memoryMiB(service.webPid);
    if (w && b) rss.push({ t: round((performance.now() - t0) / 1000, 1), worker: w.rss, web: b.rss });
  };
  const workerRssBefore = memoryMiB(service.workerPid);
  const qWorker0 = await queryCounts(service, service.workerPid);
  const qWeb0 = await queryCounts(service, service.webPid);

  if (PG_STATS) await pool.query('SELECT pg_stat_statements_reset()');
  const queue0 = await queueWrites(pool);
  const pgRoles0 = await postgresCpuByRole(pool, service);
  const cpu0 = cpuSnapshot(service);
  const t0 = performance.now();
  const t0Wall = Date.now();
  sampleRss();
  const rssTimer = setInterval(sampleRss, 1_000);

  // Poll Postgres every POLL_MS: when every mail is sent (3), or every mail is final otherwise.
  // (A sequential scan of mails: its cost is reported as progress_polls and pg_stat_statements.)
  const progress: Array<{ t: number; sent: number }> = [];
  let doneAt: number | undefined;
  let statusCounts: Record<string, number> = {};
  let polling = true;
  let polls = 0;
  let pollMs = 0;
  const poller = (async () => {
    while (polling) {
      const p0 = performance.now();
      const { rows } = await pool.query<{ status: number; n: number }>(
        'SELECT status, count(*)::int AS n FROM mails GROUP BY status',
      );
      polls++;
      pollMs += performance.now() - p0;
      statusCounts = Object.fromEntries(rows.map((r) => [String(r.status), r.n]));
      const sent = statusCounts['3'] ?? 0;
      const final = sent + (statusCounts['4'] ?? 0) + (statusCounts['6'] ?? 0);
      const t = (performance.now() - t0) / 1000;
      if (!progress.length || progress[progress.length - 1]!.sent !== sent || t - progress[progress.length - 1]!.t >= 5) progress.push({ t: round(t, 2), sent });
      if (final >= MAILS) {
        doneAt = performance.now();
        return;
      }
      if (t > TIMEOUT_S) throw new Error(`not all mails final after ${TIMEOUT_S} s: ${JSON.stringify(statusCounts)}`);
      await sleep(POLL_MS);
    }
  })();
  // Awaited below; this only keeps an early failure from being an unhandled rejection meanwhile.
  poller.catch(() => {});

  // Accept: STREAMS concurrent request loops taking the next body.
  const latencies: number[] = [];
  const failures: string[] = [];
  let next = 0;
  const stream = async () => {
    for (let r = next++; r < requests; r = next++) {
      const started = performance.now();
      const res = await fetch(`${service.url}/v1/mails/send`, { method: 'POST', headers, body: bodies[r] });
      const text = await res.text();
      latencies.push(performance.now() - started);
      if (res.status !== 202) failures.push(`${res.status} ${text.slice(0, 200)}`);
      else {
        const body = JSON.parse(text) as { mails?: Array<{ status: number }> };
        if (body.mails?.length !== Math.min(BATCH, MAILS - r * BATCH)) failures.push(`202 with ${body.mails?.length} mails`);
      }
    }
  };
  await Promise.all(Array.from({ length: STREAMS }, stream));
  const acceptedAt = performance.now();
  const cpuAccept = cpuSnapshot(service);
  if (failures.length) {
    polling = false;
    throw new Error(`${failures.length} send requests failed, e.g. ${failures.slice(0, 3).join(' | ')}`);
  }
  log(`accepted ${MAILS} mails in ${((acceptedAt - t0) / 1000).toFixed(1)} s; waiting for delivery`);
  await poller;
  clearInterval(rssTimer);
  sampleRss();
  const cpu1 = cpuSnapshot(service);
  const pgRoles1 = await postgresCpuByRole(pool, service);
  const pgStats = PG_STATS ? await topStatements(pool, MAILS) : undefined;
  const workerRssAfter = memoryMiB(service.workerPid);
  const qWorker1 = await queryCounts(service, service.workerPid);
  const qWeb1 = await queryCounts(service, service.webPid);
  const queue1 = await queueWrites(pool);

  const db = (
    await pool.query<{ first_received: Date; last_received: Date; first_sent: Date; last_sent: Date; sent: number; p50: number; p99: number; max: number }>(
      `SELECT min(received_at) AS first_received, max(received_at) AS last_received, min(sent_at) AS first_sent, max(sent_at) AS last_sent,
              count(*) FILTER (WHERE status = 3)::int AS sent,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY delay) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY delay) AS p99,
              max(delay) AS max
         FROM mails`,
    )
  ).rows[0]!;
  const logsPerMail = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM mail_logs')).rows[0]!.n / MAILS;
  const attempts = (await pool.query<{ n: number }>('SELECT coalesce(sum(attempts), 0)::int AS n FROM mails')).rows[0]!.n;

  // A 250 is given after the file is linked, so every sent mail already has its file.
  const eml = countEml(mailbox) - emlBefore;
  const sorted = [...latencies].sort((a, b) => a - b);
  const e2ePollS = (doneAt! - t0) / 1000;
  const e2eDbS = (db.last_sent.getTime() - t0Wall) / 1000;
  const sendPhaseS = (db.last_sent.getTime() - db.first_sent.getTime()) / 1000;
  const acceptS = (acceptedAt - t0) / 1000;
  const maxRss = rss.reduce((m, s) => Math.max(m, s.worker), 0);
  const maxWebRss = rss.reduce((m, s) => Math.max(m, s.web), 0);
  return {
    requests,
    recipients_per_request: BATCH,
    streams: STREAMS,
    accept: {
      seconds: round(acceptS, 2),
      mails_per_s: round(MAILS / acceptS),
      requests_per_s: round(requests / acceptS, 1),
      latency_ms: {
        p50: round(percentile(sorted, 50), 1),
        p90: round(percentile(sorted, 90), 1),
        p99: round(percentile(sorted, 99), 1),
        max: round(sorted[sorted.length - 1]!, 1),
        mean: round(sorted.reduce((s, v) => s + v, 0) / sorted.length, 1),
      },
      non_202: failures.length,
      /** Mails already sent by the worker when the last request was answered. */
      sent_when_accept_finished: progress.filter((p) => p.t <= acceptS).reduce((m, p) => Math.max(m, p.sent), 0),
    },
    end_to_end: {
      /** First request sent -> the poll (every 250 ms) that saw every mail status 3. */
      seconds_polled: round(e2ePollS, 2),
      mails_per_s_polled: round(MAILS / e2ePollS),
      /** First request sent -> max(sent_at) in Postgres (no poll granularity). */
      seconds: round(e2eDbS, 2),
      mails_per_s: round(MAILS / e2eDbS),
      /** Worker throughput alone: first sent_at -> last sent_at. */
      send_phase_seconds: round(sendPhaseS, 2),
      send_phase_mails_per_s: round(MAILS / sendPhaseS),
      first_sent_after_s: round((db.first_sent.getTime() - t0Wall) / 1000, 2),
      status_counts: statusCounts,
      all_sent: db.sent === MAILS,
      smtp_attempts: attempts,
      mail_logs_per_mail: round(logsPerMail, 2),
      delay_s: { p50: round(db.p50, 2), p99: round(db.p99, 2), max: round(db.max, 2) },
      eml_files_written: eml,
      progress,
    },
    worker_rss_mib: {
      before: workerRssBefore?.rss ?? null,
      max_sampled: maxRss,
      after: workerRssAfter?.rss ?? null,
      peak_vmhwm: workerRssAfter?.hwm ?? null,
      samples: rss.length,
    },
    web_rss_mib: { max_sampled: maxWebRss, peak_vmhwm: memoryMiB(service.webPid)?.hwm ?? null },
    cpu_accept_phase: cpuBetween(cpu0, cpuAccept),
    cpu_end_to_end: cpuBetween(cpu0, cpu1),
    /** pg-boss rows per mail accepted and sent (issue 42's target: send queue rows inserted ≤ 0.05). */
    queue_rows_per_mail: queueWritesPerMail(queue0, queue1, MAILS),
    /** Postgres CPU seconds of the end-to-end phase by client (application_name) or process type. */
    postgres_cpu_seconds_by_client: cpuByRoleBetween(pgRoles0, pgRoles1),
    /** The progress poll itself (this benchmark's measuring cost, included in the figures). */
    progress_polls: { count: polls, mean_ms: round(pollMs / Math.max(1, polls), 1) },
    ...(pgStats ? { pg_stat_statements: pgStats } : {}),
    ...(COUNT_QUERIES
      ? { pg_round_trips_per_mail: { worker: perMail(qWorker0, qWorker1, MAILS), web: perMail(qWeb0, qWeb1, MAILS) } }
      : {}),
  };
}

/**
 * A single mail's latency on an idle queue: one-recipient sends one at a time, each waited for
 * until sent. Accept-to-delivered is the mail's own `delay` (sent_at - received_at, in Postgres),
 * the poll only tells when to send the next.
 */
async function runSingles(service: Service, pool: Pool, auth: { slug: string; key: string; from: string }, n: number) {
  const headers = { authorization: `Bearer ${auth.key}`, 'x-instance-slug': auth.slug, 'content-type': 'application/json' };
  const accept: number[] = [];
  const delivered: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await fetch(`${service.url}/v1/mails/send`, { method: 'POST', headers, body: JSON.stringify({ from: auth.from, to: [recipient(MAILS + i)], subject: SUBJECT, html: HTML }) });
    const body = (await res.json()) as { mails?: Array<{ mail_id: string }> };
    accept.push(performance.now() - started);
    const mailId = body.mails?.[0]?.mail_id;
    if (res.status !== 202 || !mailId) throw new Error(`single send answered ${res.status}`);
    for (const until = Date.now() + 30_000; ; ) {
      const { rows } = await pool.query<{ delay: number | null }>('SELECT delay FROM mails WHERE mail_id = $1 AND status = 3', [mailId]);
      if (rows[0]?.delay != null) {
        delivered.push(rows[0].delay * 1000);
        break;
      }
      if (Date.now() > until) throw new Error(`single mail ${mailId} not sent within 30 s`);
      await sleep(20);
    }
  }
  return { mails: n, accept_ms: latencyStats(accept, [50]), accept_to_delivered_ms: latencyStats(delivered, [50]) };
}

// ---------------------------------------------------------------- phase 3: the bare loop

async function runBaseline(service: Service, smtpUrl: string, secret: string, raw = false, dkim?: { domainName: string; keySelector: string; privateKey: string }) {
  const url = new URL(smtpUrl);
  const mailbox = join(service.dataDir, 'mailbox');
  // The same messages the worker sends: renderMail (merge tags, tracked links, pixel, text part,
  // List-Unsubscribe) with the service's secret and PUBLIC_URL, rendered before the clock starts.
  const r0 = performance.now();
  const messages: RenderedMail[] = [];
  for (let i = 0; i < MAILS; i++) {
    const to = recipient(i);
    messages.push(
      // The worker's input for a plain tracked HTML mail, as the renderer's tests build it.
      renderMail(renderInput({
        mailId: newId(),
        senderDomain: DOMAIN,
        publicUrl: `http://localhost:${service.port}`,
        secret,
        // The worker tags with the service's key; any key costs the bare loop the same.
        reportKey: { version: 1, secret },
        from: { email: `${SENDER_LOCAL}@${DOMAIN}`, name: SENDER_NAME },
        to: { email: to.email, name: to.name, variables: to.variables },
        subject: renderText(SUBJECT, recipientVariables({}, to)),
        html: HTML,
      })),
    );
  }
  const toOptions = (m: RenderedMail) => ({
    envelope: m.envelope,
    messageId: m.messageId,
    from: m.from,
    to: m.to,
    subject: m.subject,
    ...(m.html !== undefined ? { html: m.html } : {}),
    ...(m.text !== undefined ? { text: m.text } : {}),
    headers: m.headers,
    attachments: m.attachments,
  });
  const renderS = (performance.now() - r0) / 1000;
  // raw: the MIME message built into one Buffer before the clock starts.
  const b0 = performance.now();
  const raws: Buffer[] = [];
  if (raw) for (const m of messages) raws.push(await new MailComposer(toOptions(m)).compile().build());
  const buildS = (performance.now() - b0) / 1000;
  const transport = nodemailer.createTransport({
    pool: true,
    host: url.hostname,
    port: Number(url.port),
    ignoreTLS: true,
    // npm start's simulator takes mail only after AUTH, as the worker's transport does it (SMTP_URL).
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    maxConnections: SMTP_MAX_CONNECTIONS,
    maxMessages: SMTP_MAX_MESSAGES,
    ...(dkim ? { dkim } : {}),
  });
  const emlBefore = countEml(mailbox);
  await sleep(1_000);
  const cpu0 = cpuSnapshot(service);
  const t0 = performance.now();
  let next = 0;
  let accepted = 0;
  const errors: string[] = [];
  const lane = async () => {
    for (let i = next++; i < MAILS; i = next++) {
      const m = messages[i]!;
      try {
        const info = await transport.sendMail(raw ? { envelope: m.envelope, raw: raws[i]! } : toOptions(m));
        if (info.accepted.length === 1) accepted++;
        else errors.push(`rejected: ${JSON.stringify(info.rejected)}`);
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: BASELINE_INFLIGHT }, lane));
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuSnapshot(service);
  transport.close();
  const eml = countEml(mailbox) - emlBefore;
  return {
    message: (raw ? 'pre-built Buffer (raw)' : 'sendMail fields, composed by nodemailer (as the worker does)') + (dkim ? ", DKIM-signed by nodemailer's dkim option" : ', unsigned'),
    transport: { pool: true, maxConnections: SMTP_MAX_CONNECTIONS, maxMessages: SMTP_MAX_MESSAGES, ignoreTLS: true, in_flight: BASELINE_INFLIGHT },
    /** renderMail for every message, before the clock (wall time, not measured). */
    prerender_seconds: round(renderS, 2),
    ...(raw ? { prebuild_raw_seconds: round(buildS, 2) } : {}),
    seconds: round(seconds, 2),
    mails_per_s: round(MAILS / seconds),
    accepted,
    errors: errors.length,
    first_errors: errors.slice(0, 3),
    eml_files_written: eml,
    cpu: cpuBetween(cpu0, cpu1),
  };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  assertBuilt();
  let loadBefore = await machineLoad(3_000);
  // BENCH_WAIT_IDLE=SECONDS: on a shared machine, wait (up to that long) for other work to stop.
  const waitIdle = intEnv('BENCH_WAIT_IDLE', 0);
  for (const until = Date.now() + waitIdle * 1000; loadBefore > 0.3 && Date.now() < until; ) {
    log(`machine busy (${loadBefore} cores); waiting for it to be idle`);
    loadBefore = await machineLoad(5_000);
  }
  if (loadBefore > 0.2) log(`warning: the machine is already busy (${loadBefore} of ${cpus().length} cores) before the benchmark; figures will be low`);
  let service = await startService({ prefix: 'cartero-bench-send-', nodeOptions: benchPreloads({ cpuProfile: !!CPU_PROF_DIR, countQueries: COUNT_QUERIES }) });
  if (PG_STATS) {
    const url = readServices(service.dataDir).postgres?.url;
    if (!url) throw new Error('no embedded Postgres recorded');
    const admin = createPool(url, { max: 1, application: 'cartero-bench' });
    await enablePgStatStatements(admin);
    await admin.end();
    await stopService(service);
    service = await startService({ dataDir: service.dataDir, prefix: 'cartero-bench-send-', nodeOptions: benchPreloads({ cpuProfile: !!CPU_PROF_DIR, countQueries: COUNT_QUERIES }) });
    const again = createPool(readServices(service.dataDir).postgres!.url, { max: 1, application: 'cartero-bench' });
    await again.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await again.end();
    log('restarted with pg_stat_statements preloaded');
  }
  let pool: Pool | undefined;
  let stopped: Stopped | undefined;
  try {
    const services = readServices(service.dataDir);
    if (!services.postgres?.url || !services.smtp?.url) throw new Error(`no embedded Postgres or simulator in ${service.dataDir}/services.json`);
    pool = createPool(services.postgres.url, { max: 2, application: 'cartero-bench' });
    const auth = await seed(pool, service.dataDir);
    log(`seeded instance "${auth.slug}", sender ${auth.from}; worker pid ${service.workerPid}, SEND_BATCH_SIZE ${WORKER_BATCH}, SEND_CONCURRENCY ${WORKER_LOOPS}`);

    const cartero = await runCartero(service, pool, auth);
    log(
      `cartero: accept p50 ${cartero.accept.latency_ms.p50} ms p99 ${cartero.accept.latency_ms.p99} ms, ${cartero.accept.mails_per_s} mails/s accepted; ` +
        `end to end ${cartero.end_to_end.mails_per_s} mails/s (${cartero.end_to_end.seconds} s), worker RSS max ${cartero.worker_rss_mib.max_sampled} MiB, ` +
        `${cartero.end_to_end.eml_files_written} .eml`,
    );
    const singles = SINGLES ? await runSingles(service, pool, auth, SINGLES) : undefined;
    if (singles) log(`single mails, one at a time: accept p50 ${singles.accept_ms.p50} ms, accept to delivered p50 ${singles.accept_to_delivered_ms.p50} ms (max ${singles.accept_to_delivered_ms.max})`);
    const signed = firstMailSigned(join(service.dataDir, 'mailbox'));
    if (signed !== DKIM) throw new Error(`BENCH_DKIM=${DKIM ? 'on' : 'off'} but the first stored mail is ${signed ? '' : 'not '}DKIM-signed`);
    const loadBetween = await machineLoad(3_000);

    let baseline: Awaited<ReturnType<typeof runBaseline>> | undefined;
    if (BASELINE) {
      const secret = (await pool.query<{ value: string }>(`SELECT value FROM service_secrets WHERE name = 'tracking'`)).rows[0]?.value ?? 'x';
      baseline = await runBaseline(service, services.smtp.url, secret);
      log(`bare nodemailer loop: ${baseline.mails_per_s} mails/s (${baseline.seconds} s), ${baseline.eml_files_written} .eml, ${baseline.errors} errors`);
    }
    let baselineSigned: Awaited<ReturnType<typeof runBaseline>> | undefined;
    if (BASELINE && BASELINE_SIGNED && DKIM) {
      const secret = (await pool.query<{ value: string }>(`SELECT value FROM service_secrets WHERE name = 'tracking'`)).rows[0]?.value ?? 'x';
      // Any RSA-2048 key signs at the same cost; the bare loop's own, not the service's sealed one.
      const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      baselineSigned = await runBaseline(service, services.smtp.url, secret, false, { domainName: DOMAIN, keySelector: 'bench', privateKey });
      log(`bare nodemailer loop, DKIM-signed: ${baselineSigned.mails_per_s} mails/s (${baselineSigned.seconds} s), ${baselineSigned.eml_files_written} .eml, ${baselineSigned.errors} errors`);
    }
    let baselineRaw: Awaited<ReturnType<typeof runBaseline>> | undefined;
    if (BASELINE_RAW) {
      const secret = (await pool.query<{ value: string }>(`SELECT value FROM service_secrets WHERE name = 'tracking'`)).rows[0]?.value ?? 'x';
      baselineRaw = await runBaseline(service, services.smtp.url, secret, true);
      log(`bare loop, pre-built raw messages: ${baselineRaw.mails_per_s} mails/s (${baselineRaw.seconds} s), ${baselineRaw.errors} errors`);
    }
    const loadAfter = await machineLoad(3_000);

    await pool.end();
    pool = undefined;
    stopped = await stopService(service);

    const ratio = baseline ? round(cartero.end_to_end.mails_per_s / baseline.mails_per_s, 3) : null;
    const summary = {
      benchmark: 'sending: POST /v1/mails/send -> worker -> mailbox simulator (issue 3)',
      date: new Date().toISOString(),
      machine: machineInfo('the HTTP client and the bare loop run in this process, on the same cores as the service, Postgres and the simulator'),
      setup: {
        command: 'npx tsc -p tsconfig.json && node dist/bench/send.js',
        service: 'node dist/runtime/start.js (embedded Postgres, ClickHouse, mailbox simulator; fresh DATA_DIR; LOG_LEVEL=warn)',
        mails: MAILS,
        recipients_per_request: BATCH,
        request_streams: STREAMS,
        poll_ms: POLL_MS,
        send_batch_size: WORKER_BATCH,
        send_concurrency: WORKER_LOOPS,
        html_bytes: Buffer.byteLength(HTML),
        tracking: 'opens and clicks on (pixel + 2 tracked links), List-Unsubscribe',
        cpu_profile_dir: CPU_PROF_DIR ?? null,
        count_queries: COUNT_QUERIES,
        pg_stat_statements: PG_STATS,
        dkim_signing: DKIM,
      },
      machine_busy_cores: { before_start: loadBefore, between_phases: loadBetween, after_baseline: loadAfter },
      target_mails_per_s: TARGET_MAILS_PER_S,
      meets_target: cartero.end_to_end.mails_per_s >= TARGET_MAILS_PER_S,
      cartero,
      ...(singles ? { single_mails: singles } : {}),
      baseline,
      ...(baselineRaw ? { baseline_raw: baselineRaw } : {}),
      ratio_cartero_e2e_to_bare_loop: ratio,
      ...(baselineSigned ? { baseline_signed: baselineSigned, ratio_cartero_e2e_to_signed_bare_loop: round(cartero.end_to_end.mails_per_s / baselineSigned.mails_per_s, 3) } : {}),
      stop: stopped,
    };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    const ok =
      cartero.end_to_end.all_sent &&
      cartero.end_to_end.eml_files_written === MAILS &&
      (!baseline || (baseline.errors === 0 && baseline.eml_files_written === MAILS)) &&
      (!baselineSigned || (baselineSigned.errors === 0 && baselineSigned.eml_files_written === MAILS)) &&
      (!baselineRaw || (baselineRaw.errors === 0 && baselineRaw.eml_files_written === MAILS));
    if (!ok) {
      log('some mails were not sent or not stored: see the summary');
      process.exitCode = 1;
    }
    checkStopped(service, stopped);
  } finally {
    await cleanUp(service, stopped, [() => pool?.end()]);
  }
}

runBench(main);
