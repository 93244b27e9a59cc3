import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { lookup } from 'node:dns/promises';
import t from 'tap';
import { AnswerExcerpt, cleanText } from '../domain/webhooks/answer-excerpt.js';
import { isGlobalUnicast } from '../domain/webhooks/global-unicast.js';
import { postEvent } from '../domain/webhooks/post.js';
import { receiverLookup, receiverPolicy, refusedReceiver } from '../domain/webhooks/receiver-address.js';
import { loadConfig } from '../config/config.js';

/**
 * Which receivers a webhook may reach (domain/webhooks/receiver-address.ts, global-unicast.ts,
 * own-listeners.ts) and what is kept of an answer (answer-excerpt.ts): pure functions, plus a
 * real listener on loopback standing in for the embedded ClickHouse. The HTTP-level checks
 * (422 url_not_public, delivery through the worker) are in test/webhooks.test.ts.
 */

// Refused with the guard on: loopback, private, link-local, CGNAT, multicast, documentation,
// reserved; every IPv6 form that carries such an IPv4; every IPv6 range that is not global unicast.
const REFUSED = [
  '0.0.0.0', '0.1.2.3', '10.0.0.1', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.255.255.254', '169.254.169.254',
  '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.0.2.1', '192.88.99.1', '192.168.1.1', '198.18.0.1', '198.51.100.7',
  '203.0.113.9', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
  '::', '::1',
  // IPv4-compatible (::/96)
  '::7f00:1', '::127.0.0.1', '::a00:1', '::a9fe:a9fe',
  // IPv4-mapped (::ffff:0:0/96)
  '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254',
  // IPv4-translated (::ffff:0:0:0/96)
  '::ffff:0:7f00:1', '::ffff:0:a00:1', '::ffff:0:c0a8:101',
  // NAT64: the well-known prefix carrying a non-public IPv4; the local-use prefix, whatever it carries
  '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::a00:1', '64:ff9b:1::1', '64:ff9b:1::808:808', '64:ff9b:1:ffff::1',
  // 6to4 carrying a non-public IPv4
  '2002::', '2002::1', '2002:7f00:1::', '2002:7f00:0001::1', '2002:a00:1::1', '2002:c0a8:101::1', '2002:a9fe:a9fe::',
  // Teredo, documentation, benchmarking, ORCHID, AMT, the 3fff::/20 documentation block
  '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:db8::1', '2001:2::1', '2001:3::1', '2001:10::1', '2001:20::1', '3fff::1',
  // unique local, link-local, site-local, multicast, discard, outside 2000::/3
  'fc00::1', 'fd12:3456::1', 'fe80::1', 'febf::1', 'fec0::1', 'feff::1', 'ff02::1', 'ff0e::1', '100::1', '1::1', '4000::1', '5f00::1', 'e000::1',
];
const ALLOWED = [
  '8.8.8.8', '1.1.1.1', '93.184.215.14', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '192.167.255.255', '223.255.255.254',
  '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888', '2c0f:fb50:4003::1',
  // The IPv4 inside is public, so the address is judged public (the decoding works both ways)
  '::ffff:8.8.8.8', '::ffff:0:808:808', '::808:808', '64:ff9b::808:808', '64:ff9b::1.1.1.1', '2002:808:808::', '2002:0808:0808::1',
];

t.test('only global unicast: a table of literals, both directions', async (t) => {
  for (const a of REFUSED) t.equal(isGlobalUnicast(a), false, `${a} refused`);
  for (const a of ALLOWED) t.equal(isGlobalUnicast(a), true, `${a} allowed`);
  t.equal(isGlobalUnicast('not an address'), false, 'junk is refused');
  t.equal(isGlobalUnicast('fe80::1%eth0'), false, 'a zone index: link-local');
});

const strict = receiverPolicy(loadConfig({ DATABASE_URL: 'postgres://db.internal:5432/cartero', CLICKHOUSE_URL: 'http://127.0.0.1:8123/cartero' }));

t.test('creation, guard on: every form of a refused address in a URL is refused; public ones pass', async (t) => {
  for (const a of REFUSED) {
    const host = a.includes(':') ? `[${a}]` : a;
    t.match(await refusedReceiver(new URL(`https://${host}/hook`), strict), /is not public/, `https://${host}/hook`);
  }
  // The URL parser writes these as 127.0.0.1: decimal, octal, hex, short forms.
  for (const raw of ['http://2130706433/', 'http://017700000001/', 'http://0x7f.1/', 'http://127.1/', 'http://[::ffff:7f00:1]/', 'http://[0:0:0:0:0:ffff:127.0.0.1]/']) {
    t.match(await refusedReceiver(new URL(raw), strict), /is not public/, raw);
  }
  t.match(await refusedReceiver(new URL('http://localhost:9/'), strict), /localhost resolves to .* is not public/, 'a name resolving to loopback');
  for (const a of ALLOWED) {
    const host = a.includes(':') ? `[${a}]` : a;
    t.equal(await refusedReceiver(new URL(`https://${host}/hook`), strict), undefined, `https://${host}/hook`);
  }
});

/** An address of one of this machine's interfaces that is not loopback, if any. */
const interfaceAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && !i.internal && i.family === 'IPv4')?.address;

t.test("own listeners: refused even with WEBHOOK_ALLOW_PRIVATE=true, by name, by literal and on every form of this machine's addresses", async (t) => {
  const config = loadConfig({
    PORT: '3999',
    INTERNAL_PORT: '3998',
    INBOUND_SMTP_PORT: '2526',
    DATABASE_URL: 'postgres://cartero:pw@DB.internal:5433/cartero',
    CLICKHOUSE_URL: 'http://127.0.0.1:8124/cartero',
    SMTP_URL: 'smtp://127.0.0.1:2525',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const open = receiverPolicy(config);
  t.equal(receiverPolicy(config), open, 'derived once per configuration');
  t.same([...open.own.ports].sort(), [2525, 2526, 3998, 3999, 5433, 8124], 'web, internal, inbound SMTP, Postgres, ClickHouse, SMTP relay');
  const refused = [
    'http://127.0.0.1:3999/v1/webhooks',
    'http://localhost:3998/metrics',
    'http://[::1]:2526/',
    'http://db.internal:5433/',
    'http://DB.Internal.:5433/',
    'http://127.0.0.1:8124/?query=SELECT%201',
    'http://127.1:8124/?query=SELECT%201',
    'http://2130706433:8124/',
    'http://0.0.0.0:8124/',
    'http://[::]:8124/',
    'http://[::ffff:127.0.0.1]:8124/',
    'http://[::7f00:1]:8124/',
    'http://127.0.0.1:2525/',
    'http://localhost:5433/',
    ...(interfaceAddress ? [`http://${interfaceAddress}:8124/`] : []),
  ];
  for (const raw of refused) t.match(await refusedReceiver(new URL(raw), open), /one of the service's own listeners/, raw);
  // The machine's own name resolves to one of its addresses (when it resolves at all).
  const self = await lookup(hostname()).catch(() => undefined);
  if (self) t.match(await refusedReceiver(new URL(`http://${hostname()}:8124/`), open), /own listeners/, `its host name (${self.address})`);
  for (const raw of ['http://127.0.0.1:8125/', 'http://localhost:3000/', 'http://10.0.0.5:8124/', 'http://db.internal:8124/', 'https://hooks.example.com/']) {
    t.equal(await refusedReceiver(new URL(raw), open), undefined, `${raw} allowed (private allowed, not ours)`);
  }
  const https = receiverPolicy(loadConfig({ CLICKHOUSE_URL: 'https://ch.example.com/cartero', WEBHOOK_ALLOW_PRIVATE: 'true' }));
  t.match(await refusedReceiver(new URL('https://ch.example.com/?query=1'), https), /own listeners/, "a configured URL's host on its default port");
  t.equal(await refusedReceiver(new URL('https://ch.example.com:8443/'), https), undefined, 'the same host on a port that is not ours');

  // On every connection: the lookup refuses a name whose address is one of ours.
  const refusedByLookup = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
    receiverLookup(8124, open)('localhost', { all: true }, (err) => resolve(err)),
  );
  t.match(refusedByLookup, { code: 'ERECEIVERREFUSED', message: /own listeners/ }, 'localhost on the ClickHouse port refused at connect');
  const allowedByLookup = await new Promise<NodeJS.ErrnoException | null>((resolve) => receiverLookup(8125, open)('localhost', { all: true }, (err) => resolve(err)));
  t.equal(allowedByLookup, null, 'localhost on another port connects');
});

t.test('delivery never reaches an own listener: a name resolving to loopback with the ClickHouse port; nothing stored', async (t) => {
  // A stand-in for the embedded ClickHouse: it would answer a query's rows.
  let reached = 0;
  const server = createServer((_req, res) => {
    reached++;
    res.end('rows of every instance');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  const port = (server.address() as AddressInfo).port;
  const receivers = receiverPolicy(loadConfig({ CLICKHOUSE_URL: `http://127.0.0.1:${port}/cartero`, WEBHOOK_ALLOW_PRIVATE: 'true' }));
  for (const url of [`http://localhost:${port}/?query=SELECT%201`, `http://127.0.0.1:${port}/?query=SELECT%201`, `http://[::ffff:127.0.0.1]:${port}/`]) {
    const o = await postEvent({ url, headers: {}, body: '{}', timeoutMs: 2000, receivers });
    t.match(o, { statusCode: null, response: null, error: /receiver refused: .*own listeners/ }, url);
  }
  t.equal(reached, 0, 'nothing reached it');
});

t.test('the stored excerpt of an answer: valid UTF-8, no NUL or control characters, at most 1 KB, never a cut character', async (t) => {
  const excerpt = (bytes: Buffer, complete = true) => {
    const e = new AnswerExcerpt();
    // In small pieces, as a network would give them.
    for (let i = 0; i < bytes.length; i += 7) e.push(bytes.subarray(i, i + 7));
    return e.text(complete && bytes.length <= 1024);
  };
  t.equal(excerpt(Buffer.from('before\0after')), 'before\uFFFDafter', 'NUL replaced');
  t.equal(excerpt(Buffer.from('a\tb\r\nc\x01\x1b[31m\x7f')), 'a\tb\r\nc\uFFFD\uFFFD[31m\uFFFD', 'tab and line ends kept, other controls replaced');
  t.equal(excerpt(Buffer.from('café ñ', 'latin1')), 'caf\uFFFD \uFFFD', 'Latin-1 bytes are invalid UTF-8: replaced');
  t.equal(excerpt(Buffer.from([0xed, 0xa0, 0x80, 0x41])), '\uFFFD\uFFFD\uFFFDA', 'an encoded surrogate is invalid');
  t.equal(excerpt(Buffer.from('ok é')), 'ok é', 'valid UTF-8 kept');
  const cut = Buffer.from('a' + 'é'.repeat(600)); // 1,201 bytes: the 512th é straddles byte 1,024
  t.equal(excerpt(cut), 'a' + 'é'.repeat(511), 'a character cut by the limit is dropped, not garbled');
  t.equal(excerpt(Buffer.from('é'.repeat(600))), 'é'.repeat(512), 'exactly 1 KB when the limit falls between characters');
  t.equal(excerpt(Buffer.from([0x61, 0xc3])), 'a\uFFFD', 'an answer that ends inside a character: replaced');
  const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37 + (i >> 3)) & 0xff));
  const b = excerpt(binary);
  t.ok(Buffer.byteLength(b) <= 1024, `binary: at most 1 KB of UTF-8 (${Buffer.byteLength(b)})`);
  t.notOk(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(b), 'binary: no control character');
  t.equal(Buffer.from(b, 'utf8').toString('utf8'), b, 'binary: valid UTF-8');
  t.equal(cleanText('x\0y'.repeat(1000), 8), 'x\uFFFDyx', 'cleanText bounds bytes (U+FFFD is 3 of them), between characters');
  t.equal(cleanText('\ud800z', 100), '\uFFFDz', 'a lone surrogate replaced');
});
