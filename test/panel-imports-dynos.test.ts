import t from 'tap';
import { request, type ClientRequest } from 'node:http';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { spawnWebDyno } from './helpers/spawn.js';
import { startTestWeb } from './helpers/web.js';
import { waitFor } from './helpers/wait.js';

/**
 * The panel's imports across web dynos (issue 31, docs/panel.md "The import's progress"): an
 * import runs in its POST on one web process while its progress is polled, and its rejects file
 * downloaded, from another process (a spawned dist/runtime/web.js, so nothing in memory is
 * shared); a dyno killed in the middle of an import leaves nothing saved and its run reads as
 * import_interrupted once no longer refreshed; at most 4 imports run at once in an instance.
 */

const dbs = await testDatabases(t, 'panelimportdynos');
const pool = dbs.pool;
const { url: here } = await startTestWeb(t, dbs);

const spawnWeb = () => spawnWebDyno(t, dbs);
const there = await spawnWeb();

const a = await makeTenant(pool, { scopes: ['dataset:read', 'dataset:write'] });
const admin = await panelLogin(here, await makePanelUser(pool, [{ instanceId: a.tenant.instanceId, role: 'admin' }]));
const call = (base: string, method: string, path: string, body?: unknown) => jsonCall(base, method, path, body, panelHeaders(admin, a.slug));

await call(here, 'POST', '/v1/private/fields', { key: 'first_name', name: 'First name', type: 'text' });
const dataset = await call(here, 'POST', '/v1/private/datasets', { name: 'People', channel: ['mail'], columns: [{ key: 'email', required: true }, { key: 'first_name' }] });
if (dataset.status !== 201) throw new Error(JSON.stringify(dataset.body));
const datasetId: number = dataset.body.id;
const contacts = async () => Number((await pool.query('SELECT count(*) AS n FROM dataset_records WHERE instance_id = $1 AND dataset_id = $2', [a.tenant.instanceId, datasetId])).rows[0].n);

/** A CSV upload whose body is sent as the caller says: `part` writes, `end` finishes; `answer` is the response. */
function upload(base: string, path: string, totalBytes: number) {
  const req: ClientRequest = request(base + path, {
    method: 'POST',
    headers: { ...panelHeaders(admin, a.slug), 'content-type': 'text/csv', 'content-length': String(totalBytes) },
  });
  const answer = new Promise<{ status: number; body: any; headers: Record<string, unknown> }>((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers }));
    });
    req.on('error', () => resolve({ status: 0, body: undefined, headers: {} }));
  });
  return { part: (bytes: Buffer) => req.write(bytes), end: () => req.end(), abort: () => req.destroy(), answer };
}

function csvOf(n: number, bad: (i: number) => boolean = () => false, prefix = 'p'): Buffer {
  const rows = ['email,first_name'];
  for (let i = 0; i < n; i++) rows.push(bad(i) ? `not-an-email-${i},@cmd` : `${prefix}${i}@example.org,P ${i}`);
  return Buffer.from(rows.join('\n') + '\n');
}

async function progress(base: string, key: string) {
  return call(base, 'GET', `/v1/private/imports/${key}`);
}

/** A state another process reaches: polled tightly (50 ms), bounded at 30 s. */
const until = <T>(what: string, probe: () => Promise<T | undefined>) => waitFor(what, probe, { ms: 30_000, every: 50 });

t.test("an import on one dyno: its progress and its rejects file from another process", async (t) => {
  const csv = csvOf(5_000, (i) => i % 1000 === 3);
  const key = 'dynos-import-1';
  const up = upload(here, `/v1/private/datasets/${datasetId}/imports?key=${key}`, csv.length);
  const half = Math.floor(csv.length / 2);
  up.part(csv.subarray(0, half));
  const midway = await until('the other dyno to see the import reading half the file', async () => {
    const p = await progress(there.base, key);
    return p.status === 200 && p.body.bytes_read >= half ? p.body : undefined;
  });
  t.match(midway, { status: 'reading', bytes_total: csv.length, kind: 'dataset_import', target_id: datasetId }, 'the other process sees the run reading');
  t.ok(midway.percent >= 49 && midway.percent < 100, `at ${midway.percent} %`);
  up.part(csv.subarray(half));
  up.end();
  const done = await up.answer;
  t.equal(done.status, 200, JSON.stringify(done.body).slice(0, 300));
  t.match(done.body, { key, rows: 5_000, accepted: 4_995, rejected: 5, rejects_url: `/v1/private/imports/${key}/rejects` });

  const after = await progress(there.base, key);
  t.match(after.body, { status: 'done', percent: 100, bytes_read: csv.length });
  t.same(after.body.summary, done.body, "the other dyno answers the POST's summary");
  const rejects = await fetch(`${there.base}/v1/private/imports/${key}/rejects`, { headers: panelHeaders(admin, a.slug) });
  t.equal(rejects.status, 200);
  const lines = (await rejects.text()).trim().split('\n');
  t.equal(lines.length, 6, 'the header and the 5 refused rows, from the other process');
  t.match(lines[1], /^4,field_value_invalid,email,.*not-an-email-3,'@cmd$/, 'the refused row, its formula cell guarded');
});

t.test('rejects larger than a stored piece come back whole and in order', async (t) => {
  // Each refused row carries ~600 bytes: 4,000 of them are over 2 MiB, three pieces.
  const pad = 'x'.repeat(600);
  const rows = ['email,first_name'];
  for (let i = 0; i < 4_000; i++) rows.push(`bad-${i},${pad}`);
  const csv = Buffer.from(rows.join('\n') + '\n');
  const up = upload(here, `/v1/private/datasets/${datasetId}/imports?key=dynos-big-rejects`, csv.length);
  up.part(csv);
  up.end();
  const done = await up.answer;
  t.match(done.body, { rows: 4_000, rejected: 4_000 });
  const pieces = await pool.query('SELECT seq, length(chunk) AS n FROM panel_import_rejects WHERE instance_id = $1 AND key = $2 ORDER BY seq', [a.tenant.instanceId, 'dynos-big-rejects']);
  t.ok(pieces.rows.length >= 3, `stored in ${pieces.rows.length} pieces`);
  const text = await (await fetch(`${there.base}/v1/private/imports/dynos-big-rejects/rejects`, { headers: panelHeaders(admin, a.slug) })).text();
  const lines = text.trim().split('\n');
  t.equal(lines.length, 4_001);
  t.ok(lines.slice(1).every((l, i) => l.startsWith(`${i + 1},`)), 'every refused row once, in order');
});

t.test('a dyno killed mid-import: nothing saved, the run reads as interrupted, its key can be used again', async (t) => {
  const doomed = await spawnWeb();
  const before = await contacts();
  const csv = csvOf(2_000).toString().replace(/@example\.org/g, '@doomed.example');
  const body = Buffer.from(csv);
  const key = 'dynos-killed';
  const up = upload(doomed.base, `/v1/private/datasets/${datasetId}/imports?key=${key}`, body.length);
  up.part(body.subarray(0, body.length - 10));
  await until('the doomed dyno reading the file', async () => {
    const p = await progress(there.base, key);
    return p.status === 200 && p.body.bytes_read > 0 ? true : undefined;
  });
  doomed.proc.signal('SIGKILL');
  await up.answer;
  t.equal(await contacts(), before, 'no contact of the killed import was saved');
  const right = await progress(there.base, key);
  t.equal(right.body.status, 'reading', 'for up to a minute it still reads as running');
  // The minute without a refresh, passed here instead of waited for.
  await pool.query(`UPDATE panel_imports SET updated_at = now() - interval '61 seconds' WHERE instance_id = $1 AND key = $2`, [a.tenant.instanceId, key]);
  const stale = await progress(there.base, key);
  t.match(stale.body, { status: 'failed', error: { code: 'import_interrupted' }, summary: null, rejects_url: null });

  const again = upload(here, `/v1/private/datasets/${datasetId}/imports?key=${key}`, body.length);
  again.part(body);
  again.end();
  const redone = await again.answer;
  t.equal(redone.status, 200, 'the same key is taken again');
  t.equal(redone.body.created, 2_000);
  t.match((await progress(there.base, key)).body, { status: 'done', error: null });
});

t.test('at most 4 imports run at once in an instance; a live key is refused; an aborted one ends failed', async (t) => {
  // Each its own contacts: imports of the same contacts at once would wait on each other's rows.
  const csvs = [1, 2, 3, 4, 5].map((i) => csvOf(100, undefined, `cap${i}-`));
  const running = [1, 2, 3, 4].map((i) => upload(i % 2 ? here : there.base, `/v1/private/datasets/${datasetId}/imports?key=dynos-cap-${i}`, csvs[i - 1]!.length));
  running.forEach((up, i) => up.part(csvs[i]!.subarray(0, 20)));
  for (let i = 1; i <= 4; i++) await until(`import ${i} reading`, async () => ((await progress(here, `dynos-cap-${i}`)).body?.status === 'reading' ? true : undefined));

  const csv = csvs[4]!;
  const fifth = upload(here, `/v1/private/datasets/${datasetId}/imports?key=dynos-cap-5`, csv.length);
  fifth.part(csv);
  fifth.end();
  const refused = await fifth.answer;
  t.equal(refused.status, 503, 'a fifth waits');
  t.equal(refused.body.code, 'service_unavailable');
  t.equal(refused.headers['retry-after'], '10');

  const twin = upload(there.base, `/v1/private/datasets/${datasetId}/imports?key=dynos-cap-2`, csv.length);
  twin.part(csv);
  twin.end();
  const live = await twin.answer;
  t.equal(live.status, 400, 'a key running on another dyno is refused');
  t.match(live.body.detail, /is running/);

  running[0]!.abort();
  const cut = await until('the aborted import to end failed', async () => {
    const p = await progress(there.base, 'dynos-cap-1');
    return p.body?.status === 'failed' ? p.body : undefined;
  });
  t.match(cut.error, { code: 'bad_request', detail: /cut off/ }, 'its run says why');
  for (const [i, up] of running.entries()) {
    if (i === 0) continue;
    up.part(csvs[i]!.subarray(20));
    up.end();
    const r = await up.answer;
    t.equal(r.status, 200, `the others finish: ${JSON.stringify(r.body)}`);
  }
  const retried = upload(here, `/v1/private/datasets/${datasetId}/imports?key=dynos-cap-5`, csv.length);
  retried.part(csv);
  retried.end();
  t.equal((await retried.answer).status, 200, 'then the fifth runs');
});
