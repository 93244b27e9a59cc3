/**
 * Benchmark (issue 16): webhook deliveries. The service started as a user starts it
 * (`node dist/runtime/start.js`: embedded Postgres, ClickHouse and mailbox simulator), 10 webhooks
 * subscribed to every event type, all pointing at a receiver in this process on loopback, and
 * 10,000 mails sent through POST /v1/mails/send (each makes mail.received, mail.queued and
 * mail.sent: 30,000 events, 300,000 deliveries). Reports deliveries/s at the receiver and the
 * latency from the state change (the event's timestamp, the time of its outbox row) to its first
 * arrival at the receiver, p50/p99, with the machine's load.
 *
 *   npx tsc -p tsconfig.json && npm run bench:webhooks
 *
 * Environment (all optional):
 *   BENCH_MAILS     mails to send (default 10000)
 *   BENCH_WEBHOOKS  webhooks (default 10)
 *   BENCH_TIMEOUT   seconds to wait for every delivery (default 600); past it, the figures of what
 *                   arrived are reported with complete: false
 *   BENCH_VERIFY=1  verify every delivery with standardwebhooks in the receiver (costs its CPU)
 *   BENCH_RATE      mails per second, sent in batches of 10 at that pace (default: as fast as the
 *                   API accepts them, 100 per call): below the delivery capacity, the latency is the
 *                   pipeline's own, not the backlog's
 *   BENCH_SILENT    that many more webhooks, subscribed to everything too, whose receiver never
 *                   answers (each attempt ends at WEBHOOK_TIMEOUT_SECONDS): the figures are those of
 *                   the answering webhooks, which the silent ones must not slow down (default 0).
 *                   Past 20 webhooks in all, WEBHOOK_MAX_PER_INSTANCE is raised to fit them
 *   BENCH_KEEP_DATA=1 keep the temp DATA_DIR
 *
 * The receiver and the load generator share the machine's two cores with the service.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createSender } from '../domain/senders/senders.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { checkStopped, cleanUp, loadBeforeStart, machineInfo, runBench, servicePool, startService, stopService, type Stopped } from './service.js';
import { benchTenant, verifiedDomain } from './fixtures.js';
import { cpuSeconds, loadavg, percentile, postgresCpuSeconds, round, sleep } from './proc.js';

const intEnv = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return process.env[name] && Number.isInteger(v) && v > 0 ? v : fallback;
};
const MAILS = intEnv('BENCH_MAILS', 10_000);
const HOOKS = intEnv('BENCH_WEBHOOKS', 10);
const TIMEOUT_S = intEnv('BENCH_TIMEOUT', 600);
const VERIFY = process.env.BENCH_VERIFY === '1';
const RATE = intEnv('BENCH_RATE', 0);
const SILENT = intEnv('BENCH_SILENT', 0);
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

runBench(async () => {
  const loadBefore = await loadBeforeStart();
  const loadavgBefore = loadavg();
  // The receiver: first arrival of each (webhook, event), its latency from the event's time.
  const firstSeen = new Set<string>();
  const latencies: number[] = [];
  let arrivals = 0;
  let firstAt = 0;
  let lastAt = 0;
  let badSignatures = 0;
  const secrets = new Map<string, string>();
  // Requests to the silent webhooks: held unanswered until the end.
  const silent = new Set<ServerResponse>();
  let silentRequests = 0;
  const receiver = createServer((req, res) => {
    if (req.url!.startsWith('/silent')) {
      silentRequests++;
      silent.add(res);
      res.on('close', () => silent.delete(res));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      arrivals++;
      if (!firstAt) firstAt = now;
      lastAt = now;
      const key = `${req.url} ${req.headers['webhook-id']}`;
      if (VERIFY) {
        try {
          new Webhook(secrets.get(req.url!)!).verify(body, req.headers as Record<string, string>);
        } catch {
          badSignatures++;
        }
      }
      if (!firstSeen.has(key)) {
        firstSeen.add(key);
        latencies.push(now - Date.parse(JSON.parse(body).timestamp));
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  // The receiver is on loopback: private receivers are allowed explicitly (npm start does not).
  // One instance holds every webhook: past the default WEBHOOK_MAX_PER_INSTANCE (20), the service
  // is given room for them.
  const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: 'true' };
  if (HOOKS + SILENT > 20) env.WEBHOOK_MAX_PER_INSTANCE = process.env.WEBHOOK_MAX_PER_INSTANCE ?? String(HOOKS + SILENT);
  const service = await startService({ prefix: 'cartero-bench-webhooks-', env });
  const pool = servicePool(service, 4);
  let stopped: Stopped | undefined;
  try {
    const slug = 'bench-webhooks';
    const tenant = await benchTenant(pool, slug, 'Webhooks benchmark');
    const key = await createApiKey(pool, { instanceSlug: slug, scopes: ['mail:send', 'webhooks:write'] });
    await verifiedDomain(tenant, pool, 'bench-webhooks.example');
    const sender = await createSender(tenant, pool, { email: 'news@bench-webhooks.example', name: 'News' });
    const headers = { authorization: `Bearer ${key.key}`, 'x-instance-slug': slug, 'content-type': 'application/json' };
    for (let i = 0; i < HOOKS; i++) {
      const r = await fetch(`${service.url}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ name: `hook ${i}`, url: `${receiverUrl}/h${i}`, events: null }) });
      if (r.status !== 201) throw new Error(`webhook create: ${r.status} ${await r.text()}`);
      secrets.set(`/h${i}`, ((await r.json()) as { secret: string }).secret);
    }
    for (let i = 0; i < SILENT; i++) {
      const r = await fetch(`${service.url}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ name: `silent ${i}`, url: `${receiverUrl}/silent${i}`, events: null }) });
      if (r.status !== 201) throw new Error(`webhook create: ${r.status} ${await r.text()}`);
    }
    const expected = MAILS * 3 * HOOKS;
    log(`sending ${MAILS} mails to ${HOOKS} webhooks: ${expected} deliveries expected`);
    const started = Date.now();
    const cpu0 = { worker: cpuSeconds(service.workerPid), web: cpuSeconds(service.webPid), postgres: postgresCpuSeconds(service.postgresPid), self: process.cpuUsage() };
    const BATCH = RATE ? 10 : 100;
    const bodies: string[] = [];
    for (let i = 0; i < MAILS; i += BATCH) {
      const to = Array.from({ length: Math.min(BATCH, MAILS - i) }, (_, j) => ({ email: `r${i + j}@example.org` }));
      bodies.push(JSON.stringify({ from: sender.email_address, to, subject: 'Webhooks bench', text: 'Hello' }));
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < bodies.length) {
          const i = next++;
          // Paced: call i leaves at its slot, whatever the answer time of the others.
          if (RATE) await sleep(Math.max(0, started + (i * BATCH * 1000) / RATE - Date.now()));
          const r = await fetch(`${service.url}/v1/mails/send`, { method: 'POST', headers, body: bodies[i]! });
          if (r.status !== 202) throw new Error(`send: ${r.status} ${await r.text()}`);
        }
      }),
    );
    const acceptedS = (Date.now() - started) / 1000;
    log(`accepted in ${acceptedS.toFixed(1)} s`);
    const deadline = started + TIMEOUT_S * 1000;
    let lastLog = 0;
    while (firstSeen.size < expected && Date.now() < deadline) {
      await sleep(500);
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        log(`${firstSeen.size}/${expected} delivered, load ${loadavg()}`);
      }
    }
    const complete = firstSeen.size >= expected;
    // CPU of each part over the run, per delivery (sending the mails included: the same run).
    const perDelivery = (sec: number) => round((sec * 1000) / Math.max(1, firstSeen.size), 2);
    const selfCpu = process.cpuUsage(cpu0.self);
    const cpu_ms_per_delivery = {
      worker: perDelivery(cpuSeconds(service.workerPid) - cpu0.worker),
      web: perDelivery(cpuSeconds(service.webPid) - cpu0.web),
      postgres: perDelivery(postgresCpuSeconds(service.postgresPid) - cpu0.postgres),
      receiver_and_load: perDelivery((selfCpu.user + selfCpu.system) / 1e6),
    };
    const sorted = [...latencies].sort((x, y) => x - y);
    const seconds = (lastAt - firstAt) / 1000;
    const report = {
      benchmark: 'webhooks: 10 webhooks x every event of N mails sent through the simulator (issue 16)',
      machine: machineInfo('service (web, worker, Postgres, ClickHouse, simulator), receiver and load generator on the same cores'),
      mails: MAILS,
      mails_per_second_sent: RATE || 'unpaced',
      webhooks: HOOKS,
      ...(SILENT ? { silent_webhooks: SILENT, silent_requests_held: silentRequests } : {}),
      expected_deliveries: expected,
      delivered: firstSeen.size,
      arrivals,
      complete,
      accept_seconds: round(acceptedS, 1),
      delivery_seconds: round(seconds, 1),
      deliveries_per_second: round(firstSeen.size / seconds, 0),
      latency_ms: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) },
      cpu_ms_per_delivery,
      ...(VERIFY ? { bad_signatures: badSignatures } : {}),
      load_before: { busy_cores: loadBefore, loadavg: loadavgBefore },
      loadavg_after: loadavg(),
    };
    console.log(JSON.stringify(report, null, 2));
    stopped = await stopService(service);
    checkStopped(service, stopped);
  } finally {
    for (const res of silent) res.destroy();
    await cleanUp(service, stopped, [() => pool.end(), () => new Promise((r) => receiver.close(r))]);
    receiver.closeAllConnections();
  }
});
