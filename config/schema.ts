import { promises as dnsPromises } from 'node:dns';
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import { CSV_LIMITS, RENDER_LIMITS, SOFT_BOUNCE_DEFAULTS, TEMPLATE_RENDER_DEFAULTS } from './defaults.js';
import { fail, integer, type Variable } from './variable.js';
import { WEBHOOK_VARIABLES } from './webhooks.js';

/**
 * Every environment variable Cartero reads: its name (a public contract), type, default, what
 * is allowed and what it means. `loadConfig` (config/config.ts) reads them all once when a
 * process starts, and the nesting below is the shape of the typed `Config` it returns, so a
 * new variable is one entry here plus its use. docs/configuration.md is generated from this
 * table (`node dist/config/doc.js --write`); test/config.test.ts fails when they differ.
 *
 * An empty value is the same as an unset one. A value that is not allowed stops the process at
 * start with a message naming the variable, the value and what is allowed: nothing falls back.
 * (The schema itself is CONFIG_SCHEMA below; these first functions make its kinds of variable.)
 */

/**
 * The parse of the kinds below that read one word: `read` takes the trimmed value and gives what
 * the variable holds, or undefined when it is not allowed, which stops the start naming `allowed`.
 */
function word<T>(name: string, allowed: string, read: (trimmed: string) => T | undefined): (raw: string) => T {
  return (raw) => {
    const value = read(raw.trim());
    return value === undefined ? fail(name, allowed, raw) : value;
  };
}

/** A variable's default, or none and the words the docs show for it instead. */
const defaulted = <T>(def: T, defaultText?: string) => ({ default: def, ...(defaultText ? { defaultText } : {}) });

function port(name: string, def: number, description: string): Variable<number>;
function port(name: string, def: undefined, description: string, defaultText: string): Variable<number | undefined>;
function port(name: string, def: number | undefined, description: string, defaultText?: string): Variable<number | undefined> {
  const allowed = 'a port number from 0 to 65535 (0: any free port)';
  const read = (v: string) => (/^\d+$/.test(v) && Number(v) <= 65535 ? Number(v) : undefined);
  return { name, type: 'port', ...defaulted(def, defaultText), allowed, description, parse: word(name, allowed, read) };
}

function url(name: string, protocols: string[], defaultText: string, description: string): Variable<string | undefined> {
  const names = protocols.map((p) => p.slice(0, -1));
  const allowed = `a URL with scheme ${names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0]}`;
  return {
    name,
    type: 'url',
    default: undefined,
    defaultText,
    allowed,
    description,
    parse(raw) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(raw.trim());
      } catch {
        /* not a URL */
      }
      if (!parsed || !protocols.includes(parsed.protocol)) fail(name, allowed, raw);
      return raw.trim();
    },
  };
}

function oneOf<const V extends string>(name: string, values: readonly V[], def: V, description: string): Variable<V> {
  const allowed = `one of ${values.join(', ')}`;
  return { name, type: 'enum', default: def, allowed, description, parse: word(name, allowed, (v) => values.find((value) => value === v)) };
}

// A DNS name: labels of letters, digits and inner hyphens.
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function host(name: string, def: string, description: string): Variable<string> {
  const allowed = 'an IP address (0.0.0.0 or :: for every interface) or a host name';
  return { name, type: 'host', default: def, allowed, description, parse: word(name, allowed, (v) => (isIP(v) || HOSTNAME.test(v) ? v : undefined)) };
}

function path(name: string, def: string, description: string): Variable<string> {
  return { name, type: 'path', default: def, allowed: 'a directory path (relative to the working directory or absolute)', description, parse: (raw) => raw };
}

/** An optional file path (a certificate, a key): read when the process starts. */
function file(name: string, defaultText: string, description: string): Variable<string | undefined> {
  return { name, type: 'path', default: undefined, defaultText, allowed: 'a file path (relative to the working directory or absolute)', description, parse: (raw) => raw };
}

/**
 * An optional identifier (letters, digits, underscores; not starting with a digit): a name that
 * goes into SQL and XML as it is, so nothing that would need quoting there is allowed.
 */
function identifier(name: string, defaultText: string, description: string): Variable<string | undefined> {
  const allowed = 'letters, digits and underscores, not starting with a digit';
  const read = (v: string) => (/^[A-Za-z_][A-Za-z0-9_]{0,99}$/.test(v) ? v : undefined);
  return { name, type: 'name', default: undefined, defaultText, allowed, description, parse: word(name, allowed, read) };
}

function secret(name: string, minLength: number, defaultText: string, description: string): Variable<string | undefined> {
  const allowed = minLength > 1 ? `at least ${minLength} characters without spaces (e.g. the output of openssl rand -hex 32)` : 'any string';
  return {
    name,
    type: 'secret',
    default: undefined,
    defaultText,
    allowed,
    description,
    secret: true,
    parse(raw) {
      // The value itself is never printed: only its length.
      if (raw.length < minLength || (minLength > 1 && /\s/.test(raw))) throw new Error(`${name} must be ${allowed}, got ${raw.length} characters (not shown)`);
      return raw;
    },
  };
}

// Express's own parser of trust lists (CommonJS, no type declarations), to check TRUST_PROXY.
const compileTrust = (createRequire(import.meta.url)('proxy-addr') as { compile(list: string[]): unknown }).compile;

/**
 * TRUST_PROXY: whom to believe about the client address (X-Forwarded-For), which IP allow lists
 * and tracking events use. Off, a hop count (the number of proxies in front of the service), or
 * the proxies' addresses/subnets (and proxy-addr's names loopback, linklocal, uniquelocal).
 * `true` (Express's "trust every hop") is refused: any client could then write the address the
 * allow lists check. Each entry is checked so a typo stops the start with a clear message.
 */
export function parseTrustProxy(raw: string | undefined): false | number | string {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false' || value === '0') return false;
  if (/^(true|yes|on|all|\*)$/i.test(value)) {
    throw new Error(
      `TRUST_PROXY=${value} would believe X-Forwarded-For from any client, so anyone could choose the address IP allow lists check. ` +
        'Set the number of proxies in front of the service (e.g. TRUST_PROXY=1 behind one router) or their addresses or subnets ' +
        '(e.g. TRUST_PROXY="loopback, 10.0.0.0/8").',
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (!Number.isSafeInteger(hops)) throw new Error(`TRUST_PROXY must be a hop count or proxy addresses, got ${value}`);
    return hops;
  }
  const entries = value.split(',').map((e) => e.trim()).filter((e) => e !== '');
  try {
    compileTrust(entries);
  } catch (err) {
    throw new Error(
      `TRUST_PROXY=${value}: ${(err as Error).message}; expected a hop count or a comma-separated list of proxy addresses, subnets, loopback, linklocal or uniquelocal`,
    );
  }
  return entries.join(', ');
}

const trustProxy: Variable<false | number | string> = {
  name: 'TRUST_PROXY',
  type: 'proxy list',
  default: false,
  defaultText: 'off',
  allowed: 'false or 0 (off), a hop count, or a comma-separated list of proxy addresses, subnets, loopback, linklocal, uniquelocal (never true)',
  description: 'whom to believe about the client address (X-Forwarded-For), which IP allow lists and tracking events use',
  parse: parseTrustProxy,
};

/** DNS_SERVERS: node's resolver checks each entry (an IP, or IP:port, [IPv6]:port). */
const dnsServers: Variable<string[] | undefined> = {
  name: 'DNS_SERVERS',
  type: 'server list',
  default: undefined,
  defaultText: "the system's resolvers",
  allowed: 'a comma-separated list of resolver addresses: IP, IP:port or [IPv6]:port',
  description: "resolvers the sending-domain checks ask (domain verification, docs/domains.md)",
  parse(raw) {
    const servers = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
    try {
      if (!servers.length) throw new Error('no address');
      new dnsPromises.Resolver().setServers(servers);
    } catch (err) {
      fail('DNS_SERVERS', `a comma-separated list of resolver addresses: IP, IP:port or [IPv6]:port (${(err as Error).message})`, raw);
    }
    return servers;
  },
};

/** A DNS name (not an IP), lower-cased without a trailing dot; default undefined unless given. */
function dnsName(name: string, def: string, description: string): Variable<string>;
function dnsName(name: string, def: undefined, description: string, defaultText: string): Variable<string | undefined>;
function dnsName(name: string, def: string | undefined, description: string, defaultText?: string): Variable<string | undefined> {
  const allowed = 'a DNS name (letters, digits, inner hyphens, dots)';
  const read = (trimmed: string) => {
    const v = trimmed.toLowerCase().replace(/\.$/, '');
    return HOSTNAME.test(v) && !isIP(v) ? v : undefined;
  };
  return { name, type: 'host', ...defaulted(def, defaultText), allowed, description, parse: word(name, allowed, read) };
}

// pg-boss refuses a job expiry or maintenance interval of 24 hours or more.
const UNDER_A_DAY = 86_399;

/** The table. Keys are the fields of `Config`; every leaf is one variable. */
export const CONFIG_SCHEMA = {
  port: port('PORT', 3000, "the web dyno's public HTTP port"),
  dataDir: path('DATA_DIR', './.data', 'embedded Postgres and ClickHouse data, the mailbox simulator, services.json'),
  databaseUrl: url('DATABASE_URL', ['postgres:', 'postgresql:', 'socket:'], 'embedded', 'Postgres; without it `npm start` runs one under DATA_DIR/postgres'),
  databaseQueryTimeoutMs: integer('DATABASE_QUERY_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 }, "ms a web dyno's Postgres statement may go unanswered (a Postgres that accepts connections but does not answer) before its request answers 503 service_unavailable and the connection is dropped, which rolls its transaction back; a new connection has 5 s"),
  clickhouseUrl: url('CLICKHOUSE_URL', ['http:', 'https:'], 'embedded', 'ClickHouse HTTP URL; its path names the database (default cartero)'),
  // Under a router that ends a request at 30 s (Heroku's H12), a bound at or past 30 s means the
  // client gets the router's error instead of our 503: both defaults leave a wide margin
  // (docs/operations.md, Bounded under a router).
  clickhouseRequestTimeoutMs: integer('CLICKHOUSE_REQUEST_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 }, "ms the web dyno waits on a ClickHouse request that sends nothing (a listing, the dashboard, an export before its first byte, counted for an export from its start) before it answers 503 service_unavailable; keep it well under the router's request timeout (30 s on Heroku: docs/operations.md, Bounded under a router)"),
  clickhouseExportIdleTimeoutMs: integer('CLICKHOUSE_EXPORT_IDLE_TIMEOUT_MS', 20_000, { min: 100, max: 600_000 }, "ms an export's ClickHouse stream may stay silent between chunks once its download has started; past it the download is cut (an unfinished chunked body, never a file that looks whole). It bounds silence, not the export's length"),
  clickhouseCluster: identifier('CLICKHOUSE_CLUSTER', 'unset (single node)', "cluster mode: the cluster's name in ClickHouse's `remote_servers`; migrations create shard-local tables (`<table>_local`) and Distributed tables over them with ON CLUSTER (docs/analytics.md); `npm start` sets it with CLICKHOUSE_SHARDS"),
  clickhouseShards: integer('CLICKHOUSE_SHARDS', 1, { min: 1, max: 16 }, '`npm start` without CLICKHOUSE_URL: the embedded ClickHouse as a cluster of this many shards (more than 1: cluster `cartero`, listed in services.json as clickhouse_shards)'),
  smtpUrl: url('SMTP_URL', ['smtp:', 'smtps:'], 'simulator', 'outgoing SMTP relay (nodemailer URL options); without it `npm start` runs the mailbox simulator'),
  // Each bounds one phase of an SMTP try; past it the try is deferred (4xx-like) and retried by
  // the queue's backoff. Without them a relay that accepts the connection and never speaks would
  // hold the mail, its pooled connection and its send job (test/faults-smtp.test.ts).
  smtpTimeouts: {
    connectionMs: integer('SMTP_CONNECTION_TIMEOUT_MS', 15_000, { min: 1, max: 600_000 }, 'ms to open a connection to the relay (DNS, TCP, TLS); past it the try is deferred. An option in SMTP_URL wins'),
    greetingMs: integer('SMTP_GREETING_TIMEOUT_MS', 15_000, { min: 1, max: 600_000 }, 'ms the relay has to greet (220) once connected; a server that accepts the connection and says nothing defers the try then. An option in SMTP_URL wins'),
    socketMs: integer('SMTP_SOCKET_TIMEOUT_MS', 60_000, { min: 1, max: 600_000 }, "ms of silence from the relay within a session (after a command, during DATA) before the try is dropped and deferred; keep it well under SEND_JOB_EXPIRE_SECONDS. An option in SMTP_URL wins"),
  },
  publicUrl: url('PUBLIC_URL', ['http:', 'https:'], 'http://localhost:$PORT', 'base of links put in mails and of the OpenAPI servers entry'),
  trustProxy,
  logLevel: oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info', 'pino level: 2xx requests are logged at debug, 4xx at info, 5xx at error'),
  webLimits: {
    headersTimeoutMs: integer('WEB_HEADERS_TIMEOUT_MS', 20_000, { min: 1 }, "ms a client has to send a request's headers; past it 408 and close (slowloris)"),
    requestTimeoutMs: integer('WEB_REQUEST_TIMEOUT_MS', 60_000, { min: 1 }, 'ms a client has to send a whole request, headers and body (receiving only); past it 408 and close'),
    keepAliveTimeoutMs: integer('WEB_KEEPALIVE_TIMEOUT_MS', 65_000, { min: 1 }, 'ms before an idle keep-alive connection is closed; above the routers\' idle timeout'),
    maxConnections: integer('WEB_MAX_CONNECTIONS', 1_000, { min: 1 }, 'simultaneous connections per web listener; one more is closed at once'),
  },
  // `npm start` only (runtime/start.ts): on a platform the Procfile's process types are scaled instead.
  dynos: {
    web: integer('WEB_DYNOS', 1, { min: 1, max: 64 }, '`npm start` runs this many web dynos, sharing PORT and INTERNAL_PORT (Node cluster; docs/operations.md, Many dynos)'),
    worker: integer('WORKER_DYNOS', 1, { min: 1, max: 64 }, '`npm start` runs this many worker dynos, sharing INBOUND_SMTP_PORT and SUBMISSION_PORT (docs/operations.md, Many dynos)'),
  },
  internalPort: port('INTERNAL_PORT', undefined, 'the web dyno also serves /healthz, /readyz and /metrics there; unset, no internal listener', 'unset (`npm start`: a free port)'),
  internalHost: host('INTERNAL_HOST', '127.0.0.1', "the internal listener's address"),
  internalToken: secret('INTERNAL_TOKEN', 32, 'unset', 'when set, /readyz and /metrics are also served on the public port to `Authorization: Bearer <token>`'),
  inboundSmtpPort: port('INBOUND_SMTP_PORT', undefined, 'the worker listens there for bounces (DSN) and complaints (ARF); unset, it does not listen', 'unset (`npm start`: a free port)'),
  inboundSmtpHost: host('INBOUND_SMTP_HOST', '127.0.0.1', "the inbound listener's address; 0.0.0.0 to receive from remote MTAs"),
  inboundLimits: {
    maxConnections: integer('INBOUND_MAX_CONNECTIONS', 100, { min: 1 }, 'simultaneous SMTP connections to one inbound listener; one more is answered 421'),
    maxRecipients: integer('INBOUND_MAX_RECIPIENTS', 50, { min: 1 }, 'RCPT TO per inbound message; one more is answered 452 4.5.3'),
    maxMessagesPerConnection: integer('INBOUND_MAX_MESSAGES_PER_CONNECTION', 100, { min: 1 }, 'messages per inbound connection; one more is answered 421 and closed'),
    ratePerMinute: integer('INBOUND_RATE_PER_MINUTE', 600, { min: 1 }, 'inbound messages per client address per minute, one budget shared by every worker dyno\'s listener (counted in Postgres, table rate_limits; in each process while Postgres is unreachable); past it 421 4.7.0'),
  },
  // The submission listener (RFC 6409): programs that speak SMTP send through it (smtp/submission/; docs/sending.md, Send over SMTP).
  submission: {
    port: port('SUBMISSION_PORT', undefined, 'the worker listens there for mail submission (SMTP with STARTTLS and AUTH: the instance slug and an API key with mail:send); unset, it does not listen', 'unset (`npm start`: a free port)'),
    tlsPort: port('SUBMISSIONS_PORT', undefined, 'also listen there for submission over implicit TLS (RFC 8314, usually 465); unset, only SUBMISSION_PORT', 'unset'),
    host: host('SUBMISSION_HOST', '127.0.0.1', "the submission listener's address; 0.0.0.0 for programs on other hosts"),
    tlsCertFile: file('SUBMISSION_TLS_CERT_FILE', 'unset (`npm start`: a self-signed certificate made once in DATA_DIR)', "the submission listener's TLS certificate chain (PEM); required by a worker given SUBMISSION_PORT or SUBMISSIONS_PORT"),
    tlsKeyFile: file('SUBMISSION_TLS_KEY_FILE', 'unset (`npm start`: made once in DATA_DIR, mode 0600)', "the private key of SUBMISSION_TLS_CERT_FILE (PEM)"),
    maxConnections: integer('SUBMISSION_MAX_CONNECTIONS', 100, { min: 1 }, 'simultaneous SMTP connections to one submission listener; one more is answered 421'),
    authFailuresPerAddress: integer('SUBMISSION_AUTH_FAILURES_PER_ADDRESS', 20, { min: 1 }, 'failed submission AUTH attempts from one client address (an IPv4 address, an IPv6 /64) within SUBMISSION_AUTH_FAILURE_WINDOW_SECONDS, whatever the slug; past them every AUTH from it is answered 535 5.7.8 until the window ends; one budget shared by every worker dyno (table rate_limits)'),
    authFailuresPerSlug: integer('SUBMISSION_AUTH_FAILURES_PER_SLUG', 5, { min: 1 }, 'failed submission AUTH attempts for one instance slug from one client address within the window; past them that address is answered 535 5.7.8 for that slug, while an address that has not failed still authenticates'),
    authFailuresPerSlugTotal: integer('SUBMISSION_AUTH_FAILURES_PER_SLUG_TOTAL', 100, { min: 1 }, 'failed submission AUTH attempts for one instance slug from all addresses together within the window; past them each address has one attempt at that slug per window (as the panel logins, docs/panel.md)'),
    authFailureWindowSeconds: integer('SUBMISSION_AUTH_FAILURE_WINDOW_SECONDS', 900, { min: 1, max: UNDER_A_DAY }, 'the window the submission AUTH failure budgets count in, from the first failure'),
  },
  trackingSecret: secret('TRACKING_SECRET', 1, 'generated', 'key that signs open, click, unsubscribe and consent confirmation links; unset, one is generated once into Postgres (service_secrets)'),
  trackingFastPath: oneOf('TRACKING_FAST_PATH', ['on', 'off'], 'on', 'on: the web dyno answers opens and clicks with a plain node:http handler ahead of Express, the same answers for less CPU (docs/tracking.md); off: Express answers them'),
  send: {
    // 4 loops of 100: while one loop waits on SMTP replies the others fetch and prepare, which
    // measured 7% faster end to end than 2 of 50 (docs/performance-history.md, bench/send).
    batchSize: integer('SEND_BATCH_SIZE', 100, { min: 1 }, 'mails per send batch (a send job holds up to 100 mails)'),
    concurrency: integer('SEND_CONCURRENCY', 4, { min: 1 }, 'send batches in flight per worker process'),
    retryLimit: integer('SEND_RETRY_LIMIT', 6, { min: 0 }, 'retries of a deferred (4xx) mail; its last SMTP try makes it a soft bounce (applied to the queue by release)'),
    retryDelaySeconds: integer('SEND_RETRY_DELAY_SECONDS', 60, { min: 0 }, 'first retry delay of a deferred mail, doubled each time (applied to the queue by release)'),
    jobExpireSeconds: integer('SEND_JOB_EXPIRE_SECONDS', 600, { min: 1, max: UNDER_A_DAY }, 'a send job still active after this is retried elsewhere (applied to the queue by release)'),
  },
  render: {
    maxBodyBytes: integer('RENDER_MAX_BODY_BYTES', RENDER_LIMITS.maxBodyBytes, { min: 1 }, 'largest html or text part after merge tags; a mail over it is dropped (render_failed)'),
    maxMs: integer('RENDER_MAX_MS', RENDER_LIMITS.maxMs, { min: 1 }, "time to render one mail; a mail over it is dropped (render_failed), its message's next ones not tried"),
    threads: integer('RENDER_THREADS', 1, { min: 1, max: 64 }, "worker threads of a worker dyno that render mails (merge tags, text part, tracked links) off its event loop; more render more at once, each uses a core"),
  },
  templateEditor: oneOf('TEMPLATE_EDITOR', ['on', 'off'], 'on', "off where the platform's template editor is not offered: the API answers 409 template_editor_unavailable to creating or validating a template and to a PATCH of config or preheader; reads, other edits, external templates and sending work"),
  templateRender: {
    threads: integer('TEMPLATE_RENDER_THREADS', TEMPLATE_RENDER_DEFAULTS.threads, { min: 1, max: 64 }, "worker threads of a web dyno that check and render template documents (create, PATCH, validate), off the event loop; more render more at once, each uses a core and about 100 MB"),
    timeoutMs: integer('TEMPLATE_RENDER_TIMEOUT_MS', TEMPLATE_RENDER_DEFAULTS.timeoutMs, { min: 1, max: 600_000 }, 'time one document may take to check and render, from when a thread starts on it; past it the thread is ended and the request answers 422 template_render_timeout'),
  },
  queue: {
    maintenanceSeconds: integer('QUEUE_MAINTENANCE_SECONDS', 30, { min: 1, max: UNDER_A_DAY }, 'how often pg-boss looks for expired jobs'),
  },
  softBounces: {
    threshold: integer('SOFT_BOUNCE_THRESHOLD', SOFT_BOUNCE_DEFAULTS.threshold, { min: 1 }, 'soft bounces of an address within the window (since its last lift) that restrict it'),
    windowDays: integer('SOFT_BOUNCE_WINDOW_DAYS', SOFT_BOUNCE_DEFAULTS.windowDays, { min: 1 }, 'the soft-bounce window, in days back from the evaluation'),
  },
  domains: {
    keyEncryptionKey: secret('DKIM_KEY_ENCRYPTION_KEY', 32, '`npm start` and its CLI: generated into DATA_DIR/dkim-key-encryption.key; the web and worker dynos: required (they refuse to start without it); the CLI with DATABASE_URL: required to add or sign', 'encrypts the DKIM private keys of sending domains at rest (AES-256-GCM); the same value on every process (docs/domains.md)'),
    dnsServers,
    returnPathSubdomain: dnsName('RETURN_PATH_SUBDOMAIN', 'bounces', 'the return-path host of a domain is this subdomain of it (bounce+<id>@bounces.<domain>), so SPF aligns: its MX and SPF records are checked'),
    mxHost: dnsName('RETURN_PATH_MX_HOST', undefined, "the host the return-path host's MX must name: where the inbound listener receives bounces", 'the host of PUBLIC_URL'),
    spfInclude: dnsName('SPF_INCLUDE', undefined, "the return-path host's SPF record must have include:<this>; unset, the `mx` mechanism (the relay sends from the MX host)", 'unset: `mx`'),
    sandboxDomain: dnsName('SANDBOX_DOMAIN', 'sandbox.cartero.test', "the service-owned domain under which every instance has its sandbox, <slug>.<this>, with the sender sandbox@<slug>.<this> that sends only to the instance's panel members (docs/panel.md, The sandbox); publish its records once, as wildcards; a change renames every sandbox at the next release"),
  },
  webhooks: WEBHOOK_VARIABLES,
  consent: {
    confirmDays: integer('CONSENT_CONFIRM_DAYS', 7, { min: 1, max: 365 }, 'days a double opt-in consent event waits for its confirmation from its creation; past them it is expired and its link confirms nothing (docs/consent.md)'),
  },
  panel: {
    dnsOverride: oneOf('PANEL_DNS_OVERRIDE', ['on', 'off'], 'off', "on: an instance's owner may set a domain's four DNS checks by hand in the panel (PUT /v1/private/domains/{id}/checks), the operator override of `cartero domain set-checks`, for closed networks whose DNS the service cannot resolve; off: only the operator's CLI does (403 dns_override_disabled)"),
    sessionTtlSeconds: integer('PANEL_SESSION_TTL_SECONDS', 8 * 3600, { min: 1, max: 30 * 24 * 3600 }, 'idle lifetime of an operator panel session: each authenticated /v1/private request moves its expiry this far ahead (sliding), unused this long it is refused with 401 (docs/panel.md)'),
    sessionMaxAgeSeconds: integer('PANEL_SESSION_MAX_AGE_SECONDS', 7 * 24 * 3600, { min: 1, max: 90 * 24 * 3600 }, 'absolute lifetime of an operator panel session from its login, however often it is used: the sliding expiry never moves past it, and past it the token is refused with the 401 of an expired one; the user signs in again (docs/panel.md)'),
    loginFailuresPerAccount: integer('PANEL_LOGIN_FAILURES_PER_ACCOUNT', 5, { min: 1 }, 'failed panel logins (POST /v1/private/sessions) for one email address from one client address (an IPv4 address, an IPv6 /64) within PANEL_LOGIN_FAILURE_WINDOW_SECONDS; past them every login for it from that address answers 429 with Retry-After until the window ends, while the right password from an address that has not failed still signs in; one budget shared by every web dyno (table rate_limits)'),
    loginFailuresPerAccountTotal: integer('PANEL_LOGIN_FAILURES_PER_ACCOUNT_TOTAL', 100, { min: 1 }, 'failed panel logins for one email address from all client addresses together within PANEL_LOGIN_FAILURE_WINDOW_SECONDS; past them (a spray from many addresses) each address has one attempt at that account per window instead of PANEL_LOGIN_FAILURES_PER_ACCOUNT; it slows, and never refuses an address that has not failed (docs/panel.md)'),
    loginFailuresPerAddress: integer('PANEL_LOGIN_FAILURES_PER_ADDRESS', 20, { min: 1 }, 'failed panel logins from one client address (req.ip, see TRUST_PROXY; an IPv4 address, an IPv6 /64) within PANEL_LOGIN_FAILURE_WINDOW_SECONDS, whatever the email; past them 429 with Retry-After; shared by every web dyno'),
    loginFailureWindowSeconds: integer('PANEL_LOGIN_FAILURE_WINDOW_SECONDS', 900, { min: 1, max: UNDER_A_DAY }, 'the window the panel login failure budgets count in, from the first failure'),
  },
  // CSV files people upload: dataset imports and list uploads, the panel's and the CLI's alike
  // (domain/csv-input.ts; docs/datasets.md, Reading the file, writing the rejects).
  csv: {
    cellBytes: integer('CSV_MAX_CELL_BYTES', CSV_LIMITS.cellBytes, { min: 1024, max: 16 * 1024 * 1024 }, "largest cell of an imported or uploaded CSV file, in bytes as read; a row with a larger cell is refused to the rejects file (value_error.too_large, with its line and column) and the rest of the file is read"),
    recordBytes: integer('CSV_MAX_RECORD_BYTES', CSV_LIMITS.recordBytes, { min: 1024, max: 64 * 1024 * 1024 }, "largest record (row, all its cells) of an imported or uploaded CSV file, in bytes as read; a larger one refuses the whole file (400 dataset_import_csv_invalid or list_import_csv_invalid naming its line: most often an unclosed quote), nothing imported, and no more of it is held in memory"),
  },
  imports: {
    idleTimeoutMs: integer('IMPORT_IDLE_TIMEOUT_MS', 10_000, { min: 100, max: 600_000 }, "ms the panel's CSV import or list upload may go without receiving a byte of its file; past it the request answers 408 request_timeout and its run fails (nothing imported). The file is read to a temporary file before any database connection is taken, so a silent upload holds none"),
  },
  deliverability: {
    alertMinDelivered: integer('DELIVERABILITY_ALERT_MIN_DELIVERED', 100, { min: 1 }, "the volume from which a provider's rate for one sending domain and local day may raise a deliverability.threshold_crossed or _recovered webhook event: delivered mails for the complaint rate, delivered plus bounced ones for the bounce rate; below it the rate is too noisy to act on (1 complaint in 3 mails is no alert; docs/deliverability.md, Alerts)"),
  },
  formPage: {
    ratePerMinute: integer('FORM_PAGE_RATE_PER_MINUTE', 10, { min: 1 }, 'hosted form submissions (POST /f/{public_token}) per client address per minute, one budget shared by every web dyno (counted in Postgres, table rate_limits; in each process while Postgres is unreachable); past it 429 with Retry-After (docs/forms.md, Hosted page)'),
  },
} as const;

/** Rules between variables, checked after each one is. */
export const CONFIG_RULES: Array<{ text: string; check(values: ConfigValues): string | undefined }> = [
  {
    // Node refuses a headers timeout longer than the request timeout (the headers are part of it).
    text: 'WEB_HEADERS_TIMEOUT_MS must not exceed WEB_REQUEST_TIMEOUT_MS',
    check: (v) =>
      v.webLimits.headersTimeoutMs > v.webLimits.requestTimeoutMs
        ? `WEB_HEADERS_TIMEOUT_MS (${v.webLimits.headersTimeoutMs}) must not exceed WEB_REQUEST_TIMEOUT_MS (${v.webLimits.requestTimeoutMs})`
        : undefined,
  },
  {
    text: 'CSV_MAX_CELL_BYTES must not exceed CSV_MAX_RECORD_BYTES',
    check: (v) =>
      v.csv.cellBytes > v.csv.recordBytes
        ? `CSV_MAX_CELL_BYTES (${v.csv.cellBytes}) must not exceed CSV_MAX_RECORD_BYTES (${v.csv.recordBytes})`
        : undefined,
  },
];

type Schema = { readonly [key: string]: Variable<unknown> | Schema };
type ValuesOf<S> = {
  -readonly [K in keyof S]: S[K] extends Variable<infer T> ? T : ValuesOf<S[K]>;
};

/** The typed values of every variable, in the schema's shape. */
export type ConfigValues = ValuesOf<typeof CONFIG_SCHEMA>;

export function isVariable(node: Variable<unknown> | Schema): node is Variable<unknown> {
  return typeof (node as Variable<unknown>).parse === 'function';
}

/** Every variable of a schema (or part of it), in table order. */
export function variablesOf(schema: Schema = CONFIG_SCHEMA): Variable<unknown>[] {
  return Object.values(schema).flatMap((node) => (isVariable(node) ? [node] : variablesOf(node)));
}

/**
 * The values of `schema`'s variables read from `env` (empty = unset = the default), and the
 * messages of those not allowed (every one, not only the first).
 */
export function readSchema<S extends Schema>(schema: S, env: Record<string, string | undefined>, problems: string[]): ValuesOf<S> {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(schema)) {
    if (!isVariable(node)) {
      out[key] = readSchema(node, env, problems);
      continue;
    }
    const raw = env[node.name];
    if (raw === undefined || raw === '') {
      out[key] = node.default;
      continue;
    }
    try {
      out[key] = node.parse(raw);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  return out as ValuesOf<S>;
}
