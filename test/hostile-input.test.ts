import t, { type Test } from 'tap';
import { acceptSend } from '../domain/mail/accept.js';
import { SCOPES } from '../domain/tenancy/api-keys.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { unsubscribeToken } from '../domain/tracking/tokens.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { testDatabases } from './helpers/databases.js';
import { httpCall } from './helpers/http.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

/**
 * Hostile input on every route of the OpenAPI document: NUL and other control characters, lone
 * surrogates, invalid UTF-8, deep nesting, numbers JSON cannot carry exactly, very long strings
 * and wrong types, in every path parameter, query parameter and body field a route declares.
 * Whatever arrives, the answer is a success or a problem object, never a 5xx. The routes come
 * from GET /v1/openapi.json, so a route added later is fuzzed without touching this file; that
 * includes the public links (tracking, unsubscribe pages), whose form bodies are fuzzed too.
 */

const dbs = await testDatabases(t, 'hostile');
const { url } = await startTestWeb(t, dbs);
// Every scope, so each request reaches validation and the handler instead of stopping at 403.
const a = await makeTenant(dbs.pool, { scopes: [...SCOPES] });
await makeSenders(dbs.pool, a.tenant, { domain: 'fuzz.example', senders: [{ email: 'news', name: 'News' }] });
// A mail for the public links: a hostile value in one place while the token is valid reaches the
// handler (and, for the unsubscribe form, the domain and Postgres) instead of stopping at a 404.
const linked = await acceptSend(a.tenant, dbs.pool, jobQueue(dbs.databaseUrl), { from: 'news@fuzz.example', to: [{ email: 'linked@example.org' }], subject: 's', text: 't' });
const linkedMail = linked.mails[0]!.mail_id;
const secret = await trackingSecret(dbs.pool);

type Schema = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Array<{ name: string; in: 'path' | 'query'; schema: Schema }>;
  body?: Schema;
  /** A form body (public pages): its fields are text, sent urlencoded. */
  form?: Schema;
}

interface Reply {
  status: number;
  contentType: string;
  body: any;
  /** The request, for the failure message. */
  what: string;
  /** The path the service was asked, after the URL's normalization (a `..` value climbs out of its route). */
  asked?: string;
  location?: string | null;
}

const openapi = (await (await fetch(`${url}/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
const operations: Operation[] = Object.entries(openapi.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({
    method: method.toUpperCase(),
    path,
    operationId: op.operationId,
    parameters: op.parameters ?? [],
    body: op.requestBody?.content?.['application/json']?.schema,
    form: op.requestBody?.content?.['application/x-www-form-urlencoded']?.schema,
  })),
);

// Raw query/path text, sent exactly as written (already percent-encoded where it must be).
const DEEP = 5000;
const textValues: Array<[string, string]> = [
  ['NUL', '%00'],
  ['NUL inside', 'a%00b'],
  ['control characters', '%01%08%0B%1B%1F%7F'],
  ['CR LF', 'a%0D%0Ab'],
  ['lone high surrogate as UTF-8 bytes', '%ED%A0%80'],
  ['lone low surrogate as UTF-8 bytes', 'x%ED%B0%80x'],
  ['invalid UTF-8', '%FF%FE'],
  ['overlong NUL', '%C0%80'],
  ['bare percent', '%'],
  ['bad escape', '%zz'],
  ['1e400', '1e400'],
  ['2^64', '18446744073709551616'],
  ['2^53+1', '9007199254740993'],
  ['-0', '-0'],
  ['1e-400', '1e-400'],
  ['-1', '-1'],
  ['hex', '0x10'],
  ['Infinity', 'Infinity'],
  ['NaN', 'NaN'],
  ['long', 'a'.repeat(8000)],
  ['brackets', '%5B%5D'],
  ['encoded slash', 'a%2Fb'],
  ['dot dot', '..'],
];

// Raw JSON text put in place of a body field (so 1e400 and -0 arrive as written, not as null and 0).
const jsonValues: Array<[string, string]> = [
  ['NUL', '"\\u0000"'],
  ['NUL inside', '"x\\u0000y"'],
  ['control characters', '"\\u0001\\u0008\\u000b\\u001b\\u001f\\u007f"'],
  ['CR LF', '"a\\r\\nBcc: evil@example.com"'],
  ['lone high surrogate', '"\\ud800"'],
  ['lone low surrogate', '"x\\udc00x"'],
  ['reversed pair', '"\\udc00\\ud800"'],
  ['1e400', '1e400'],
  ['-1e400', '-1e400'],
  ['2^64', '18446744073709551616'],
  ['2^53+1', '9007199254740993'],
  ['-0', '-0'],
  ['1e-400', '1e-400'],
  ['0.5', '0.5'],
  ['-1', '-1'],
  ['null', 'null'],
  ['true', 'true'],
  ['empty string', '""'],
  ['numeric string', '"1"'],
  ['empty array', '[]'],
  ['empty object', '{}'],
  ['array of NUL', '["\\u0000"]'],
  ['object with NUL key', '{"k\\u0000":"v"}'],
  ['object with surrogate key', '{"\\ud800":"v"}'],
  ['long string', JSON.stringify('a'.repeat(200_000))],
  ['deep arrays', '['.repeat(DEEP) + ']'.repeat(DEEP)],
  ['deep objects', '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP)],
];

/** A value the schema accepts, so one hostile field at a time is what the server judges. */
function example(schema: Schema | undefined): unknown {
  if (!schema) return 'x';
  if (schema.default !== undefined) return schema.default;
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((k: string) => [k, example(schema.properties?.[k])]));
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => example(schema.items));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      if (schema.format === 'email') return 'someone@example.com';
      if (schema.format === 'date') return '2026-01-01';
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
  }
}

// Bodies that get past the business checks (a verified sender of this instance), so a value the
// schema lets through reaches the domain code and Postgres.
const bodyOverrides: Record<string, Record<string, unknown>> = {
  sendMail: { from: 'news@fuzz.example', to: [{ email: 'ann@example.com', variables: { name: 'Ann' } }], subject: 'Hi', html: '<p>Hi</p>' },
};

// Path parameters that must be valid for the other inputs to get past them: a public link's signed
// token (while the token itself is fuzzed, the others keep their valid values).
const pathOverrides: Record<string, Record<string, string>> = {
  unsubscribe: { token: unsubscribeToken(secret, linkedMail) },
};

type Path = Array<string | number>;

/** Every place a body may hold a value: declared fields, array items, and a free key of open objects. */
function bodyPaths(schema: Schema | undefined, at: Path = [], depth = 0): Path[] {
  if (!schema || depth > 6) return [];
  const out: Path[] = [at];
  if (schema.properties) {
    for (const [k, s] of Object.entries<Schema>(schema.properties)) out.push(...bodyPaths(s, [...at, k], depth + 1));
  }
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (type.includes('object') && schema.additionalProperties !== false) {
    const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    out.push(...bodyPaths(extra ?? {}, [...at, 'free_key'], depth + 1));
  }
  if (schema.items) out.push(...bodyPaths(schema.items, [...at, 0], depth + 1));
  return out;
}

const MARK = '"__hostile_value__"';

/** The base body as JSON text with the hostile raw text at `path`, creating containers as needed. */
function bodyWith(base: unknown, path: Path, raw: string): string {
  if (path.length === 0) return raw;
  const root: any = structuredClone(base);
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    if (node[key] === null || typeof node[key] !== 'object') node[key] = typeof path[i + 1] === 'number' ? [] : {};
    node = node[key];
  }
  node[path[path.length - 1]!] = '__hostile_value__';
  return JSON.stringify(root).replace(MARK, () => raw);
}

function pathWith(op: Operation, hostile?: { name: string; raw: string }): string {
  return op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (hostile?.name === name) return hostile.raw;
    const override = pathOverrides[op.operationId]?.[name];
    if (override !== undefined) return encodeURIComponent(override);
    const schema = op.parameters.find((p) => p.in === 'path' && p.name === name)?.schema;
    return encodeURIComponent(String(example(schema)));
  });
}

async function call(what: string, method: string, path: string, body?: string, type = 'application/json'): Promise<Reply> {
  try {
    // node:http rather than fetch, for CPU (httpCall): the URL normalized as fetch does, the same
    // method, headers and body; a click link's redirect is an answer to judge, not to follow.
    const res = await httpCall(url + path, { method, headers: { ...a.headers, ...(body === undefined ? {} : { 'content-type': type }) }, body });
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, contentType: res.headers['content-type'] ?? '', body: parsed, what, asked: new URL(url + path).pathname, location: res.headers.location ?? null };
  } catch (err) {
    // A connection torn down mid-answer is as bad as a 500: report it the same way.
    return { status: 599, contentType: '', body: { error: String(err) }, what };
  }
}

/** Runs the requests a few at a time: bounded load, and well under a minute in all. */
async function runAll(jobs: Array<() => Promise<Reply>>, width = 8): Promise<Reply[]> {
  const out: Reply[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) out.push(await jobs[next++]!());
    }),
  );
  return out;
}

function requestsFor(op: Operation): Array<() => Promise<Reply>> {
  const jobs: Array<() => Promise<Reply>> = [];
  const base = op.body ? { ...(example(op.body) as object), ...bodyOverrides[op.operationId] } : undefined;
  const baseText = base === undefined ? undefined : JSON.stringify(base);
  for (const p of op.parameters) {
    for (const [label, raw] of textValues) {
      const what = `${op.method} ${op.path} ${p.in} ${p.name}=${label}`;
      if (p.in === 'path') jobs.push(() => call(what, op.method, pathWith(op, { name: p.name, raw }), baseText));
      else jobs.push(() => call(what, op.method, `${pathWith(op)}?${p.name}=${raw}`, baseText));
    }
  }
  if (op.form) {
    // Each declared field, and an undeclared one, holding each raw text as sent (percent-escapes included).
    for (const field of [...Object.keys(op.form.properties ?? {}), 'free_field']) {
      for (const [label, raw] of textValues) {
        const what = `${op.method} ${op.path} form ${field}=${label}`;
        jobs.push(() => call(what, op.method, pathWith(op), `${encodeURIComponent(field)}=${raw}`, 'application/x-www-form-urlencoded'));
      }
    }
  }
  if (op.body) {
    for (const path of bodyPaths(op.body)) {
      for (const [label, raw] of jsonValues) {
        const what = `${op.method} ${op.path} body /${path.join('/')}=${label}`;
        jobs.push(() => call(what, op.method, pathWith(op), bodyWith(base, path, raw)));
      }
    }
  }
  return jobs;
}

/**
 * A `..` path value under a one-segment route (/u/..) is normalized by the URL into `/`, which
 * answers its own documented redirect to the API reference: not the route's answer to judge.
 */
const rootRedirect = (r: Reply) => r.asked === '/' && r.status === 302 && r.location === '/docs';

const isProblem = (r: Reply) =>
  r.contentType.startsWith('application/problem+json') &&
  r.body?.status === r.status &&
  typeof r.body.code === 'string' &&
  typeof r.body.detail === 'string' &&
  typeof r.body.trace_id === 'string';

// The rules themselves, with their answers: the fuzz below only proves there is no 5xx.

const jsonHeaders = { ...a.headers, 'content-type': 'application/json' };
const sendBody = (over: Record<string, unknown> = {}) => JSON.stringify({ ...bodyOverrides.sendMail, ...over });
async function exchange(method: string, path: string, body?: string) {
  const res = await fetch(url + path, { method, headers: body === undefined ? a.headers : jsonHeaders, body });
  return { status: res.status, body: (await res.json()) as any };
}
const mailCount = async () => Number((await dbs.pool.query('SELECT count(*) AS n FROM mails')).rows[0].n);

/** A 422 whose first error is `code` at `pointer`. */
function assert422(t: Test, r: { status: number; body: any }, pointer: string, code: string) {
  t.equal(r.status, 422, `${pointer} ${code}: status`);
  t.equal(r.body.code, 'validation_error');
  t.match(r.body.errors?.[0], { pointer, code, message: String }, `${pointer} ${code}: errors[0]`);
}

t.test('NUL in a query or path value is 422 value_error.nul_character at /<name>', async (t) => {
  for (const name of ['subject', 'msg_id', 'mail_id', 'recipient', 'custom_msg_id', 'custom_group_code', 'tz']) {
    assert422(t, await exchange('GET', `/v1/mails?${name}=a%00b`), `/${name}`, 'value_error.nul_character');
  }
  assert422(t, await exchange('GET', '/v1/mails?subject=%00'), '/subject', 'value_error.nul_character');
  assert422(t, await exchange('GET', '/v1/mails/a%00b'), '/mail_id', 'value_error.nul_character');
  assert422(t, await exchange('GET', '/v1/domains/a%00b/status'), '/domain_name', 'value_error.nul_character');
  const several = await exchange('GET', '/v1/mails?subject=%00&msg_id=%00&page=0');
  t.same(several.body.errors.map((e: any) => e.pointer).sort(), ['/msg_id', '/page', '/subject'], 'every failing value at once');
});

t.test('NUL or a lone surrogate in any body string or key is 422 at its pointer, and nothing is written', async (t) => {
  const before = await mailCount();
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['custom_msg_id', { custom_msg_id: 'x\u0000' }, '/custom_msg_id', 'value_error.nul_character'],
    ['subject', { subject: 'Hi \u0000' }, '/subject', 'value_error.nul_character'],
    ['a recipient name', { to: [{ email: 'ann@example.com', name: '\u0000' }] }, '/to/0/name', 'value_error.nul_character'],
    ['a free-form variable', { variables: { deep: { list: ['ok', 'x\u0000'] } } }, '/variables/deep/list/1', 'value_error.nul_character'],
    ['a free-form key', { variables: { 'k\u0000': 'v' } }, '/variables/k\u0000', 'value_error.nul_character'],
    ['a key with / and ~', { variables: { 'a/~\u0000': 1 } }, '/variables/a~1~0\u0000', 'value_error.nul_character'],
    ['a header value', { headers: { 'X-Note': 'a\u0000b' } }, '/headers/X-Note', 'value_error.nul_character'],
    ['a lone high surrogate', { html: '<p>\ud800</p>' }, '/html', 'value_error.lone_surrogate'],
    ['a lone low surrogate in a recipient variable', { to: [{ email: 'ann@example.com', variables: { n: '\udc00' } }] }, '/to/0/variables/n', 'value_error.lone_surrogate'],
    ['a reversed pair', { text: '\udc00\ud800' }, '/text', 'value_error.lone_surrogate'],
    ['a surrogate key', { variables: { '\ud800': 'v' } }, '/variables/\ud800', 'value_error.lone_surrogate'],
  ];
  for (const [label, over, pointer, code] of cases) {
    t.test(label, async (t) => assert422(t, await exchange('POST', '/v1/mails/send', sendBody(over)), pointer, code));
  }
  const many = await exchange('POST', '/v1/mails/send', sendBody({ variables: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, '\u0000'])) }));
  t.equal(many.status, 422);
  t.equal(many.body.errors.length, 100, 'a body of 5,000 bad strings is answered with the first 100, not a huge list');
  t.equal(await mailCount(), before, 'no mail was accepted');
  const emoji = await exchange('POST', '/v1/mails/send', sendBody({ subject: 'Hi \ud83d\ude00', custom_msg_id: 'tab\there', variables: { '\ud83d\ude00': 'ok' } }));
  t.equal(emoji.status, 202, 'a surrogate pair (an emoji) and other control characters are text like any other');
});

/** n objects nested inside each other: `{"a":{"a":{}}}` is 3. */
const nested = (n: number) => '{"a":'.repeat(n - 1) + '{}' + '}'.repeat(n - 1);

t.test(`a body nested deeper than ${64} levels is 422 value_error.too_deep, whatever its route`, async (t) => {
  const before = await mailCount();
  // The body is depth 1 and `variables` depth 2, so 63 objects from `variables` down reach 64.
  const fits = await exchange('POST', '/v1/mails/send', sendBody({ variables: '__v__' }).replace('"__v__"', nested(63)));
  t.equal(fits.status, 202, '64 levels are accepted');
  const deep = await exchange('POST', '/v1/mails/send', sendBody({ variables: '__v__' }).replace('"__v__"', nested(64)));
  assert422(t, deep, '/variables' + '/a'.repeat(63), 'value_error.too_deep');
  t.same(deep.body.errors[0].params, { max_depth: 64 });
  const huge = await exchange('POST', '/v1/mails/send', sendBody({ variables: '__v__' }).replace('"__v__"', nested(5000)));
  assert422(t, huge, '/variables' + '/a'.repeat(63), 'value_error.too_deep');
  // 4 MB of '[' within the route's 10 MB limit: parsed and checked without recursion.
  const arrays = await exchange('POST', '/v1/mails/send', '['.repeat(2_000_000) + ']'.repeat(2_000_000));
  assert422(t, arrays, '/0'.repeat(64), 'value_error.too_deep');
  t.equal(await mailCount(), before + 1, 'only the body within the limit was accepted');
});

t.test('numbers JSON or a query cannot carry exactly are 422, not SQL errors', async (t) => {
  assert422(t, await exchange('GET', '/v1/mails?sender_id=1e400'), '/sender_id', 'finite_number');
  assert422(t, await exchange('GET', '/v1/activities/sent?page=Infinity'), '/page', 'finite_number');
  assert422(t, await exchange('GET', '/v1/mails?sender_id=18446744073709551616'), '/sender_id', 'less_than_equal');
  assert422(t, await exchange('GET', '/v1/senders/1e400'), '/id', 'finite_number');
  assert422(t, await exchange('POST', '/v1/mails/send', sendBody({ template_id: '__n__' }).replace('"__n__"', '1e400')), '/template_id', 'finite_number');
  assert422(t, await exchange('POST', '/v1/mails/send', sendBody({ template_id: '__n__' }).replace('"__n__"', '18446744073709551616')), '/template_id', 'less_than_equal');
  assert422(t, await exchange('POST', '/v1/mails/send', sendBody({ variables: { n: '__n__' } }).replace('"__n__"', '-1e400')), '/variables/n', 'finite_number');
});

t.test('a path segment that is not percent-encoded UTF-8 is 400 bad_request', async (t) => {
  for (const path of ['/v1/mails/%ED%A0%80', '/v1/mails/%FF/logs', '/v1/senders/%zz', '/v1/domains/%C0%80/status', '/v1/domains/%']) {
    const r = await exchange('GET', path);
    t.equal(r.status, 400, path);
    t.equal(r.body.code, 'bad_request', path);
  }
});

t.test('the OpenAPI document lists the routes to fuzz', async (t) => {
  t.ok(operations.length >= 20, `${operations.length} operations`);
  t.ok(operations.some((op) => op.body), 'at least one route takes a body');
  t.ok(operations.some((op) => op.form), 'at least one route takes a form');
  for (const id of Object.keys(pathOverrides)) t.ok(operations.some((op) => op.operationId === id), `${id} is in the document`);
});

for (const op of operations) {
  t.test(`${op.method} ${op.path}`, async (t) => {
    const replies = await runAll(requestsFor(op));
    const bad = replies.filter((r) => r.status >= 500 || (r.status >= 300 && !isProblem(r) && !rootRedirect(r)));
    t.same(
      bad.map((r) => `${r.what} -> ${r.status} ${r.body?.code ?? JSON.stringify(r.body)?.slice(0, 200)}`),
      [],
      `${replies.length} hostile requests: every answer a success or a problem object, none a 5xx`,
    );
  });
}

t.test('the unsubscribe form was fuzzed past its token: its hostile fields reached Postgres', async (t) => {
  const { rows } = await dbs.pool.query(`SELECT method FROM mail_unsubscribes WHERE mail_id = $1`, [linkedMail]);
  t.same(rows, [{ method: 'page' }], 'the linked mail is unsubscribed once, from the form');
});
