/**
 * Benchmark (issue 13): template create, PATCH and validate through HTTP, each of which checks
 * the design document and renders it to HTML with MJML, against the service started the way a
 * user starts it (`node dist/runtime/start.js`, embedded Postgres and ClickHouse, fresh DATA_DIR).
 *
 *   npx tsc -p tsconfig.json && node dist/bench/templates.js      (or: npm run bench:templates)
 *
 * Two documents: the largest corpus document the service accepts
 * (../shared/corpus/templates/beefree/samples/) and a 30-module document built here from the
 * published skeleton and defaults (GET /v1/mail-templates/format), 10 rows of three columns.
 * For each: sequential create, PATCH (a changed paragraph, so the HTML is regenerated every time)
 * and validate, then validate with CONCURRENCY requests in flight (renders/s when both cores
 * are busy). Target (issue 13): PATCH p99 < 100 ms for the 30-module document.
 *
 * Environment (all optional):
 *   BENCH_REQUESTS     requests per sequential measurement (default 200)
 *   BENCH_CONCURRENCY  requests in flight for the throughput run (default 4)
 *   BENCH_CORPUS_DIR   the Beefree samples (default: templates/beefree/samples of the shared corpus, found as the tests find it: test/helpers/corpus.ts)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { createInstance } from '../domain/tenancy/instances.js';
import type { Pool } from '../sql/pool.js';
import { corpusPath } from '../test/helpers/corpus.js';
import { benchService, loadBeforeStart, machineInfo, runBench, startService } from './service.js';
import { percentile, round } from './proc.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const CORPUS = process.env.BENCH_CORPUS_DIR ?? corpusPath('templates', 'beefree', 'samples');
const TARGET_PATCH_P99_MS = 100;

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

type Json = Record<string, any>;

interface Api {
  url: string;
  headers: Record<string, string>;
}

async function call(api: Api, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(api.url + path, {
    method,
    headers: { ...api.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  return { status: res.status, json, ms: performance.now() - t0 };
}

/** A 30-module document from the published skeleton and per-kind defaults: 10 rows of 3 columns. */
function thirtyModuleDocument(format: Json): Json {
  const doc = structuredClone(format.skeleton) as Json;
  const kinds = ['paragraph', 'heading', 'image', 'button', 'divider', 'list'].filter((k) => format.defaults.modules[k]);
  let n = 0;
  doc.page.rows = Array.from({ length: 10 }, (_, r) => ({
    ...structuredClone(format.defaults.row),
    uuid: `row-${r}`,
    columns: Array.from({ length: 3 }, (_, c) => ({
      ...structuredClone(format.defaults.column),
      uuid: `col-${r}-${c}`,
      'grid-columns': 4,
      // defaults.modules.<kind> is a whole new module (type, descriptor...); it only lacks a uuid.
      modules: [{ ...structuredClone(format.defaults.modules[kinds[n % kinds.length]!]), uuid: `mod-${n++}` }],
    })),
  }));
  return doc;
}

/** A copy of `doc` whose first paragraph (or heading) text differs by `i`: the HTML must be regenerated. */
function changed(doc: Json, i: number): Json {
  const copy = structuredClone(doc);
  for (const row of copy.page.rows ?? []) {
    for (const col of row.columns ?? []) {
      for (const mod of col.modules ?? []) {
        const d = mod.descriptor ?? {};
        if (d.paragraph && typeof d.paragraph.html === 'string') {
          d.paragraph.html = `<p>Edit ${i}</p>`;
          return copy;
        }
        if (d.text && typeof d.text.html === 'string') {
          d.text.html = `<p>Edit ${i}</p>`;
          return copy;
        }
      }
    }
  }
  copy.page.title = `Edit ${i}`;
  return copy;
}

function stats(ms: number[]): { n: number; per_s: number; p50_ms: number; p99_ms: number; max_ms: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const total = ms.reduce((s, x) => s + x, 0);
  return {
    n: ms.length,
    per_s: round((ms.length / total) * 1000, 1),
    p50_ms: round(percentile(sorted, 50), 1),
    p99_ms: round(percentile(sorted, 99), 1),
    max_ms: round(sorted[sorted.length - 1] ?? 0, 1),
  };
}

async function expectStatus(what: string, r: { status: number; json: Json }, status: number): Promise<void> {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json).slice(0, 400)}`);
}

async function measureDocument(api: Api, name: string, doc: Json): Promise<Json> {
  const creates: number[] = [];
  const ids: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const r = await call(api, 'POST', '/v1/mail-templates', { name: `${name} ${i}`, subject: 'Bench', preheader: 'Bench', config: doc });
    await expectStatus(`create ${name}`, r, 201);
    if (!r.json.html) throw new Error(`create ${name}: no html`);
    creates.push(r.ms);
    ids.push(r.json.id as number);
  }
  const patches: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const r = await call(api, 'PATCH', `/v1/mail-templates/${ids[0]}`, { config: changed(doc, i) });
    await expectStatus(`patch ${name}`, r, 200);
    if (!String(r.json.html).includes(`Edit ${i}`)) throw new Error(`patch ${name}: the html was not regenerated`);
    patches.push(r.ms);
  }
  const validates: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const r = await call(api, 'POST', '/v1/mail-templates/validate', { config: changed(doc, i) });
    await expectStatus(`validate ${name}`, r, 200);
    validates.push(r.ms);
  }
  // Throughput with several requests in flight: renders per second when both cores can work.
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        const r = await call(api, 'POST', '/v1/mail-templates/validate', { config: changed(doc, i) });
        await expectStatus(`validate ${name} (concurrent)`, r, 200);
      }
    }),
  );
  const concurrentRendersPerS = round((REQUESTS / (performance.now() - t0)) * 1000, 1);
  const row = {
    document: name,
    config_bytes: Buffer.byteLength(JSON.stringify(doc)),
    create: stats(creates),
    patch: stats(patches),
    validate: stats(validates),
    validate_concurrent: { concurrency: CONCURRENCY, renders_per_s: concurrentRendersPerS },
  };
  log(
    `${name}: create p99 ${row.create.p99_ms} ms, PATCH p50 ${row.patch.p50_ms} p99 ${row.patch.p99_ms} ms, ` +
      `validate p99 ${row.validate.p99_ms} ms (${row.validate.per_s}/s), ${concurrentRendersPerS} renders/s at c=${CONCURRENCY}`,
  );
  return row;
}

async function seed(pool: Pool): Promise<{ slug: string; key: string }> {
  const slug = 'bench';
  await createInstance(pool, { slug, name: 'Benchmark' });
  const key = await createApiKey(pool, { instanceSlug: slug, scopes: ['templates:read', 'templates:write'] });
  return { slug, key: key.key };
}

async function main(): Promise<void> {
  const loadBefore = await loadBeforeStart();
  const service = await startService({ prefix: 'cartero-bench-templates-' });
  await benchService(service, 2, async (pool, stop) => {
    const { slug, key } = await seed(pool);
    const api: Api = { url: service.url, headers: { authorization: `Bearer ${key}`, 'x-instance-slug': slug } };

    const format = await call(api, 'GET', '/v1/mail-templates/format?lang=en');
    await expectStatus('format', format, 200);

    // The largest corpus document the service accepts (a document with a kind Cartero does not
    // render is refused with 422 essential_not_supported, as it should be).
    const samples = readdirSync(CORPUS)
      .filter((f) => f.endsWith('.json'))
      .map((f) => ({ file: f, text: readFileSync(join(CORPUS, f), 'utf8') }))
      .sort((a, b) => b.text.length - a.text.length);
    let largest: { file: string; doc: Json } | undefined;
    for (const s of samples) {
      const doc = JSON.parse(s.text) as Json;
      const r = await call(api, 'POST', '/v1/mail-templates/validate', { config: doc });
      if (r.status === 200) {
        largest = { file: s.file, doc };
        break;
      }
      log(`${s.file} (${s.text.length} bytes) is not accepted (${r.status} ${r.json.errors?.[0]?.code ?? ''}); trying the next largest`);
    }
    if (!largest) throw new Error(`no corpus document in ${CORPUS} is accepted`);
    const thirty = thirtyModuleDocument(format.json);
    const check = await call(api, 'POST', '/v1/mail-templates/validate', { config: thirty });
    await expectStatus('30-module document', check, 200);

    // Warm-up: the first renders load MJML's components and JIT the hot paths.
    for (let i = 0; i < 20; i++) await call(api, 'POST', '/v1/mail-templates/validate', { config: changed(thirty, i) });

    const rows = [await measureDocument(api, `corpus ${largest.file}`, largest.doc), await measureDocument(api, '30 modules (10 rows x 3 columns)', thirty)];
    const stopped = await stop();
    const thirtyRow = rows[1]!;
    const summary = {
      benchmark: 'template create / PATCH / validate (issue 13)',
      date: new Date().toISOString(),
      machine: machineInfo('the load runs in this process on the same cores as the service'),
      command: 'npx tsc -p tsconfig.json && node dist/bench/templates.js',
      requests_per_measurement: REQUESTS,
      machine_busy_cores_before_start: loadBefore,
      target: `PATCH p99 < ${TARGET_PATCH_P99_MS} ms for the 30-module document`,
      meets_target: thirtyRow.patch.p99_ms < TARGET_PATCH_P99_MS,
      rows,
      stop: stopped,
    };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  });
}

runBench(main);
