import t, { type Test } from 'tap';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { DOCS_CSP } from '../api/pages/docs-page.js';
import { PANEL_CSP } from '../api/pages/panel-page.js';
import { routes } from '../api/routes/index.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { consentConfirmToken } from '../domain/consent/confirm-token.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { formConfirmUrl } from '../domain/forms/confirm.js';
import { createForm } from '../domain/forms/definition.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { clickToken, unsubscribeToken } from '../domain/tracking/tokens.js';
import { freePort } from '../config/ports.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { ECHO_MAX_BYTES, ROOMY_MAX_BYTES, SECRET_ERROR, fixtureRoutes } from './helpers/fixture-routes.js';
import { startTestWeb } from './helpers/web.js';


// Its ClickHouse is stopped for /readyz: a server of its own, not the suite's.
const dbs = await testDatabases(t, 'httpconv', { ownClickHouse: true });
const { url, internalUrl } = await startTestWeb(t, dbs, { extraRoutes: fixtureRoutes });
const a = await makeTenant(dbs.pool);
// 25 senders: more than the default page size of 20. The first is the instance's sandbox sender,
// which every instance has from its creation (docs/panel.md, The sandbox).
const sandboxSender = await dbs.pool.query<{ id: number }>(
  'SELECT s.id::int FROM senders s JOIN domains d ON d.id = s.domain_id WHERE d.is_sandbox AND s.instance_id = $1',
  [a.tenant.instanceId],
);
const senderIds = [
  sandboxSender.rows[0]!.id,
  ...(await makeSenders(dbs.pool, a.tenant, {
    domain: 'conv.example',
    senders: Array.from({ length: 24 }, (_, i) => ({ email: `s${i}`, name: `Sender ${i}` })),
  })),
];
const empty = await makeTenant(dbs.pool);

// The pages' fixtures (issue 24, framing): a mail (its unsubscribe and click links), a double
// opt-in consent event (its /c link) and a hosted form that requires confirmation (/f, /fc).
const p = await makeTenant(dbs.pool, { scopes: ['mail:send', 'consent:write'] });
await makeSenders(dbs.pool, p.tenant, { domain: 'pages.example', senders: [{ email: 'news', name: 'News' }] });
const pagePurpose = (await createPurpose(p.tenant, dbs.pool, { name: 'Newsletter' })).id;
const pageTerm = await createTerm(p.tenant, dbs.pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [pagePurpose], channels: ['mail'] });
await addTermVersion(p.tenant, dbs.pool, pageTerm.id, { version: 'v1', body: 'Twice a month.' });
await setCurrentVersion(p.tenant, dbs.pool, pageTerm.id, 'v1');
const pageForm = await createForm(p.tenant, dbs.pool, {
  name: 'Join', kind: 'advanced', type: 'registration', requires_confirmation: true, settings: null,
  items: [{ type: 'field', field_key: 'email', label: 'Email', required: true }],
});
const linkSecret = await trackingSecret(dbs.pool);
const pageJson = (path: string, body: unknown) =>
  send('POST', path, { headers: { ...p.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const sentMail = await pageJson('/v1/mails/send', { from: 'news@pages.example', to: [{ email: 'ann@example.org' }], subject: 'Hi', html: '<p>Hi</p>' });
if (sentMail.status !== 202) throw new Error(`send: ${sentMail.status} ${sentMail.text}`);
const pageMailId: string = sentMail.body.mails[0].mail_id;
async function doubleOptIn(contact: string): Promise<number> {
  const r = await pageJson('/v1/consent-events', {
    term_id: pageTerm.id,
    method: 'double_opt_in',
    rules: [{ channel: 'mail', contact_type: 'email_address', contact, purpose_id: pagePurpose, action: 'allow' }],
  });
  if (r.status !== 201) throw new Error(`double opt-in: ${r.status} ${r.text}`);
  return r.body.id;
}
const pendingEvent = await doubleOptIn('ann@example.org');
const expiredEvent = await doubleOptIn('late@example.org');
await dbs.pool.query("UPDATE consent_events SET created_at = now() - interval '400 days' WHERE id = $1", [expiredEvent]);

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

/**
 * One HTTP exchange through node:http, so every header (Content-Encoding, Content-Length,
 * chunked bodies) is exactly what the test says. `chunked` sends the body in pieces with no
 * Content-Length, so the server can only measure it.
 */
function send(
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer; chunked?: boolean; base?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, opts.base ?? url);
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.body !== undefined && !opts.chunked) headers['content-length'] = String(Buffer.byteLength(opts.body));
    const req = httpRequest(target, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body !== undefined && opts.chunked) {
      const buf = Buffer.from(opts.body);
      const step = Math.ceil(buf.length / 4);
      for (let i = 0; i < buf.length; i += step) req.write(buf.subarray(i, i + step));
    } else if (opts.body !== undefined) {
      req.write(opts.body);
    }
    req.end();
  });
}

const get = (path: string, headers: Record<string, string> = a.headers) => send('GET', path, { headers });
/** /readyz and /metrics are served on the internal listener (api/internal.ts). */
const getInternal = (path: string) => send('GET', path, { base: internalUrl });
const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  send('POST', path, {
    headers: { ...a.headers, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });

const PROBLEM_KEYS = ['code', 'detail', 'status', 'title', 'trace_id', 'type'];

/** Every rule of the spec's problem object, for one response. */
function assertProblem(t: Test, res: Reply, status: number, code: string, extraKeys: string[] = []): void {
  t.equal(res.status, status, `HTTP status ${status}`);
  t.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, 'content-type application/problem+json');
  t.ok(res.body, 'body is JSON');
  const p = res.body ?? {};
  t.ok(URL.canParse(p.type), `type is an absolute URI: ${p.type}`);
  t.ok(String(p.type).endsWith('/' + code.replace(/_/g, '-')), `type ends in the kebab-case code: ${p.type}`);
  t.equal(typeof p.title, 'string');
  t.ok(p.title.length > 0, 'title is not empty');
  t.equal(p.status, status, 'status equals the HTTP status');
  t.equal(typeof p.detail, 'string');
  t.ok(p.detail.length > 0, 'detail is not empty');
  t.equal(p.code, code);
  t.ok(res.headers['x-request-id'], 'X-Request-Id header');
  t.equal(p.trace_id, res.headers['x-request-id'], 'trace_id equals X-Request-Id');
  t.strictSame(Object.keys(p).sort(), [...PROBLEM_KEYS, ...extraKeys].sort(), 'exactly the spec fields');
}

function assertValidation(t: Test, res: Reply, errors: unknown[]): void {
  assertProblem(t, res, 422, 'validation_error', ['errors']);
  t.strictSame(res.body.errors, errors);
}

const validRecipient = { email: 'ana@example.com', name: 'Ana' };

t.test('problem objects carry type, title, status, detail, code and trace_id', async (t) => {
  const missing = await get('/v1/senders/999999');
  assertProblem(t, missing, 404, 'sender_not_found');
  t.match(missing.body.type, /^https?:\/\/.+\/sender-not-found$/);
  t.equal(missing.body.title, 'Not Found');
  t.equal(missing.body.detail, 'sender 999999 not found');

  const invalid = await get('/v1/senders?page=0');
  assertProblem(t, invalid, 422, 'validation_error', ['errors']);
  t.match(invalid.body.type, /\/validation-error$/);

  const unauthorized = await get('/v1/senders', {});
  assertProblem(t, unauthorized, 401, 'unauthorized');
  t.match(unauthorized.body.type, /\/unauthorized$/);
});

/**
 * A reply of each kind the headers on every response must hold for: the API's success and each of
 * its error answers, and the infrastructure's endpoints. Name, reply, expected status.
 */
async function everyKindOfReply(): Promise<Array<[string, Reply, number]>> {
  return [
    ['200 listing', await get('/v1/senders'), 200],
    ['401', await get('/v1/senders', {}), 401],
    ['404 route', await get('/v1/nope', {}), 404],
    ['405', await send('DELETE', '/v1/senders'), 405],
    ['413', await postJson('/v1/test-fixtures/echo', { recipients: [validRecipient], pad: 'x'.repeat(2000) }), 413],
    ['415', await send('POST', '/v1/test-fixtures/echo', { headers: { ...a.headers, 'content-type': 'text/plain' }, body: '{}' }), 415],
    ['422', await get('/v1/senders?page_size=0'), 422],
    ['429', await get('/v1/test-fixtures/rate-limited'), 429],
    ['500', await get('/v1/test-fixtures/boom'), 500],
    ['/healthz', await get('/healthz', {}), 200],
    ['/readyz (internal port)', await getInternal('/readyz'), 200],
    ['/metrics (internal port)', await getInternal('/metrics'), 200],
    ['/v1/openapi.json', await get('/v1/openapi.json', {}), 200],
  ];
}

t.test('X-Request-Id is on every response and unique', async (t) => {
  const replies = await everyKindOfReply();
  const ids = new Set<string>();
  for (const [name, res, status] of replies) {
    t.equal(res.status, status, `${name}: status`);
    const id = res.headers['x-request-id'];
    t.match(id, /^[A-Za-z0-9._:-]{8,}$/, `${name}: X-Request-Id`);
    ids.add(String(id));
  }
  t.equal(ids.size, replies.length, 'a fresh id per request');
});

t.test('a well-formed incoming X-Request-Id is kept as the trace_id; junk is replaced', async (t) => {
  const kept = await get('/v1/senders/999999', { ...a.headers, 'x-request-id': 'router-abc-12345' });
  t.equal(kept.headers['x-request-id'], 'router-abc-12345');
  t.equal(kept.body.trace_id, 'router-abc-12345');
  const junk = await get('/v1/senders/999999', { ...a.headers, 'x-request-id': 'no spaces <script>' });
  t.not(junk.headers['x-request-id'], 'no spaces <script>');
  t.equal(junk.body.trace_id, junk.headers['x-request-id']);
});

t.test('an unknown route is 404 not_found, even without credentials', async (t) => {
  for (const [method, path] of [
    ['GET', '/v1/nope'],
    ['GET', '/nope'],
    ['POST', '/v1/nope'],
    ['GET', '/v1/senders/1/extra'],
  ] as const) {
    const res = await send(method, path);
    t.test(`${method} ${path}`, async (t) => {
      assertProblem(t, res, 404, 'not_found');
      t.notOk(res.headers['allow'], 'no Allow header on a 404');
      t.notOk(res.headers['www-authenticate'], 'not an authentication failure');
    });
  }
});

t.test('a known path with a wrong verb is 405 method_not_allowed with Allow', async (t) => {
  for (const [method, path, allow] of [
    ['DELETE', '/v1/senders', ['GET', 'HEAD']],
    ['POST', '/v1/senders/1', ['GET', 'HEAD']],
    ['PUT', '/v1/domains/x/status', ['GET', 'HEAD']],
    ['PATCH', '/v1/domains', ['GET', 'HEAD']],
    ['POST', '/healthz', ['GET', 'HEAD']],
    ['GET', '/v1/test-fixtures/echo', ['POST']],
    // Public links: the same 405, from their declarations.
    ['POST', '/t/o/abc', ['GET', 'HEAD']],
    ['PUT', '/t/c/abc', ['GET', 'HEAD']],
    ['DELETE', '/u/abc', ['GET', 'HEAD', 'POST']],
  ] as const) {
    // No credentials: the verb is wrong whoever asks.
    const res = await send(method, path);
    t.test(`${method} ${path}`, async (t) => {
      assertProblem(t, res, 405, 'method_not_allowed');
      const listed = String(res.headers['allow'] ?? '').split(/,\s*/).filter(Boolean).sort();
      t.strictSame(listed, [...allow].sort(), 'Allow lists the accepted verbs');
    });
  }
});

t.test('public links follow the same conventions, without credentials', async (t) => {
  const form = { 'content-type': 'application/x-www-form-urlencoded' };

  t.test('no credentials are asked for: never 401 or 403', async (t) => {
    const pixel = await send('GET', '/t/o/not-a-token');
    t.equal(pixel.status, 200, 'the pixel shows whatever the token');
    t.equal(pixel.headers['content-type'], 'image/gif');
    t.match(pixel.headers['x-request-id'], /^[A-Za-z0-9._:-]{8,}$/, 'X-Request-Id');
    t.notOk(pixel.headers['www-authenticate']);
  });

  t.test('a link that is not valid: a problem object, or a page for a browser', async (t) => {
    for (const [method, path] of [['GET', '/t/c/not-a-token'], ['GET', '/u/not-a-token'], ['POST', '/u/not-a-token']] as const) {
      const res = await send(method, path, { headers: { ...form, accept: 'application/json' }, ...(method === 'POST' ? { body: 'List-Unsubscribe=One-Click' } : {}) });
      t.test(`${method} ${path}`, async (t) => assertProblem(t, res, 404, 'not_found'));
      const page = await send(method, path, { headers: { ...form, accept: 'text/html' }, ...(method === 'POST' ? { body: '' } : {}) });
      t.equal(page.status, 404, `${method} ${path}: 404 page`);
      t.match(page.headers['content-type'], /^text\/html/);
      t.match(page.text, /<h1>Link not valid<\/h1>/);
    }
  });

  t.test('path values obey the rules of every value: NUL is 422 at /token', async (t) => {
    assertValidation(t, await send('GET', '/u/a%00b'), [
      { pointer: '/token', code: 'value_error.nul_character', message: 'A string must not contain the NUL character (U+0000)' },
    ]);
    assertProblem(t, await send('GET', '/t/c/%zz'), 400, 'bad_request');
  });

  t.test('a form body: 413 over its limit (after decompression), 400 when multipart is malformed', async (t) => {
    const over = await send('POST', '/u/not-a-token', { headers: form, body: 'comment=' + 'x'.repeat(16 * 1024) });
    assertProblem(t, over, 413, 'request_too_large', ['max_bytes']);
    t.equal(over.body.max_bytes, 16 * 1024);
    const inflated = await send('POST', '/u/not-a-token', { headers: { ...form, 'content-encoding': 'gzip' }, body: gzipSync('comment=' + 'x'.repeat(20_000)) });
    assertProblem(t, inflated, 413, 'request_too_large', ['max_bytes']);
    const chunked = await send('POST', '/u/not-a-token', { headers: form, body: 'comment=' + 'x'.repeat(20_000), chunked: true });
    assertProblem(t, chunked, 413, 'request_too_large', ['max_bytes']);
    const malformed = await send('POST', '/u/not-a-token', { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: 'not multipart' });
    assertProblem(t, malformed, 400, 'bad_request');
    // Within the limit and well formed, the token decides: 404.
    const fits = await send('POST', '/u/not-a-token', { headers: form, body: 'comment=' + 'x'.repeat(16 * 1024 - 'comment='.length) });
    assertProblem(t, fits, 404, 'not_found');
    // Any other Content-Type is read as urlencoded (one-click clients label their bodies loosely): no 415.
    const loose = await send('POST', '/u/not-a-token', { headers: { 'content-type': 'text/plain' }, body: 'List-Unsubscribe=One-Click' });
    assertProblem(t, loose, 404, 'not_found');
  });
});

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";
/** A hosted form's pages also load the form's logo. */
const FORM_PAGE_CSP = `${PAGE_CSP}; img-src https: http:`;

/** A page, as a browser asks for it (Accept: text/html), with its form fields if posted. */
function page(method: 'GET' | 'POST', path: string, fields?: Record<string, string>): Promise<Reply> {
  const headers: Record<string, string> = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' };
  if (method === 'GET') return send(method, path, { headers });
  return send(method, path, { headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields ?? {}).toString() });
}

/** Every page, its errors included: HTML, never framed (CSP and X-Frame-Options), never sniffed, no Referer sent from it. */
function assertPage(t: Test, res: Reply, status: number, csp = PAGE_CSP): void {
  t.equal(res.status, status, 'status');
  t.match(res.headers['content-type'], /^text\/html; charset=utf-8$/, 'an HTML page');
  t.equal(res.headers['content-security-policy'], csp, 'CSP with frame-ancestors none');
  t.equal(res.headers['x-frame-options'], 'DENY', 'X-Frame-Options');
  t.equal(res.headers['x-content-type-options'], 'nosniff', 'X-Content-Type-Options');
  t.equal(res.headers['referrer-policy'], 'no-referrer', 'Referrer-Policy');
  t.match(res.headers['cache-control'], /no-store/, 'never cached');
}

t.test('every page and error page: never framed, never sniffed, no referrer', async (t) => {
  const form = `/f/${pageForm.public_token}`;
  const emailItem = `item_${pageForm.items[0]!.id}`;
  t.test('the hosted form: GET, and every answer of its POST', async (t) => {
    assertPage(t, await page('GET', form), 200, FORM_PAGE_CSP);
    assertPage(t, await page('POST', form, { [emailItem]: '' }), 422, FORM_PAGE_CSP);
    assertPage(t, await page('POST', form, { [emailItem]: 'ann@example.org' }), 200, FORM_PAGE_CSP);
    assertPage(t, await page('POST', form, { [emailItem]: 'bot@example.org', website: 'https://spam.example' }), 200, FORM_PAGE_CSP);
    assertPage(t, await page('GET', '/f/no-such-form-token-at-all'), 404);
    assertPage(t, await page('POST', '/f/no-such-form-token-at-all', { [emailItem]: 'ann@example.org' }), 404);
  });

  t.test('the form confirmation: the page, confirmed, already confirmed, expired, not valid', async (t) => {
    const { rows } = await dbs.pool.query<{ id: number }>('SELECT id FROM form_submissions WHERE form_id = $1 ORDER BY id', [pageForm.id]);
    t.equal(rows.length, 1, 'the one submission posted above');
    const link = formConfirmUrl('', linkSecret, p.tenant, rows[0]!.id);
    assertPage(t, await page('GET', link), 200);
    assertPage(t, await page('POST', link), 200);
    assertPage(t, await page('GET', link), 200);
    await dbs.pool.query("UPDATE form_submissions SET status = 'pending', confirmed_at = NULL, created_at = now() - interval '400 days' WHERE id = $1", [rows[0]!.id]);
    assertPage(t, await page('GET', link), 410);
    assertPage(t, await page('POST', link), 410);
    assertPage(t, await page('GET', '/fc/not-a-token'), 404);
  });

  t.test('the consent confirmation: the page, confirmed, expired, not valid', async (t) => {
    const link = `/c/${consentConfirmToken(linkSecret, p.tenant, pendingEvent)}`;
    assertPage(t, await page('GET', link), 200);
    assertPage(t, await page('POST', link), 200);
    assertPage(t, await page('GET', link), 200);
    const expired = `/c/${consentConfirmToken(linkSecret, p.tenant, expiredEvent)}`;
    assertPage(t, await page('GET', expired), 410);
    assertPage(t, await page('POST', expired), 410);
    assertPage(t, await page('POST', '/c/not-a-token'), 404);
  });

  t.test('the unsubscribe page: GET, unsubscribed, resubscribed, not valid', async (t) => {
    const link = `/u/${unsubscribeToken(linkSecret, pageMailId)}`;
    assertPage(t, await page('GET', link), 200);
    assertPage(t, await page('POST', link, { reason: 'too_frequent' }), 200);
    assertPage(t, await page('POST', link, { action: 'resubscribe' }), 200);
    assertPage(t, await page('GET', '/u/not-a-token'), 404);
    assertPage(t, await page('POST', '/u/not-a-token'), 404);
  });

  t.test('a click link that is not valid: its 404 page', async (t) => {
    assertPage(t, await page('GET', '/t/c/not-a-token'), 404);
  });

  t.test('past the per-address limit: the 429 page', async (t) => {
    let res: Reply | undefined;
    for (let i = 0; i < 20 && res?.status !== 429; i++) res = await page('POST', form, { [emailItem]: '' });
    assertPage(t, res!, 429);
  });
  t.test('the API reference (/docs): the same headers, its own CSP (api/pages/docs-page.ts)', async (t) => {
    assertPage(t, await page('GET', '/docs'), 200, DOCS_CSP);
  });
  t.test('the operator panel (/panel): the same headers, its own CSP (api/pages/panel-page.ts)', async (t) => {
    assertPage(t, await page('GET', '/panel'), 200, PANEL_CSP);
  });
});

t.test('X-Content-Type-Options: nosniff on every response, whatever answers it', async (t) => {
  const replies: Array<[string, Reply, number]> = [
    ...(await everyKindOfReply()),
    ['202 send', await pageJson('/v1/mails/send', { from: 'news@pages.example', to: [{ email: 'bob@example.org' }], subject: 'Hi', html: '<p>Hi</p>' }), 202],
    ['404 link, as a problem', await send('GET', '/u/not-a-token', { headers: { accept: 'application/json' } }), 404],
    ['the pixel (fast path)', await send('GET', '/t/o/not-a-token'), 200],
    ['the pixel, conditional (Express)', await send('GET', '/t/o/not-a-token', { headers: { 'if-none-match': '"x"' } }), 200],
    ['a click redirect (fast path)', await send('GET', `/t/c/${clickToken(linkSecret, pageMailId, 'https://shop.example/')}`), 302],
    ['a click redirect, HEAD', await send('HEAD', `/t/c/${clickToken(linkSecret, pageMailId, 'https://shop.example/')}`), 302],
    ['404 (internal port)', await getInternal('/nope'), 404],
    ['400 from Node\'s parser (not HTTP)', await rawRequest('HELLO THERE\r\n\r\n'), 400],
    ['431 from Node\'s parser', await get(`/v1/senders?name=${'a'.repeat(20_000)}`), 431],
  ];
  for (const [name, res, status] of replies) {
    t.equal(res.status, status, `${name}: status`);
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${name}: nosniff`);
  }
});

t.test('body size limits: 413 request_too_large with max_bytes', async (t) => {
  const valid = JSON.stringify({ recipients: [validRecipient] });

  t.test('a body of exactly the route limit passes, one byte more is 413', async (t) => {
    const exact = valid + ' '.repeat(ECHO_MAX_BYTES - Buffer.byteLength(valid));
    t.equal(Buffer.byteLength(exact), ECHO_MAX_BYTES);
    const ok = await postJson('/v1/test-fixtures/echo', exact);
    t.equal(ok.status, 200);
    t.same(ok.body.body.recipients, [validRecipient]);

    const over = await postJson('/v1/test-fixtures/echo', exact + ' ');
    assertProblem(t, over, 413, 'request_too_large', ['max_bytes']);
    t.equal(over.body.max_bytes, ECHO_MAX_BYTES);
  });

  t.test('a chunked body with no Content-Length is measured as it arrives', async (t) => {
    const body = JSON.stringify({ recipients: [validRecipient], meta: { a: 'x'.repeat(3000) } });
    const res = await send('POST', '/v1/test-fixtures/echo', {
      headers: { ...a.headers, 'content-type': 'application/json' },
      body,
      chunked: true,
    });
    assertProblem(t, res, 413, 'request_too_large', ['max_bytes']);
    t.equal(res.body.max_bytes, ECHO_MAX_BYTES);
  });

  t.test('a small gzip body that inflates past the limit is 413 (measured after decompression)', async (t) => {
    const inflated = JSON.stringify({ recipients: [validRecipient], meta: { a: 'x'.repeat(50_000) } });
    const gz = gzipSync(inflated);
    t.ok(gz.length < ECHO_MAX_BYTES, `compressed ${gz.length} bytes, under the limit`);
    const res = await send('POST', '/v1/test-fixtures/echo', {
      headers: { ...a.headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gz,
    });
    assertProblem(t, res, 413, 'request_too_large', ['max_bytes']);
    t.equal(res.body.max_bytes, ECHO_MAX_BYTES);
  });

  t.test('a gzip body under the limit once inflated is read and validated', async (t) => {
    const res = await send('POST', '/v1/test-fixtures/echo', {
      headers: { ...a.headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(valid),
    });
    t.equal(res.status, 200);
    t.same(res.body.body.recipients, [validRecipient]);
  });

  t.test('the limit is per path', async (t) => {
    const body = JSON.stringify({ pad: 'x'.repeat(2000) });
    t.equal((await postJson('/v1/test-fixtures/roomy', body)).status, 200, '2 KB fits the 4 KB route');
    const small = await postJson('/v1/test-fixtures/echo', body);
    assertProblem(t, small, 413, 'request_too_large', ['max_bytes']);
    t.equal(small.body.max_bytes, ECHO_MAX_BYTES);
    const big = await postJson('/v1/test-fixtures/roomy', JSON.stringify({ pad: 'x'.repeat(ROOMY_MAX_BYTES) }));
    assertProblem(t, big, 413, 'request_too_large', ['max_bytes']);
    t.equal(big.body.max_bytes, ROOMY_MAX_BYTES);
  });
});

t.test('415 unsupported_media_type for a body that is not JSON', async (t) => {
  const body = JSON.stringify({ recipients: [validRecipient] });
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const res = await send('POST', '/v1/test-fixtures/echo', { headers: { ...a.headers, 'content-type': type }, body });
    t.test(type, async (t) => assertProblem(t, res, 415, 'unsupported_media_type'));
  }
  const untyped = await send('POST', '/v1/test-fixtures/echo', { headers: a.headers, body });
  t.test('no Content-Type at all', async (t) => assertProblem(t, untyped, 415, 'unsupported_media_type'));

  t.test('a JSON body in another charset or an unknown Content-Encoding', async (t) => {
    const latin1 = await send('POST', '/v1/test-fixtures/echo', {
      headers: { ...a.headers, 'content-type': 'application/json; charset=latin1' },
      body,
    });
    assertProblem(t, latin1, 415, 'unsupported_media_type');
    const compress = await send('POST', '/v1/test-fixtures/echo', {
      headers: { ...a.headers, 'content-type': 'application/json', 'content-encoding': 'compress' },
      body,
    });
    assertProblem(t, compress, 415, 'unsupported_media_type');
  });

  t.test('JSON media types with parameters or a +json suffix are accepted', async (t) => {
    for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json']) {
      const res = await send('POST', '/v1/test-fixtures/echo', { headers: { ...a.headers, 'content-type': type }, body });
      t.equal(res.status, 200, type);
    }
  });
});

t.test('400 bad_request: malformed before schema validation', async (t) => {
  t.test('malformed JSON', async (t) => {
    const res = await postJson('/v1/test-fixtures/echo', '{"recipients": [');
    assertProblem(t, res, 400, 'bad_request');
    t.match(res.body.type, /\/bad-request$/);
  });

  t.test('a scalar query parameter given twice', async (t) => {
    const res = await get('/v1/senders?page=1&page=2');
    assertProblem(t, res, 400, 'bad_request');
    t.match(res.body.detail, /page/, 'detail is descriptive');
  });

  t.test('an unknown parameter given twice is still ignored', async (t) => {
    t.equal((await get('/v1/senders?foo=1&foo=2')).status, 200);
  });

  t.test('bytes that are not HTTP: the parser refuses them, as a problem object', async (t) => {
    assertProblem(t, await rawRequest('HELLO THERE\r\n\r\n'), 400, 'bad_request');
  });

  t.test('a URL over the 16 KB header limit: 431 request_header_fields_too_large, as a problem object', async (t) => {
    const res = await get(`/v1/senders?name=${'a'.repeat(20_000)}`);
    assertProblem(t, res, 431, 'request_header_fields_too_large');
    t.match(res.body.detail, /16 KB/);
  });

  t.test('a Content-Encoding: gzip body that is not gzip is a client error, not a 500', async (t) => {
    const res = await send('POST', '/v1/test-fixtures/echo', {
      headers: { ...a.headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: JSON.stringify({ recipients: [validRecipient] }),
    });
    assertProblem(t, res, 400, 'bad_request');
  });
});

t.test('422 validation_error lists every failed field with pointer, code, message, params', async (t) => {
  t.test('missing nested field at /recipients/0/email, without params', async (t) => {
    const res = await postJson('/v1/test-fixtures/echo', { recipients: [{ name: 'Al' }] });
    assertValidation(t, res, [{ pointer: '/recipients/0/email', code: 'missing', message: 'Field required' }]);
    t.notOk('params' in res.body.errors[0], 'params absent when empty');
  });

  t.test('string_too_long carries its limit in params', async (t) => {
    const res = await postJson('/v1/test-fixtures/echo', { recipients: [{ email: 'a@example.com', name: 'Alexander' }] });
    assertValidation(t, res, [
      { pointer: '/recipients/0/name', code: 'string_too_long', message: 'String should have at most 5 characters', params: { max_length: 5 } },
    ]);
  });

  t.test('enum versus literal_error (x-error-code)', async (t) => {
    const res = await postJson('/v1/test-fixtures/echo', { recipients: [validRecipient], kind: 'other', lang: 'fr' });
    assertValidation(t, res, [
      { pointer: '/kind', code: 'enum', message: "Input should be 'news', 'billing'", params: { expected: "'news', 'billing'" } },
      { pointer: '/lang', code: 'literal_error', message: "Input should be 'es', 'en'", params: { expected: "'es', 'en'" } },
    ]);
  });

  t.test('bodies are typed JSON, never coerced: "3" for an integer is int_parsing', async (t) => {
    const res = await postJson('/v1/test-fixtures/echo', { recipients: [validRecipient], count: '3' });
    assertValidation(t, res, [{ pointer: '/count', code: 'int_parsing', message: 'Input should be a valid integer' }]);
  });

  t.test('all failures are reported together', async (t) => {
    const res = await postJson('/v1/test-fixtures/echo', {
      recipients: [{ name: 'Alexander' }, { email: 'not-an-email' }],
      kind: 'other',
      lang: 'fr',
      count: 1.5,
    });
    t.equal(res.status, 422);
    const byPointer = Object.fromEntries(res.body.errors.map((e: any) => [e.pointer, e.code]));
    t.strictSame(byPointer, {
      '/recipients/0/email': 'missing',
      '/recipients/0/name': 'string_too_long',
      '/recipients/1/email': 'value_error.email',
      '/kind': 'enum',
      '/lang': 'literal_error',
      '/count': 'int_parsing',
    });
    for (const e of res.body.errors) {
      t.strictSame(Object.keys(e).filter((k) => !['pointer', 'code', 'message', 'params'].includes(k)), [], 'no other keys');
      t.equal(typeof e.message, 'string');
      if ('params' in e) t.ok(Object.keys(e.params).length > 0, `${e.pointer}: params only when not empty`);
    }
  });

  t.test('pointers escape "/" as ~1 and "~" as ~0 (RFC 6901)', async (t) => {
    const extra = await postJson('/v1/test-fixtures/echo', { recipients: [validRecipient], 'a/b~c': 1 });
    assertValidation(t, extra, [{ pointer: '/a~1b~0c', code: 'extra_forbidden', message: 'Extra inputs are not permitted' }]);

    const nested = await postJson('/v1/test-fixtures/echo', { recipients: [validRecipient], meta: { 'x/y~z': 'long' } });
    assertValidation(t, nested, [
      { pointer: '/meta/x~1y~0z', code: 'string_too_long', message: 'String should have at most 3 characters', params: { max_length: 3 } },
    ]);
  });

  t.test('a body that is not an object is an error at the root (pointer "")', async (t) => {
    for (const body of ['[]', '"hello"', '42', 'null']) {
      const res = await postJson('/v1/test-fixtures/echo', body);
      t.test(body, async (t) => {
        assertValidation(t, res, [{ pointer: '', code: 'object_type', message: 'Input should be a valid object' }]);
      });
    }
  });

  t.test('a required body that is absent is 422 with errors[] at the root', async (t) => {
    // A raw request with neither Content-Length nor Transfer-Encoding: no body at all.
    const res = await rawNoBody('/v1/test-fixtures/echo');
    assertProblem(t, res, 422, 'validation_error', ['errors']);
    t.strictSame(res.body?.errors?.map((e: any) => [e.pointer, e.code]), [['', 'missing']]);
  });

  t.test('defaults are applied and the handler sees the validated body', async (t) => {
    const res = await postJson('/v1/test-fixtures/echo', { recipients: [validRecipient] });
    t.equal(res.status, 200);
    t.strictSame(res.body, { body: { recipients: [validRecipient], kind: 'news' } });
  });

  t.test('query parameters arrive as text: int_parsing and bool_parsing, together', async (t) => {
    assertValidation(t, await get('/v1/senders?page=abc'), [
      { pointer: '/page', code: 'int_parsing', message: 'Input should be a valid integer' },
    ]);
    assertValidation(t, await get('/v1/senders?is_domain_verified=maybe'), [
      { pointer: '/is_domain_verified', code: 'bool_parsing', message: 'Input should be a valid boolean' },
    ]);
    const both = await get('/v1/senders?page=abc&is_domain_verified=maybe&page_size=1.5');
    t.equal(both.status, 422);
    t.strictSame(
      both.body.errors.map((e: any) => [e.pointer, e.code]).sort(),
      [['/is_domain_verified', 'bool_parsing'], ['/page', 'int_parsing'], ['/page_size', 'int_parsing']],
    );
  });

  t.test('a path parameter of the wrong type is 422 at its name', async (t) => {
    assertValidation(t, await get('/v1/domains/abc'), [{ pointer: '/id', code: 'int_parsing', message: 'Input should be a valid integer' }]);
  });
});

/** A POST with no body and neither Content-Length nor Transfer-Encoding, over a raw socket. */
function rawNoBody(path: string): Promise<Reply> {
  const target = new URL(path, url);
  const head = [
    `POST ${target.pathname} HTTP/1.1`,
    `Host: ${target.host}`,
    `Authorization: ${a.headers.authorization}`,
    `X-Instance-Slug: ${a.slug}`,
    'Content-Type: application/json',
    'Connection: close',
  ];
  return rawRequest(head.join('\r\n') + '\r\n\r\n');
}

/** These bytes over a raw socket; the reply read until the server closes. */
function rawRequest(bytes: string): Promise<Reply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head = '', text = ''] = raw.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: IncomingHttpHeaders = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text, body });
    });
    socket.write(bytes);
  });
}

t.test('pagination on GET /v1/senders', async (t) => {
  t.test('page_size must be 1..100 and page at least 1', async (t) => {
    for (const [query, pointer, code] of [
      ['page_size=0', '/page_size', 'greater_than_equal'],
      ['page_size=101', '/page_size', 'less_than_equal'],
      ['page=0', '/page', 'greater_than_equal'],
      ['page=-1', '/page', 'greater_than_equal'],
    ] as const) {
      const res = await get(`/v1/senders?${query}`);
      t.test(query, async (t) => {
        assertProblem(t, res, 422, 'validation_error', ['errors']);
        t.strictSame(res.body.errors.map((e: any) => [e.pointer, e.code]), [[pointer, code]]);
      });
    }
    t.equal((await get('/v1/senders?page_size=1')).status, 200, 'page_size 1 is allowed');
    t.equal((await get('/v1/senders?page_size=100')).status, 200, 'page_size 100 is allowed');
    t.equal((await get('/v1/domains?page_size=101')).status, 422, 'every listing has the bound');
  });

  t.test('defaults: page 1, page_size 20', async (t) => {
    const res = await get('/v1/senders');
    t.equal(res.status, 200);
    t.equal(res.body.data.length, 20);
    t.strictSame(res.body.pagination, { page: 1, page_size: 20, has_more: true, total_items: 25, total_pages: 2 });
    t.strictSame(res.body.data.map((s: any) => s.id), senderIds.slice(0, 20));
  });

  t.test('has_more is always present', async (t) => {
    const last = await get('/v1/senders?page=2');
    t.strictSame(last.body.pagination, { page: 2, page_size: 20, has_more: false, total_items: 25, total_pages: 2 });
    t.strictSame(last.body.data.map((s: any) => s.id), senderIds.slice(20));
    const beyond = await get('/v1/senders?page=9');
    t.strictSame(beyond.body.data, []);
    t.equal(beyond.body.pagination.has_more, false);
    const none = await get('/v1/senders?name=nobody', empty.headers);
    t.strictSame(none.body, { data: [], pagination: { page: 1, page_size: 20, has_more: false, total_items: 0, total_pages: 0 } });
    const domains = await get('/v1/domains', empty.headers);
    t.equal(domains.body.pagination.has_more, false);
  });

  t.test('unknown query parameters are ignored', async (t) => {
    const res = await get('/v1/senders?foo=bar&page_size=5');
    t.equal(res.status, 200);
    t.equal(res.body.data.length, 5);
  });

  t.test('an empty value means no filter', async (t) => {
    for (const query of ['name=', 'email=', 'is_domain_verified=', 'page=', 'page_size=']) {
      const res = await get(`/v1/senders?${query}`);
      t.equal(res.status, 200, query);
      t.strictSame(res.body.pagination, { page: 1, page_size: 20, has_more: true, total_items: 25, total_pages: 2 }, query);
    }
  });
});

t.test('500 internal_error: generic detail, no stack trace, no error text', async (t) => {
  const res = await get('/v1/test-fixtures/boom');
  assertProblem(t, res, 500, 'internal_error');
  t.equal(res.body.title, 'Internal Server Error');
  t.notMatch(res.text, /secret_table/i);
  t.notMatch(res.text, /select \*/i);
  t.notMatch(res.text, SECRET_ERROR);
  t.notMatch(res.text, /\bat .+\.js:\d+/, 'no stack frame');
  t.notMatch(res.text, /Error:/, 'no error name');
});

t.test('429 rate_limit_exceeded with Retry-After in whole seconds, rounded up', async (t) => {
  const res = await get('/v1/test-fixtures/rate-limited');
  assertProblem(t, res, 429, 'rate_limit_exceeded');
  t.equal(res.headers['retry-after'], '3');
  t.match(res.body.type, /\/rate-limit-exceeded$/);
});

t.test('/healthz answers without credentials', async (t) => {
  const res = await get('/healthz', {});
  t.equal(res.status, 200);
  t.strictSame(res.body, { status: 'ok' });
});

t.test('/metrics labels requests by route pattern, never raw path', async (t) => {
  await get('/v1/senders');
  await get(`/v1/senders/${senderIds[0]}`);
  await get('/v1/senders/123');
  await get('/v1/no-such-thing-42', {});
  const res = await getInternal('/metrics');
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /^text\/plain/);
  const lines = res.text.split('\n').filter((l) => l.startsWith('cartero_http_request_duration_seconds_count'));
  t.ok(lines.some((l) => l.includes('route="/v1/senders"') && l.includes('method="GET"') && l.includes('status="200"')), '/v1/senders');
  t.ok(lines.some((l) => l.includes('route="/v1/senders/{id}"') && l.includes('status="404"')), '/v1/senders/{id} for a 404 id');
  t.ok(lines.some((l) => l.includes('route="/v1/senders/{id}"') && l.includes('status="200"')), '/v1/senders/{id}');
  t.notMatch(res.text, /route="\/v1\/senders\/\d+"/, 'no raw id in a label');
  t.notMatch(res.text, /no-such-thing-42/, 'no raw path of an unknown route in a label');
});

t.test('GET /v1/openapi.json is OpenAPI 3.1 generated from the routes', async (t) => {
  const res = await get('/v1/openapi.json', {});
  t.equal(res.status, 200, 'public, no credentials');
  t.match(res.headers['content-type'], /^application\/json/);
  const doc = res.body;
  t.match(doc.openapi, /^3\.1\./);

  t.test('every public path is documented', async (t) => {
    for (const [path, method] of [
      ['/v1/senders', 'get'],
      ['/v1/senders/{id}', 'get'],
      ['/v1/domains', 'get'],
      ['/v1/domains/{id}', 'get'],
      ['/v1/domains/{domain_name}/status', 'get'],
    ]) {
      t.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`);
    }
    const senderParams = doc.paths['/v1/senders'].get.parameters;
    t.strictSame(
      senderParams.map((p: any) => `${p.in}:${p.name}`).sort(),
      ['query:email', 'query:is_domain_verified', 'query:name', 'query:page', 'query:page_size'],
    );
    t.match(senderParams.find((p: any) => p.name === 'page_size'), { required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } });
    t.match(doc.paths['/v1/domains/{domain_name}/status'].get.parameters, [{ name: 'domain_name', in: 'path', required: true }]);
  });

  t.test('every route of api/routes is in the document with its parameters', async (t) => {
    t.ok(routes.length >= 5);
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method];
      t.ok(op, `${r.method.toUpperCase()} ${r.path} documented`);
      if (!op) continue;
      t.equal(op.operationId, r.operationId);
      if (r.auth.kind === 'api_key') {
        t.equal(op['x-required-scope'], r.auth.scope, `${r.path}: its scope`);
        t.strictSame(op.security, [{ apiKey: [], instanceSlug: [] }], `${r.path}: an API key`);
      } else if (r.auth.kind === 'session') {
        // The operator panel's (docs/panel.md): a session token, and the instance where a role is needed.
        t.strictSame(op.security, [r.auth.role ? { panelSession: [], instanceSlug: [] } : { panelSession: [] }], `${r.path}: a panel session`);
        t.equal(op['x-panel-role'], r.auth.role, `${r.path}: its role`);
        t.notOk('x-required-scope' in op, `${r.path}: no scope`);
        t.same(op.tags, ['Panel'], `${r.path}: under its own tag`);
      } else {
        t.strictSame(op.security, [], `${r.path}: public, no credentials`);
        t.equal(op['x-public'], true);
        t.notOk('x-required-scope' in op, `${r.path}: no scope`);
      }
      const documented = op.parameters.map((p: any) => `${p.in}:${p.name}`).sort();
      const declared = [
        ...Object.keys(r.params ?? {}).map((n) => `path:${n}`),
        ...Object.keys(r.query ?? {}).map((n) => `query:${n}`),
        ...Object.keys(r.requestHeaders ?? {}).map((n) => `header:${n}`),
      ].sort();
      t.strictSame(documented, declared, `${r.path} parameters`);
      t.ok(op.responses[String(r.success.status)], `${r.path} success response`);
      const common =
        r.auth.kind === 'api_key' ? ['401', '403', '422', '500', '503']
        : r.auth.kind === 'session' ? (r.auth.role ? ['400', '401', '403', '404', '422', '500', '503'] : ['401', '422', '500', '503'])
        : ['422', '500', '503'];
      for (const s of common) {
        t.match(op.responses[s], { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
      }
      // The panel login's 401 is its refusal of the password in its body, declared as its own.
      if (r.auth.kind === 'public' && !r.errors?.includes(401)) t.notOk(op.responses['401'] || op.responses['403'], `${r.path}: never 401 or 403`);
    }
  });

  t.test('the Problem schema is published', async (t) => {
    const problemSchema = doc.components.schemas.Problem;
    t.ok(problemSchema);
    t.strictSame([...problemSchema.required].sort(), PROBLEM_KEYS);
    t.match(problemSchema.properties.errors.items, { required: ['pointer', 'code', 'message'] });
  });

  t.test('public links are documented as public, with what they answer', async (t) => {
    const pixel = doc.paths['/t/o/{token}'].get;
    t.strictSame(pixel.security, [], 'no credentials');
    t.equal(pixel['x-public'], true);
    t.match(pixel.responses['200'].content, { 'image/gif': { schema: { type: 'string' } } });
    t.notOk(pixel.responses['401'] || pixel.responses['403'], 'never 401 or 403');
    t.match(pixel.parameters, [{ name: 'token', in: 'path', required: true }]);
    const click = doc.paths['/t/c/{token}'].get;
    t.match(click.responses['302'], { headers: { Location: { schema: { type: 'string' } } } });
    t.match(click.responses['404'].content, { 'application/problem+json': {}, 'text/html': {} }, 'a problem object or a page');
    const page = doc.paths['/u/{token}'];
    t.match(page.get.responses['200'].content, { 'text/html': { schema: { type: 'string' } } });
    const body = page.post.requestBody;
    t.strictSame(Object.keys(body.content).sort(), ['application/x-www-form-urlencoded', 'multipart/form-data']);
    t.strictSame(Object.keys(body.content['multipart/form-data'].schema.properties).sort(), ['List-Unsubscribe', 'action', 'comment', 'reason']);
    t.match(body.description, /16384 bytes/);
    t.ok(page.post.responses['413'] && page.post.responses['400'], 'a form documents 400 and 413');
    t.notOk(page.post.responses['415'], 'a form is never 415');
    t.match(doc.info.description, /public links/);
  });

  t.test('request bodies are documented and internal annotations do not leak', async (t) => {
    const echo = doc.paths['/v1/test-fixtures/echo'].post;
    t.match(echo.requestBody.content['application/json'].schema.properties.lang, { enum: ['es', 'en'] });
    t.ok(echo.responses['413'] && echo.responses['415'], 'a route with a body documents 413 and 415');
    t.notMatch(res.text, /x-error-code/);
  });
});

t.test('503 service_unavailable when Postgres does not answer', async (t) => {
  const closed = await freePort();
  const down = await startTestWeb(t, { databaseUrl: `postgres://postgres@127.0.0.1:${closed}/nothing`, clickhouseUrl: dbs.clickhouseUrl });

  const res = await send('GET', '/v1/senders', { base: down.url, headers: a.headers });
  assertProblem(t, res, 503, 'service_unavailable');
  t.match(res.headers['retry-after'], /^\d+$/, 'Retry-After in seconds');
  t.notOk(res.headers['www-authenticate'], 'not reported as an authentication failure');
  t.notMatch(res.text, /ECONNREFUSED|127\.0\.0\.1/, 'no connection detail leaks');

  const ready = await send('GET', '/readyz', { base: down.internalUrl });
  t.equal(ready.status, 503);
  t.equal(ready.body.checks.postgres.ok, false);
  t.notMatch(ready.text, /ECONNREFUSED|127\.0\.0\.1|error/i, 'why a check failed is logged, not answered');
  t.ok(ready.headers['x-request-id']);

  const health = await send('GET', '/healthz', { base: down.url });
  t.equal(health.status, 200, '/healthz does not touch dependencies');
});

// Last: stopping ClickHouse takes this file's server down for good.
t.test('/readyz: 200 while every dependency answers, 503 once ClickHouse is gone', async (t) => {
  const before = await getInternal('/readyz');
  t.equal(before.status, 200);
  t.match(before.body, { status: 'ready', checks: { postgres: { ok: true }, clickhouse: { ok: true }, queue: { ok: true } } });

  await dbs.clickhouse.stop();
  const after = await getInternal('/readyz');
  t.equal(after.status, 503);
  t.match(after.body, { status: 'unavailable', checks: { postgres: { ok: true }, clickhouse: { ok: false }, queue: { ok: true } } });
  t.ok(after.headers['x-request-id']);
});
