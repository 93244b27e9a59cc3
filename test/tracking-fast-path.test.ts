// The tracking fast path (api/tracking/fast-path.ts) is a second implementation of the open and
// click answers of api/routes/tracking.ts: both must answer byte for byte the same, and record
// the same hit. One Express app and its fast path, each on its own server (the fast one refuses
// anything it would hand to Express, so every compared answer is really its own), get the same
// requests; status, every header in order (Date aside: it is the clock's) and body must match.
import { createServer, request, type Server } from 'node:http';
import t from 'tap';
import { inProcess } from '../domain/templates/render-pool.js';
import { createClickHouseClient } from '../analytics/client.js';
import { createApp } from '../api/app.js';
import { createHttpMetrics } from '../api/http/metrics.js';
import type { AppDeps } from '../api/http/route.js';
import { trackingFastPath } from '../api/tracking/fast-path.js';
import { acceptSend } from '../domain/mail/accept.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { clickToken, openToken, signToken } from '../domain/tracking/tokens.js';
import { loadConfig } from '../config/config.js';
import { createLogger } from '../runtime/logger.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';

const dbs = await testDatabases(t, 'fastpath');
const a = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, a.tenant, { domain: 'fast.example', senders: [{ email: 'news', name: 'News' }] });
const queue = jobQueue(dbs.databaseUrl);
const sent = await acceptSend(a.tenant, dbs.pool, queue, { from: 'news@fast.example', to: [{ email: 'r@example.org' }], subject: 's', text: 't' });
const mailId = sent.mails[0]!.mail_id;
const secret = await trackingSecret(dbs.pool);

const clickhouse = createClickHouseClient(dbs.clickhouseUrl);
t.teardown(() => clickhouse.close());
const config = loadConfig({ PORT: '0', DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl });
const deps: AppDeps = { pool: dbs.pool, bulkPool: dbs.pool, clickhouse, clickhouseExports: clickhouse, config, logger: createLogger('silent', 'web'), queue, templates: inProcess };
const metrics = createHttpMetrics();
const app = createApp(deps, [], metrics);
const fast = trackingFastPath(app, deps, metrics);
let declined = 0;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}
const viaExpress = await listen(createServer(app));
const viaFastPath = await listen(
  createServer((req, res) => {
    if (fast(req, res)) return;
    declined++;
    res.writeHead(599).end();
  }),
);

interface Answer {
  status: number;
  /** Every header as sent, in order, but Date. */
  headers: string[];
  body: Buffer;
}

function call(base: string, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i]!.toLowerCase() !== 'date') raw.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        }
        resolve({ status: res.statusCode!, headers: raw, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const pixel = `/t/o/${openToken(secret, mailId)}`;
// A URL Express's encodeurl changes (the space), with a query string.
const click = `/t/c/${clickToken(secret, mailId, 'https://shop.example/a b?x=1&y=<2>')}`;
const invalidPixel = `/t/o/${signToken('not-the-secret', { kind: 'open', mail_id: mailId })}`;
const invalidClick = `/t/c/${signToken('not-the-secret', { kind: 'click', mail_id: mailId, url: 'https://evil.example/' })}`;

const cases: Array<[string, string, string, Record<string, string>]> = [
  ['valid pixel, GET', 'GET', pixel, {}],
  ['valid pixel, HEAD', 'HEAD', pixel, {}],
  ['valid pixel, GET with a query string', 'GET', `${pixel}?utm=x`, {}],
  ['invalid pixel token, GET', 'GET', invalidPixel, {}],
  ['invalid pixel token, HEAD', 'HEAD', invalidPixel, {}],
  ['valid click, GET, no Accept', 'GET', click, {}],
  ['valid click, HEAD, no Accept', 'HEAD', click, {}],
  ['valid click, GET, Accept text/html', 'GET', click, { accept: 'text/html' }],
  ['valid click, HEAD, Accept text/html', 'HEAD', click, { accept: 'text/html' }],
  ['valid click, GET, a browser Accept', 'GET', click, { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }],
  ['valid click, GET, Accept */*', 'GET', click, { accept: '*/*' }],
  ['valid click, GET, Accept application/json (no body)', 'GET', click, { accept: 'application/json' }],
  // The fast path passes these to the Express app itself, after reading the token.
  ['invalid click token, GET', 'GET', invalidClick, {}],
  ['invalid click token, GET, Accept text/html', 'GET', invalidClick, { accept: 'text/html' }],
];

t.test('the fast path answers opens and clicks byte for byte as the Express routes do', async (t) => {
  for (const [label, method, path, headers] of cases) {
    // The same X-Request-Id both ways: a plain incoming one is kept, so it must come back as sent.
    const ask = (base: string, via: string) => call(base, method, path, { 'x-request-id': 'fastpath-equivalence-1', 'user-agent': `equivalence/${via}`, ...headers });
    const expected = await ask(viaExpress, 'express');
    const actual = await ask(viaFastPath, 'fast');
    t.test(label, async (t) => {
      t.not(actual.status, 599, 'the fast path took it');
      t.equal(actual.status, expected.status, `status ${expected.status}`);
      t.strictSame(actual.headers, expected.headers, 'the same headers, in the same order');
      t.ok(actual.body.equals(expected.body), `the same ${expected.body.length}-byte body`);
      t.ok(expected.headers.includes('X-Request-Id: fastpath-equivalence-1'), 'the incoming request id kept');
    });
  }
  // What each one recorded: the same hits, but for the user agent naming the way it came.
  const { rows } = await dbs.pool.query<{ via: string; kind: string; url: string | null; machine: string | null; ip: string; n: number }>(
    `SELECT user_agent AS via, kind, url, machine, host(ip) AS ip, count(*)::int AS n FROM event_outbox
      WHERE mail_id = $1 GROUP BY 1, 2, 3, 4, 5 ORDER BY 2, 3, 4, 5, 1`,
    [mailId],
  );
  const of = (via: string) => rows.filter((r) => r.via === `equivalence/${via}`).map(({ via: _via, ...r }) => r);
  t.same(of('express').map((r) => r.n).reduce((s, n) => s + n, 0), 10, 'control: ten hits through Express (the invalid pixel records nothing)');
  t.strictSame(of('fast'), of('express'), 'the fast path recorded the same opens and clicks (a HEAD click flagged head_request)');
});

t.test('the fast path hands to Express what it does not answer itself', async (t) => {
  const before = declined;
  for (const [method, path, headers] of [
    ['GET', `${pixel}/`, {}],
    ['POST', pixel, {}],
    ['GET', pixel, { 'if-none-match': '*' }],
    ['GET', `/u/${openToken(secret, mailId)}`, {}],
  ] as const) {
    const answer = await call(viaFastPath, method, path, headers);
    t.equal(answer.status, 599, `${method} ${path.slice(0, 5)}... ${JSON.stringify(headers)}: left to Express`);
  }
  t.equal(declined - before, 4);
});
