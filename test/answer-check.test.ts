import t from 'tap';
import type { Route } from '../api/http/route.js';
import { loadConfig } from '../config/config.js';
import { AppError, RuleViolation } from '../domain/errors.js';
import { createLogger } from '../runtime/logger.js';
import { startWeb } from '../runtime/web.js';
import { testDatabases } from './helpers/databases.js';
import { fixtureRoute } from './helpers/fixture-routes.js';
import { makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The tests' web holds every answer of a route to its declaration (api/http/answer-check.ts), so
 * that each API test also checks the contract. Here, one fixture route answers on demand within
 * its declaration and off it, in each way an answer can stray.
 */
const answering: Route = {
  ...fixtureRoute<{ answer: string }>({
    method: 'get',
    path: '/v1/test-fixtures/answers',
    operationId: 'testAnswers',
    summary: 'Answer as the query says, within the declaration or off it (test fixture)',
    query: { answer: { type: 'string' } },
    errors: [409],
    handler: async ({ query }, res) => {
      switch (query.answer) {
        case 'off-schema':
          return { n: 'one' };
        case 'declared-error':
          throw new RuleViolation('template_edit_conflict', 'a declared 409');
        case 'undeclared-error':
          throw new AppError('form_submission_expired', 'a 410 the route does not declare');
        case 'undeclared-stream':
          res.writeHead(299, { 'content-type': 'application/json' });
          res.end('{"n":1}');
          return undefined;
        case 'wrong-type':
          res.type('text/plain').send('1');
          return undefined;
        default:
          return { n: 1 };
      }
    },
  }),
  success: {
    status: 200,
    description: 'A number',
    schema: { type: 'object', additionalProperties: false, required: ['n'], properties: { n: { type: 'integer' } } },
  },
};

const dbs = await testDatabases(t, 'answercheck');
const checked = await startTestWeb(t, dbs, { extraRoutes: [answering] });
const a = await makeTenant(dbs.pool);

async function ask(base: string, answer: string): Promise<{ status: number; type: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/v1/test-fixtures/answers?answer=${answer}`, { headers: a.headers });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: res.status, type: res.headers.get('content-type'), body };
}

t.test('answers within the declaration pass unchanged', async (t) => {
  t.same((await ask(checked.url, 'good')).body, { n: 1 });
  const conflict = await ask(checked.url, 'declared-error');
  t.equal(conflict.status, 409);
  t.equal(conflict.body.code, 'template_edit_conflict');
  // The common statuses of an API-key route are declared for every one: a 401 is not refused.
  const anonymous = await fetch(`${checked.url}/v1/test-fixtures/answers`);
  t.equal(anonymous.status, 401);
});

t.test('answers off the declaration become a 500 naming the mismatch', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['off-schema', /status 200 answered off its schema: body\/n must be integer/],
    ['undeclared-error', /status 410 is not declared/],
    ['wrong-type', /status 200 answered as text\/plain, declared application\/json/],
  ];
  for (const [answer, why] of cases) {
    const r = await ask(checked.url, answer);
    t.equal(r.status, 500, answer);
    t.match(r.type, /^application\/problem\+json/, answer);
    t.equal(r.body.code, 'internal_error', answer);
    t.match(r.body.detail, why, answer);
  }
  // A streamed answer's head is checked (its body is already on its way).
  t.equal((await ask(checked.url, 'undeclared-stream')).status, 500, 'an undeclared status written by writeHead');
});

t.test('a web without checkAnswers (production) sends what the handler answers', async (t) => {
  const config = loadConfig({ PORT: '0', DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl });
  const web = await startWeb(config, createLogger('silent', 'web'), [answering]);
  t.teardown(() => web.stop());
  const base = web.url.replace('localhost', '127.0.0.1');
  const r = await ask(base, 'off-schema');
  t.equal(r.status, 200);
  t.same(r.body, { n: 'one' });
  t.equal((await ask(base, 'undeclared-error')).status, 410);
});
