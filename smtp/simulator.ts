import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { appendFile, link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import nodemailer from 'nodemailer';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

/**
 * The mailbox simulator: the SMTP server of the embedded default (`npm start` without SMTP_URL),
 * of the tests and of `bench/`. A real SMTP server on loopback (smtp-server) that answers by the
 * local part of each recipient, like Amazon SES's mailbox simulator:
 *
 *   bounce*      550 5.1.1 at RCPT (user unknown)
 *   softbounce*  452 4.2.2 at RCPT (mailbox full), on every try
 *   defer*       451 4.3.0 at the end of DATA the first time a (recipient, Message-ID) pair is
 *                seen, 250 on every later try of that message
 *   complaint*   250, stored, then `onComplaint`, and, with `inboundUrl`, a real ARF report
 *                (buildArfComplaint) sent over SMTP to inboundUrl, addressed to the message's
 *                envelope sender (Cartero's VERP return path), as a feedback loop would
 *   dsnbounce*   250, stored, then, with `inboundUrl`, a late asynchronous bounce: a real RFC 3464
 *                DSN (buildDeliveryStatusNotification: Action failed, Status 5.1.1) sent from the
 *                null sender to inboundUrl for the envelope sender, as a remote MTA that
 *                accepted the mail and then could not deliver it would (without inboundUrl,
 *                just 250 and stored)
 *   anything else 250, stored
 *
 * Reports to inboundUrl are sent after the 250, each over its own connection; a 4xx or a
 * connection failure is retried twice (after 1 s and 3 s), a 5xx is logged and dropped.
 *
 * Local parts are matched case-insensitively by prefix, so `bounce+mail123@x` bounces too.
 *
 * Every accepted message is one `.eml` file in `dir`: the bytes as received, preceded by
 * `Return-Path:` (MAIL FROM) and `X-Simulator-Rcpt-To:` (the accepted RCPT TOs, comma-separated),
 * so readers know the envelope. A message that reached several accepted recipients is stored
 * once. Two deliveries of the same message (an at-least-once retry) are two files: nothing is
 * ever overwritten, which is what lets tests count duplicates.
 *
 * A plain-text server: no STARTTLS. With `auth` it takes mail only after AUTH PLAIN or LOGIN with
 * those credentials (530 otherwise), over the plain connection (it is on loopback): that is how
 * `npm start` runs it, so nothing else on the machine can write into the mailbox. Without `auth`
 * (tests, benchmarks) it takes mail from anyone, and refuses AUTH. It is a development and test
 * fixture; production sets SMTP_URL to a real relay.
 */
export interface MailboxSimulator {
  /**
   * What SMTP_URL is set to: `smtp://127.0.0.1:PORT`, or `smtp://USER:PASS@127.0.0.1:PORT` with
   * `auth` (then a secret: never log it; `where` is the same without the credentials).
   */
  url: string;
  /** `smtp://127.0.0.1:PORT`: for messages. */
  where: string;
  port: number;
  /** Where the `.eml` files are written (absolute). */
  dir: string;
  /** Stops accepting connections; resolves once open sessions have ended and files are written. Idempotent. */
  stop(): Promise<void>;
}

export interface SimulatedComplaint {
  /** The envelope recipient whose local part starts with `complaint`. */
  recipient: string;
  /** The Message-ID header of the message, angle brackets included; undefined when it had none. */
  messageId: string | undefined;
  /** The envelope sender (MAIL FROM), '' for the null sender. */
  mailFrom: string;
  /** The message exactly as received over SMTP (without the simulator's envelope headers). */
  raw: Buffer;
  arrivalDate: Date;
  /** The stored `.eml` file. */
  file: string;
}

export interface MailboxSimulatorOptions {
  dir: string;
  /** A free port is picked by the OS when omitted (or 0). */
  port?: number;
  /** Listen address; 127.0.0.1 by default. */
  host?: string;
  /** Called after the 250 of a message to a `complaint*` recipient (once per such recipient). */
  onComplaint?: (complaint: SimulatedComplaint) => void | Promise<void>;
  /**
   * `smtp://host:port` of Cartero's inbound listener: where `complaint*` recipients send their
   * ARF report and `dsnbounce*` recipients their DSN. Without it neither report is sent.
   */
  inboundUrl?: string;
  /** Require SMTP AUTH with these credentials before MAIL FROM (see MailboxSimulator). */
  auth?: { user: string; pass: string };
  /** How long a `slow*` recipient's message waits for its 250 after it is stored; 5 s by default. */
  slowMs?: number;
  log?: (m: string) => void;
}

type Behaviour = 'bounce' | 'softbounce' | 'dsnbounce' | 'defer' | 'complaint' | 'slow' | 'deliver';

// Longest prefixes first: no prefix is a prefix of another today, but keep it that way on edits.
const PREFIXES: Array<[string, Behaviour]> = [
  ['softbounce', 'softbounce'],
  ['dsnbounce', 'dsnbounce'],
  ['complaint', 'complaint'],
  ['bounce', 'bounce'],
  ['defer', 'defer'],
  ['slow', 'slow'],
];

export function behaviourOf(address: string): Behaviour {
  const at = address.lastIndexOf('@');
  const local = (at >= 0 ? address.slice(0, at) : address).toLowerCase();
  for (const [prefix, behaviour] of PREFIXES) if (local.startsWith(prefix)) return behaviour;
  return 'deliver';
}

const MAX_MESSAGE_BYTES = 50 * 1024 * 1024;
// Open sessions (e.g. a pooled client idling) get this long after stop() before a 421; a message
// being received in that window still gets its answer and its file.
const CLOSE_GRACE_MS = 2_000;
const DEFER_STATE_FILE = 'defer-state.jsonl';
// Bounds the defer state (memory and file): far more than the deferred mails any test or bench
// has in flight at once; the oldest entries go first.
const DEFER_STATE_MAX = 100_000;

/** An SMTP reply as an Error, the way smtp-server wants it from a handler. */
function reply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

export async function startMailboxSimulator(opts: MailboxSimulatorOptions): Promise<MailboxSimulator> {
  const dir = resolve(opts.dir);
  // Private (config/data-dir.ts): the stored mails carry signed unsubscribe, confirmation and tracking links.
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const log = opts.log ?? (() => {});
  const deferState = await DeferState.load(join(dir, DEFER_STATE_FILE));
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => {});
    return p;
  };

  const onRcptTo = (address: SMTPServerAddress, _session: SMTPServerSession, done: (err?: Error | null) => void) => {
    switch (behaviourOf(address.address)) {
      case 'bounce':
        return done(reply(550, `5.1.1 <${address.address}>: Recipient address rejected: User unknown`));
      case 'softbounce':
        return done(reply(452, `4.2.2 <${address.address}>: Mailbox full`));
      default:
        // `defer` can only be decided once the Message-ID is known, at the end of DATA.
        return done();
    }
  };

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, done: (err?: Error | null, message?: string) => void) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The client went away mid-message: nothing to store, and nobody left to answer.
    stream.once('error', () => {});
    stream.once('end', () => {
      if (stream.sizeExceeded) return done(reply(552, `5.3.4 Message exceeds the ${MAX_MESSAGE_BYTES} bytes limit`));
      const raw = Buffer.concat(chunks);
      track(receive(raw, session)).then(
        (result) => {
          done(result.error, result.message);
          // After the 250 is on its way, as a receiving mailbox provider would do it.
          for (const complaint of result.complaints) {
            void notifyComplaint(complaint);
            sendReport('ARF report', complaint, ARF_FROM, buildArfComplaint(complaint));
          }
          // DSNs come from the null sender (RFC 3464 section 2), so they never bounce back.
          for (const bounce of result.dsnBounces) sendReport('DSN', bounce, '', buildDeliveryStatusNotification(bounce));
        },
        (err: Error) => {
          log(`mailbox simulator: could not store a message: ${err.message}`);
          done(reply(451, '4.3.0 Local error while storing the message'));
        },
      );
    });
  };

  async function receive(
    raw: Buffer,
    session: SMTPServerSession,
  ): Promise<{ error?: Error; message?: string; complaints: SimulatedComplaint[]; dsnBounces: SimulatedComplaint[] }> {
    const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const recipients = session.envelope.rcptTo.map((r) => r.address);
    const messageId = headerValue(raw, 'message-id');
    // Without a Message-ID (nodemailer always sets one), the message bytes identify the message.
    const messageKey = messageId ?? `sha256:${createHash('sha256').update(raw).digest('hex')}`;

    // SMTP has one reply per DATA, so a first-try `defer` recipient defers the whole message (the
    // others are retried with it). Cartero sends one message per recipient, where this never matters.
    const firstTries = recipients.filter((r) => behaviourOf(r) === 'defer' && !deferState.seen(r, messageKey));
    if (firstTries.length > 0) {
      await deferState.record(firstTries, messageKey);
      return { error: reply(451, `4.3.0 <${firstTries[0]}>: Temporary failure, try again later`), complaints: [], dsnBounces: [] };
    }

    const arrivalDate = new Date();
    const file = await storeMessage(dir, raw, { mailFrom, recipients, messageId, arrivalDate });
    // A relay that answers late: the message is stored (delivered) before its 250 leaves.
    if (recipients.some((r) => behaviourOf(r) === 'slow')) await new Promise((r) => setTimeout(r, opts.slowMs ?? 5_000));
    const about = (behaviour: Behaviour) =>
      recipients.filter((r) => behaviourOf(r) === behaviour).map((recipient) => ({ recipient, messageId, mailFrom, raw, arrivalDate, file }));
    return { message: `2.0.0 Ok: queued as ${file.slice(dir.length + 1)}`, complaints: about('complaint'), dsnBounces: about('dsnbounce') };
  }

  /**
   * A report to the inbound listener, from its own connection (as a mailbox provider's system
   * would). Tracked, so stop() waits for reports still on their way.
   */
  function sendReport(kind: string, original: SimulatedComplaint, envelopeFrom: string, raw: string): void {
    const inboundUrl = opts.inboundUrl;
    if (!inboundUrl) return;
    if (!original.mailFrom) return log(`mailbox simulator: no ${kind} for ${original.recipient}: the message had a null sender`);
    void track(
      (async () => {
        for (const pause of [1_000, 3_000, 0]) {
          const transport = nodemailer.createTransport({ url: inboundUrl, pool: false, ignoreTLS: true, connectionTimeout: 5_000, socketTimeout: 15_000 });
          try {
            await transport.sendMail({ envelope: { from: envelopeFrom, to: [original.mailFrom] }, raw });
            return;
          } catch (err) {
            const code = (err as { responseCode?: number }).responseCode;
            log(`mailbox simulator: ${kind} for ${original.recipient} to ${inboundUrl} failed: ${(err as Error).message}`);
            if ((code !== undefined && code >= 500) || pause === 0) return;
            await new Promise((r) => setTimeout(r, pause));
          } finally {
            transport.close();
          }
        }
      })(),
    );
  }

  async function notifyComplaint(complaint: SimulatedComplaint): Promise<void> {
    if (!opts.onComplaint) return;
    try {
      await track(Promise.resolve(opts.onComplaint(complaint)));
    } catch (err) {
      log(`mailbox simulator: onComplaint failed for ${complaint.recipient}: ${(err as Error).message}`);
    }
  }

  const auth = opts.auth;
  const sameSecret = (given: string | null | undefined, expected: string) => {
    // Compared as digests: equal lengths for timingSafeEqual, and no length leak.
    const digest = (v: string) => createHash('sha256').update(v).digest();
    return typeof given === 'string' && timingSafeEqual(digest(given), digest(expected));
  };
  const server = new SMTPServer({
    banner: 'Cartero mailbox simulator',
    // smtp-server asks the system resolver for each client's PTR name by default: a query leaving
    // the machine for every connection, for a name nothing here reads (issue 37).
    disableReverseLookup: true,
    ...(auth
      ? {
          authOptional: false,
          authMethods: ['PLAIN', 'LOGIN'],
          // On loopback only; smtp-server otherwise refuses AUTH before STARTTLS, which this server has not.
          allowInsecureAuth: true,
          disabledCommands: ['STARTTLS'],
          onAuth: (login, _session, done) => {
            const ok = sameSecret(login.username, auth.user) && sameSecret(login.password, auth.pass);
            return ok ? done(null, { user: login.username }) : done(reply(535, '5.7.8 Authentication credentials invalid'));
          },
        }
      : { authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'] }),
    size: MAX_MESSAGE_BYTES,
    // smtp-server's own enhanced status codes stay off (its default): the replies above carry
    // theirs explicitly, which keeps them independent of the library's code table.
    closeTimeout: CLOSE_GRACE_MS,
    logger: false,
    onRcptTo,
    onData,
  });
  server.on('error', (err) => log(`mailbox simulator: ${err.message}`));

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((ready, fail) => {
    const onError = (err: Error) => fail(err);
    server.server.once('error', onError);
    server.listen(opts.port ?? 0, host, () => {
      server.server.off('error', onError);
      ready();
    });
  });
  const address = server.server.address();
  if (!address || typeof address === 'string') throw new Error('mailbox simulator: no TCP address');
  const port = address.port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const where = `smtp://${urlHost}:${port}`;
  const url = auth ? `smtp://${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@${urlHost}:${port}` : where;
  log(`mailbox simulator ${where}${auth ? ' (AUTH required)' : ''} storing into ${dir}`);

  let stopping: Promise<void> | undefined;
  return {
    url,
    where,
    port,
    dir,
    stop: () =>
      (stopping ??= (async () => {
        await new Promise<void>((closed) => server.close(() => closed()));
        // A session cut by the grace timeout may still be writing its file or running onComplaint.
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        log(`mailbox simulator ${where} stopped`);
      })()),
  };
}

/**
 * Which (recipient, message) pairs have had their one deferral. Kept in memory and appended to a
 * JSON-lines file in the mailbox dir, because Cartero's retry of a deferred mail may come after an
 * `npm start` restart, and must then pass. Append-only (one line per new pair) so a burst of
 * deferred mails costs one small write each; compacted on load when over the bound.
 */
class DeferState {
  private constructor(
    private readonly file: string,
    private readonly keys: Set<string>,
  ) {}

  static async load(file: string): Promise<DeferState> {
    const keys = new Set<string>();
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const entry = JSON.parse(line) as { rcpt?: unknown; msg?: unknown };
        if (typeof entry.rcpt === 'string' && typeof entry.msg === 'string') keys.add(DeferState.key(entry.rcpt, entry.msg));
      } catch {
        /* a line cut by a crash mid-append: that deferral is simply given again */
      }
    }
    const state = new DeferState(file, keys);
    if (keys.size > DEFER_STATE_MAX) await state.compact();
    return state;
  }

  private static key(recipient: string, messageKey: string): string {
    return `${recipient.toLowerCase()}\n${messageKey}`;
  }

  seen(recipient: string, messageKey: string): boolean {
    return this.keys.has(DeferState.key(recipient, messageKey));
  }

  /** Remembered before the 451 is sent, so a retry after a restart right after it still passes. */
  async record(recipients: string[], messageKey: string): Promise<void> {
    let lines = '';
    for (const rcpt of recipients) {
      this.keys.add(DeferState.key(rcpt, messageKey));
      lines += JSON.stringify({ rcpt: rcpt.toLowerCase(), msg: messageKey, at: new Date().toISOString() }) + '\n';
    }
    while (this.keys.size > DEFER_STATE_MAX) this.keys.delete(this.keys.values().next().value!);
    await appendFile(this.file, lines, { mode: 0o600 });
  }

  private async compact(): Promise<void> {
    const keep = [...this.keys].slice(-DEFER_STATE_MAX);
    this.keys.clear();
    for (const k of keep) this.keys.add(k);
    const body = keep.map((k) => {
      const [rcpt, msg] = k.split('\n');
      return JSON.stringify({ rcpt, msg }) + '\n';
    });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, body.join(''), { mode: 0o600 });
    await rename(tmp, this.file);
  }
}

/**
 * Writes one `.eml` file: to a dot-named temporary file first, then hard-linked under its final
 * name, so a reader never sees a partial message and an existing file is never replaced (link
 * fails where rename would overwrite). Returns the final path.
 */
async function storeMessage(
  dir: string,
  raw: Buffer,
  env: { mailFrom: string; recipients: string[]; messageId: string | undefined; arrivalDate: Date },
): Promise<string> {
  const envelope = `Return-Path: <${env.mailFrom}>\r\nX-Simulator-Rcpt-To: ${env.recipients.join(', ')}\r\n`;
  const tmp = join(dir, `.tmp-${process.pid}-${randomBytes(8).toString('hex')}`);
  await writeFile(tmp, Buffer.concat([Buffer.from(envelope, 'utf8'), raw]), { mode: 0o600 });
  try {
    const stamp = env.arrivalDate.toISOString().replace(/[:.]/g, '-');
    const name = env.messageId ? sanitizeForFileName(env.messageId) : randomBytes(8).toString('hex');
    for (let n = 0; ; n++) {
      const file = join(dir, `${stamp}-${name}${n ? `-${n}` : ''}.eml`);
      try {
        await link(tmp, file);
        return file;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 100) throw err;
      }
    }
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

function sanitizeForFileName(messageId: string): string {
  const clean = messageId
    .replace(/^\s*<|>\s*$/g, '')
    .replace(/[^A-Za-z0-9._@+=-]/g, '_')
    .slice(0, 120);
  return clean || randomBytes(8).toString('hex');
}

/** The header section of a message (up to the first empty line), unfolded. */
function headerSection(raw: Buffer): string {
  // Found in the bytes: decoding a 50 MB body to read a few headers would be waste.
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  return raw.subarray(0, ends.length ? Math.min(...ends) : raw.length).toString('utf8');
}

function headerValue(raw: Buffer, name: string): string | undefined {
  const unfolded = headerSection(raw).replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name) {
      const value = line.slice(colon + 1).trim();
      return value || undefined;
    }
  }
  return undefined;
}

export interface ArfOriginal {
  raw: Buffer;
  recipient: string;
  mailFrom: string;
  messageId: string | undefined;
  /** When the original reached the mailbox; now when omitted. */
  arrivalDate?: Date;
}

const ARF_USER_AGENT = 'Cartero-MailboxSimulator/1.0';
const ARF_FROM = 'complaints@mailbox-simulator.invalid';

/**
 * An RFC 5965 abuse report (ARF) for a message, as a mailbox provider's feedback loop sends it:
 * multipart/report; report-type=feedback-report with a human-readable part, the
 * message/feedback-report (Feedback-Type: abuse, User-Agent, Version, Original-Mail-From,
 * Original-Rcpt-To, Arrival-Date) and the original's header section as message/rfc822-headers
 * (which carries the Message-ID that names Cartero's mail). Built by hand: the structure is
 * fixed and small, and nodemailer's composer cannot make a multipart/report root synchronously.
 */
export function buildArfComplaint(original: ArfOriginal): string {
  const now = new Date();
  const about = original.messageId ? ` ${original.messageId}` : '';
  return multipartReport({
    headers: [
      `From: Mailbox Simulator <${ARF_FROM}>`,
      `To: <${original.mailFrom}>`,
      `Subject: Complaint about message${about}`,
      `Date: ${rfc5322Date(now)}`,
      `Message-ID: <arf-${randomBytes(12).toString('hex')}@mailbox-simulator.invalid>`,
    ],
    reportType: 'feedback-report',
    boundaryTag: 'ARF',
    preamble: 'This is a multi-part message in MIME format.',
    text: [
      `This is an email abuse report for a message delivered to <${original.recipient}>${about ? ` (Message-ID${about})` : ''}.`,
      'The recipient marked it as spam. (Generated by the Cartero mailbox simulator.)',
    ],
    fields: [
      'Feedback-Type: abuse',
      `User-Agent: ${ARF_USER_AGENT}`,
      'Version: 1',
      `Original-Mail-From: <${original.mailFrom}>`,
      `Original-Rcpt-To: <${original.recipient}>`,
      `Arrival-Date: ${rfc5322Date(original.arrivalDate ?? now)}`,
    ],
    original: { contentType: 'message/rfc822-headers', raw: original.raw },
  });
}

export interface DsnOptions {
  /** failed (default) or delayed. */
  action?: 'failed' | 'delayed';
  /** RFC 3463 status; 5.1.1 by default (4.4.7 by default for delayed). */
  status?: string;
  /** The remote server's reply, written as `Diagnostic-Code: smtp; <it>`. */
  diagnostic?: string;
}

const DSN_MTA = 'mailbox-simulator.invalid';

/**
 * An RFC 3464 delivery status notification about a message, as a remote MTA that accepted it
 * and later gave up (or is still trying) sends it back to the envelope sender:
 * multipart/report; report-type=delivery-status with a human-readable part, the
 * message/delivery-status (per-message Reporting-MTA and Arrival-Date, then the recipient's
 * Final-Recipient, Action, Status, Remote-MTA, Diagnostic-Code) and the original's header
 * section as text/rfc822-headers (which carries its Message-ID). Built by hand like the ARF one.
 */
export function buildDeliveryStatusNotification(original: ArfOriginal, opts: DsnOptions = {}): string {
  const action = opts.action ?? 'failed';
  const status = opts.status ?? (action === 'delayed' ? '4.4.7' : '5.1.1');
  const diagnostic =
    opts.diagnostic ??
    (action === 'delayed'
      ? `451 ${status} <${original.recipient}>: Temporary failure, still trying`
      : `550 ${status} <${original.recipient}>: Recipient address rejected: User unknown`);
  const now = new Date();
  const about = original.messageId ? ` ${original.messageId}` : '';
  return multipartReport({
    headers: [
      `From: Mail Delivery System <MAILER-DAEMON@${DSN_MTA}>`,
      `To: <${original.mailFrom}>`,
      `Subject: ${action === 'failed' ? 'Undelivered Mail Returned to Sender' : 'Delayed Mail (still being retried)'}`,
      `Date: ${rfc5322Date(now)}`,
      `Message-ID: <dsn-${randomBytes(12).toString('hex')}@${DSN_MTA}>`,
      'Auto-Submitted: auto-replied',
    ],
    reportType: 'delivery-status',
    boundaryTag: 'DSN',
    preamble: 'This is a MIME-encapsulated message.',
    text: [
      action === 'failed'
        ? `Your message${about} could not be delivered to <${original.recipient}>. (Generated by the Cartero mailbox simulator.)`
        : `Your message${about} to <${original.recipient}> has not been delivered yet; delivery is still being retried.`,
    ],
    fields: [
      `Reporting-MTA: dns; ${DSN_MTA}`,
      `Arrival-Date: ${rfc5322Date(original.arrivalDate ?? now)}`,
      '',
      `Final-Recipient: rfc822; ${original.recipient}`,
      `Original-Recipient: rfc822; ${original.recipient}`,
      `Action: ${action}`,
      `Status: ${status}`,
      `Remote-MTA: dns; mx.${DSN_MTA}`,
      `Diagnostic-Code: smtp; ${diagnostic}`,
      ...(action === 'delayed' ? [`Will-Retry-Until: ${rfc5322Date(new Date(now.getTime() + 4 * 86_400_000))}`] : []),
    ],
    original: { contentType: 'text/rfc822-headers', raw: original.raw },
  });
}

/**
 * An RFC 6522 multipart/report, the shape of both report kinds: the report's own header fields,
 * then a human-readable text part, the machine-readable part (message/<reportType>, its
 * `fields`) and last the original's header section (which carries the Message-ID that names
 * Cartero's mail), marked 8bit when it holds non-ASCII.
 */
function multipartReport(r: {
  headers: string[];
  reportType: 'feedback-report' | 'delivery-status';
  boundaryTag: string;
  preamble: string;
  text: string[];
  fields: string[];
  original: { contentType: string; raw: Buffer };
}): string {
  const boundary = `----=_${r.boundaryTag}_${randomBytes(12).toString('hex')}`;
  const originalHeaders = headerSection(r.original.raw).replace(/\r?\n/g, '\r\n');
  return [
    ...r.headers,
    'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=${r.reportType}; boundary="${boundary}"`,
    '',
    r.preamble,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=us-ascii',
    'Content-Transfer-Encoding: 7bit',
    '',
    ...r.text,
    '',
    `--${boundary}`,
    `Content-Type: message/${r.reportType}`,
    '',
    ...r.fields,
    '',
    `--${boundary}`,
    `Content-Type: ${r.original.contentType}`,
    ...(/[^\x00-\x7f]/.test(originalHeaders) ? ['Content-Transfer-Encoding: 8bit'] : []),
    '',
    originalHeaders,
    '',
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** RFC 5322 date-time in UTC, e.g. `Thu, 05 Nov 2026 12:01:02 +0000`. */
function rfc5322Date(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]}, ${p(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}
