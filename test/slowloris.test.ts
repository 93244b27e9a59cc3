// The web server's limits (runtime/web.ts, WEB_* in config/config.ts): clients that send their
// headers or body slowly, or nothing at all, are cut after the configured timeouts while everyone
// else is answered; a connection cap holds; idle keep-alive connections close; and a streamed
// response longer than the request timeout is not cut. Small timeouts via configuration.
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { loadConfig } from '../config/config.js';
import { testDatabases } from './helpers/databases.js';
import { fixtureRoute, fixtureRoutes } from './helpers/fixture-routes.js';
import { makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';
import { sleep } from './helpers/wait.js';

const CHUNKS = 10;
const CHUNK_EVERY_MS = 300;
// A response streamed for about 3 s (an export's shape): longer than a request timeout of 1 s.
const slowStream = fixtureRoute({
  method: 'get',
  path: '/v1/test-fixtures/slow-stream',
  operationId: 'testSlowStream',
  summary: 'test fixture',
  answers: 'chunks',
  handler: async (_ctx, res) => {
    res.status(200).type('text/plain');
    for (let i = 0; i < CHUNKS; i++) {
      res.write(`chunk ${i}\n`);
      await sleep(CHUNK_EVERY_MS);
    }
    res.end();
    return undefined;
  },
});

const dbs = await testDatabases(t, 'slowloris');
const a = await makeTenant(dbs.pool);

interface Stalled {
  kind: string;
  openedAt: number;
  /** Resolves with the connection's lifetime (ms) and what the server sent, when it closes. */
  closed: Promise<{ ms: number; reply: string }>;
  /** What the server sent so far. */
  reply(): string;
  socket: Socket;
}

/**
 * A client that connects and then: sends nothing ('silent'), dribbles header lines and never
 * ends them ('headers'), or sends complete headers and dribbles a body it never finishes ('body').
 */
function stalled(port: number, kind: 'silent' | 'headers' | 'body'): Stalled {
  const socket = connect(port, '127.0.0.1');
  const openedAt = Date.now();
  let reply = '';
  socket.on('data', (d) => (reply += d.toString('latin1')));
  socket.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  const closed = new Promise<{ ms: number; reply: string }>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      resolve({ ms: Date.now() - openedAt, reply });
    }),
  );
  socket.once('connect', () => {
    if (kind === 'headers') {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      let n = 0;
      timer = setInterval(() => socket.write(`X-Slow-${n++}: y\r\n`), 200);
    } else if (kind === 'body') {
      const headers = Object.entries(a.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`POST /v1/test-fixtures/echo HTTP/1.1\r\nHost: x\r\n${headers}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      timer = setInterval(() => socket.write(' '), 200);
    }
  });
  return { kind, openedAt, closed, reply: () => reply, socket };
}

const portOf = (url: string) => Number(new URL(url).port);

t.test('slow and silent clients are cut after the timeouts; others are answered meanwhile', async (t) => {
  const HEADERS_MS = 5_000;
  const REQUEST_MS = 8_000;
  const web = await startTestWeb(t, dbs, {
    extraRoutes: fixtureRoutes,
    env: { WEB_HEADERS_TIMEOUT_MS: String(HEADERS_MS), WEB_REQUEST_TIMEOUT_MS: String(REQUEST_MS), WEB_MAX_CONNECTIONS: '500' },
  });
  const port = portOf(web.url);
  const clients = [
    ...Array.from({ length: 60 }, () => stalled(port, 'headers')),
    ...Array.from({ length: 30 }, () => stalled(port, 'body')),
    ...Array.from({ length: 30 }, () => stalled(port, 'silent')),
  ];
  t.teardown(() => clients.forEach((c) => c.socket.destroy()));
  let firstCut = Infinity;
  for (const c of clients) void c.closed.then(() => (firstCut = Math.min(firstCut, Date.now())));
  await sleep(500); // every stalled client has started

  // 120 stalled connections open: other clients are answered, all before any stalled one is cut.
  const answered = await Promise.all([
    ...Array.from({ length: 20 }, () => fetch(`${web.url}/healthz`).then(async (r) => ({ status: r.status, at: Date.now(), body: await r.text() }))),
    ...Array.from({ length: 5 }, () => fetch(`${web.url}/v1/senders`, { headers: a.headers }).then(async (r) => ({ status: r.status, at: Date.now(), body: await r.text() }))),
  ]);
  t.same(answered.map((r) => r.status), Array(25).fill(200), 'every other client answered 200');
  const lastAnswer = Math.max(...answered.map((r) => r.at));
  t.ok(lastAnswer < firstCut, `answered while all stalled connections were still open (last answer ${lastAnswer - clients[0]!.openedAt} ms after they opened)`);

  // Waited for until 15 s past the longer timeout, far short of Node's defaults (60 s for
  // headers, 300 s for a request); a connection still open then counts as never cut.
  const deadline = sleep(REQUEST_MS + 15_000).then(() => ({ ms: Infinity, reply: '' }));
  const ended = await Promise.all(clients.map((c) => Promise.race([c.closed, deadline])));
  for (const kind of ['headers', 'silent', 'body'] as const) {
    const limit = kind === 'body' ? REQUEST_MS : HEADERS_MS;
    const lifetimes = ended.filter((_, i) => clients[i]!.kind === kind).map((e) => e.ms);
    // Node checks the timeouts on a timer (a quarter of the headers timeout here): cut between
    // the timeout and well before Node's defaults (60 s for headers, 300 s for a request).
    t.ok(Math.min(...lifetimes) >= limit - 100, `${kind}: none cut before ${limit} ms (shortest ${Math.min(...lifetimes)} ms)`);
    t.ok(Math.max(...lifetimes) <= limit + 15_000, `${kind}: all cut by ${limit} ms + 15 s (longest ${Math.max(...lifetimes)} ms)`);
  }
  const bodies = ended.filter((_, i) => clients[i]!.kind === 'body');
  t.ok(bodies.every((e) => e.reply.startsWith('HTTP/1.1 408')), 'a stalled body is answered 408 Request Timeout');
  t.ok(
    bodies.every((e) => /content-type: application\/problem\+json/i.test(e.reply) && /"code":"request_timeout"/.test(e.reply)),
    'as a problem object (api/http/client-errors.ts), like every other error',
  );
  t.equal((await fetch(`${web.url}/healthz`)).status, 200, 'still answering afterwards');
});

t.test('the connection cap: one more is closed at once, and room comes back when stalled ones are cut', async (t) => {
  const web = await startTestWeb(t, dbs, { env: { WEB_MAX_CONNECTIONS: '20', WEB_HEADERS_TIMEOUT_MS: '2000', WEB_REQUEST_TIMEOUT_MS: '2000' } });
  const port = portOf(web.url);
  const clients = Array.from({ length: 20 }, () => stalled(port, 'silent'));
  t.teardown(() => clients.forEach((c) => c.socket.destroy()));
  await sleep(300);
  const over = stalled(port, 'headers');
  t.teardown(() => over.socket.destroy());
  const refused = await Promise.race([over.closed, sleep(5_000).then(() => ({ ms: Infinity, reply: over.reply() }))]);
  t.equal(refused.reply, '', 'the 21st connection is closed without an answer');
  t.ok(refused.ms < 2_000, `and at once, not by the headers timeout (${refused.ms} ms)`);
  await Promise.race([Promise.all(clients.map((c) => c.closed)), sleep(15_000)]);
  t.equal((await fetch(`${web.url}/healthz`)).status, 200, 'answered once the stalled connections were cut');
});

t.test('an idle keep-alive connection is closed after WEB_KEEPALIVE_TIMEOUT_MS', async (t) => {
  const web = await startTestWeb(t, dbs, { env: { WEB_KEEPALIVE_TIMEOUT_MS: '1000' } });
  const client = stalled(portOf(web.url), 'silent');
  t.teardown(() => client.socket.destroy());
  client.socket.once('connect', () => client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'));
  const { ms, reply } = await Promise.race([client.closed, sleep(15_000).then(() => ({ ms: Infinity, reply: client.reply() }))]);
  t.match(reply, /^HTTP\/1\.1 200 /, 'the request was answered');
  t.match(reply, /Keep-Alive: timeout=1/i, 'the client is told the timeout');
  t.ok(ms >= 1_000 && ms <= 11_000, `closed after the keep-alive timeout, not the default 65 s (${ms} ms)`);
});

t.test('a streamed response longer than the request timeout is not cut', async (t) => {
  const web = await startTestWeb(t, dbs, {
    extraRoutes: [slowStream],
    env: { WEB_HEADERS_TIMEOUT_MS: '500', WEB_REQUEST_TIMEOUT_MS: '1000' },
  });
  const started = Date.now();
  const r = await fetch(`${web.url}/v1/test-fixtures/slow-stream`, { headers: a.headers });
  const body = await r.text();
  t.equal(r.status, 200);
  t.equal(body.split('\n').filter(Boolean).length, CHUNKS, `all ${CHUNKS} chunks arrived (${Date.now() - started} ms, request timeout 1000 ms)`);
});

t.test('config: limits and their defaults', async (t) => {
  t.same(loadConfig({}).webLimits, { headersTimeoutMs: 20_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 65_000, maxConnections: 1_000 });
  t.throws(() => loadConfig({ WEB_HEADERS_TIMEOUT_MS: '70000' }), { message: /WEB_HEADERS_TIMEOUT_MS \(70000\) must not exceed WEB_REQUEST_TIMEOUT_MS/ });
  t.throws(() => loadConfig({ WEB_MAX_CONNECTIONS: '0' }), { message: /WEB_MAX_CONNECTIONS must be a whole number/ });
});
