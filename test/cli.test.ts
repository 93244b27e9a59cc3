import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { testDatabases } from './helpers/databases.js';
import { childEnv, cliRunner, oneJsonObject, type CliResult } from './helpers/spawn.js';
import { commands } from '../cli/commands/index.js';
import { parseCommandLine } from '../cli/program.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The admin CLI as a user runs it, against this file's database via DATABASE_URL, with its
 * effects checked over HTTP on the real web app. Commands run in this process through the
 * function bin/cartero.js calls (cli/run.ts), which spares a node start per command; `binary`
 * runs `node bin/cartero.js ...` itself for the entry point's checks: a success, help, a usage
 * mistake (exit 2) and a refusal (exit 1).
 */

const dbs = await testDatabases(t, 'cli');
const { url } = await startTestWeb(t, dbs);
// A DATA_DIR that must stay untouched: with DATABASE_URL the CLI starts no embedded Postgres.
const unusedDataDir = join(tmpdir(), `cartero-cli-unused-${randomBytes(4).toString('hex')}`);
// With DATABASE_URL, `domain add` needs DKIM_KEY_ENCRYPTION_KEY (nothing is generated into DATA_DIR: docs/domains.md).
const cli = cliRunner(
  t,
  childEnv({ DATABASE_URL: dbs.databaseUrl, DATA_DIR: unusedDataDir, DKIM_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') }, ['CLICKHOUSE_URL', 'PORT', 'NODE_OPTIONS']),
  { inProcess: true },
);
const binary = cli.spawned;

/** Runs a command that must succeed and returns its one JSON object. */
async function ok(...args: string[]): Promise<Record<string, any>> {
  return oneJsonObject(await cli(...args));
}

async function get(path: string, headers: Record<string, string>) {
  const res = await fetch(url + path, { headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

const auth = (key: string, slug: string) => ({ authorization: `Bearer ${key}`, 'x-instance-slug': slug });

/** A failed command: non-zero exit, nothing on stdout, a message (not a stack trace) on stderr. */
function failed(t: Test, r: CliResult, message: RegExp, what: string): void {
  t.not(r.code, 0, `${what}: non-zero exit`);
  t.not(r.code, null, `${what}: exited by itself`);
  t.equal(r.stdout, '', `${what}: nothing on stdout`);
  t.match(r.stderr, message, `${what}: says why on stderr`);
  t.notMatch(r.stderr, /^\s+at .+\(.*:\d+:\d+\)$/m, `${what}: no stack trace`);
}

const slug = `cli-${randomBytes(3).toString('hex')}`;

t.test('instance create prints the instance; defaults for name and tz', async (t) => {
  const full = oneJsonObject(await binary('instance', 'create', '--slug', slug, '--name', 'CLI Shop', '--tz', 'Europe/Madrid'));
  t.match(full, { slug, name: 'CLI Shop', tz: 'Europe/Madrid', enabled: true, allowed_cidrs: [] });
  t.type(full.id, 'number');
  const bare = await ok('instance', 'create', '--slug', `${slug}-b`);
  t.match(bare, { slug: `${slug}-b`, name: `${slug}-b`, tz: null, enabled: true });
});

let key = '';
let keyId = '';
let senderId = 0;

t.test('key create prints key_id and the full key, which then works over HTTP', async (t) => {
  const created = await ok('key', 'create', '--instance', slug, '--scopes', 'senders:read,domains:read');
  t.match(created, { instance: slug, scopes: ['senders:read', 'domains:read'], allowed_cidrs: [], expires_at: null });
  t.match(created.key_id, /^[0-9a-f]{16}$/);
  t.match(created.key, new RegExp(`^crt\\.${created.key_id}\\.[A-Za-z0-9_-]{43}$`));
  key = created.key;
  keyId = created.key_id;
  const res = await get('/v1/senders', auth(key, slug));
  t.equal(res.status, 200);
  // A new instance has one sender: its sandbox's (docs/panel.md, The sandbox).
  t.same(res.body.data.map((s: any) => [s.name, s.email_address, s.domain_is_verified]), [['Sandbox', `sandbox@${slug}.sandbox.cartero.test`, true]]);
});

t.test('domain add and set-checks: partial updates, verified once all four are approved', async (t) => {
  const added = await ok('domain', 'add', '--instance', slug, '--name', 'Shop.Example');
  t.match(added, { domain: 'shop.example', is_verified: false, mx_status: 'pending', spf_status: 'pending', dkim_status: 'pending', dmarc_status: 'pending' });
  const half = await ok('domain', 'set-checks', '--instance', slug, '--name', 'shop.example', '--mx', 'approved', '--spf', 'failed');
  t.match(half, { is_verified: false, mx_status: 'approved', spf_status: 'failed', dkim_status: 'pending', dmarc_status: 'pending' });
  const all = await ok('domain', 'set-checks', '--instance', slug, '--name', 'shop.example', '--spf', 'approved', '--dkim', 'approved', '--dmarc', 'approved');
  t.match(all, { is_verified: true, mx_status: 'approved', spf_status: 'approved', dkim_status: 'approved', dmarc_status: 'approved' });
  const status = await get('/v1/domains/shop.example/status', auth(key, slug));
  t.same(status.body, { id: added.id, domain: 'shop.example', is_verified: true });
});

t.test('sender create and set-consent-required, seen over HTTP', async (t) => {
  const sender = await ok('sender', 'create', '--instance', slug, '--email', 'News@Shop.Example', '--name', 'Shop News', '--consent-required');
  t.match(sender, { name: 'Shop News', email_address: 'news@shop.example', domain_is_verified: true, is_consent_required: true });
  senderId = sender.id;
  const plain = await ok('sender', 'create', '--instance', slug, '--email', 'billing@shop.example', '--name', 'Billing');
  t.equal(plain.is_consent_required, false, 'consent not required unless asked');

  const off = await ok('sender', 'set-consent-required', '--instance', slug, '--id', String(senderId), '--value', 'false');
  t.match(off, { id: senderId, is_consent_required: false });
  t.equal((await get(`/v1/senders/${senderId}`, auth(key, slug))).body.is_consent_required, false);
  const on = await ok('sender', 'set-consent-required', '--instance', slug, '--id', String(senderId), '--value', 'true');
  t.equal(on.is_consent_required, true);
  const list = await get('/v1/senders', auth(key, slug));
  t.same(
    list.body.data.slice(1).map((s: any) => [s.id, s.email_address, s.is_consent_required]),
    [[senderId, 'news@shop.example', true], [plain.id, 'billing@shop.example', false]],
    'after the sandbox sender',
  );
});

t.test('instance allow-ip (repeatable --cidr) then --clear', async (t) => {
  const set = await ok('instance', 'allow-ip', '--slug', slug, '--cidr', '10.1.2.3/8', '--cidr', '192.168.1.7');
  t.same([...set.allowed_cidrs].sort(), ['10.0.0.0/8', '192.168.1.7/32'], 'networks normalized, both kept');
  const denied = await get('/v1/senders', auth(key, slug));
  t.equal(denied.status, 403);
  t.equal(denied.body.code, 'ip_not_allowed', 'loopback is outside the instance list');
  const cleared = await ok('instance', 'allow-ip', '--slug', slug, '--clear');
  t.same(cleared.allowed_cidrs, []);
  t.equal((await get('/v1/senders', auth(key, slug))).status, 200, 'every address allowed again');
});

t.test('key create with --allow-ip and --expires-at', async (t) => {
  const expires = new Date(Date.now() + 86_400_000).toISOString();
  const k = await ok('key', 'create', '--instance', slug, '--scopes', 'senders:read', '--allow-ip', '10.0.0.0/8', '--expires-at', expires);
  t.same(k.allowed_cidrs, ['10.0.0.0/8']);
  t.equal(k.expires_at, expires);
  const res = await get('/v1/senders', auth(k.key, slug));
  t.equal(res.status, 403);
  t.equal(res.body.code, 'ip_not_allowed', 'the key authenticates, its own IP list refuses loopback');

  const past = await ok('key', 'create', '--instance', slug, '--scopes', 'senders:read', '--expires-at', '2020-01-01T00:00:00Z');
  t.equal(past.expires_at, '2020-01-01T00:00:00.000Z');
  t.equal((await get('/v1/senders', auth(past.key, slug))).status, 401, 'an expired key is refused');
});

t.test('instance set-limits: a fraction, a whole number, none; absent flags unchanged', async (t) => {
  const set = await ok('instance', 'set-limits', '--slug', slug, '--rate', '2.5', '--burst', '10', '--monthly-quota', 'none');
  t.match(set, { slug, send_rate_per_second: 2.5, send_burst: 10, monthly_quota: null, released_from_hold: 0 });
  const quota = await ok('instance', 'set-limits', '--slug', slug, '--monthly-quota', '1000', '--rate', 'unlimited');
  t.match(quota, { send_rate_per_second: null, send_burst: 10, monthly_quota: 1000 }, 'burst left as it was');
  const zero = await cli('instance', 'set-limits', '--slug', slug, '--burst', '0');
  failed(t, zero, /instance set-limits: 400 invalid_limit: burst must be at least 1/, 'a burst of 0');
  t.equal(zero.code, 1, 'refused by the domain, not a usage error');
});

t.test('instance disable then enable', async (t) => {
  const off = await ok('instance', 'disable', '--slug', slug);
  t.match(off, { slug, enabled: false });
  const res = await get('/v1/senders', auth(key, slug));
  t.equal(res.status, 403);
  t.equal(res.body.code, 'forbidden', 'a disabled instance is 403 forbidden');
  const on = await ok('instance', 'enable', '--slug', slug);
  t.match(on, { slug, enabled: true });
  t.equal((await get('/v1/senders', auth(key, slug))).status, 200);
});

t.test('key revoke: the key then gets 401', async (t) => {
  const revoked = await ok('key', 'revoke', '--key-id', keyId);
  t.equal(revoked.key_id, keyId);
  t.ok(Math.abs(Date.parse(revoked.revoked_at) - Date.now()) < 60_000, 'revoked_at is now');
  const res = await get('/v1/senders', auth(key, slug));
  t.equal(res.status, 401);
  t.equal(res.headers.get('www-authenticate'), 'Bearer');
  t.equal(res.body.code, 'unauthorized');
});

t.test('restriction add and lift, seen over HTTP', async (t) => {
  const mailKey = (await ok('key', 'create', '--instance', slug, '--scopes', 'mail:read')).key;
  const listed = async (q = '') => (await get(`/v1/mail-restrictions?recipient=example.org${q}`, auth(mailKey, slug))).body.data;

  const added = await ok('restriction', 'add', '--instance', slug, '--recipient', 'Ann@Example.org', '--reason', 'hard_bounce');
  t.same(Object.keys(added).sort(), ['bounce_class', 'bounce_reason', 'created', 'deleted_at', 'id', 'reason', 'recipient', 'restricted_at', 'scope']);
  t.match(added, { recipient: 'ann@example.org', reason: 'hard_bounce', scope: null, deleted_at: null, created: true });
  t.strictSame([added.bounce_reason, added.bounce_class], [null, null], 'made in the panel: no bounce caused it, even with reason hard_bounce');
  t.ok(Math.abs(Date.parse(added.restricted_at) - Date.now()) < 60_000, 'restricted_at is now, as an ISO date-time');
  t.same(await listed(), [{
    id: added.id, recipient: 'ann@example.org', reason: 'hard_bounce', scope: null, restricted_at: added.restricted_at, deleted_at: null,
    bounce_reason: null, bounce_class: null,
  }]);

  const again = await ok('restriction', 'add', '--instance', slug, '--recipient', 'ann@example.org', '--reason', 'unsubscribe');
  t.match(again, { id: added.id, reason: 'hard_bounce', restricted_at: added.restricted_at, deleted_at: null, created: false },
    'already in force: kept as it was, created false');
  t.equal((await listed()).length, 1, 'no second row');

  const panel = await ok('restriction', 'add', '--instance', slug, '--recipient', 'bob@example.org', '--reason', 'unspecified');
  t.match(panel, { recipient: 'bob@example.org', reason: 'unspecified', created: true }, 'unspecified is allowed from the panel side');

  const lifted = await ok('restriction', 'lift', '--instance', slug, '--recipient', 'ANN@example.org');
  t.match(lifted, { id: added.id, recipient: 'ann@example.org', reason: 'hard_bounce', restricted_at: added.restricted_at, scope: null });
  t.ok(Math.abs(Date.parse(lifted.deleted_at) - Date.now()) < 60_000, 'deleted_at is now');
  t.same((await listed('&active=true')).map((r: any) => r.id), [panel.id], 'no longer in force');
  t.same((await listed('&active=false')).map((r: any) => [r.id, r.deleted_at]), [[added.id, lifted.deleted_at]], 'kept as history');

  const missing = await cli('restriction', 'lift', '--instance', slug, '--recipient', 'ann@example.org');
  failed(t, missing, /restriction lift: 404 restriction_not_found: no restriction in force for ann@example\.org/, 'lift with none in force');
  t.equal(missing.code, 1, 'a refusal, not a usage error');

  const readded = await ok('restriction', 'add', '--instance', slug, '--recipient', 'ann@example.org', '--reason', 'unsubscribe');
  t.match(readded, { reason: 'unsubscribe', created: true, deleted_at: null }, 'a lifted address can be restricted again');
  t.not(readded.id, added.id, 'as a new row of its history');

  const bad = await cli('restriction', 'add', '--instance', slug, '--recipient', 'carol@example.org', '--reason', 'bogus');
  failed(t, bad, /--reason must be one of unspecified, unsubscribe, soft_bounce, hard_bounce/, 'bad --reason');
  t.equal(bad.code, 2, 'usage error');
  failed(t, await cli('restriction', 'add', '--instance', slug, '--recipient', 'carol@example.org'), /--reason is required/, 'missing --reason');
  failed(t, await cli('restriction', 'add', '--instance', slug, '--recipient', 'not-an-address', '--reason', 'hard_bounce'),
    /--recipient must be an email address/, 'bad --recipient');
  failed(t, await cli('restriction', 'lift', '--instance', 'no-such-instance', '--recipient', 'carol@example.org'),
    /instance.*no-such-instance.*not found/, 'unknown instance');
  t.notOk((await listed()).some((r: any) => r.recipient === 'carol@example.org'), 'the failures wrote nothing');
});

t.test('errors: non-zero exit, empty stdout, a clear message on stderr', async (t) => {
  failed(t, await cli('frobnicate', 'now'), /unknown command: frobnicate now/, 'unknown command');
  failed(t, await cli(), /usage: cartero/, 'no command');
  failed(t, await cli('instance', 'create'), /--slug is required/, 'missing required flag');
  failed(t, await cli('instance', 'create', '--slug', 'x', '--colour', 'red'), /colour/, 'unknown flag');
  failed(t, await cli('key', 'create', '--instance', slug, '--scopes', 'senders:read,senders:write'), /unknown scope.*senders:write/, 'unknown scope');
  // A scoped key with no scope breaks a business rule of the spec (409), it is not malformed input (400).
  failed(t, await cli('key', 'create', '--instance', slug, '--scopes', ','), /^cartero key create: 409 api_key_scope_required: /m, 'no scope');
  failed(t, await cli('sender', 'set-consent-required', '--instance', slug, '--id', String(senderId), '--value', 'yes'), /--value must be true or false/, 'bad --value');
  failed(t, await cli('domain', 'set-checks', '--instance', slug, '--name', 'shop.example', '--mx', 'ok'), /--mx must be approved, pending or failed/, 'bad check state');
  const unknown = await binary('domain', 'add', '--instance', 'no-such-instance', '--name', 'x.example');
  failed(t, unknown, /instance.*no-such-instance.*not found/, 'unknown instance');
  t.equal(unknown.code, 1, 'the binary: a refusal exits 1');
  failed(t, await cli('instance', 'create', '--slug', slug), new RegExp(`instance_slug_taken.*${slug}`), 'duplicate slug');

  // The failures changed nothing.
  const list = await get('/v1/senders', auth((await ok('key', 'create', '--instance', slug, '--scopes', 'senders:read')).key, slug));
  t.equal(list.body.data.find((s: any) => s.id === senderId)?.is_consent_required, true, 'bad --value left the sender as it was');
});

/** The commands black-box checks call: each must stay listed under this name. */
const CONTRACT = [
  'instance create', 'instance disable', 'instance enable', 'instance allow-ip', 'instance set-limits',
  'key create', 'key revoke', 'domain add', 'domain set-checks', 'sender create', 'sender set-consent-required',
  'restriction add', 'restriction lift', 'report-key rotate', 'demo',
];

/** The "<area> <action>" (or one-word, `demo`) names under "Commands:" in `cartero --help`. */
function listedCommands(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
  const lines = section.split(/\n\n/)[0]!.split('\n');
  return lines.flatMap((l) => /^  ([a-z-]+(?: [a-z-]+)?)  /.exec(l)?.[1] ?? []);
}

t.test('cartero --help lists every command; each has --help, and cartero help <command> says the same', async (t) => {
  const top = await binary('--help');
  t.equal(top.code, 0, 'exit 0');
  t.equal(top.stderr, '', 'nothing on stderr');
  t.match(top.stdout, /^Usage: cartero <command> \[flags\]\n/, 'starts with the usage');
  const listed = listedCommands(top.stdout);
  t.same(CONTRACT.filter((c) => !listed.includes(c)), [], 'every command is listed');
  t.match(top.stdout, /^  help <command>  /m, 'and help <command>');
  t.same(await cli('help'), top, 'cartero help alone is cartero --help');

  // Every command's help, read in-process (the same parser the binary runs; a spawn per command
  // cost ~100 node starts and most of this file's time); the binary itself is checked on one.
  const helpOf = async (...argv: string[]) => {
    let out = '';
    t.same(await parseCommandLine(commands, argv, (text) => (out += text)), { helped: true }, `${argv.join(' ')}: help, not a command run`);
    return out;
  };
  t.equal(await helpOf('--help'), top.stdout, 'in-process help is what the binary prints');
  for (const name of listed) {
    const help = await helpOf(...name.split(' '), '--help');
    const usage = /^Usage: cartero ([a-z-]+(?: [a-z-]+)?)((?: .*)?)$/m.exec(help);
    t.equal(usage?.[1], name, `${name} --help: its usage line`);
    const options = help.split(/^Options:$/m)[1] ?? '';
    for (const flag of usage?.[2]?.match(/--[a-z-]+/g) ?? []) {
      t.match(options, new RegExp(`^  ${flag} `, 'm'), `${name} --help describes ${flag}`);
    }
    t.match(options, /--help/, `${name} --help: lists --help`);
    t.equal(await helpOf('help', ...name.split(' ')), help, `cartero help ${name} prints the same`);
  }
  const spawned = await binary('sender', 'create', '--help');
  t.same(spawned, { code: 0, stdout: await helpOf('sender', 'create', '--help'), stderr: '' }, 'the binary: a command\'s --help, exit 0, nothing on stderr');
  t.same(await binary('help', 'sender', 'create'), spawned, 'the binary: cartero help <command> prints the same');
  t.same(await cli('help', 'sender', 'create'), spawned, 'in process: the same');
  const create = await cli('help', 'instance', 'create');
  t.match(create.stdout, /^Usage: cartero instance create --slug <slug> \[--name <name>\] \[--tz <zone>\]$/m);
  t.match(create.stdout, /^  --slug <slug> +lowercase letters/m, 'a flag with what it is for');
});

/** A usage mistake: exit 2, nothing on stdout, one line saying what is wrong, then the usage. */
function mistake(t: Test, r: CliResult, line: string, usage: RegExp, what: string): void {
  t.equal(r.code, 2, `${what}: exit 2`);
  t.equal(r.stdout, '', `${what}: nothing on stdout`);
  const [first, second] = r.stderr.split('\n');
  t.equal(first, line, `${what}: one line saying what is wrong`);
  t.match(second, usage, `${what}: then the usage`);
}

t.test('usage mistakes: exit 2, one line on stderr, then the usage', async (t) => {
  const top = /^usage: cartero <command> \[flags\]$/;
  const create = /^usage: cartero instance create --slug <slug> \[--name <name>\] \[--tz <zone>\]$/;
  mistake(t, await binary('frobnicate', 'now'), 'cartero: unknown command: frobnicate now', top, 'the binary: unknown command');
  mistake(t, await cli('frobnicate', 'now'), 'cartero: unknown command: frobnicate now', top, 'unknown command');
  mistake(t, await cli('instance', 'frobnicate'), 'cartero: unknown command: instance frobnicate', top, 'unknown action');
  mistake(t, await cli('instance'), 'cartero: unknown command: instance', top, 'an area alone');
  mistake(t, await cli(), 'cartero: give a command', top, 'nothing');
  mistake(t, await cli('--colour'), "cartero: unknown option '--colour'", top, 'a flag without a command');
  mistake(t, await cli('help', 'frobnicate'), 'cartero: unknown command: frobnicate', top, 'help on an unknown command');
  t.match((await cli('frobnicate')).stderr, /^  cartero instance create --slug <slug> \[--name <name>\] \[--tz <zone>\]$/m, 'the usage lists the commands');

  mistake(t, await binary('instance', 'create', '--slug', 'x', '--colour', 'red'), "cartero instance create: unknown option '--colour'", create, 'the binary: unknown flag');
  mistake(t, await cli('instance', 'create', '--slug', 'x', '--colour', 'red'), "cartero instance create: unknown option '--colour'", create, 'unknown flag');
  mistake(t, await cli('instance', 'create', '--colour', 'red', '--slug', 'x'), "cartero instance create: unknown option '--colour'", create,
    'unknown flag before a required one');
  mistake(t, await cli('instance', 'create', '--name', 'x'), 'cartero instance create: --slug is required', create, 'missing required flag');
  mistake(t, await cli('instance', 'create', '--slug', ''), 'cartero instance create: --slug is required', create, 'empty required flag');
  mistake(t, await cli('instance', 'create', '--slug'), "cartero instance create: option '--slug <slug>' argument missing", create, 'flag without its value');
  mistake(t, await cli('instance', 'create', 'x', '--slug', 'x'), "cartero instance create: too many arguments for 'create'. Expected 0 arguments but got 1.",
    create, 'a stray argument');
  mistake(t, await cli('sender', 'set-consent-required', '--instance', slug, '--id', '0', '--value', 'true'),
    'cartero sender set-consent-required: --id must be a positive integer', /^usage: cartero sender set-consent-required --instance <slug> --id <id> --value <true\|false>$/, 'bad --id');
  mistake(t, await cli('domain', 'set-checks', '--instance', slug, '--name', 'shop.example', '--dkim', 'ok'),
    'cartero domain set-checks: --dkim must be approved, pending or failed', /^usage: cartero domain set-checks /, 'bad check state');
  mistake(t, await cli('instance', 'set-limits', '--slug', slug, '--rate', '-1'), 'cartero instance set-limits: --rate must be a number or none',
    /^usage: cartero instance set-limits /, 'negative limit');
  mistake(t, await cli('key', 'create', '--instance', slug, '--scopes', 'mail:read', '--expires-at', 'soon'),
    'cartero key create: --expires-at must be an ISO 8601 date-time', /^usage: cartero key create /, 'bad date');
  mistake(t, await cli('restriction', 'add', '--instance', slug, '--recipient', 'a@b', '--reason', 'hard_bounce'),
    'cartero restriction add: --recipient must be an email address', /^usage: cartero restriction add /, 'address without a dot in its domain');
  mistake(t, await cli('instance', 'allow-ip', '--slug', slug), 'cartero instance allow-ip: give --cidr (repeatable) or --clear',
    /^usage: cartero instance allow-ip --slug <slug> \(--cidr <cidr> \[--cidr <cidr> \.\.\.\] \| --clear\)$/, 'neither of two flags');
});

t.test('with DATABASE_URL the CLI never touches DATA_DIR', async (t) => {
  t.notOk(existsSync(unusedDataDir), 'no embedded Postgres was initialised');
});
