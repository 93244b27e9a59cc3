import type { ParsedMail } from 'mailparser';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { applyDsn } from '../domain/bounces/apply.js';
import { authenticMails } from '../domain/bounces/authentic.js';
import { dsnVerdict, namesRecipient, type DeliveryStatusReport } from '../engines/bounces/dsn.js';
import { decodeParsed } from '../engines/bounces/formats/index.js';
import { isVerpAddress, referenceFromVerp, referencesFromOriginal, type MailReference } from '../domain/bounces/identify.js';
import { parseReportMessage } from '../engines/bounces/report-message.js';
import { verpDomainMatches } from '../domain/bounces/verp-domain.js';
import { COMPLAINT_TYPES, type FeedbackReport } from '../engines/bounces/arf.js';
import { recordComplaint } from '../domain/complaints/record.js';
import { withTenant } from '../domain/tenancy/context.js';
import { INBOUND_LIMIT_DEFAULTS, type InboundLimits } from '../config/config.js';
import type { Pool } from '../sql/pool.js';
import { sharedRateLimiter } from '../sql/rate-limits.js';
import { readDmarcMail, type DmarcOptions } from './inbound-dmarc.js';
import { listenSmtp, readData, smtpReply as reply } from './listening.js';

/**
 * The inbound SMTP listener: where remote MTAs send bounces to a mail's VERP return path
 * `bounce+<MAILID>.<TAG>@<sender domain>` (RFC 3464 delivery status notifications, and the text
 * formats of MTAs that write their own: qmail, Exim, Gmail...; engines/bounces/formats/), and where
 * feedback loops send complaints (ARF, RFC 5965), to the VERP address or to a fixed address.
 * Runs in the worker dyno (INBOUND_SMTP_PORT); the MX of the sender domains' bounce host points
 * at it. docs/bounces.md tells the whole story, docs/security.md what a report must prove.
 *
 * Anyone on the Internet can connect, so nothing a message says is believed by itself: a report
 * changes a mail only when it carries the mail's tag (domain/bounces/authentic.ts), and a DSN
 * only through the recipient block that names the mail's own address.
 *
 * Replies, so no reporting MTA ever loops on us and no client learns which mails exist:
 *  - RCPT TO: every address is accepted (up to INBOUND_MAX_RECIPIENTS), whatever mail it names;
 *    what a message is worth is decided at DATA.
 *  - A message to `dmarc@<return-path host of a domain>` is a DMARC aggregate report, read and
 *    stored by smtp/inbound-dmarc.ts (its replies are described there).
 *  - After DATA, the report is applied before the reply, so a 250 means it is durable.
 *    Unparseable, unauthenticated or meaningless reports get a 250 too (logged and ignored: a
 *    5xx would only make the reporting MTA bounce its own report). A message that is no report,
 *    sent to no VERP address, gets 550 5.1.1 (no such mailbox here).
 *  - Postgres unreachable (or any failure while applying): 451 4.3.0, and the sender retries.
 *  - Past INBOUND_MAX_CONNECTIONS, INBOUND_MAX_MESSAGES_PER_CONNECTION or
 *    INBOUND_RATE_PER_MINUTE (messages per client address, counted over all worker dynos in
 *    Postgres): 421, and the connection closes.
 *
 * Plain SMTP without AUTH or STARTTLS: what MTAs delivering bounces speak to an MX. TLS, when
 * wanted, is terminated in front of it.
 */
export interface InboundSmtpOptions {
  pool: Pool;
  /** Listen address; 127.0.0.1 by default. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  logger: Logger;
  /** Called after a commit that recorded a soft bounce of the instance (enqueue the threshold job). */
  onSoftBounce?: (instanceId: number) => void;
  /** Defaults: INBOUND_LIMIT_DEFAULTS (config/config.ts). */
  limits?: Partial<InboundLimits>;
  /** DMARC aggregate reports to `dmarc@<return-path host>` (smtp/inbound-dmarc.ts). */
  dmarc?: DmarcOptions;
}

export interface InboundSmtp {
  port: number;
  /** Stops listening; resolves once open sessions and reports in progress have ended. */
  close(): Promise<void>;
}

export const INBOUND_MAX_BYTES = 10 * 1024 * 1024;
const CLOSE_GRACE_MS = 2_000;


/** What the listener did with one message; `code` and `text` are its SMTP reply. */
interface Handled {
  code: number;
  text: string;
}

// One text for every report that changed nothing, whatever the reason: the reply never tells a
// client whether the mail it named exists or whether its tag was close.
const IGNORED: Handled = { code: 250, text: '2.0.0 Ok: ignored' };

export async function startInboundSmtp(opts: InboundSmtpOptions): Promise<InboundSmtp> {
  const log = opts.logger.child({ component: 'inbound-smtp' });
  const limits: InboundLimits = { ...INBOUND_LIMIT_DEFAULTS, ...opts.limits };
  const inFlight = new Set<Promise<unknown>>();
  // Messages per client address per minute, one budget for every listener on the database (each
  // worker dyno runs one): sql/rate-limits.ts, in Postgres (in memory while it is unreachable).
  const rate = sharedRateLimiter(opts.pool, 'inbound', limits.ratePerMinute);

  const onConnect = (session: SMTPServerSession, done: (err?: Error | null) => void) => {
    rate.get(session.remoteAddress).then(
      (r) => done(r && r.remainingPoints <= 0 ? reply(421, '4.7.0 Too many messages from your address, try again later') : null),
      () => done(),
    );
  };

  const onMailFrom = (_address: SMTPServerAddress, session: SMTPServerSession, done: (err?: Error | null) => void) => {
    if (session.transaction > limits.maxMessagesPerConnection) {
      return done(reply(421, `4.7.0 At most ${limits.maxMessagesPerConnection} messages per connection`));
    }
    rate.consume(session.remoteAddress).then(
      () => done(),
      () => done(reply(421, '4.7.0 Too many messages from your address, try again later')),
    );
  };

  const onRcptTo = (_address: SMTPServerAddress, session: SMTPServerSession, done: (err?: Error | null) => void) => {
    if (session.envelope.rcptTo.length >= limits.maxRecipients) return done(reply(452, `4.5.3 At most ${limits.maxRecipients} recipients per message`));
    done();
  };

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, done: (err?: Error | null, message?: string) => void) => {
    readData(stream, INBOUND_MAX_BYTES, (raw) => {
      const recipients = session.envelope.rcptTo.map((r) => r.address);
      const work = handle(raw, recipients, session.remoteAddress).then(
        (r) => (r.code === 250 ? done(null, r.text) : done(reply(r.code, r.text))),
        (err) => {
          log.error({ err, recipients }, 'could not apply a report; answered 451 so the sender retries');
          done(reply(451, '4.3.0 Temporary local problem, try again later'));
        },
      );
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    }, () => done(reply(552, `5.3.4 Message exceeds the ${INBOUND_MAX_BYTES} bytes limit`)));
  };

  /** Rejections of this are database failures: the caller answers 451. */
  async function handle(raw: Buffer, recipients: string[], client: string): Promise<Handled> {
    const dmarc = await readDmarcMail(opts.pool, raw, recipients, client, log, opts.dmarc);
    if (dmarc) return dmarc;
    const verpRefs = recipients.map(referenceFromVerp).filter((r): r is MailReference => !!r);
    let parsed: ParsedMail;
    try {
      parsed = await parseReportMessage(raw);
    } catch (err) {
      log.warn({ err, recipients, client }, 'unparseable inbound message ignored');
      return IGNORED;
    }
    const ignored = (why: string, extra: object = {}): Handled => {
      log.warn({ recipients, client, why, ...extra }, 'inbound report ignored');
      return IGNORED;
    };

    let decoded: Awaited<ReturnType<typeof decodeParsed>>;
    try {
      decoded = await decodeParsed(parsed, raw);
    } catch (err) {
      // A report we cannot read (a nested part mailparser rejects) is no database failure: 250, logged.
      log.warn({ err, recipients, client }, 'undecodable inbound message ignored');
      return IGNORED;
    }
    if (decoded.kind === 'complaint') return complaint(decoded.report, verpRefs, recipients, ignored);
    if (decoded.kind === 'bounce') return deliveryStatus(decoded.report, decoded.format, verpRefs, recipients, ignored);
    if (decoded.kind === 'nothing' && recipients.some(isVerpAddress)) {
      // Auto-replies and delivery notifications: the address works; nothing changes (logged at info, not a warning).
      log.info({ recipients, client, format: decoded.format, why: decoded.why }, 'inbound message changes nothing');
      return IGNORED;
    }
    if (recipients.some(isVerpAddress)) return ignored('neither a bounce nor a feedback report in any known format');
    return { code: 550, text: '5.1.1 No such mailbox: this address only takes delivery and feedback reports' };
  }

  /**
   * A VERP report is applied only when the address it came to is on one of the mail's sender
   * domains (the sender's domain or its return-path subdomain, domain/bounces/verp-domain.ts).
   * Reports that name the mail only by the returned original's headers are not checked here.
   */
  function onSenderDomain(owner: { mailId: string; sender: string | null }, recipients: string[]): boolean {
    const mine = recipients.filter((r) => referenceFromVerp(r)?.mailId === owner.mailId);
    return !mine.length || mine.some((r) => verpDomainMatches(r, owner.sender));
  }

  async function deliveryStatus(
    dsn: DeliveryStatusReport,
    format: string,
    verpRefs: MailReference[],
    recipients: string[],
    ignored: (why: string, extra?: object) => Handled,
  ): Promise<Handled> {
    // Sent to a return path, the address names the mail; else the returned original does.
    const refs = verpRefs.length ? verpRefs : referencesFromOriginal(dsn.original);
    if (!refs.length) return ignored('bounce names no mail of ours', { format });
    const names = (address: string) => dsn.recipients.some((r) => namesRecipient(r, address.trim().toLowerCase()));
    const { trusted, refused } = await authenticMails(opts.pool, refs, names);
    for (const r of refused) ignored(`bounce refused: ${r.why}`, { mailId: r.mailId, format });
    let applied = false;
    for (const { owner, via } of trusted) {
      if (!onSenderDomain(owner, recipients)) {
        ignored("VERP report to a domain that is not one of the mail's sender domains (forged?)", { mailId: owner.mailId, sender: owner.sender, format });
        continue;
      }
      // A tagged return path proves the reporter saw this mail: a report sent to that return path
      // alone is about it even when it names other addresses (a forward, an alias, a list's
      // members) or none (text bounces). Sent to several return paths, each mail takes only the
      // blocks that name its own recipient.
      const lone = via === 'tag' && verpRefs.length === 1 && verpRefs[0]!.mailId === owner.mailId;
      const verdict = dsnVerdict(dsn, owner.toEmail, lone);
      if (verdict.kind === 'none') {
        ignored(`bounce without failure or delay for the mail's recipient (${verdict.why})`, { mailId: owner.mailId, format });
        continue;
      }
      const effect = await withTenant(opts.pool, owner.tenant, (c) => applyDsn(owner.tenant, c, owner.mailId, verdict));
      log.info(
        { mailId: owner.mailId, instance: owner.tenant.slug, via, format, action: verdict.kind, status: verdict.status, reason: verdict.reason, bounceClass: verdict.bounceClass, effect },
        verdict.kind === 'delayed' ? 'delay report logged' : 'bounce applied',
      );
      if (effect === 'bounced' && verdict.bounceClass === 'soft') opts.onSoftBounce?.(owner.tenant.instanceId);
      applied = true;
    }
    return applied ? { code: 250, text: '2.0.0 Ok: delivery status recorded' } : IGNORED;
  }

  async function complaint(arf: FeedbackReport, verpRefs: MailReference[], recipients: string[], ignored: (why: string, extra?: object) => Handled): Promise<Handled> {
    // The original names the mail even when the loop reports to a fixed address.
    const refs = [...referencesFromOriginal(arf.original), ...verpRefs];
    if (!refs.length) return ignored('feedback report names no mail of ours');
    if (!COMPLAINT_TYPES.has(arf.feedbackType)) return ignored(`feedback type ${arf.feedbackType} is not a complaint`, { mailId: refs[0]!.mailId });
    const named = new Set(arf.originalRcptTo.map((a) => a.toLowerCase()));
    const { trusted, refused } = await authenticMails(opts.pool, refs, (address) => named.has(address.trim().toLowerCase()));
    for (const r of refused) ignored(`feedback report refused: ${r.why}`, { mailId: r.mailId });
    // One report, one complaint: the first mail it proves (its references normally name one).
    const first = trusted[0];
    if (!first) return IGNORED;
    const { owner, via } = first;
    if (!onSenderDomain(owner, recipients)) return ignored("VERP report to a domain that is not one of the mail's sender domains (forged?)", { mailId: owner.mailId });
    const recorded = await withTenant(opts.pool, owner.tenant, (c) =>
      recordComplaint(owner.tenant, c, { mailId: owner.mailId, feedbackType: arf.feedbackType, reportedBy: arf.userAgent ?? null, arrivalDate: arf.arrivalDate ?? null }),
    );
    log.info({ mailId: owner.mailId, instance: owner.tenant.slug, via, feedbackType: arf.feedbackType, duplicate: !recorded }, 'complaint received');
    return { code: 250, text: recorded ? '2.0.0 Ok: complaint recorded' : '2.0.0 Ok: complaint already recorded' };
  }

  const server = new SMTPServer({
    banner: 'Cartero inbound',
    // smtp-server asks the system resolver for each client's PTR name by default: a query leaving
    // the machine for every connection, for a name nothing here reads (issue 37).
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    size: INBOUND_MAX_BYTES,
    maxClients: limits.maxConnections,
    closeTimeout: CLOSE_GRACE_MS,
    logger: false,
    onConnect,
    onMailFrom,
    onRcptTo,
    onData,
  });
  server.on('error', (err) => log.warn({ err }, 'inbound smtp error'));

  const host = opts.host ?? '127.0.0.1';
  const port = await listenSmtp(server, opts.port, host, 'inbound smtp');
  log.info({ host, port }, 'inbound smtp listening');

  let closing: Promise<void> | undefined;
  return {
    port,
    close: () =>
      (closing ??= (async () => {
        await new Promise<void>((closed) => server.close(() => closed()));
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      })()),
  };
}
