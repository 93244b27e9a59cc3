/**
 * Benchmark (issue 14, the import and contacts parts of its consent/datasets benchmark; the
 * resolver is bench/consent.ts): against the service started the way a user starts it
 * (`node dist/runtime/start.js`, embedded Postgres and ClickHouse, fresh DATA_DIR).
 *
 *   npx tsc -p tsconfig.json && node dist/bench/datasets.js
 *
 * 1. CSV import of BENCH_ROWS rows (email, first_name, last_name, age, city; 52 MB for 1 M) into a
 *    new mail dataset with importContacts (domain/datasets/import.ts, what `cartero dataset
 *    import` runs), compared IN THE SAME RUN with a bare COPY of the same file into a table of
 *    five text columns with no index, constraint or row-level security, both streamed from this
 *    process over one connection. Alternated BENCH_RUNS times; the records table is emptied
 *    before each import so every run starts alike. Issue 14's target: import rows/s ≥ 30 % of bare
 *    COPY's. Issue 28's, in the same pairs: the import ≥ 50 % of the same-index limit (sameIndexLimit:
 *    COPY into an unlogged staging table, then one INSERT ... ON CONFLICT into a table with the
 *    dataset's indexes) and ≥ 5× listmonk's published ~10k rows/s.
 *    Then, for the breakdown:
 *      - the same file imported again into the filled dataset (every contact unchanged);
 *      - one import with the GIN index on values dropped (what indexing column=value costs);
 *      - `cartero dataset import` end to end once (process start included).
 * 2. POST /v1/datasets/{id}/contacts with batches of 1,000 contacts, one request at a time:
 *    BENCH_BATCHES batches of new contacts, then the same number updating them; p50/p99.
 *
 * Environment (all optional):
 *   BENCH_ROWS      rows of the CSV (default 1000000)
 *   BENCH_RUNS      alternated bare COPY / import pairs (default 2)
 *   BENCH_BATCHES   contact batches of 1,000 per phase (default 100)
 *   BENCH_WAIT_IDLE=SECONDS  first wait (up to that long) for the shared machine to be idle
 *   BENCH_KEEP_DATA=1  keep the temp DATA_DIR (printed)
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import copyStreams from 'pg-copy-streams';
import { createDataset } from '../domain/datasets/datasets.js';
import { importContacts, type ImportSummary } from '../domain/datasets/import.js';
import { createField } from '../domain/fields/catalog.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { projectRoot } from '../config/paths.js';
import { readServices } from '../config/services-file.js';
import type { Pool } from '../sql/pool.js';
import { percentile, round } from './proc.js';
import { assertBuilt, benchService, coresByPart, cpuSnapshot, loadBeforeStart, runBench, startService, type CpuSnapshot, type Service } from './service.js';
import { benchTenant } from './fixtures.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 100);
const BATCH = 1_000;
const TARGET_RATIO = 0.3;
/** Issue 28: the import against what the same guarantees cost by hand (sameIndexLimit), and against listmonk's importer. */
const TARGET_OF_LIMIT = 0.5;
const LISTMONK_ROWS_PER_S = 10_000;
const LISTMONK_FACTOR = 5;
const COLUMNS = ['email', 'first_name', 'last_name', 'age', 'city'];
const CITIES = ['Madrid', 'Sevilla', 'Bilbao', 'Valencia', 'Zaragoza'];

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

/** Where the cores went between two snapshots: the service's parts, this process, and the rest. */
function cores(s0: CpuSnapshot, s1: CpuSnapshot) {
  const c = coresByPart(s0, s1);
  return {
    postgres: round(c.postgres, 2),
    bench_process: round(c.bench, 2),
    web: round(c.web, 2),
    machine_busy: round(c.machine.busy, 2),
    other: round(c.machine.busy - c.ours, 2),
  };
}

async function writeCsv(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  out.write(COLUMNS.join(',') + '\n');
  for (let i = 0; i < rows; i++) {
    const line = `user${i}@example${i % 97}.com,Ann${i % 1000},Smith${i % 5000},${18 + (i % 60)},${CITIES[i % 5]}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  out.end();
  await new Promise<void>((r) => out.once('finish', () => r()));
}

/** The file into an unconstrained table of text columns, as fast as Postgres takes it. */
async function bareCopy(pool: Pool, file: string, service: Service) {
  const c = await pool.connect();
  try {
    await c.query('DROP TABLE IF EXISTS bench_bare_copy');
    await c.query(`CREATE TABLE bench_bare_copy (${COLUMNS.map((col) => `${col} text`).join(', ')})`);
    const s0 = cpuSnapshot(service);
    const t0 = performance.now();
    await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), c.query(copyStreams.from('COPY bench_bare_copy FROM STDIN WITH (FORMAT csv, HEADER true)')));
    const seconds = (performance.now() - t0) / 1000;
    const s1 = cpuSnapshot(service);
    await c.query('DROP TABLE bench_bare_copy');
    return { seconds: round(seconds, 2), rows_per_s: round(ROWS / seconds), cpu_cores: cores(s0, s1) };
  } finally {
    c.release();
  }
}

/**
 * Issue 28's fair limit: what an expert writes by hand with the import's guarantees. COPY of the
 * same file into an unlogged staging table, then one INSERT ... SELECT ... ON CONFLICT into a
 * table with dataset_records' indexes (the unique key of the upsert, the GIN index of
 * column=value search; LIKE ... INCLUDING ALL), in one transaction with the import's work_mem.
 * No row checks, no running merge of repeated identifiers (the file has none), no RLS.
 */
async function sameIndexLimit(pool: Pool, file: string, service: Service) {
  const c = await pool.connect();
  try {
    await c.query('DROP TABLE IF EXISTS bench_stage, bench_limit');
    await c.query(`CREATE UNLOGGED TABLE bench_stage (${COLUMNS.map((col) => `${col} text`).join(', ')})`);
    await c.query('CREATE TABLE bench_limit (LIKE dataset_records INCLUDING ALL)');
    const s0 = cpuSnapshot(service);
    const t0 = performance.now();
    await c.query('BEGIN');
    await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), c.query(copyStreams.from('COPY bench_stage FROM STDIN WITH (FORMAT csv, HEADER true)')));
    const copied = performance.now();
    await c.query(`SET LOCAL work_mem = '64MB'`);
    await c.query(`INSERT INTO bench_limit AS r (instance_id, dataset_id, identifier, values)
                   SELECT 1, 1, lower(email), jsonb_build_object('email', lower(email), 'first_name', first_name, 'last_name', last_name, 'age', age::numeric, 'city', city)
                     FROM bench_stage ORDER BY 3
                   ON CONFLICT (dataset_id, identifier) DO UPDATE SET values = r.values || excluded.values, updated_at = now()
                    WHERE NOT r.values @> excluded.values`);
    await c.query('COMMIT');
    const seconds = (performance.now() - t0) / 1000;
    const s1 = cpuSnapshot(service);
    await c.query('DROP TABLE bench_stage, bench_limit');
    return { seconds: round(seconds, 2), rows_per_s: round(ROWS / seconds), copy_s: round((copied - t0) / 1000, 2), insert_s: round((performance.now() - copied) / 1000, 2), cpu_cores: cores(s0, s1) };
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}

const discard = () => new Writable({ write: (_c, _e, done) => done() });

async function timedImport(pool: Pool, tenant: Tenant, datasetId: number, file: string, service: Service) {
  const s0 = cpuSnapshot(service);
  const t0 = performance.now();
  let mergeAt = t0;
  const summary: ImportSummary = await importContacts(tenant, pool, datasetId, {
    input: createReadStream(file, { highWaterMark: 1 << 20 }),
    rejects: discard(),
    onMerge: () => (mergeAt = performance.now()),
  });
  const seconds = (performance.now() - t0) / 1000;
  const s1 = cpuSnapshot(service);
  return {
    seconds: round(seconds, 2),
    rows_per_s: round(ROWS / seconds),
    read_and_check_s: round((mergeAt - t0) / 1000, 2),
    merge_s: round((performance.now() - mergeAt) / 1000, 2),
    summary: { created: summary.created, updated: summary.updated, unchanged: summary.unchanged, rejected: summary.rejected },
    cpu_cores: cores(s0, s1),
  };
}

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; json: any; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  return { status: res.status, json, ms: performance.now() - t0 };
}

async function contactBatches(service: Service, url: string, headers: Record<string, string>, phase: 'create' | 'update') {
  const latencies: number[] = [];
  let errors = 0;
  const s0 = cpuSnapshot(service);
  const t0 = performance.now();
  for (let b = 0; b < BATCHES; b++) {
    const contacts = Array.from({ length: BATCH }, (_, i) => {
      const n = b * BATCH + i;
      return { values: { email: `api${n}@example.com`, first_name: phase === 'create' ? `Ann${n % 1000}` : `Bea${n % 1000}`, age: 18 + (n % 60), city: CITIES[n % 5] } };
    });
    const r = await post(url, headers, { contacts });
    latencies.push(r.ms);
    const expected = phase === 'create' ? 'created' : 'updated';
    if (r.status !== 200 || r.json[expected] !== BATCH) errors++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const s1 = cpuSnapshot(service);
  latencies.sort((x, y) => x - y);
  return {
    phase,
    batches: BATCHES,
    contacts_per_s: round((BATCHES * BATCH) / seconds),
    latency_ms: { p50: round(percentile(latencies, 50), 1), p90: round(percentile(latencies, 90), 1), p99: round(percentile(latencies, 99), 1), max: round(latencies.at(-1)!, 1) },
    errors,
    cpu_cores: cores(s0, s1),
  };
}

async function main(): Promise<void> {
  assertBuilt();
  const loadBefore = await loadBeforeStart();
  const service = await startService({ prefix: 'cartero-bench-datasets-' });
  await benchService(service, 4, async (pool, stop) => {
    const tenant = await benchTenant(pool, 'bench', 'Benchmark');
    const key = await createApiKey(pool, { instanceSlug: 'bench', scopes: ['dataset:read', 'dataset:write'] });
    await createField(tenant, pool, { key: 'first_name', name: 'First name', type: 'text', maxLength: 100 });
    await createField(tenant, pool, { key: 'last_name', name: 'Last name', type: 'text', maxLength: 100 });
    await createField(tenant, pool, { key: 'age', name: 'Age', type: 'number', min: 0, max: 130 });
    await createField(tenant, pool, { key: 'city', name: 'City', type: 'text' });
    const columns = COLUMNS.map((k) => ({ key: k, required: k === 'email' }));
    const newDataset = (name: string) => createDataset(tenant, pool, { name, channel: ['mail'], columns });

    const file = join(service.dataDir, 'bench-contacts.csv');
    await writeCsv(file, ROWS);
    log(`${ROWS} rows, ${round(statSync(file).size / 1e6, 1)} MB: ${file}`);

    const pairs = [];
    let last = 0;
    for (let run = 1; run <= RUNS; run++) {
      await pool.query('TRUNCATE dataset_records');
      await pool.query('CHECKPOINT');
      const bare = await bareCopy(pool, file, service);
      log(`run ${run}: bare COPY ${bare.seconds} s (${bare.rows_per_s} rows/s), other ${bare.cpu_cores.other} cores`);
      await pool.query('CHECKPOINT');
      const dataset = await newDataset(`Import ${run}`);
      last = dataset.id;
      const imported = await timedImport(pool, tenant, dataset.id, file, service);
      const ratio = round(imported.rows_per_s / bare.rows_per_s, 3);
      log(`run ${run}: import ${imported.seconds} s (${imported.rows_per_s} rows/s; read+check ${imported.read_and_check_s} s, merge ${imported.merge_s} s), ` +
        `ratio ${ratio}, other ${imported.cpu_cores.other} cores`);
      await pool.query('CHECKPOINT');
      const limit = await sameIndexLimit(pool, file, service);
      const ofLimit = round(imported.rows_per_s / limit.rows_per_s, 3);
      log(`run ${run}: same-index limit ${limit.seconds} s (${limit.rows_per_s} rows/s; COPY ${limit.copy_s} s, INSERT ${limit.insert_s} s): import ÷ limit ${ofLimit}`);
      pairs.push({ run, bare_copy: bare, import: imported, same_index_limit: limit, ratio, import_of_limit: ofLimit });
    }

    const again = await timedImport(pool, tenant, last, file, service);
    log(`re-import of the same file: ${again.seconds} s (${again.rows_per_s} rows/s), unchanged ${again.summary.unchanged}`);

    await pool.query('TRUNCATE dataset_records');
    await pool.query('DROP INDEX dataset_records_values');
    const noGinDataset = await newDataset('Import without GIN');
    const noGin = await timedImport(pool, tenant, noGinDataset.id, file, service);
    log(`import without the GIN index: ${noGin.seconds} s (${noGin.rows_per_s} rows/s; merge ${noGin.merge_s} s)`);
    await pool.query('TRUNCATE dataset_records');
    await pool.query('CREATE INDEX dataset_records_values ON dataset_records USING gin (values jsonb_path_ops)');

    const cliDataset = await newDataset('Import by the CLI');
    const t0 = performance.now();
    const cli = await promisify(execFile)(process.execPath, [join(projectRoot, 'bin', 'cartero.js'), 'dataset', 'import', '--instance', 'bench', '--id', String(cliDataset.id), '--file', file],
      { cwd: projectRoot, env: { ...process.env, DATA_DIR: service.dataDir, DATABASE_URL: readServices(service.dataDir).postgres?.url, NODE_OPTIONS: '' }, maxBuffer: 1 << 20 });
    const cliSeconds = (performance.now() - t0) / 1000;
    const cliSummary = JSON.parse(cli.stdout) as ImportSummary;
    log(`cartero dataset import end to end: ${round(cliSeconds, 2)} s (${round(ROWS / cliSeconds)} rows/s), created ${cliSummary.created}`);

    const api = await newDataset('API');
    const url = `${service.url}/v1/datasets/${api.id}/contacts`;
    const headers = { authorization: `Bearer ${key.key}`, 'x-instance-slug': 'bench' };
    for (let i = 0; i < 5; i++) await post(url, headers, { contacts: [{ values: { email: `warm${i}@example.com` } }] });
    const create = await contactBatches(service, url, headers, 'create');
    log(`contacts, 1,000 new per call: p50 ${create.latency_ms.p50} ms, p99 ${create.latency_ms.p99} ms, ${create.contacts_per_s} contacts/s, errors ${create.errors}`);
    const update = await contactBatches(service, url, headers, 'update');
    log(`contacts, 1,000 updated per call: p50 ${update.latency_ms.p50} ms, p99 ${update.latency_ms.p99} ms, ${update.contacts_per_s} contacts/s, errors ${update.errors}`);

    const stopped = await stop();
    const ratios = pairs.map((p) => p.ratio);
    const summary = {
      benchmark: 'dataset CSV import vs the same-index limit and a bare COPY, and the contacts API batch of 1,000 (issues 14, 28)',
      date: new Date().toISOString(),
      machine: { nproc: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, note: 'the import and the HTTP client run in this process, on the same cores as the service' },
      command: 'npx tsc -p tsconfig.json && node dist/bench/datasets.js',
      rows: ROWS,
      machine_busy_cores_before_start: loadBefore,
      target: `import rows/s ≥ ${TARGET_OF_LIMIT * 100} % of the same-index limit (issue 28) and ≥ ${LISTMONK_FACTOR}× listmonk's published ~${LISTMONK_ROWS_PER_S} rows/s; issue 14's ${TARGET_RATIO * 100} % of a bare COPY kept for history`,
      meets_target: Math.min(...pairs.map((p) => p.import_of_limit)) >= TARGET_OF_LIMIT && Math.min(...pairs.map((p) => p.import.rows_per_s)) >= LISTMONK_FACTOR * LISTMONK_ROWS_PER_S,
      meets_bare_copy_target_of_issue_14: Math.min(...ratios) >= TARGET_RATIO,
      import_vs_bare_copy: pairs,
      reimport_unchanged: again,
      import_without_gin_index: noGin,
      cli_end_to_end: { seconds: round(cliSeconds, 2), rows_per_s: round(ROWS / cliSeconds), created: cliSummary.created },
      contacts_api_batch_1000: [create, update],
      stop: stopped,
    };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  });
}

runBench(main);
