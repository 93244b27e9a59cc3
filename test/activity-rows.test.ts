import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { pino } from 'pino';
import t from 'tap';
import { clicksQuery } from '../analytics/activities/clicks.js';
import { fetchPage } from '../analytics/activities/listing.js';
import { opensQuery } from '../analytics/activities/opens.js';
import type { ActivityQuery } from '../analytics/activities/query.js';
import { checkRows, RowShapeMismatch } from '../analytics/activities/rows.js';
import { sentQuery } from '../analytics/activities/sent.js';
import { unopenedQuery } from '../analytics/activities/unopened.js';
import { createClickHouseClient } from '../analytics/client.js';
import { errorHandler } from '../api/http/errors.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { testDatabases } from './helpers/databases.js';

/**
 * Rows read from ClickHouse are checked against their listing's row shape before they are
 * returned: a row that does not match is a 500 internal_error, logged, never passed on.
 */

const tenant: Tenant = { instanceId: 1, slug: 'rows', tz: null };
const AT = '2026-11-22T10:00:00.120Z';

/** Every listing's query, one per row shape. */
const SHAPES: ActivityQuery[] = [
  sentQuery(tenant, {}),
  unopenedQuery(tenant, {}),
  ...(['none', 'mail_id', 'msg_id'] as const).flatMap((group_by) => [opensQuery(tenant, { group_by }), clicksQuery(tenant, { group_by })]),
];

/** A row of the query's columns, each of its kind; nullable ones null when `nulls`. */
function goodRow(q: ActivityQuery, nulls: boolean): Record<string, unknown> {
  return Object.fromEntries(
    q.columns.map((c) => [c.name, nulls && c.nullable ? null : c.kind === 'number' ? 3 : c.kind === 'datetime' ? AT : 'x@example.com']),
  );
}

t.test('every row shape: a matching row passes, a drifted one is refused by name', async (t) => {
  t.equal(new Set(SHAPES.map((q) => q.name)).size, 8, 'sent, unopened, opens and clicks by group_by');
  for (const q of SHAPES) {
    const rows = [goodRow(q, false), goodRow(q, true)];
    t.equal(checkRows(q, rows), rows, `${q.name}: matching rows pass as they are`);
    t.strictSame(checkRows(q, []), [], `${q.name}: no rows`);

    const number = q.columns.find((c) => c.kind === 'number');
    const datetime = q.columns.find((c) => c.kind === 'datetime' && !c.nullable)!;
    const text = q.columns.find((c) => c.kind === 'text' && !c.nullable)!;
    const last = q.columns[q.columns.length - 1]!;
    const drifts: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a missing column', (({ [last.name]: _, ...rest }) => rest)(goodRow(q, false)), new RegExp(`missing column ${last.name}`)],
      ['an extra column', { ...goodRow(q, false), total_count: 1 }, /unexpected column total_count/],
      // ClickHouse's default date-time text, as without date_time_output_format=iso.
      ['a date-time not in ISO 8601 UTC', { ...goodRow(q, false), [datetime.name]: '2026-11-22 10:00:00.120' }, new RegExp(`/${datetime.name} must match pattern`)],
      ['NULL where the column never is', { ...goodRow(q, false), [text.name]: null }, new RegExp(`/${text.name} must be string`)],
    ];
    // A number as text, as with output_format_json_quote_64bit_integers=1.
    if (number) drifts.push(['a number as text', { ...goodRow(q, false), [number.name]: '3' }, new RegExp(`/${number.name} must be number`)]);
    for (const [what, row, problem] of drifts) {
      const err = t.throws(() => checkRows(q, [goodRow(q, false), row]), RowShapeMismatch, `${q.name}: ${what}`) as RowShapeMismatch;
      t.equal(err.query, q.name);
      t.equal(err.row, 1, 'names the row');
      t.match(err.message, problem, `${q.name}: ${what}: says what is wrong`);
      t.notMatch(err.message, /example\.com|10:00:00/, 'never quotes the values');
    }
  }
});

t.test('a listing whose SQL drifted from its columns answers 500 internal_error and logs why', async (t) => {
  const dbs = await testDatabases(t, 'activity_rows');
  const ch = createClickHouseClient(dbs.clickhouseUrl);
  t.teardown(() => ch.close());

  // Real ClickHouse, through the listings' own runner (fetchPage) and the API's error handler.
  const query = (name: string, sql: string): ActivityQuery => ({
    name,
    sql,
    params: {},
    columns: [
      { name: 'mail_id', kind: 'text' },
      { name: 'opened_at', kind: 'datetime' },
      { name: 'open_count', kind: 'number' },
    ],
  });
  const OPENED_AT = `toDateTime64('2026-11-22 10:00:00.120', 3, 'UTC') AS opened_at`;
  const queries: Record<string, ActivityQuery> = {
    good: query('test.as_declared', `SELECT 'ann@example.com' AS mail_id, ${OPENED_AT}, toUInt32(2) AS open_count`),
    missing: query('test.missing', `SELECT 'ann@example.com' AS mail_id, ${OPENED_AT}`),
    text: query('test.text_count', `SELECT 'ann@example.com' AS mail_id, ${OPENED_AT}, 'ann@example.com' AS open_count`),
  };

  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = express();
  app.get('/rows/:key', (req, res, next) => {
    fetchPage(ch, () => queries[req.params.key]!, { page: 1, page_size: 20 }).then((page) => res.json(page), next);
  });
  app.use(errorHandler(pino({ level: 'info' }, sink)));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (key: string) => {
    const res = await fetch(`${base}/rows/${key}`);
    return { status: res.status, body: (await res.json()) as any };
  };

  const good = await get('good');
  t.equal(good.status, 200, 'rows as declared pass');
  t.strictSame(good.body.data, [{ mail_id: 'ann@example.com', opened_at: '2026-11-22T10:00:00.120Z', open_count: 2 }]);

  for (const [key, problem] of [
    ['missing', /test\.missing: row 0 .* missing column open_count/],
    ['text', /test\.text_count: row 0 .* \/open_count must be number/],
  ] as const) {
    const res = await get(key);
    t.equal(res.status, 500, `${key}: 500`);
    t.equal(res.body.code, 'internal_error', `${key}: internal_error`);
    t.notMatch(JSON.stringify(res.body), /open_count|ann@/, `${key}: nothing of the query or its rows reaches the client`);
    const logged = lines.find((l) => l.err?.type === 'RowShapeMismatch' && problem.test(l.err.message));
    t.ok(logged, `${key}: logged with the query, the row and the column`);
    t.equal(logged?.level, 50, `${key}: at error level`);
    t.notMatch(logged?.err.message ?? '', /ann@/, `${key}: the log names columns, not values`);
  }
});
