import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { projectRoot } from '../config/paths.js';

/**
 * Every file path a comment or a document cites exists (issue 38): a renamed or removed file
 * leaves no comment or page pointing at nothing. Read: the comments of the tracked source files
 * and every tracked Markdown file. A path counts when it starts at a folder of the repository's
 * root (`domain/...`, `test/...`, `docs/...`) or at `../shared/` (the shared folder beside it),
 * and ends in a file name with an extension; `<x>.js` (what the build makes, and what ESM imports
 * name) stands for its source `<x>.ts`, and `dist/` for the source tree. Not counted: patterns
 * (`*`, `<name>`, `{a,b}`, `NNN`), URLs, paths under DATA_DIR or node_modules, and two kinds of
 * record that keep the names of their day: the numbered migrations (applied files are never
 * edited) and docs/performance-history.md.
 */
const RECORDS = [/^sql\/migrations\//, /^docs\/performance-history\.md$/];

const tracked = execFileSync('git', ['ls-files'], { cwd: projectRoot, encoding: 'utf8' }).split('\n').filter(Boolean);
const roots = new Set(tracked.filter((f) => f.includes('/')).map((f) => f.split('/')[0]!));

const SOURCE = /\.(ts|cts|mts|js|mjs|c|sql|sh)$/;
/** A path-like token: segments of word characters, dots and dashes, a file name with an extension. */
const PATH = /(?<![\w./$-])(\.\.\/shared\/|\.ci\/|[a-z][\w-]*\/)((?:[\w.-]+\/)*[\w-][\w.-]*\.[a-z][a-z0-9]{0,4})(?![\w/*<{-])/g;

/** The comment text of a source file: `//` and `/* ... *\/` (SQL `--`, shell `#`); a rough scan (a `//` inside a string may count). */
function commentsOf(text: string, file: string): string {
  if (file.endsWith('.sql')) return [...text.matchAll(/--(.*)$/gm)].map((m) => m[1]).join('\n');
  if (file.endsWith('.sh') || file.startsWith('.ci/')) return [...text.matchAll(/#(.*)$/gm)].map((m) => m[1]).join('\n');
  const out: string[] = [];
  for (const m of text.matchAll(/\/\*([\s\S]*?)\*\/|(?<![:'"`\w])\/\/(.*)$/gm)) out.push(m[1] ?? m[2] ?? '');
  return out.join('\n');
}

function exists(path: string): boolean {
  const source = path.replace(/^dist\//, '');
  if (existsSync(join(projectRoot, source))) return true;
  // Build output and ESM import specifiers name .js files: each stands for its source.
  const js = /^(.*)\.(c?)js$/.exec(source);
  return js !== null && [`${js[1]}.${js[2]}ts`, `${js[1]}.ts`].some((f) => existsSync(join(projectRoot, f)));
}

/** ../shared/ is laid beside the checkout in development and CI; elsewhere its paths cannot be checked. */
const sharedHere = existsSync(join(projectRoot, '..', 'shared'));

function cited(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(PATH)) {
    const [whole, first] = [m[0], m[1]!];
    const root = first.replace(/\/$/, '');
    if (first !== '../shared/' && first !== '.ci/' && !roots.has(root) && root !== 'dist') continue;
    if (/node_modules|\.data\/|NNN/.test(whole)) continue;
    if (first === '../shared/' && !sharedHere) continue;
    found.push(whole);
  }
  return found;
}

const broken: string[] = [];
let checked = 0;
for (const file of tracked) {
  const isDoc = file.endsWith('.md');
  if (!isDoc && !SOURCE.test(file) && !file.startsWith('.ci/')) continue;
  if (RECORDS.some((r) => r.test(file))) continue;
  if (!existsSync(join(projectRoot, file))) continue;
  const text = readFileSync(join(projectRoot, file), 'utf8');
  const body = isDoc ? text : commentsOf(text, file);
  for (const path of cited(body)) {
    checked++;
    if (!exists(path)) broken.push(`${file}: ${path}`);
  }
}

t.ok(checked > 200, `paths cited in comments and docs were found (${checked})`);
t.same([...new Set(broken)].sort(), [], 'every cited path exists');

