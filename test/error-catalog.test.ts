import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { buildOpenApi } from '../api/openapi.js';
import { problem } from '../api/http/problem.js';
import { routes } from '../api/routes/index.js';
import { AppError, DependencyUnavailable, NotFoundError, RuleViolation, type ErrorCode } from '../domain/errors.js';
import { ERROR_CATALOG, FIELD_ERROR_CATALOG, NOT_FOUND_RESOURCES, STATUS_TITLES, UnknownErrorCode, isErrorCode, isFieldErrorCode } from '../errors/catalog.js';
import { ERROR_CODES_DOC, errorCodeTables, generatedErrorPart } from '../errors/doc.js';
import { CONNECTION_ERROR_CODES } from '../errors/connection.js';

import { asDependencyError } from '../sql/pool.js';
import { projectRoot } from '../config/paths.js';

/**
 * The error catalog (errors/catalog.ts) is every code the service emits. The types already refuse
 * an unknown code where one is written; this test covers what the types cannot see: a code cast
 * past them (the problem builder and AppError throw), a literal in the sources the catalog lacks,
 * the catalog's own claims (where a code is named), and the two documents listing it (the OpenAPI
 * document and docs/api-conventions.md).
 */

const SOURCE_FOLDERS = ['api', 'cli', 'domain', 'engines', 'errors', 'runtime', 'sql', 'smtp', 'workers', 'analytics'];

// `code:` properties that are not error codes of a problem object or an errors[] item: the rejects
// file of a dataset import or a list upload has a `code` column of its own (docs/datasets.md); a
// panel import's progress says import_interrupted of a run whose web dyno stopped, which no
// request answers (docs/panel.md, the import's progress).
const NOT_ERROR_CODES = new Set(['row_malformed', 'row_empty', 'import_interrupted']);

function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'node_modules' ? [] : sources(join(dir, e.name))) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

interface Found {
  file: string;
  line: number;
  code: string;
  kind: 'problem' | 'field' | 'either';
}

/** Every string literal the sources pass as an error code, and what kind of code it must be. */
function literalCodes(text: string, file: string): Found[] {
  const found: Found[] = [];
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  const scan = (re: RegExp, kind: Found['kind'], map: (s: string) => string = (s) => s) => {
    for (const m of text.matchAll(re)) found.push({ file, line: lineOf(m.index!), code: map(m[1]!), kind });
  };
  scan(/new (?:AppError|RuleViolation)\(\s*'([^']+)'/g, 'problem');
  scan(/\bproblem\(\s*'([^']+)'/g, 'problem');
  scan(/\bsuper\(\s*'([^']+)'/g, 'problem');
  scan(/new NotFoundError\(\s*'([^']+)'/g, 'problem', (r) => `${r}_not_found`);
  scan(/'x-error-code':\s*'([^']+)'/g, 'field');
  // Any other `code: '<lower case>'` (Node's own error codes are upper case).
  scan(/\bcode:\s*'([a-z][a-z0-9_.]*)'/g, 'either');
  scan(/\bconflict\(\s*'([^']+)'/g, 'problem');
  return found;
}

function known(f: Found): boolean {
  if (f.kind === 'problem') return isErrorCode(f.code);
  if (f.kind === 'field') return isFieldErrorCode(f.code);
  return isErrorCode(f.code) || isFieldErrorCode(f.code) || NOT_ERROR_CODES.has(f.code);
}

t.test('every code a source file emits is in the catalog', async (t) => {
  const files = SOURCE_FOLDERS.flatMap((d) => sources(join(projectRoot, d)));
  const found = files.flatMap((f) => literalCodes(readFileSync(f, 'utf8'), relative(projectRoot, f)));
  // The scan itself must see the sites (a pattern gone stale would pass on nothing).
  t.ok(found.length > 250, `the scan finds the codes written in the sources (${found.length})`);
  t.ok(found.some((f) => f.code === 'template_published') && found.some((f) => f.code === 'mail_template_not_found') && found.some((f) => f.code === 'url_not_public'));
  const unknown = found.filter((f) => !known(f)).map((f) => `${f.file}:${f.line} ${f.code} (${f.kind})`);
  t.same(unknown, [], 'no code outside the catalog (add it to errors/catalog.ts)');
});

t.test('the catalog holds what is emitted: each of its codes is written in the sources, or marked as never answered', async (t) => {
  const text = SOURCE_FOLDERS.filter((d) => d !== 'errors')
    .flatMap((d) => sources(join(projectRoot, d)))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  const resourceOf = (code: string) => (code.endsWith('_not_found') ? code.slice(0, -'_not_found'.length) : '');
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    const written = text.includes(`'${code}'`) || (Object.hasOwn(NOT_FOUND_RESOURCES, resourceOf(code)) && text.includes(`'${resourceOf(code)}'`));
    t.ok(written !== Boolean(entry.notEmitted), `${code}: ${entry.notEmitted ? 'marked never answered, and not written' : 'written in the sources'}`);
  }
  for (const code of Object.keys(FIELD_ERROR_CATALOG)) t.ok(text.includes(`'${code}'`), `errors[] code ${code} is written in the sources`);
});

t.test('the scan catches a code the catalog lacks', async (t) => {
  const bad = literalCodes("throw new RuleViolation('no_such_rule', 'x');\nerrors.push({ pointer: '', code: 'value_error.no_such', message: '' });", 'x.ts');
  t.same(bad.filter((f) => !known(f)).map((f) => f.code), ['no_such_rule', 'value_error.no_such']);
});

t.test('a code cast past the types throws instead of leaving with a guessed status', async (t) => {
  t.throws(() => problem('no_such_code' as ErrorCode, 'd', 'trace'), UnknownErrorCode);
  t.throws(() => new AppError('no_such_code' as ErrorCode, 'd'), UnknownErrorCode);
  t.throws(() => new RuleViolation('no_such_rule' as 'template_published', 'd'), UnknownErrorCode);
});

t.test('status and title come from the catalog', async (t) => {
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    const p = problem(code as ErrorCode, 'd', 'trace');
    t.equal(p.status, entry.status, code);
    t.equal(p.title, STATUS_TITLES[entry.status], `${code}: the title is the status's reason phrase, as served before the catalog`);
    t.equal(p.type, `https://cartero.dev/problems/${code.replace(/_/g, '-')}`);
  }
  for (const resource of Object.keys(NOT_FOUND_RESOURCES) as (keyof typeof NOT_FOUND_RESOURCES)[]) {
    const e = new NotFoundError(resource, 7);
    t.same([e.status, e.code], [404, `${resource}_not_found`]);
  }
  // A few the API has always answered, pinned: this is the contract, not a copy of the table.
  const pinned: [ErrorCode, number][] = [
    ['bad_request', 400], ['unauthorized', 401], ['forbidden', 403], ['ip_not_allowed', 403], ['not_found', 404],
    ['mail_outside_retention', 404], ['method_not_allowed', 405], ['request_timeout', 408], ['template_published', 409],
    ['webhook_limit_reached', 409], ['consent_event_expired', 410], ['request_too_large', 413], ['unsupported_media_type', 415],
    ['validation_error', 422], ['idempotency_key_reused', 422], ['template_html_too_large', 422], ['rate_limit_exceeded', 429],
    ['request_header_fields_too_large', 431], ['internal_error', 500], ['service_unavailable', 503], ['file_unreadable', 400],
  ];
  for (const [code, status] of pinned) t.equal(ERROR_CATALOG[code].status, status, code);
});

t.test('where a code is named: a spec section, or a document that names it, or the module that emits it', async (t) => {
  // A document names the code itself; a module may build a <resource>_not_found from its resource.
  const check = (code: string, where: string, inModule: string[]) => {
    if (where.startsWith('spec: ')) return;
    t.match(where, /^not in the spec: /, code);
    for (const doc of where.match(/docs\/[a-z-]+\.md/g) ?? []) {
      // The generated tables name every code: only the prose counts.
      const text = readFileSync(join(projectRoot, doc), 'utf8').replace(generatedErrorPart(readFileSync(join(projectRoot, doc), 'utf8')) ?? '', '');
      t.match(text, new RegExp(`(?<![a-z_.])${code.replace(/\./g, '\\.')}(?![a-z_])`), `${doc} names ${code}`);
    }
    for (const module of where.match(/\b(?:api|cli|domain)\/[a-z/.-]+\.ts/g) ?? []) {
      const text = readFileSync(join(projectRoot, module), 'utf8');
      t.ok(inModule.some((m) => text.includes(`'${m}'`)), `${module} emits ${code}`);
    }
  };
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    const resource = code.endsWith('_not_found') ? code.slice(0, -'_not_found'.length) : undefined;
    const isResource = resource !== undefined && Object.hasOwn(NOT_FOUND_RESOURCES, resource);
    check(code, entry.where, isResource ? [code, resource!] : [code]);
  }
  for (const [code, where] of Object.entries(FIELD_ERROR_CATALOG)) check(code, where, [code]);
});

t.test('docs/api-conventions.md lists the catalog', async (t) => {
  const doc = readFileSync(ERROR_CODES_DOC.file, 'utf8');
  t.equal(generatedErrorPart(doc), errorCodeTables(), 'the generated tables are current: run node dist/errors/doc.js --write');
});

t.test('the OpenAPI document lists each response\'s codes from the catalog', async (t) => {
  const doc = buildOpenApi(routes, 'http://localhost') as { paths: Record<string, Record<string, { responses: Record<string, { description: string; 'x-problem-codes'?: string[] }> }>> };
  let seen = 0;
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        seen++;
        const codes = response['x-problem-codes'] ?? [];
        t.ok(codes.length > 0, `${method} ${path} ${status} lists codes`);
        for (const code of codes) t.equal(isErrorCode(code) && ERROR_CATALOG[code].status, Number(status), `${method} ${path} ${status}: ${code}`);
        t.match(response.description, STATUS_TITLES[Number(status) as keyof typeof STATUS_TITLES], 'the title is the catalog\'s');
      }
    }
  }
  t.ok(seen > 100, 'the routes answer errors');
  const sendConflicts = doc.paths['/v1/mails/send']?.post?.responses['409']?.['x-problem-codes'];
  t.ok(sendConflicts?.includes('template_not_public'), 'a 409 lists the business rules');
  t.notOk(sendConflicts?.includes('instance_slug_taken'), 'a code only the CLI answers is left out');
});

t.test('the connection failures that become 503 service_unavailable are one list (errors/connection.ts)', async (t) => {
  // The pool and the API's error handler each kept one, and they had drifted.
  const holders = SOURCE_FOLDERS.flatMap((d) => sources(join(projectRoot, d)))
    .filter((f) => /'ECONNREFUSED'|'EHOSTUNREACH'|'UND_ERR_SOCKET'/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(projectRoot, f));
  t.same(holders, ['errors/connection.ts'], 'no other module spells the list');
  for (const code of CONNECTION_ERROR_CODES) t.type(asDependencyError(Object.assign(new Error('x'), { code })), DependencyUnavailable, `the pool: ${code}`);
  for (const code of ['08006', '57P01', '53300']) t.type(asDependencyError(Object.assign(new Error('x'), { code })), DependencyUnavailable, `the pool: SQLSTATE ${code}`);
  const wrapped = Object.assign(new Error('outer'), { cause: Object.assign(new Error('inner'), { code: 'ECONNRESET' }) });
  t.type(asDependencyError(wrapped), DependencyUnavailable, 'a wrapped connection failure too');
  const unique = Object.assign(new Error('dup'), { code: '23505' });
  t.equal(asDependencyError(unique), unique, 'anything else is rethrown unchanged');
});
