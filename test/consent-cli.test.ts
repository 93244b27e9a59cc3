import { readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { proofSchema, purposeSchema, termSchema } from '../api/schemas/consent.js';
import { compile } from '../domain/validation.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { childEnv, cliRunner, oneJsonObject, type CliResult } from './helpers/spawn.js';
import { startTestWeb } from './helpers/web.js';
import { tempDir } from './helpers/temp-dir.js';

/**
 * The panel-only consent operations as a user runs them (`node bin/cartero.js purpose|term|consent
 * ...`, in this process but for the first: test/helpers/spawn.ts's cliRunner) against this file's
 * database, their effects checked over HTTP on the real web app: each command prints what GET
 * /v1/consent-purposes or /v1/consent-terms shows, and `consent proof` the document of GET
 * /v1/consent-events/proof.
 */

const dbs = await testDatabases(t, 'consentcli');
const { url } = await startTestWeb(t, dbs);
const cli = cliRunner(t, childEnv({ DATABASE_URL: dbs.databaseUrl }, ['CLICKHOUSE_URL', 'PORT', 'NODE_OPTIONS']), { inProcess: true });
const a = await makeTenant(dbs.pool, { scopes: ['consent:read', 'consent:write'] });
const b = await makeTenant(dbs.pool, { scopes: ['consent:read', 'consent:write'] });
const term = compile(termSchema, 'json');
const purpose = compile(purposeSchema, 'json');
const proofDoc = compile(proofSchema, 'json');

const { dir, file } = tempDir(t, 'cartero-consent-cli-');

async function call(method: string, path: string, body?: unknown, headers = a.headers) {
  const res = await fetch(url + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function ok(...args: string[]): Promise<Record<string, any>> {
  return oneJsonObject(await cli(...args));
}

/** A failed command: non-zero exit (2 for a usage mistake), nothing on stdout, the code on stderr, no stack trace. */
function failed(t: Test, r: CliResult, message: RegExp, what: string, code?: number): void {
  if (code === undefined) t.not(r.code, 0, `${what}: non-zero exit`);
  else t.equal(r.code, code, `${what}: exit ${code}`);
  t.equal(r.stdout, '', `${what}: nothing on stdout`);
  t.match(r.stderr, message, `${what}: says why on stderr`);
  t.notMatch(r.stderr, /^\s+at .+\(.*:\d+:\d+\)$/m, `${what}: no stack trace`);
}

const listedTerm = async (id: number) => (await call('GET', '/v1/consent-terms?page_size=100')).body.data.find((x: any) => x.id === id);

t.test('purpose create: prints the purpose with its id, as GET lists it', async (t) => {
  // Through `node bin/cartero.js` itself, once: the other commands of this file run in process (test/helpers/spawn.ts's cliRunner).
  const p = oneJsonObject(await cli.spawned('purpose', 'create', '--instance', a.slug, '--name', 'Newsletter'));
  purpose(p);
  t.match(p, { id: Number, name: 'Newsletter' });
  t.same((await call('GET', '/v1/consent-purposes')).body.data, [p]);
  failed(t, await cli('purpose', 'create', '--instance', a.slug, '--name', 'NEWSLÉTTER'), /consent_purpose_name_taken/, 'a taken name (case and accents)', 1);
  t.match(await ok('purpose', 'create', '--instance', b.slug, '--name', 'Newsletter'), { name: 'Newsletter' }, 'names are per instance');
  failed(t, await cli('purpose', 'create', '--instance', 'no-such-instance', '--name', 'X'), /instance/, 'an unknown instance', 1);
  failed(t, await cli('purpose', 'create', '--instance', a.slug), /--name is required/, 'no name', 2);
});

t.test('term create, add-version, set-current, deactivate, activate: each prints the term as GET shows it', async (t) => {
  const p1 = await ok('purpose', 'create', '--instance', a.slug, '--name', 'Offers');
  const p2 = await ok('purpose', 'create', '--instance', a.slug, '--name', 'Profiling');
  const created = await ok('term', 'create', '--instance', a.slug, '--name', 'Marketing', '--type', 'marketing', '--purposes', `${p1.id},${p2.id}`, '--channels', 'mail,sms');
  term(created);
  t.match(created, { name: 'Marketing', type: 'marketing', purpose_ids: [p1.id, p2.id], channels: ['mail', 'sms'], is_active: true, versions: [] });
  t.same(await listedTerm(created.id), created, 'what GET shows');
  const id = String(created.id);

  const v1 = await ok('term', 'add-version', '--instance', a.slug, '--term-id', id, '--version', '2026-01', '--body-file', file('v1.txt', 'Texto legal, versión 1.\n'), '--document-url', 'https://shop.example/legal/1');
  term(v1);
  t.same(v1.versions.map((v: any) => [v.version, v.body, v.document_url, v.is_current]), [['2026-01', 'Texto legal, versión 1.\n', 'https://shop.example/legal/1', false]], 'published, not current');
  t.same(await listedTerm(created.id), v1);
  const post = () => call('POST', '/v1/consent-events', {
    term_id: created.id, method: 'single_opt_in', rules: [{ channel: 'mail', contact_type: 'email_address', contact: 'x@example.com', purpose_id: p1.id, action: 'allow' }],
  });
  t.equal((await post()).body.code, 'consent_term_no_current_version', 'no version current yet');

  const v2 = await ok('term', 'add-version', '--instance', a.slug, '--term-id', id, '--version', '2026-02', '--body-file', file('v2.txt', 'Version 2'));
  t.same(v2.versions.map((v: any) => [v.version, v.document_url, v.is_current]), [['2026-01', 'https://shop.example/legal/1', false], ['2026-02', null, false]]);
  const current = await ok('term', 'set-current', '--instance', a.slug, '--term-id', id, '--version', '2026-01');
  term(current);
  t.same(current.versions.map((v: any) => v.is_current), [true, false]);
  t.same(await listedTerm(created.id), current);
  t.equal((await post()).status, 201, 'consents are accepted now');
  const switched = await ok('term', 'set-current', '--instance', a.slug, '--term-id', id, '--version', '2026-02');
  t.same(switched.versions.map((v: any) => v.is_current), [false, true], 'one current version at a time');
  t.same(await ok('term', 'set-current', '--instance', a.slug, '--term-id', id, '--version', '2026-02'), switched, 'setting it again changes nothing');

  const off = await ok('term', 'deactivate', '--instance', a.slug, '--term-id', id);
  t.match(off, { id: created.id, is_active: false });
  t.same(await listedTerm(created.id), off);
  t.equal((await post()).body.code, 'consent_term_inactive');
  const on = await ok('term', 'activate', '--instance', a.slug, '--term-id', id);
  t.match(on, { id: created.id, is_active: true });
  t.equal((await post()).status, 201);

  failed(t, await cli('term', 'create', '--instance', a.slug, '--name', 'marketing', '--type', 'marketing', '--purposes', String(p1.id), '--channels', 'mail'), /consent_term_name_taken/, 'a taken name', 1);
  failed(t, await cli('term', 'create', '--instance', a.slug, '--name', 'Other', '--type', 'marketing', '--purposes', `${p1.id},999999`, '--channels', 'mail'), /consent_purpose_not_found/, 'an unknown purpose', 1);
  const bPurpose = (await call('GET', '/v1/consent-purposes', undefined, b.headers)).body.data[0].id;
  failed(t, await cli('term', 'create', '--instance', a.slug, '--name', 'Other', '--type', 'marketing', '--purposes', String(bPurpose), '--channels', 'mail'), /consent_purpose_not_found/, "another instance's purpose", 1);
  failed(t, await cli('term', 'create', '--instance', a.slug, '--name', 'Other', '--type', 'legal', '--purposes', String(p1.id), '--channels', 'mail'), /--type must be one of data_processing, service_terms, marketing, subscription, other/, 'a bad type', 2);
  failed(t, await cli('term', 'create', '--instance', a.slug, '--name', 'Other', '--type', 'other', '--purposes', String(p1.id), '--channels', 'mail,fax'), /--channels must be one of mail, sms, wsp, call, push/, 'a bad channel', 2);
  failed(t, await cli('term', 'create', '--instance', a.slug, '--name', 'Other', '--type', 'other', '--purposes', `${p1.id},${p1.id}`, '--channels', 'mail'), /--purposes repeats/, 'a repeated purpose', 2);
  failed(t, await cli('term', 'create', '--instance', a.slug, '--name', 'Other', '--type', 'other', '--purposes', 'one', '--channels', 'mail'), /--purposes must be a positive integer/, 'a bad purpose id', 2);
  failed(t, await cli('term', 'add-version', '--instance', a.slug, '--term-id', id, '--version', '2026-01', '--body-file', file('dup.txt', 'x')), /consent_term_version_taken/, 'a taken version label', 1);
  failed(t, await cli('term', 'add-version', '--instance', a.slug, '--term-id', id, '--version', 'v9', '--body-file', join(dir, 'missing.txt')), /file_unreadable: .*ENOENT/, 'a missing file', 1);
  failed(t, await cli('term', 'add-version', '--instance', a.slug, '--term-id', id, '--version', 'v9', '--body-file', file('empty.txt', '  \n')), /invalid_body/, 'an empty text', 1);
  failed(t, await cli('term', 'add-version', '--instance', a.slug, '--term-id', id, '--version', 'v9', '--body-file', file('ok.txt', 'x'), '--document-url', 'javascript:alert(1)'), /invalid_document_url/, 'a URL that is not http(s)', 1);
  failed(t, await cli('term', 'set-current', '--instance', a.slug, '--term-id', id, '--version', 'nope'), /consent_term_version_not_found/, 'an unknown version', 1);
  failed(t, await cli('term', 'set-current', '--instance', b.slug, '--term-id', id, '--version', '2026-01'), /consent_term_not_found/, "another instance's term", 1);
  failed(t, await cli('term', 'deactivate', '--instance', a.slug, '--term-id', '999999'), /consent_term_not_found/, 'an unknown term', 1);
  failed(t, await cli('term', 'activate', '--instance', a.slug, '--term-id', 'x'), /--term-id must be a positive integer/, 'a bad id', 2);
  t.same((await listedTerm(created.id)).versions.map((v: any) => v.version), ['2026-01', '2026-02'], 'nothing stored by the refusals');
});

t.test('consent proof: the API document, printed or written to a new file', async (t) => {
  const p = await ok('purpose', 'create', '--instance', a.slug, '--name', 'Proof purpose');
  const created = await ok('term', 'create', '--instance', a.slug, '--name', 'Proof terms', '--type', 'data_processing', '--purposes', String(p.id), '--channels', 'mail');
  await ok('term', 'add-version', '--instance', a.slug, '--term-id', String(created.id), '--version', '1', '--body-file', file('proof.txt', 'We keep your data for the newsletter.'));
  await ok('term', 'set-current', '--instance', a.slug, '--term-id', String(created.id), '--version', '1');
  const r = await call('POST', '/v1/consent-events', {
    term_id: created.id, method: 'single_opt_in', ip_address: '203.0.113.5', user_agent: 'UA', evidence: { page: '/join' },
    rules: [{ channel: 'mail', contact_type: 'email_address', contact: 'Proof@Example.com', purpose_id: p.id, action: 'allow' }],
  });
  t.equal(r.status, 201);

  const api = (await call('GET', '/v1/consent-events/proof?contact=proof%40example.com')).body;
  const printed = await ok('consent', 'proof', '--instance', a.slug, '--contact', 'proof@example.com');
  proofDoc(printed);
  const same = (doc: any) => ({ ...doc, generated_at: '<time>' });
  t.same(same(printed), same(api), 'the same document as GET /v1/consent-events/proof');
  t.equal(printed.events.length, 1);
  t.match(printed.events[0].declared, { ip_address: '203.0.113.5', user_agent: 'UA', evidence: { page: '/join' } });

  const out = join(dir, 'proof.json');
  const summary = await ok('consent', 'proof', '--instance', a.slug, '--contact', 'proof@example.com', '--out', out);
  const text = readFileSync(out, 'utf8');
  t.same(summary, { file: out, contact: 'proof@example.com', events: 1, bytes: Buffer.byteLength(text), sha256: createHash('sha256').update(text).digest('hex') });
  t.same(same(JSON.parse(text)), same(api), 'the file holds the same document');
  t.equal(statSync(out).mode & 0o777, 0o600, 'readable by its owner only');
  failed(t, await cli('consent', 'proof', '--instance', a.slug, '--contact', 'proof@example.com', '--out', out), /file_unwritable: .*EEXIST/, 'an existing file is never overwritten', 1);
  t.equal(readFileSync(out, 'utf8'), text, 'and is left as it was');
  t.same((await ok('consent', 'proof', '--instance', b.slug, '--contact', 'proof@example.com')).events, [], "another instance's proof is empty");
  failed(t, await cli('consent', 'proof', '--instance', a.slug), /--contact is required/, 'no contact', 2);
});

t.test('--help on every consent command', async (t) => {
  for (const name of ['purpose create', 'term create', 'term add-version', 'term set-current', 'term deactivate', 'term activate', 'consent proof']) {
    const help = await cli(...name.split(' '), '--help');
    t.equal(help.code, 0, `${name} --help`);
    t.match(help.stdout, new RegExp(`^Usage: cartero ${name} --instance <slug>`, 'm'));
  }
  const top = await cli('--help');
  for (const name of ['purpose create', 'term create', 'term add-version', 'term set-current', 'term deactivate', 'term activate', 'consent proof']) t.match(top.stdout, name);
});
