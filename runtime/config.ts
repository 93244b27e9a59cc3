import { resolve } from 'node:path';

/** Process configuration, read once from the environment. Names are a public contract (issue 2). */
export interface Config {
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  clickhouseUrl: string | undefined;
  smtpUrl: string | undefined;
  publicUrl: string;
  /** Express "trust proxy" value: false, true, a hop count or a list of trusted subnets. */
  trustProxy: boolean | number | string;
  logLevel: string;
  /**
   * INBOUND_SMTP_PORT: the worker listens there for bounces (DSN) and complaints (ARF) sent to
   * the VERP return path (smtp/inbound.ts); unset, a worker does not listen. `npm start` sets it.
   */
  inboundSmtpPort: number | undefined;
  /** INBOUND_SMTP_HOST: the listener's address; 127.0.0.1 unless told (0.0.0.0 to be an MX). */
  inboundSmtpHost: string;
}

function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw; // e.g. "loopback, 10.0.0.0/8"
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
    inboundSmtpPort: env.INBOUND_SMTP_PORT ? parsePort(env.INBOUND_SMTP_PORT, 0) : undefined,
    inboundSmtpHost: env.INBOUND_SMTP_HOST || '127.0.0.1',
  };
}
