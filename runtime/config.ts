import { createRequire } from 'node:module';
import { resolve } from 'node:path';

// Express's own parser of trust lists (CommonJS, no type declarations), to check TRUST_PROXY.
const compileTrust = (createRequire(import.meta.url)('proxy-addr') as { compile(list: string[]): unknown }).compile;

/** Process configuration, read once from the environment. Names are a public contract (issue 2). */
export interface Config {
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  clickhouseUrl: string | undefined;
  smtpUrl: string | undefined;
  publicUrl: string;
  /** Express "trust proxy" value: false, a hop count or a list of trusted proxy subnets (never true). */
  trustProxy: false | number | string;
  logLevel: string;
  /** WEB_*: the web dyno's HTTP server limits (runtime/web.ts). */
  webLimits: WebLimits;
  /**
   * INTERNAL_PORT: the web dyno also listens there (on INTERNAL_HOST) for the operator's
   * endpoints /healthz, /readyz and /metrics; unset, it does not. `npm start` sets it (loopback).
   */
  internalPort: number | undefined;
  /** INTERNAL_HOST: the internal listener's address; 127.0.0.1 unless told (0.0.0.0 for a scraper elsewhere). */
  internalHost: string;
  /**
   * INTERNAL_TOKEN: when set, /readyz and /metrics are also served on the public port to
   * `Authorization: Bearer <token>` (platforms with one port); unset, the public port does not
   * serve them at all. /healthz stays public: routers probe it.
   */
  internalToken: string | undefined;
  /**
   * INBOUND_SMTP_PORT: the worker listens there for bounces (DSN) and complaints (ARF) sent to
   * the VERP return path (smtp/inbound.ts); unset, a worker does not listen. `npm start` sets it.
   */
  inboundSmtpPort: number | undefined;
  /** INBOUND_SMTP_HOST: the listener's address; 127.0.0.1 unless told (0.0.0.0 to be an MX). */
  inboundSmtpHost: string;
  /** INBOUND_MAX_* and INBOUND_RATE_PER_MINUTE: what one listener takes (docs/security.md). */
  inboundLimits: InboundLimits;
}

export interface InboundLimits {
  /** INBOUND_MAX_CONNECTIONS: simultaneous SMTP connections; one more is answered 421. */
  maxConnections: number;
  /** INBOUND_MAX_RECIPIENTS: RCPT TO per message; one more is answered 452 4.5.3. */
  maxRecipients: number;
  /** INBOUND_MAX_MESSAGES_PER_CONNECTION: messages per connection; one more is answered 421 and closed. */
  maxMessagesPerConnection: number;
  /** INBOUND_RATE_PER_MINUTE: messages per client address per minute; past it 421 4.7.0. */
  ratePerMinute: number;
}

export interface WebLimits {
  /**
   * WEB_HEADERS_TIMEOUT_MS: time a client has to send a request's headers, counted from its
   * first byte (from the connection for the first request); past it 408 and the connection is
   * closed. A slowloris client dribbling header bytes holds a connection this long at most.
   */
  headersTimeoutMs: number;
  /**
   * WEB_REQUEST_TIMEOUT_MS: time a client has to send a whole request, headers and body (10 MB
   * at ~1.4 Mbit/s). Receiving only: a long streamed response (an export) is not cut.
   */
  requestTimeoutMs: number;
  /**
   * WEB_KEEPALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after this. Above the
   * idle timeout of the routers in front (60 s at Heroku and AWS ALBs), or a request they send on
   * a connection we are closing fails.
   */
  keepAliveTimeoutMs: number;
  /** WEB_MAX_CONNECTIONS: simultaneous connections; more are closed at once (file descriptors, memory). */
  maxConnections: number;
}

export const WEB_LIMIT_DEFAULTS: WebLimits = { headersTimeoutMs: 20_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 65_000, maxConnections: 1_000 };

function webLimits(env: NodeJS.ProcessEnv): WebLimits {
  const limits: WebLimits = {
    headersTimeoutMs: positiveInt(env, 'WEB_HEADERS_TIMEOUT_MS', WEB_LIMIT_DEFAULTS.headersTimeoutMs),
    requestTimeoutMs: positiveInt(env, 'WEB_REQUEST_TIMEOUT_MS', WEB_LIMIT_DEFAULTS.requestTimeoutMs),
    keepAliveTimeoutMs: positiveInt(env, 'WEB_KEEPALIVE_TIMEOUT_MS', WEB_LIMIT_DEFAULTS.keepAliveTimeoutMs),
    maxConnections: positiveInt(env, 'WEB_MAX_CONNECTIONS', WEB_LIMIT_DEFAULTS.maxConnections),
  };
  // Node refuses a headers timeout longer than the request timeout (the headers are part of it).
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new Error(`WEB_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed WEB_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`);
  }
  return limits;
}

export const INBOUND_LIMIT_DEFAULTS: InboundLimits = { maxConnections: 100, maxRecipients: 50, maxMessagesPerConnection: 100, ratePerMinute: 600 };

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, got ${raw}`);
  return n;
}

/**
 * TRUST_PROXY: whom to believe about the client address (X-Forwarded-For), which IP allow lists
 * and tracking events use. Off, a hop count (the number of proxies in front of the service), or
 * the proxies' addresses/subnets (and proxy-addr's names loopback, linklocal, uniquelocal).
 * `true` (Express's "trust every hop") is refused: any client could then write the address the
 * allow lists check. Each entry is checked here so a typo stops the start with a clear message.
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

// Long enough that it cannot be guessed: e.g. `openssl rand -hex 32`.
const MIN_INTERNAL_TOKEN_LENGTH = 32;

function parseInternalToken(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < MIN_INTERNAL_TOKEN_LENGTH || /\s/.test(raw)) {
    throw new Error(`INTERNAL_TOKEN must be at least ${MIN_INTERNAL_TOKEN_LENGTH} characters without spaces (e.g. the output of openssl rand -hex 32)`);
  }
  return raw;
}

function parsePort(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`PORT must be a port number, got ${raw}`);
  return n;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = parsePort(env.PORT, 3000);
  return {
    port,
    dataDir: resolve(env.DATA_DIR || './.data'),
    databaseUrl: env.DATABASE_URL || undefined,
    clickhouseUrl: env.CLICKHOUSE_URL || undefined,
    smtpUrl: env.SMTP_URL || undefined,
    publicUrl: (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    logLevel: env.LOG_LEVEL || 'info',
    webLimits: webLimits(env),
    internalPort: env.INTERNAL_PORT ? parsePort(env.INTERNAL_PORT, 0) : undefined,
    internalHost: env.INTERNAL_HOST || '127.0.0.1',
    internalToken: parseInternalToken(env.INTERNAL_TOKEN),
    inboundSmtpPort: env.INBOUND_SMTP_PORT ? parsePort(env.INBOUND_SMTP_PORT, 0) : undefined,
    inboundSmtpHost: env.INBOUND_SMTP_HOST || '127.0.0.1',
    inboundLimits: {
      maxConnections: positiveInt(env, 'INBOUND_MAX_CONNECTIONS', INBOUND_LIMIT_DEFAULTS.maxConnections),
      maxRecipients: positiveInt(env, 'INBOUND_MAX_RECIPIENTS', INBOUND_LIMIT_DEFAULTS.maxRecipients),
      maxMessagesPerConnection: positiveInt(env, 'INBOUND_MAX_MESSAGES_PER_CONNECTION', INBOUND_LIMIT_DEFAULTS.maxMessagesPerConnection),
      ratePerMinute: positiveInt(env, 'INBOUND_RATE_PER_MINUTE', INBOUND_LIMIT_DEFAULTS.ratePerMinute),
    },
  };
}
