import t from 'tap';
import { readFileSync } from 'node:fs';
import { request, type ClientRequest } from 'node:http';
import { testDatabases } from './helpers/databases.js';
import { makeTenant, type TestTenant } from './helpers/fixtures.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { spawnWebDyno } from './helpers/spawn.js';
import { startTestWeb } from './helpers/web.js';
import { waitFor } from './helpers/wait.js';

/**
 * Issue 37, the panel's CSV imports under hostile files and clients (docs/panel.md "The
 * import's progress", docs/datasets.md "Reading the file, writing the rejects"):
 * - a cell over CSV_MAX_CELL_BYTES refuses its row (value_error.too_large, line and column) and
 *   the rest of the file is read; a record over CSV_MAX_RECORD_BYTES refuses the file (400,
 *   its line); a rejects file is stored in pieces of at most 1 MiB and downloads whole;
 * - a web dyno (its own process) running 4 imports of a 200 MB cell at once stays under the
 *   memory bound docs/panel.md states;
 * - uploads that send nothing hold no connection of the import pool: 4 stalled uploads in each
 *   of two instances leave a third instance's import running; a stalled upload is ended by
 *   IMPORT_IDLE_TIMEOUT_MS (408 request_timeout, the run failed).
 */

const MiB = 1024 * 1024;
/** docs/panel.md: a web dyno's resident memory with 4 imports at once, whatever their files. */
const WEB_RSS_BOUND = 768 * MiB;

const dbs = await testDatabases(t, 'panelimportbounds');
const pool = dbs.pool;
// Stalls last as long as the test needs them here; the idle bound has its own web below.
const { url: here } = await startTestWeb(t, dbs, { env: { IMPORT_IDLE_TIMEOUT_MS: '120000', WEB_REQUEST_TIMEOUT_MS: '120000' } });
const { url: impatient } = await startTestWeb(t, dbs, { env: { IMPORT_IDLE_TIMEOUT_MS: '1000' } });

const tenants: TestTenant[] = [];
for (let i = 0; i < 3; i++) tenants.push(await makeTenant(pool, { scopes: ['dataset:read', 'dataset:write'] }));
const token = await panelLogin(here, await makePanelUser(pool, tenants.map((x) => ({ instanceId: x.tenant.instanceId, role: 'admin' as const }))));
const headersOf = (x: TestTenant) => panelHeaders(token, x.slug);
const call = (x: TestTenant, method: string, path: string, body?: unknown, base = here) => jsonCall(base, method, path, body, headersOf(x));

const datasets = new Map<TestTenant, number>();
const lists = new Map<TestTenant, number>();
for (const x of tenants) {
  await call(x, 'POST', '/v1/private/fields', { key: 'first_name', name: 'First name', type: 'text' });
  const d = await call(x, 'POST', '/v1/private/datasets', { name: 'People', channel: ['mail'], columns: [{ key: 'email', required: true }, { key: 'first_name' }] });
  if (d.status !== 201) throw new Error(JSON.stringify(d.body));
  datasets.set(x, d.body.id);
  const l = await call(x, 'POST', '/v1/private/lists', { name: 'Names', columns: [{ key: 'email', position: 1 }, { key: 'first_name', position: 2 }] });
  if (l.status !== 201) throw new Error(JSON.stringify(l.body));
  lists.set(x, l.body.id);
}
const [a, b, c] = tenants as [TestTenant, TestTenant, TestTenant];
const importPath = (x: TestTenant, key: string) => `/v1/private/datasets/${datasets.get(x)}/imports?key=${key}`;
const contacts = async (x: TestTenant) =>
  Number((await pool.query('SELECT count(*) AS n FROM dataset_records WHERE instance_id = $1 AND dataset_id = $2', [x.tenant.instanceId, datasets.get(x)])).rows[0].n);

/** A CSV upload sent as the caller says: `part` writes (resolving once the socket takes it), `end` finishes; `answer` is the response. */
function upload(base: string, x: TestTenant, path: string, totalBytes: number) {
  const req: ClientRequest = request(base + path, {
    method: 'POST',
    headers: { ...headersOf(x), 'content-type': 'text/csv', 'content-length': String(totalBytes) },
  });
  req.flushHeaders();
  const answer = new Promise<{ status: number; body: any; headers: Record<string, unknown> }>((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON: kept as text */
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
    });
    req.on('error', () => resolve({ status: 0, body: undefined, headers: {} }));
  });
  return {
    // Resolves on a closed request too: a server that answered early takes no more.
    part: (bytes: Buffer) =>
      new Promise<void>((resolve) => {
        if (req.destroyed || req.write(bytes)) return resolve();
        req.once('drain', resolve);
        req.once('close', resolve);
      }),
    end: () => req.end(),
    abort: () => req.destroy(),
    answer,
  };
}

async function send(base: string, x: TestTenant, path: string, body: Buffer) {
  const up = upload(base, x, path, body.length);
  await up.part(body);
  up.end();
  return up.answer;
}

function csvOf(n: number, prefix: string): Buffer {
  const rows = ['email,first_name'];
  for (let i = 0; i < n; i++) rows.push(`${prefix}${i}@example.org,P ${i}`);
  return Buffer.from(rows.join('\n') + '\n');
}

/** A state another process reaches: polled tightly (50 ms), bounded at 30 s. */
const until = <T>(what: string, probe: () => Promise<T | undefined>) => waitFor(what, probe, { ms: 30_000, every: 50 });

const progress = (x: TestTenant, key: string, base = here) => call(x, 'GET', `/v1/private/imports/${key}`, undefined, base);

t.test('a cell over CSV_MAX_CELL_BYTES refuses its row, the rest is read; rejects in pieces of at most 1 MiB, downloaded whole', async (t) => {
  // Row 2: a first_name of 70,000 bytes (over 64 KiB). Row 4: two cells of 300,000 bytes that
  // are not UTF-8; the rejects file shows each invalid byte as U+FFFD (3 bytes), so that one
  // refused row is about 1.8 MB of rejects, more than a stored piece.
  const body = Buffer.concat([
    Buffer.from('email,first_name\nok1@example.org,One\nbig@example.org,' + 'a'.repeat(70_000) + '\nok2@example.org,Two\n'),
    Buffer.alloc(300_000, 0xff),
    Buffer.from(','),
    Buffer.alloc(300_000, 0xfe),
    Buffer.from('\nok3@example.org,Three\n'),
  ]);
  const key = 'bounds-cell';
  const done = await send(here, a, importPath(a, key), body);
  t.equal(done.status, 200, JSON.stringify(done.body).slice(0, 300));
  t.match(done.body, { rows: 5, accepted: 3, rejected: 2, created: 3 });
  t.match(done.body.first_rejects[0], { row: 2, code: 'value_error.too_large', field: 'first_name', detail: /^line 3, column "first_name": the cell has 70000 bytes, over the 65536 .*CSV_MAX_CELL_BYTES/ });
  t.match(done.body.first_rejects[1], { row: 4, code: 'value_error.too_large', field: 'email', detail: /^line 5, column "email"/ });

  const pieces = await pool.query('SELECT seq, length(chunk) AS n FROM panel_import_rejects WHERE instance_id = $1 AND key = $2 ORDER BY seq', [a.tenant.instanceId, key]);
  const sizes = pieces.rows.map((r) => Number(r.n));
  t.ok(sizes.length >= 2, `stored in ${sizes.length} pieces`);
  t.ok(sizes.every((n) => n <= MiB), `every piece at most 1 MiB: ${sizes.join(', ')}`);

  const res = await fetch(`${here}/v1/private/imports/${key}/rejects`, { headers: headersOf(a) });
  t.equal(res.status, 200, 'the rejects download answers');
  const text = Buffer.from(await res.arrayBuffer());
  t.equal(text.length, sizes.reduce((s, n) => s + n, 0), 'the whole file');
  const lines = text.toString('utf8').trim().split('\n');
  t.equal(lines.length, 3, 'the header and the 2 refused rows');
  t.match(lines[1], /^2,value_error\.too_large,first_name,,/);
  t.ok(lines[2]!.startsWith('4,value_error.too_large,email,,') && Buffer.byteLength(lines[2]!) > MiB, 'the large refused row whole');
});

t.test('a record over CSV_MAX_RECORD_BYTES refuses the file with its line, nothing imported; the same for a list upload', async (t) => {
  const before = await contacts(a);
  // Two cells of 600,000 bytes: each under the record bound, together over it.
  const wide = Buffer.from('email,first_name\nw1@example.org,Ok\nw2@example.org,' + 'a'.repeat(600_000) + ',' + 'b'.repeat(600_000) + '\nw3@example.org,Ok\n');
  const refused = await send(here, a, importPath(a, 'bounds-record'), wide);
  t.equal(refused.status, 400);
  t.equal(refused.body.code, 'dataset_import_csv_invalid');
  t.match(refused.body.detail, /record starting at line 3 is over 1048576 bytes \(CSV_MAX_RECORD_BYTES\)/);
  t.match((await progress(a, 'bounds-record')).body, { status: 'failed', error: { code: 'dataset_import_csv_invalid' } });

  // An unclosed quote on line 3 swallows every row after it.
  const rows = ['email,first_name', 'q1@example.org,Ok', 'q2@example.org,"unclosed'];
  for (let i = 0; i < 40_000; i++) rows.push(`q${i}@example.org,Row ${i}`);
  const unclosed = await send(here, a, importPath(a, 'bounds-quote'), Buffer.from(rows.join('\n') + '\n'));
  t.equal(unclosed.status, 400);
  t.match(unclosed.body.detail, /record starting at line 3 is over/);
  t.equal(await contacts(a), before, 'nothing of either file imported');

  const list = await send(here, a, `/v1/private/lists/${lists.get(a)}/uploads?key=bounds-list`, wide);
  t.equal(list.status, 400);
  t.equal(list.body.code, 'list_import_csv_invalid');
  t.match(list.body.detail, /record starting at line 3 is over 1048576 bytes/);
});

t.test('an upload that sends nothing holds no import connection: 4 stalls in each of two instances, a third instance imports', async (t) => {
  const stalls: Array<ReturnType<typeof upload> & { key: string; x: TestTenant }> = [];
  t.teardown(() => stalls.forEach((s) => s.abort()));
  for (const x of [a, b]) {
    for (let i = 0; i < 4; i++) {
      const key = `stall-${x.slug}-${i}`;
      const up = upload(here, x, importPath(x, key), 10 * MiB);
      await up.part(Buffer.from('email,first_name\nstall@example.org,'));
      stalls.push({ ...up, key, x });
    }
  }
  for (const s of stalls) {
    await until(`${s.key} reading`, async () => {
      const p = await progress(s.x, s.key);
      return p.body?.status === 'reading' && p.body.bytes_read > 0 ? true : undefined;
    });
  }
  const small = await send(here, c, importPath(c, 'third-instance'), csvOf(20, 'third-'));
  t.equal(small.status, 200, `the third instance's import runs: ${JSON.stringify(small.body).slice(0, 300)}`);
  t.match(small.body, { rows: 20, created: 20 });
  for (const s of stalls) t.equal((await progress(s.x, s.key)).body.status, 'reading', `${s.key} still waiting for its file (not ended to make room)`);
});

t.test('a stalled upload is ended by IMPORT_IDLE_TIMEOUT_MS: 408 request_timeout, its run failed', async (t) => {
  // One sends headers and a few bytes, one its headers only. Instance c: b's 4 stalls of the test
  // above may still count as running until their aborted uploads are marked failed.
  const some = upload(impatient, c, importPath(c, 'idle-some'), MiB);
  await some.part(Buffer.from('email,first_name\nidle@example.org,'));
  const none = upload(impatient, c, `/v1/private/lists/${lists.get(c)}/uploads?key=idle-none`, MiB);
  t.teardown(() => (some.abort(), none.abort()));
  for (const [up, key] of [[some, 'idle-some'], [none, 'idle-none']] as const) {
    const r = await up.answer;
    t.equal(r.status, 408, `${key}: ${JSON.stringify(r.body)}`);
    t.equal(r.body?.code, 'request_timeout');
    t.match(r.body?.detail, /No byte of the file arrived for 1000 ms/);
    t.match((await progress(c, key, impatient)).body, { status: 'failed', error: { code: 'request_timeout' } });
  }
});

// 800 MB over loopback on a busy test machine may take longer than the default minute.
const spawnWeb = () => spawnWebDyno(t, dbs, { WEB_REQUEST_TIMEOUT_MS: '600000' });

const statusKb = (pid: number, field: 'VmRSS' | 'VmHWM') => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
};

t.test(`a web dyno running 4 imports of a 200 MB cell at once stays under ${WEB_RSS_BOUND / MiB} MiB`, async (t) => {
  const dyno = await spawnWeb();
  const pid = dyno.proc.pid;
  const idle = statusKb(pid, 'VmRSS');
  // Watched all along: past the bound the dyno is killed at once (the old code grew by
  // gigabytes per import, which the machine running the tests must not pay).
  let over = 0;
  const watch = setInterval(() => {
    const rss = statusKb(pid, 'VmRSS');
    if (rss > WEB_RSS_BOUND && !over) {
      over = rss;
      dyno.proc.signal('SIGKILL');
    }
  }, 20);
  t.teardown(() => clearInterval(watch));

  const head = Buffer.from('email,first_name\nhuge@example.org,');
  const cell = 200 * 1000 * 1000;
  const block = Buffer.alloc(MiB, 0x61);
  const uploads = [0, 1, 2, 3].map(async (i) => {
    const up = upload(dyno.base, a, importPath(a, `huge-import-${i}`), head.length + cell + 1);
    await up.part(head);
    // Streamed a MiB at a time with back-pressure: no 200 MB buffer in this process.
    for (let sent = 0; sent < cell && !over; sent += block.length) {
      const n = Math.min(block.length, cell - sent);
      await up.part(n === block.length ? block : block.subarray(0, n));
    }
    if (over) up.abort();
    else {
      await up.part(Buffer.from('\n'));
      up.end();
    }
    return up.answer;
  });
  const answers = await Promise.all(uploads);
  const peak = over || statusKb(pid, 'VmHWM');
  clearInterval(watch);
  t.ok(!over, `the dyno was not over the bound (${Math.round(over / MiB)} MiB when killed)`);
  t.ok(peak < WEB_RSS_BOUND, `peak RSS ${Math.round(peak / MiB)} MiB (idle ${Math.round(idle / MiB)} MiB), bound ${WEB_RSS_BOUND / MiB} MiB`);
  for (const r of answers) {
    t.equal(r.status, 400, String(JSON.stringify(r.body)).slice(0, 300));
    t.match(r.body?.detail, /record starting at line 2 is over 1048576 bytes/);
  }
  t.equal((await fetch(`${dyno.base}/healthz`)).status, 200, 'the dyno answers after');
});
