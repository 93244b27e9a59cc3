import { readFileSync } from 'node:fs';
import t from 'tap';
import { CONFIGURATION_DOC, configurationTable, generatedPart } from '../config/doc.js';
import { variablesOf } from '../config/schema.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { childEnv, spawnNode, tempDataDir } from './helpers/spawn.js';

/**
 * The configuration schema (config/schema.ts) as the one home of every environment
 * variable: docs/configuration.md agrees with it, defaults are the documented public contract,
 * a value not allowed is refused naming the variable, the value and what is allowed, and every
 * entry point stops on one before doing anything.
 */

const thrown = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
};

t.test('docs/configuration.md is the schema', async (t) => {
  const doc = readFileSync(CONFIGURATION_DOC.file, 'utf8');
  t.equal(generatedPart(doc), configurationTable(), 'the generated table is current: run node dist/config/doc.js --write');
  const names = new Set(variablesOf().map((v) => v.name));
  t.equal(names.size, variablesOf().length, 'no variable is declared twice');
  // The prose may only name variables that exist.
  const mentioned = [...doc.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|PORT)`/g)].map((m) => m[1]!);
  t.ok(mentioned.length > 20, 'the notes name variables');
  t.same([...new Set(mentioned.filter((n) => !names.has(n)))], [], 'every variable the document names is in the schema');
});

t.test('defaults: the documented public contract', async (t) => {
  const c = loadConfig({});
  t.match(c, {
    port: 3000,
    databaseUrl: undefined,
    clickhouseUrl: undefined,
    smtpUrl: undefined,
    publicUrl: 'http://localhost:3000',
    trustProxy: false,
    logLevel: 'info',
    webLimits: { headersTimeoutMs: 20_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 65_000, maxConnections: 1_000 },
    internalPort: undefined,
    internalHost: '127.0.0.1',
    internalToken: undefined,
    inboundSmtpPort: undefined,
    inboundSmtpHost: '127.0.0.1',
    inboundLimits: { maxConnections: 100, maxRecipients: 50, maxMessagesPerConnection: 100, ratePerMinute: 600 },
    trackingSecret: undefined,
    send: { batchSize: 100, concurrency: 4, retryLimit: 6, retryDelaySeconds: 60, jobExpireSeconds: 600 },
    render: { maxBodyBytes: 2 * 1024 * 1024, maxMs: 5_000 },
    queue: { maintenanceSeconds: 30 },
    softBounces: { threshold: 3, windowDays: 30 },
  });
  t.ok(c.dataDir.endsWith('/.data'), 'DATA_DIR ./.data, resolved');
  t.equal(loadConfig({ PORT: '8080' }).publicUrl, 'http://localhost:8080', 'PUBLIC_URL follows PORT');
  t.equal(loadConfig({ PUBLIC_URL: 'https://mail.example.com//' }).publicUrl, 'https://mail.example.com', 'trailing slashes dropped');
  t.equal(loadConfig({ SEND_RETRY_LIMIT: '' }).send.retryLimit, 6, 'empty is unset');
  t.match(
    loadConfig({ SEND_RETRY_LIMIT: '0', SEND_RETRY_DELAY_SECONDS: '1', QUEUE_MAINTENANCE_SECONDS: '2', RENDER_MAX_MS: '1', TRACKING_SECRET: 's', LOG_LEVEL: 'warn' }),
    { send: { retryLimit: 0, retryDelaySeconds: 1 }, queue: { maintenanceSeconds: 2 }, render: { maxMs: 1 }, trackingSecret: 's', logLevel: 'warn' },
    'set values are typed',
  );
});

t.test('a value not allowed names the variable, the value and what is allowed', async (t) => {
  // Every variable of these types, with a value none of them allows.
  for (const v of variablesOf()) {
    if (!['integer', 'port', 'enum', 'url', 'host'].includes(v.type)) continue;
    t.equal(thrown({ [v.name]: 'not valid!' }), `${v.name} must be ${v.allowed}, got "not valid!"`, `${v.name} (${v.type})`);
  }
  // One of each kind by hand, so the messages read as an operator sees them.
  t.equal(thrown({ SEND_RETRY_LIMIT: 'abc' }), 'SEND_RETRY_LIMIT must be a whole number of at least 0, got "abc"', 'integer');
  t.equal(thrown({ SEND_BATCH_SIZE: '1.5' }), 'SEND_BATCH_SIZE must be a whole number of at least 1, got "1.5"', 'integer: not whole');
  t.equal(thrown({ SOFT_BOUNCE_THRESHOLD: '0' }), 'SOFT_BOUNCE_THRESHOLD must be a whole number of at least 1, got "0"', 'integer: below the range');
  t.equal(thrown({ QUEUE_MAINTENANCE_SECONDS: '0' }), 'QUEUE_MAINTENANCE_SECONDS must be a whole number from 1 to 86399, got "0"', 'integer: 0 no longer means 30');
  t.equal(thrown({ SEND_JOB_EXPIRE_SECONDS: '86400' }), 'SEND_JOB_EXPIRE_SECONDS must be a whole number from 1 to 86399, got "86400"', 'integer: above the range');
  t.equal(thrown({ PORT: '70000' }), 'PORT must be a port number from 0 to 65535 (0: any free port), got "70000"', 'port');
  t.equal(thrown({ LOG_LEVEL: 'loud' }), 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"', 'enum');
  t.equal(thrown({ DATABASE_URL: 'mysql://db/x' }), 'DATABASE_URL must be a URL with scheme postgres, postgresql or socket, got "mysql://db/x"', 'url: protocol');
  t.equal(thrown({ PUBLIC_URL: 'mail.example.com' }), 'PUBLIC_URL must be a URL with scheme http or https, got "mail.example.com"', 'url: not a URL');
  t.equal(thrown({ INBOUND_SMTP_HOST: 'a host' }), 'INBOUND_SMTP_HOST must be an IP address (0.0.0.0 or :: for every interface) or a host name, got "a host"', 'host');
  const token = 'short secret';
  const secret = thrown({ INTERNAL_TOKEN: token });
  t.equal(secret, 'INTERNAL_TOKEN must be at least 32 characters without spaces (e.g. the output of openssl rand -hex 32), got 12 characters (not shown)', 'secret');
  t.notMatch(secret, token, 'a secret is never echoed');
  t.match(thrown({ TRUST_PROXY: 'true' }), /^TRUST_PROXY=true would believe X-Forwarded-For from any client/, 'proxy list');
  t.match(thrown({ TRUST_PROXY: '10.0.0.0/99' }), /^TRUST_PROXY=10\.0\.0\.0\/99: .*expected a hop count/, 'proxy list: a bad entry');
  t.equal(
    thrown({ WEB_HEADERS_TIMEOUT_MS: '70000' }),
    'WEB_HEADERS_TIMEOUT_MS (70000) must not exceed WEB_REQUEST_TIMEOUT_MS (60000)',
    'a rule between variables',
  );
  t.equal(
    thrown({ SEND_RETRY_LIMIT: 'abc', PORT: 'x', LOG_LEVEL: 'loud' }),
    [
      'PORT must be a port number from 0 to 65535 (0: any free port), got "x"',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'SEND_RETRY_LIMIT must be a whole number of at least 0, got "abc"',
    ].join('\n'),
    'every variable not allowed, in table order',
  );
});

t.test('the schema has a description and what is allowed for every variable', async (t) => {
  for (const v of variablesOf()) {
    t.ok(v.description.length > 10 && !v.description.includes('\n'), `${v.name}: a one-line description`);
    t.ok(v.allowed.length > 0, `${v.name}: what is allowed`);
    if (v.default !== undefined) t.doesNotThrow(() => loadConfig({ [v.name]: String(v.default === false ? 'false' : v.default) }), `${v.name}: its default written out is allowed`);
  }
});

t.test('every entry point stops at once on a value not allowed', async (t) => {
  const message = 'SEND_RETRY_LIMIT must be a whole number of at least 0, got "abc"';
  // Nothing listens on port 1: a process that got past its configuration would fail later and
  // differently (or hang), without this message.
  const env = childEnv(
    { SEND_RETRY_LIMIT: 'abc', DATABASE_URL: 'postgres://127.0.0.1:1/none', CLICKHOUSE_URL: 'http://127.0.0.1:1/cartero', SMTP_URL: 'smtp://127.0.0.1:1', PORT: '0', LOG_LEVEL: 'info' },
    ['INTERNAL_PORT', 'INBOUND_SMTP_PORT'],
  );
  for (const [label, script, args, extra] of [
    ['web', 'dist/runtime/web.js', [], {}],
    ['worker', 'dist/runtime/worker.js', [], {}],
    ['release', 'dist/runtime/release.js', [], {}],
    ['start', 'dist/runtime/start.js', [], { DATA_DIR: tempDataDir(t) }],
  ] as const) {
    const proc = spawnNode(t, script, { env: { ...env, ...extra }, args: [...args] });
    const exit = await proc.waitExit(30_000);
    t.equal(exit?.code, 1, `${label}: exit 1`);
    t.match(proc.stderr(), `cartero ${label}: invalid configuration`, `${label}: says so`);
    t.match(proc.stderr(), message, `${label}: names the variable, the value and what is allowed`);
    t.notMatch(proc.stdout(), /started|ready|running/i, `${label}: started nothing`);
  }
  // The CLI reads the same schema (cli/main.ts).
  const cli = spawnNode(t, 'bin/cartero.js', { env, args: ['instance', 'create', '--slug', 'cfg'] });
  const exit = await cli.waitExit(30_000);
  t.not(exit?.code, 0, 'cli: a failure exit');
  t.match(cli.stderr(), message, 'cli: names the variable, the value and what is allowed');
});
