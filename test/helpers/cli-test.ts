import { mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { testDatabases, type TestDatabases } from './databases.js';
import { makeTenant, type TestTenant } from './fixtures.js';
import { jsonCall, type JsonReply } from './http.js';
import { childEnv, cliRunner, oneJsonObject, type CliResult, type CliRun } from './spawn.js';
import { startTestWeb } from './web.js';

/**
 * What a test of panel-only CLI commands works with: its own database, the real web app on it
 * (to check a command's effects over HTTP as a client sees them), the CLI run against that
 * database (in this process through the function bin/cartero.js calls; `binary` spawns
 * `node bin/cartero.js`, which each file does at least once: spawn.ts's cliRunner), two
 * instances `a` and `b` with the given scopes (b to show a command never reaches across
 * instances), and a scratch folder for input files, removed at teardown.
 */
export interface CliTest {
  dbs: TestDatabases;
  /** The web app's base URL. */
  url: string;
  cli: CliRun;
  /** `node bin/cartero.js ...args` itself. */
  binary: CliRun;
  a: TestTenant;
  b: TestTenant;
  dir: string;
  /** Writes `content` to `name` in the scratch folder; its path. */
  file(name: string, content: string): string;
  /** A JSON call to the web app as `headers` (instance a's by default): jsonCall's reply. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<JsonReply>;
  /** A command that succeeds and prints one JSON object: that object. */
  ok(...args: string[]): Promise<Record<string, any>>;
}

export async function cliTest(t: Test, label: string, scopes: string[]): Promise<CliTest> {
  const dbs = await testDatabases(t, label);
  const { url } = await startTestWeb(t, dbs);
  const cli = cliRunner(t, childEnv({ DATABASE_URL: dbs.databaseUrl }, ['CLICKHOUSE_URL', 'PORT', 'NODE_OPTIONS']), { inProcess: true });
  const a = await makeTenant(dbs.pool, { scopes });
  const b = await makeTenant(dbs.pool, { scopes });
  const dir = mkdtempSync(join(tmpdir(), `cartero-${label}-`));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return {
    dbs,
    url,
    cli,
    binary: cli.spawned,
    a,
    b,
    dir,
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    call: (method, path, body, headers = a.headers) => jsonCall(url, method, path, body, headers),
    async ok(...args) {
      return oneJsonObject(await cli(...args));
    },
  };
}

/**
 * A refused command: a non-zero exit (exactly `code` when given: 2 for a usage mistake), nothing
 * on stdout, the reason on stderr, and no stack trace.
 */
export function failed(t: Test, r: CliResult, message: RegExp, what: string, code?: number): void {
  if (code === undefined) t.not(r.code, 0, `${what}: non-zero exit`);
  else t.equal(r.code, code, `${what}: exit ${code}`);
  t.equal(r.stdout, '', `${what}: nothing on stdout`);
  t.match(r.stderr, message, `${what}: says why on stderr`);
  t.notMatch(r.stderr, /^\s+at .+\(.*:\d+:\d+\)$/m, `${what}: no stack trace`);
}
