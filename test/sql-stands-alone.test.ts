import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';
import { projectRoot } from '../runtime/paths.js';

/**
 * sql/ (the pool, migrations, the embedded Postgres) stands alone: the release step, the CLI and
 * the tests open a pool and migrate without loading the domain. Its modules import only each
 * other, packages, runtime/paths.ts (a leaf: where the project's files are) and errors/ (the
 * error catalog and base error, which import nothing: the pool throws DependencyUnavailable).
 * Read from the sources, so a type-only import counts too.
 */

// runtime/secret-file.ts is a leaf too (node's fs and crypto only): the embedded Postgres's password.
const ALLOWED_OUTSIDE = new Set(['runtime/paths.ts', 'runtime/secret-file.ts']);
const ALLOWED_FOLDERS = ['sql/', 'errors/'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const files = sources(join(projectRoot, 'sql'));

t.ok(files.length > 0, 'sql/ has modules');

for (const file of files) {
  const name = relative(projectRoot, file);
  t.test(name, async (t) => {
    const specifiers = [...readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
    for (const spec of specifiers) {
      const target = relative(projectRoot, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
      t.ok(ALLOWED_FOLDERS.some((f) => target.startsWith(f)) || ALLOWED_OUTSIDE.has(target), `${name} imports ${spec} (${target})`);
    }
  });
}
