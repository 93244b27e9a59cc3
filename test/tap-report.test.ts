import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { projectRoot } from '../config/paths.js';

/**
 * A passing `npm test` says nothing about coverage: coverage is disabled (package.json "tap"), so
 * the report must not call it incomplete. tap 21 still records coverage in the `before` and
 * `after` hook processes when coverage is disabled (they get tap's coverage loader but not the
 * per-test-file switch that turns it off), and with the default thresholds of 100 % a passing run
 * printed "# ERROR: incomplete statements coverage (48.98%)". The thresholds set to 0 in the "tap"
 * section say what disabled means. Checked on a throwaway project: this package.json's "tap"
 * section, hooks with a branch never taken, one passing test, and tap run on it as `npm test`
 * runs it.
 */

const tapSection = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { tap: Record<string, unknown> }).tap;

t.test('a passing run prints no coverage error', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cartero-tap-report-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'tap-report-probe', private: true, type: 'module', tap: tapSection }, null, 2));
  symlinkSync(join(projectRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const hooks = { before: tapSection.before, after: tapSection.after };
  t.ok(typeof hooks.before === 'string' && typeof hooks.after === 'string', 'the suite has before and after hooks');
  for (const [name, path] of Object.entries(hooks)) {
    const file = join(dir, String(path));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      `import { writeFileSync } from 'node:fs';\n` +
        `if (process.env.CARTERO_PROBE_NEVER_SET) console.log('a branch the run never takes');\n` +
        `writeFileSync(${JSON.stringify(join(dir, `${name}.ran`))}, '');\n`,
    );
  }
  mkdirSync(join(dir, 'dist', 'test'), { recursive: true });
  writeFileSync(join(dir, 'dist', 'test', 'ok.test.js'), `import t from 'tap';\nt.pass('ok');\n`);

  // As a plain `npm test` runs: without the outer run's variables (tap's own, and its per-file
  // "no coverage" switch). tap's process hooks put those back into the environment of every
  // child this process spawns, so `env -i` starts the probe with exactly this list.
  const vars = Object.entries(process.env).filter(([k, v]) => v !== undefined && !/^(TAP|_TAPJS_|NODE_OPTIONS$)/.test(k));
  const tapBin = join(projectRoot, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs');
  const run = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile('env', ['-i', ...vars.map(([k, v]) => `${k}=${v}`), process.execPath, tapBin, 'dist/test/ok.test.js'], { cwd: dir, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, out: stdout + stderr }),
    );
  });

  t.equal(run.code, 0, 'the run passes');
  t.ok(existsSync(join(dir, 'before.ran')) && existsSync(join(dir, 'after.ran')), 'both hooks ran');
  t.match(run.out, /pass/i, 'the test is reported');
  t.notMatch(run.out, /incomplete \w+ coverage|ERROR:.*coverage/i, 'and no coverage error');
  const recorded = existsSync(join(dir, '.tap', 'coverage')) ? readdirSync(join(dir, '.tap', 'coverage')).length : 0;
  t.comment(`coverage files the hooks left anyway: ${recorded}`);
  if (run.code !== 0 || /coverage/i.test(run.out)) t.comment(run.out);
});
