/**
 * Benchmark (issue 41): mails per second accepted through the SMTP submission port (STARTTLS,
 * AUTH PLAIN with the instance slug and an API key, one message of one recipient per DATA), with
 * 1 and 10 connections, beside POST /v1/mails/send for the same mails (one recipient per request)
 * at 1 and 10 requests in flight, in the same run, against the service started the way a user
 * starts it (`node dist/runtime/start.js`: embedded Postgres, ClickHouse and simulator under a
 * fresh DATA_DIR). A mail counts when its door answered (250 / 202): then it is committed.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/submission.js      (or: npm run bench:submission)
 *
 * Environment (all optional):
 *   BENCH_MAILS         mails per phase (default 2000)
 *   BENCH_CONNECTIONS   comma-separated connection counts (default "1,10")
 *   BENCH_ROUNDS        rounds of both doors per connection count, the order swapped each round
 *                       (default 2: SMTP then API, then API then SMTP)
 *   BENCH_KEEP_DATA=1   keep the temp DATA_DIR (printed) instead of deleting it
 *
 * The load generator (nodemailer, fetch) runs in this process on the same two cores as the
 * service; the worker delivers the accepted mails to the simulator meanwhile, for both doors alike.
 */
import nodemailer from 'nodemailer';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { createSender } from '../domain/senders/senders.js';
import { readServices } from '../config/services-file.js';
import { assertBuilt, benchService, cpuSnapshot, loadBeforeStart, machineInfo, runBench, startService } from './service.js';
import { benchTenant, verifiedDomain } from './fixtures.js';
import { percentile, round } from './proc.js';

const MAILS = Number(process.env.BENCH_MAILS ?? 2_000);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,10').split(',').map(Number).filter((n) => n > 0);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TARGET_RATIO = 0.7;
const SLUG = 'bench-submission';
const DOMAIN = 'submit.bench.example.com';
const FROM = `app@${DOMAIN}`;

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// A typical application mail: a subject, a text and an html part (~3 kB).
const TEXT = `Hello,\n\n${'Your order has shipped and is on its way. '.repeat(30)}\n\nThe shop`;
const HTML = `<html><body><p>Hello,</p><p>${'Your order has shipped and is on its way. '.repeat(30)}</p><p><a href="https://shop.example/orders/1">Your order</a></p></body></html>`;
// Reserved names (RFC 2606): never looked up, never leave the machine; the simulator takes them.
const recipient = (phase: string, i: number) => `r${i}.${phase}@example.com`;

interface Phase {
  door: 'smtp' | 'api';
  connections: number;
  mails: number;
  seconds: number;
  mails_per_s: number;
  p50_ms: number;
  p99_ms: number;
  failures: number;
  first_failure?: string;
  cpu_cores: Record<string, number>;
}

/** `connections` loops, each sending its share one after another; returns each mail's latency. */
async function loops(connections: number, mails: number, one: (loop: number, i: number) => Promise<void>): Promise<{ ms: number[]; failures: string[] }> {
  const ms: number[] = [];
  const failures: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async (_, loop) => {
      for (let i = next++; i < mails; i = next++) {
        const t = performance.now();
        try {
          await one(loop, i);
          ms.push(performance.now() - t);
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    }),
  );
  return { ms, failures };
}

async function smtpPhase(port: number, key: string, connections: number, tag: string): Promise<{ ms: number[]; failures: string[] }> {
  // One pooled connection per loop: STARTTLS and AUTH once, then one message after another, as an
  // application's mailer keeps its connection. The certificate is the self-signed one `npm start`
  // made: loopback only, not verified.
  const transports = Array.from({ length: connections }, () =>
    nodemailer.createTransport({
      host: '127.0.0.1', port, secure: false, requireTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity,
      auth: { user: SLUG, pass: key }, tls: { rejectUnauthorized: false },
    }),
  );
  try {
    return await loops(connections, MAILS, async (loop, i) => {
      await transports[loop]!.sendMail({ from: FROM, to: recipient(tag, i), subject: `Order ${i} shipped`, text: TEXT, html: HTML });
    });
  } finally {
    for (const t of transports) t.close();
  }
}

async function apiPhase(url: string, key: string, connections: number, tag: string): Promise<{ ms: number[]; failures: string[] }> {
  const headers = { authorization: `Bearer ${key}`, 'x-instance-slug': SLUG, 'content-type': 'application/json' };
  return loops(connections, MAILS, async (_loop, i) => {
    const res = await fetch(`${url}/v1/mails/send`, {
      method: 'POST', headers,
      body: JSON.stringify({ from: FROM, to: [{ email: recipient(tag, i) }], subject: `Order ${i} shipped`, text: TEXT, html: HTML }),
    });
    const body = await res.text();
    if (res.status !== 202) throw new Error(`${res.status} ${body.slice(0, 200)}`);
  });
}

async function main(): Promise<void> {
  assertBuilt();
  const before = await loadBeforeStart();
  const service = await startService({ prefix: 'cartero-bench-submission-' });
  await benchService(service, 4, async (pool, stop) => {
    const tenant = await benchTenant(pool, SLUG, 'Submission benchmark');
    await verifiedDomain(tenant, pool, DOMAIN);
    await createSender(tenant, pool, { email: FROM, name: 'App' });
    const { key } = await createApiKey(pool, { instanceSlug: SLUG, scopes: ['mail:send'] });
    const port = readServices(service.dataDir).submission_smtp?.port;
    if (!port) throw new Error('services.json has no submission_smtp port');
    log(`service up; submission port ${port}; ${MAILS} mails per phase, connections ${CONNECTIONS.join(', ')}, ${ROUNDS} rounds`);

    // Warm both doors (TLS session, JIT, Postgres caches): not measured.
    await smtpPhase(port, key, 1, 'warm-smtp').then((r) => r.failures.length && log(`warm-up SMTP failures: ${r.failures[0]}`));
    await apiPhase(service.url, key, 1, 'warm-api');

    const phases: Phase[] = [];
    for (const connections of CONNECTIONS) {
      for (let round_ = 0; round_ < ROUNDS; round_++) {
        const order: Array<'smtp' | 'api'> = round_ % 2 === 0 ? ['smtp', 'api'] : ['api', 'smtp'];
        for (const door of order) {
          const tag = `${door}${connections}x${round_}`;
          const c0 = cpuSnapshot(service);
          const t = performance.now();
          const r = door === 'smtp' ? await smtpPhase(port, key, connections, tag) : await apiPhase(service.url, key, connections, tag);
          const seconds = (performance.now() - t) / 1000;
          const c1 = cpuSnapshot(service);
          const sorted = [...r.ms].sort((a, b) => a - b);
          const phase: Phase = {
            door, connections, mails: r.ms.length, seconds: round(seconds, 2), mails_per_s: round(r.ms.length / seconds, 1),
            p50_ms: round(percentile(sorted, 50), 1), p99_ms: round(percentile(sorted, 99), 1), failures: r.failures.length,
            ...(r.failures.length ? { first_failure: r.failures[0] } : {}),
            cpu_cores: Object.fromEntries((['web', 'worker', 'postgres', 'clickhouse', 'supervisor', 'bench'] as const).map((k) => [k, round((c1[k] - c0[k]) / seconds, 2)])),
          };
          phases.push(phase);
          log(`${door} x${connections} (round ${round_ + 1}): ${phase.mails_per_s} mails/s, p50 ${phase.p50_ms} ms, p99 ${phase.p99_ms} ms, ${phase.failures} failed; cores ${JSON.stringify(phase.cpu_cores)}`);
        }
      }
    }

    // Every answered mail is a committed mail of its own.
    const stored = Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM mails WHERE instance_id = $1 AND to_email NOT LIKE 'r%.warm-%'`, [tenant.instanceId])).rows[0]!.n);
    const answered = phases.reduce((s, p) => s + p.mails, 0);
    const report = await stop();

    const ratios = CONNECTIONS.map((c) => {
      const rate = (door: 'smtp' | 'api') => {
        const xs = phases.filter((p) => p.door === door && p.connections === c).map((p) => p.mails_per_s).sort((a, b) => a - b);
        const mid = xs.length / 2;
        return round(xs.length % 2 ? xs[Math.floor(mid)]! : (xs[mid - 1]! + xs[mid]!) / 2, 1);
      };
      return { connections: c, smtp: rate('smtp'), api: rate('api'), ratio: round(rate('smtp') / rate('api'), 2) };
    });
    const lines = [
      '## Submission (issue 41): mails accepted per second, SMTP submission port vs POST /v1/mails/send',
      '',
      `Machine: ${JSON.stringify(machineInfo('service, databases and load generator share the cores'))}; busy cores before start ${before}.`,
      `${MAILS} mails per phase (one recipient each, ~3 kB, text + html), ${ROUNDS} rounds per connection count, the doors' order swapped each round.`,
      `Stored mails ${stored}, answered ${answered}: ${stored === answered ? 'equal' : '**differ**'}. Service stopped ${report.clean ? 'cleanly' : '**uncleanly**'}.`,
      '',
      '| door | connections | round | mails/s | p50 ms | p99 ms | failed | cores (web / worker / postgres / clickhouse / bench) |',
      '|---|---:|---:|---:|---:|---:|---:|---|',
      ...phases.map((p, i) => `| ${p.door} | ${p.connections} | ${Math.floor((i % (2 * ROUNDS)) / 2) + 1} | ${p.mails_per_s} | ${p.p50_ms} | ${p.p99_ms} | ${p.failures} | ${['web', 'worker', 'postgres', 'clickhouse', 'bench'].map((k) => p.cpu_cores[k] ?? '—').join(' / ')} |`),
      '',
      '| connections | SMTP mails/s (median) | API mails/s (median) | SMTP ÷ API | target ≥ 0.7 |',
      '|---:|---:|---:|---:|---|',
      ...ratios.map((r) => `| ${r.connections} | ${r.smtp} | ${r.api} | ${r.ratio} | ${r.ratio >= TARGET_RATIO ? 'met' : '**not met**'} |`),
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
    process.stdout.write(JSON.stringify({ phases, ratios, stored, answered }) + '\n');
  });
}

runBench(main);
