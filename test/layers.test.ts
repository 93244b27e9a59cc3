import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';
import { projectRoot } from '../config/paths.js';

/**
 * The layer rule (docs/architecture.md): which top folder may import which. Each folder lists the
 * folders it may import; any other arrow fails, so no arrow runs back up. Bottom to top:
 *
 *   config → errors → sql → domain → analytics, smtp → workers, api → cli → runtime
 *                 engines ↗
 *
 * config/ imports nothing of ours (the environment's schema and reader, paths, secret files, the
 * defaults the schema shows). engines/ neither: its pure libraries (the Beefree format, its
 * renderer and checks; the readers of DSNs, feedback reports and MTA texts, with the bounce
 * classifier; HTML scanning and the text part; the CSV formula guard) take values and return
 * values, with no database, configuration, tenant or state, so they run anywhere (a render
 * thread, a bench, a test) and every layer from domain/ up may use them. Not even errors/: an
 * engine says what went wrong in its own terms (a finding, a RenderLimitExceeded), and the
 * domain rule that calls it decides which error code of the catalog that is. runtime/ holds only
 * the entry points (web, worker, release, start, the supervisor, logging) and may import
 * anything. web/ is the browser's code (the panel) and imports nothing of ours. test/ and bench/
 * are not layers.
 *
 * Checked twice: on the compiled imports (what node loads) and on the sources, where a type-only
 * import counts too (it still ties the two folders). Also: no import cycle between files.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  config: [],
  engines: [],
  errors: ['config'],
  sql: ['errors', 'config'],
  domain: ['engines', 'sql', 'errors', 'config'],
  analytics: ['domain', 'engines', 'sql', 'errors', 'config'],
  smtp: ['domain', 'engines', 'sql', 'errors', 'config'],
  workers: ['smtp', 'analytics', 'domain', 'engines', 'sql', 'errors', 'config'],
  api: ['analytics', 'domain', 'engines', 'sql', 'errors', 'config'],
  cli: ['workers', 'smtp', 'analytics', 'domain', 'engines', 'sql', 'errors', 'config'],
  runtime: ['cli', 'api', 'workers', 'smtp', 'analytics', 'domain', 'engines', 'sql', 'errors', 'config'],
  // The panel's browser code (web/panel/): it runs in a browser, so it imports nothing of the server's.
  web: [],
};
const LAYERS = Object.keys(MAY_IMPORT);

function filesUnder(dir: string, ext: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), ext) : ext.test(e.name) ? [join(dir, e.name)] : [],
  );
}

// Static imports and re-exports, side-effect imports, dynamic import(), and a module named by
// URL (a worker thread's file). Only relative specifiers: packages are not layers.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|new URL\(\s*)'(\.{1,2}\/[^']+\.js)'/g;

/** file → the files it imports, both relative to `base`, sources named by their .ts path. */
function importGraph(base: string, ext: RegExp): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const layer of LAYERS) {
    for (const file of filesUnder(join(base, layer), ext)) {
      // A compiled file whose source is gone (a module moved since the last clean build) is not code.
      if (!existsSync(join(projectRoot, relative(base, file).replace(/\.js$/, '.ts')))) continue;
      const text = readFileSync(file, 'utf8');
      const targets = [...text.matchAll(SPECIFIER)].map((m) => relative(base, resolve(dirname(file), m[1]!)).replace(/\.js$/, '.ts'));
      graph.set(relative(base, file).replace(/\.js$/, '.ts'), targets);
    }
  }
  return graph;
}

const top = (file: string) => file.split('/')[0]!;

function arrowsAgainstTheRule(graph: Map<string, string[]>): string[] {
  const bad: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = top(file);
      const to = top(target);
      if (from === to) continue;
      if (!MAY_IMPORT[from]!.includes(to)) bad.push(`${file} → ${target} (${from} may import ${MAY_IMPORT[from]!.join(', ') || 'nothing of ours'})`);
    }
  }
  return bad;
}

/** Strongly connected groups of more than one file (Tarjan), each a cycle of imports. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const compiled = importGraph(join(projectRoot, 'dist'), /\.js$/);
const sources = importGraph(projectRoot, /(?<!\.d)\.ts$/);

t.test('every top folder is a layer of the table, and each has modules', async (t) => {
  const folders = readdirSync(projectRoot, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !['node_modules', 'dist', 'test', 'bench', 'bin', 'docs'].includes(e.name))
    .filter((e) => filesUnder(join(projectRoot, e.name), /\.ts$/).length > 0)
    .map((e) => e.name)
    .sort();
  t.same(folders, [...LAYERS].sort(), 'a new top folder of code gets its row in MAY_IMPORT');
  for (const layer of LAYERS) t.ok([...compiled.keys()].some((f) => top(f) === layer), `${layer}/ compiled`);
});

t.test('the compiled imports follow the layer rule', async (t) => {
  t.same(arrowsAgainstTheRule(compiled), [], 'no arrow against the rule');
  t.ok([...compiled.values()].flat().length > 500, 'the imports were read');
});

t.test('the sources (type-only imports included) follow the layer rule', async (t) => {
  t.same(arrowsAgainstTheRule(sources), [], 'no arrow against the rule');
});

t.test('no import cycle between files', async (t) => {
  t.same(cycles(sources), [], 'no cycle in the sources (type-only imports included)');
  t.same(cycles(compiled), [], 'no cycle in the compiled imports');
});

t.test('the checks see what they are meant to see', async (t) => {
  // A seeded arrow back up and a seeded cycle, on a copy of the real graph.
  const seeded = new Map(sources);
  seeded.set('sql/pool.ts', [...(sources.get('sql/pool.ts') ?? []), 'domain/errors.ts']);
  t.match(arrowsAgainstTheRule(seeded), [/^sql\/pool\.ts → domain\/errors\.ts/], 'an arrow back up is reported');
  seeded.set('engines/bounces/dsn.ts', [...(sources.get('engines/bounces/dsn.ts') ?? []), 'sql/pool.ts', 'domain/errors.ts']);
  const arrows = arrowsAgainstTheRule(seeded);
  t.ok(arrows.some((a) => a.startsWith('engines/bounces/dsn.ts → sql/pool.ts')), 'an engine importing sql/ is reported');
  t.ok(arrows.some((a) => a.startsWith('engines/bounces/dsn.ts → domain/errors.ts')), 'an engine importing domain/ is reported');
  seeded.set('config/paths.ts', ['config/defaults.ts']);
  seeded.set('config/defaults.ts', ['config/paths.ts']);
  t.ok(cycles(seeded).some((c) => c.join() === 'config/defaults.ts,config/paths.ts'), 'a cycle is reported');
});
