import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { Test } from 'tap';
import type { MailboxSimulator } from '../../smtp/simulator.js';
import type { Pool } from '../../sql/pool.js';
import { testDatabases, type OwnClickHouse, type TestDatabases } from './databases.js';
import { startTestMailbox } from './mailbox.js';
import { childEnv, spawnNode, TEST_DKIM_KEY, type Proc } from './spawn.js';
import { startTestWeb } from './web.js';
import { sleep, waitFor, type Teardown } from './wait.js';
export { sleep, waitFor } from './wait.js';

/**
 * The whole sending path for end-to-end tests: a migrated database, the real mailbox simulator
 * storing into a temp dir, the web app in this process and worker dynos as separate processes
 * (`node dist/runtime/worker.js`), exactly as the Procfile runs them. Everything started here is
 * stopped or killed at teardown.
 *
 * Queue settings (SEND_RETRY_*, SEND_JOB_EXPIRE_SECONDS) are read when the queues are created,
 * i.e. inside testDatabases: set them in process.env before calling this (or ask for fastRetries).
 */
export interface SendStack {
  dbs: TestDatabases;
  /** Base URL of the web app. */
  url: string;
  /** Base URL of its internal listener (/healthz, /readyz, /metrics). */
  internalUrl: string;
  publicUrl: string;
  simulator: MailboxSimulator;
  mailboxDir: string;
  /** The environment a worker process gets (plus `extra`). */
  workerEnv(extra?: Record<string, string>): NodeJS.ProcessEnv;
  /** A worker dyno as its own process, SIGKILLed at teardown if still running. */
  spawnWorker(extra?: Record<string, string>): Proc;
}

/** Variables a worker must not inherit from the test runner's environment. */
const INHERITED = ['DATABASE_URL', 'CLICKHOUSE_URL', 'SMTP_URL', 'PUBLIC_URL', 'DATA_DIR', 'PORT', 'INBOUND_SMTP_PORT'];

export interface SendStackOptions {
  label: string;
  publicUrl: string;
  /**
   * A port for the inbound DSN/ARF listener: the simulator sends its complaint* and dsnbounce*
   * reports to smtp://127.0.0.1:PORT, and workers get INBOUND_SMTP_PORT=PORT (whoever listens
   * there, a worker or the test, receives them).
   */
  inboundSmtpPort?: number;
  /** How long the simulator's slow* recipients wait for their 250 (its default otherwise). */
  simulatorSlowMs?: number;
  /**
   * Retries a test can wait for: FAST_RETRIES set in this process's environment before the
   * queues are created, and so passed on to the workers.
   */
  fastRetries?: boolean;
  /** More variables for the web app (in this process), e.g. CLICKHOUSE_REQUEST_TIMEOUT_MS. */
  webEnv?: Record<string, string>;
  /** A ClickHouse server of the file's own, to stop or pause (testDatabases). */
  ownClickHouse?: boolean;
}

/** Two retries a second apart, queue maintenance every 5 s: a deferred mail settles within seconds. */
export const FAST_RETRIES = { SEND_RETRY_LIMIT: '2', SEND_RETRY_DELAY_SECONDS: '1', QUEUE_MAINTENANCE_SECONDS: '5' };

export async function startSendStack(
  t: Teardown,
  opts: SendStackOptions & { ownClickHouse: true },
): Promise<SendStack & { dbs: { clickhouse: OwnClickHouse } }>;
export async function startSendStack(t: Teardown, opts: SendStackOptions): Promise<SendStack>;
export async function startSendStack(t: Teardown, opts: SendStackOptions): Promise<SendStack> {
  if (opts.fastRetries) Object.assign(process.env, FAST_RETRIES);
  const dbs = await testDatabases(t, opts.label, { ownClickHouse: opts.ownClickHouse ?? false });
  const inboundUrl = opts.inboundSmtpPort ? `smtp://127.0.0.1:${opts.inboundSmtpPort}` : undefined;
  const { simulator, mailboxDir } = await startTestMailbox(t, {
    ...(inboundUrl ? { inboundUrl } : {}),
    ...(opts.simulatorSlowMs ? { slowMs: opts.simulatorSlowMs } : {}),
  });
  const { url, internalUrl } = await startTestWeb(t, dbs, { env: { ...opts.webEnv, SMTP_URL: simulator.url, PUBLIC_URL: opts.publicUrl } });
  const workerEnv = (extra: Record<string, string> = {}) =>
    childEnv(
      {
        DATABASE_URL: dbs.databaseUrl,
        CLICKHOUSE_URL: dbs.clickhouseUrl,
        SMTP_URL: simulator.url,
        PUBLIC_URL: opts.publicUrl,
        LOG_LEVEL: 'warn',
        // The web's key when the test gave it one (the same value on every process), else the
        // test's: a worker dyno does not start without one (config/needs.ts).
        DKIM_KEY_ENCRYPTION_KEY: opts.webEnv?.DKIM_KEY_ENCRYPTION_KEY ?? TEST_DKIM_KEY,
        SEND_RETRY_LIMIT: process.env.SEND_RETRY_LIMIT,
        SEND_RETRY_DELAY_SECONDS: process.env.SEND_RETRY_DELAY_SECONDS,
        SEND_JOB_EXPIRE_SECONDS: process.env.SEND_JOB_EXPIRE_SECONDS,
        QUEUE_MAINTENANCE_SECONDS: process.env.QUEUE_MAINTENANCE_SECONDS,
        ...(opts.inboundSmtpPort ? { INBOUND_SMTP_PORT: String(opts.inboundSmtpPort) } : {}),
        ...extra,
      },
      INHERITED,
    );
  return {
    dbs,
    url,
    internalUrl: internalUrl!,
    publicUrl: opts.publicUrl,
    simulator,
    mailboxDir,
    workerEnv,
    spawnWorker: (extra) => spawnNode(t, 'dist/runtime/worker.js', { env: workerEnv(extra) }),
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface MailApi {
  call(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  send(body: unknown): Promise<ApiResponse>;
  mail(mailId: string): Promise<any>;
  logs(mailId: string): Promise<any[]>;
  /** Polls GET /v1/mails/{id} until the status is final (sent, dropped, bounced, onhold). */
  waitFinal(mailId: string, ms?: number): Promise<any>;
}

export const FINAL = [3, 4, 6, 7];

export function mailApi(url: string, headers: Record<string, string>): MailApi {
  const call = async (method: string, path: string, body?: unknown): Promise<ApiResponse> => {
    const res = await fetch(url + path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
  const mail = async (mailId: string) => {
    const r = await call('GET', `/v1/mails/${mailId}`);
    if (r.status !== 200) throw new Error(`GET /v1/mails/${mailId}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return {
    call,
    send: (body) => call('POST', '/v1/mails/send', body),
    mail,
    async logs(mailId) {
      const r = await call('GET', `/v1/mails/${mailId}/logs?page_size=100`);
      if (r.status !== 200) throw new Error(`GET /v1/mails/${mailId}/logs: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.data;
    },
    async waitFinal(mailId, ms = 60_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const m = await mail(mailId);
        if (FINAL.includes(m.status)) return m;
        if (Date.now() > deadline) throw new Error(`mail ${mailId} still at status ${m.status} after ${ms} ms`);
        await sleep(200);
      }
    },
  };
}


/** Polls `probe` until it returns something other than undefined; throws after `ms`. */
/**
 * Puts a mail where another worker, alive, has it at SMTP: a live send lease for `holder` and the
 * mail queued and held by it (workers/machinery/send-lease.ts). A send job that meets it must leave it
 * alone; `heldOff` is the line its worker then logs.
 */
export async function holdByLiveWorker(pool: Pool, mailId: string, holder = 'elsewhere'): Promise<void> {
  await pool.query("INSERT INTO send_leases (worker_id, expires_at) VALUES ($1, now() + interval '1 hour')", [holder]);
  await pool.query('UPDATE mails SET status = 2, queued_at = now(), held_by = $2, held_since = now() WHERE mail_id = $1', [mailId, holder]);
}

/** The log line of a send job that found its mail still at SMTP in another live run (workers/jobs/send-mail/claim.ts). */
export const heldOff = (mailId: string): RegExp => new RegExp(`"mailId":"${mailId}","msg":"send job retried while another run still has its mail at SMTP`);

/** One row of a mail's log: the move (or note) and the SMTP reply or report that caused it. */
export interface MailLogRow {
  status: number;
  reason: string | null;
  smtp_code: number | null;
  smtp_enhanced: string | null;
  smtp_reply: string | null;
  attempt: number | null;
}

/** A mail's log rows, oldest first, read as the service (tests compare them whole). */
export async function mailLogRows(pool: Pool, mailId: string): Promise<MailLogRow[]> {
  const { rows } = await pool.query<MailLogRow>(
    'SELECT status, reason, smtp_code, smtp_enhanced, smtp_reply, attempt FROM mail_logs WHERE mail_id = $1 ORDER BY id',
    [mailId],
  );
  return rows;
}

export interface StoredMessage {
  file: string;
  /** Header fields in order, names lower-cased, values unfolded. */
  headers: Array<[string, string]>;
  /** The mail id in the X-Cartero-Mail-Id header (`MAILID.TAG`). */
  mailId: string | undefined;
  /** The report tag after it (domain/bounces/report-tag.ts). */
  reportTag: string | undefined;
  /** The Message-ID header, with its angle brackets. */
  messageId: string | undefined;
}

/** Header fields of a stored message (the simulator's envelope lines included), unfolded. */
export function headerFields(raw: Buffer): Array<[string, string]> {
  const text = raw.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  const head = (end === -1 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  return head.split(/\r?\n/).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()] as [string, string];
  });
}

/** Every complete `.eml` of the mailbox (the simulator's dot-named temp files are skipped). */
export function readMailbox(dir: string): StoredMessage[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.eml') && !f.startsWith('.'))
    .map((f) => {
      const file = join(dir, f);
      const headers = headerFields(readFileSync(file));
      const get = (name: string) => headers.find(([k]) => k === name)?.[1];
      const [mailId, reportTag] = get('x-cartero-mail-id')?.split('.') ?? [];
      return { file, headers, mailId, reportTag, messageId: get('message-id') };
    });
}

/** The stored messages of one mail, found by its X-Cartero-Mail-Id header. */
export function messagesOf(dir: string, mailId: string): StoredMessage[] {
  return readMailbox(dir).filter((m) => m.mailId === mailId);
}

/** The one message stored for a mail, raw and parsed; undefined, after a failed assertion, unless there is exactly one. */
export async function storedOne(t: Test, dir: string, mailId: string): Promise<{ raw: Buffer; parsed: ParsedMail; msg: StoredMessage } | undefined> {
  const files = messagesOf(dir, mailId);
  if (!t.equal(files.length, 1, `one message on disk for ${mailId}`)) return undefined;
  const raw = readFileSync(files[0]!.file);
  return { raw, parsed: await simpleParser(raw), msg: files[0]! };
}

/** The mailbox's messages counted per mail (X-Cartero-Mail-Id): the at-least-once tests' ledger. */
export function mailboxCopies(dir: string): { stored: StoredMessage[]; copies: Map<string, number> } {
  const stored = readMailbox(dir);
  const copies = new Map<string, number>();
  for (const m of stored) if (m.mailId) copies.set(m.mailId, (copies.get(m.mailId) ?? 0) + 1);
  return { stored, copies };
}

/**
 * Waits until none of the send jobs naming these mails is left to run (created, retry or active),
 * then what became of them, live and archived together: the distinct states of those jobs
 * (`['completed']` when none failed) and how many of the mails some job named (a job names up to
 * 100 mails; a deferred or held mail is named again by its follow-up job).
 */
export async function settledSendJobs(pool: Pool, mailIds: readonly string[], ms = 30_000): Promise<{ states: string[]; mails: number }> {
  await waitFor(
    'no send job left to run',
    async () => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'mail.send' AND data->'mail_ids' ?| $1::text[] AND state IN ('created', 'retry', 'active')`,
        [mailIds],
      );
      return rows[0]!.n === 0 ? true : undefined;
    },
    { ms, every: 250 },
  );
  const { rows } = await pool.query<{ states: string[]; mails: number }>(
    `WITH j AS (
       SELECT state::text, data FROM pgboss.job WHERE name = 'mail.send'
       UNION ALL SELECT state::text, data FROM pgboss.archive WHERE name = 'mail.send'
     )
     SELECT (SELECT coalesce(array_agg(DISTINCT state ORDER BY state), '{}') FROM j WHERE data->'mail_ids' ?| $1::text[]) AS states,
            (SELECT count(DISTINCT m)::int FROM j, jsonb_array_elements_text(j.data->'mail_ids') m WHERE m = ANY ($1::text[])) AS mails`,
    [mailIds],
  );
  return rows[0]!;
}

/** How many of these mails have each log shape ("1,2,3": received, queued, sent), the kill tests' check that a resend was handed to SMTP again. */
export async function logShapes(pool: Pool, mailIds: readonly string[]): Promise<{ shapes: Map<string, number>; handedTwice: string[] }> {
  const { rows } = await pool.query<{ mail_id: string; statuses: number[] }>(
    'SELECT mail_id, array_agg(status ORDER BY id) AS statuses FROM mail_logs WHERE mail_id = ANY ($1) GROUP BY mail_id',
    [mailIds],
  );
  const shapes = new Map<string, number>();
  for (const r of rows) shapes.set(r.statuses.join(','), (shapes.get(r.statuses.join(',')) ?? 0) + 1);
  return { shapes, handedTwice: rows.filter((r) => r.statuses.length === 4).map((r) => r.mail_id) };
}
