import { parse } from 'acorn';
import { simple } from 'acorn-walk';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { check } from 'recheck';
import t from 'tap';
import { projectRoot } from '../config/paths.js';

/**
 * Every regular expression of the code that reads outside input (api/, domain/, engines/, smtp/,
 * analytics/) is checked by recheck, a ReDoS checker (automaton analysis, else fuzzing with
 * attack strings it then validates): a pattern that backtracks super-linearly on some input
 * fails here with that input. Patterns are collected from the compiled modules (dist/, what the
 * processes run; tsc keeps regex literals as written) with acorn: regex literals, `RegExp(...)`
 * and `new RegExp(...)` calls, and the `pattern` strings of JSON Schemas (ajv compiles them and
 * runs them on request values). A new pattern needs nothing here: it is checked the day it is
 * written.
 */

const DIRS = ['api', 'domain', 'engines', 'smtp', 'analytics'];

/**
 * The only exceptions, each proven to run on bounded or trusted input only, keyed by source file
 * and pattern. An entry whose pattern is gone fails the test (stale exceptions are not kept).
 */
const TRUSTED: Array<{ file: string; pattern: string; why: string }> = [
  {
    file: 'analytics/client.ts',
    pattern: '/^\\/+|\\/+$/g',
    why: "the path of CLICKHOUSE_URL, the operator's configuration, read once at start",
  },
  {
    file: 'analytics/embedded/server.ts',
    pattern: '/\\/+$/',
    why: "the data path the embedded ClickHouse launcher's own server answers, on loopback",
  },
  {
    file: 'analytics/export/stream.ts',
    pattern: '/;+\\s*$/',
    why: "an activity query's SQL, a constant of analytics/activities (client values travel as query parameters)",
  },
];

/**
 * `RegExp(x)` with a computed x cannot be checked from the source: each is listed with the
 * shape of pattern it builds, and that shape is checked instead.
 */
const DYNAMIC: Array<{ file: string; example: { source: string; flags: string }; why: string }> = [
  {
    file: 'api/app.ts',
    // pathMatcher('/v1/mails/{mail_id}/logs'): every route path, metacharacters escaped, each
    // {param} a [^/]+ between literal slashes.
    example: { source: '^/v1/mails/[^/]+/logs/?$', flags: '' },
    why: 'built from the route table (our own paths), not from a request',
  },
  {
    file: 'domain/fields/pattern.ts',
    // A catalog field's pattern, anchored: checkPattern runs recheck on exactly this form when the
    // field is created and refuses it unless safe (test/fields-catalog.test.ts refuses (a+)+).
    example: { source: '^(?:[A-Z]{2}-[0-9]{4})$', flags: 'u' },
    why: "a field's pattern, accepted only when recheck proves its anchored form linear",
  },
  {
    file: 'analytics/sharding.ts',
    // The sharded table names as whole words, to rename them to their shard-local tables in a
    // migration statement (cluster mode).
    example: { source: '\\b(mail_events|mail_events_by_msg|mail_events_by_group|mails)\\b', flags: 'g' },
    why: "built from the list of sharded tables (our own names); it runs over our migrations' SQL",
  },
  {
    file: 'engines/bounces/providers.ts',
    // hostEnds('hotmail.com', 'outlook.com'): a large provider's host names, dots escaped, as
    // whole labels; it runs over the hosts a bounce report names.
    example: { source: '(?:^|[.\\s;@])(?:hotmail\\.com|outlook\\.com)\\.?(?:$|[\\s\\[(])', flags: '' },
    why: "built from the provider table's own host suffixes (constants), never from a report",
  },
];

interface Found {
  file: string;
  line: number;
  source: string;
  flags: string;
}

function compiledModules(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.js')) out.push(path);
    }
  };
  for (const dir of DIRS) walk(join(projectRoot, 'dist', dir));
  return out;
}

function collect(): { patterns: Found[]; dynamic: Array<{ file: string; line: number }> } {
  const patterns: Found[] = [];
  const dynamic: Array<{ file: string; line: number }> = [];
  for (const path of compiledModules()) {
    const file = relative(join(projectRoot, 'dist'), path).replace(/\.js$/, '.ts');
    const ast = parse(readFileSync(path, 'utf8'), { ecmaVersion: 'latest', sourceType: 'module', locations: true });
    const stringValue = (node: any): string | undefined => (node?.type === 'Literal' && typeof node.value === 'string' ? node.value : undefined);
    const regexpCall = (node: any) => {
      if (node.callee.type !== 'Identifier' || node.callee.name !== 'RegExp') return;
      const source = stringValue(node.arguments[0]);
      const flags = node.arguments[1] === undefined ? '' : stringValue(node.arguments[1]);
      if (source === undefined || flags === undefined) dynamic.push({ file, line: node.loc.start.line });
      else patterns.push({ file, line: node.loc.start.line, source, flags });
    };
    simple(ast, {
      Literal(node: any) {
        if (node.regex) patterns.push({ file, line: node.loc.start.line, source: node.regex.pattern, flags: node.regex.flags });
      },
      NewExpression: regexpCall,
      CallExpression: regexpCall,
      Property(node: any) {
        // A JSON Schema's pattern: ajv compiles it with the u flag.
        const key = node.key.type === 'Identifier' ? node.key.name : node.key.value;
        const source = stringValue(node.value);
        if (key === 'pattern' && source !== undefined) patterns.push({ file, line: node.loc.start.line, source, flags: 'u' });
      },
    });
  }
  return { patterns, dynamic };
}

const { patterns, dynamic } = collect();
const shown = (p: { source: string; flags: string }) => `/${p.source}/${p.flags}`;

t.test('the checker finds the quadratic <a> tag pattern the renderer used to have', async (t) => {
  // domain/mail/render.ts before issue 11: '<a ' * 80,000 held the worker's event loop 17.6 s.
  const r = await check('<a(?=[\\s>/])(?:[^>"\']|"[^"]*"|\'[^\']*\')*>', 'gi', { timeout: 60_000 });
  t.equal(r.status, 'vulnerable');
  t.ok(patterns.length > 50, `the code's patterns were found (${patterns.length})`);
  t.ok(patterns.some((p) => p.file === 'domain/mail/render.ts'), 'domain/ is read');
  // The send body's schema sits in domain/ (its type is derived from it there), the others in api/schemas/.
  t.ok(patterns.some((p) => p.file === 'domain/mail/send-request.ts' && p.flags === 'u'), "the send body schema's patterns are read");
  t.ok(patterns.some((p) => p.file === 'api/schemas/consent.ts' && p.flags === 'u'), "the route schemas' patterns are read");
});

t.test('every pattern that reads outside input is linear', async (t) => {
  for (const p of patterns) {
    const trusted = TRUSTED.find((x) => x.file === p.file && x.pattern === shown(p));
    if (trusted) continue;
    const r = await check(p.source, p.flags, { timeout: 60_000 });
    const detail = r.status === 'vulnerable' ? `${r.complexity.type}, attack ${r.attack.pattern}` : r.status === 'unknown' ? `unknown: ${r.error.kind}` : '';
    t.equal(r.status, 'safe', `${p.file}:${p.line} (dist line) ${shown(p)} ${detail}`);
  }
});

t.test('every exception is still in the code, and is listed with its reason', async (t) => {
  for (const x of TRUSTED) {
    t.ok(patterns.some((p) => p.file === x.file && shown(p) === x.pattern), `${x.file} ${x.pattern} (${x.why}) still exists`);
  }
  for (const d of dynamic) {
    t.ok(DYNAMIC.some((x) => x.file === d.file), `${d.file}:${d.line} (dist line) builds a RegExp at run time: list it in DYNAMIC with the shape it builds`);
  }
  for (const x of DYNAMIC) {
    t.ok(dynamic.some((d) => d.file === x.file), `${x.file} still builds a RegExp at run time`);
    const r = await check(x.example.source, x.example.flags, { timeout: 60_000 });
    t.equal(r.status, 'safe', `${x.file}: the shape it builds, ${shown(x.example)}, is linear`);
  }
});
