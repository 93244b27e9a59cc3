import type { ParsedMail } from 'mailparser';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { applyDsn, mailOwner } from '../domain/bounces/apply.js';
import { dsnVerdict, readDsn } from '../domain/bounces/dsn.js';
import { isVerpAddress, mailIdFromOriginal, mailIdFromVerp } from '../domain/bounces/identify.js';
import { parseReportMessage } from '../domain/bounces/report-message.js';
import { COMPLAINT_TYPES, readArf, type FeedbackReport } from '../domain/complaints/arf.js';
import { recordComplaint } from '../domain/complaints/record.js';
import { withTenant } from '../domain/tenancy/context.js';
import type { Pool } from '../sql/pool.js';

/**
 * The inbound SMTP listener: where remote MTAs send delivery status notifications (RFC 3464) to
 * a mail's VERP return path `bounce+<MAILID>@<sender domain>`, and where feedback loops send
 * complaints (ARF, RFC 5965), to the VERP address or to a fixed address of their choosing.
 * Runs in the worker dyno (INBOUND_SMTP_PORT); the MX of the sender domains' bounce host points
 * at it. docs/bounces.md tells the whole story.
 *
 * Replies, so no reporting MTA ever loops on us:
 *  - RCPT TO a VERP address whose mail does not exist (any more): 550 5.1.1. Any other address
 *    is accepted at RCPT: only the message can tell whether it is a feedback report.
 *  - After DATA, the report is applied before the reply, so a 250 means it is durable.
 *    Unparseable or meaningless reports get a 250 too (logged and ignored: a 5xx would only
 *    make the reporting MTA bounce its own report). A message that is no report, sent to an
 *    address that is not a VERP one, gets 550 5.1.1 (no such mailbox here).
 *  - Postgres unreachable (or any failure while applying): 451 4.3.0, and the sender retries.
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
}

export interface InboundSmtp {
  port: number;
  /** Stops listening; resolves once open sessions and reports in progress have ended. */
  close(): Promise<void>;
}

export const INBOUND_MAX_BYTES = 10 * 1024 * 1024;
const CLOSE_GRACE_MS = 2_000;

function reply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/** What the listener did with one message; `code` and `text` are its SMTP reply. */
interface Handled {
  code: number;
  text: string;
}

export async function startInboundSmtp(opts: InboundSmtpOptions): Promise<InboundSmtp> {
  const log = opts.logger.child({ component: 'inbound-smtp' });
  const inFlight = new Set<Promise<unknown>>();

  const onRcptTo = (address: SMTPServerAddress, _session: SMTPServerSession, done: (err?: Error | null) => void) => {
    const addr = address.address;
    if (!isVerpAddress(addr)) return done();
    const mailId = mailIdFromVerp(addr);
    if (!mailId) return done(reply(550, `5.1.1 <${addr}>: no such mail`));
    const check = mailOwner(opts.pool, mailId).then(
      (owner) => done(owner ? null : reply(550, `5.1.1 <${addr}>: no such mail`)),
      (err) => {
        log.warn({ err, mailId }, 'could not look a VERP recipient up; answered 451');
        done(reply(451, '4.3.0 Temporary local problem, try again later'));
      },
    );
    inFlight.add(check);
    void check.finally(() => inFlight.delete(check));
  };

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, done: (err?: Error | null, message?: string) => void) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= INBOUND_MAX_BYTES) chunks.push(chunk);
    });
    stream.once('error', () => {});
    stream.once('end', () => {
      if (stream.sizeExceeded || size > INBOUND_MAX_BYTES) return done(reply(552, `5.3.4 Message exceeds the ${INBOUND_MAX_BYTES} bytes limit`));
      const recipients = session.envelope.rcptTo.map((r) => r.address);
      const work = handle(Buffer.concat(chunks), recipients).then(
        (r) => (r.code === 250 ? done(null, r.text) : done(reply(r.code, r.text))),
        (err) => {
          log.error({ err, recipients }, 'could not apply a report; answered 451 so the sender retries');
          done(reply(451, '4.3.0 Temporary local problem, try again later'));
        },
      );
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    });
  };

  /** Rejections of this are database failures: the caller answers 451. */
  async function handle(raw: Buffer, recipients: string[]): Promise<Handled> {
    const verpIds = [...new Set(recipients.map(mailIdFromVerp).filter((id): id is string => !!id))];
    let parsed: ParsedMail;
    try {
      parsed = await parseReportMessage(raw);
    } catch (err) {
      log.warn({ err, recipients }, 'unparseable inbound message ignored');
      return { code: 250, text: '2.0.0 Ok: ignored (unparseable)' };
    }
    const ignored = (why: string, extra: object = {}): Handled => {
      log.warn({ recipients, why, ...extra }, 'inbound report ignored');
      return { code: 250, text: `2.0.0 Ok: ignored` };
    };

    const arf = readArf(parsed);
    if (arf) return complaint(arf, verpIds, ignored);
    const dsn = readDsn(parsed);
    if (dsn) {
      const ids = verpIds.length ? verpIds : [mailIdFromOriginal(dsn.original)].filter((id): id is string => !!id);
      if (!ids.length) return ignored('DSN names no mail of ours');
      for (const mailId of ids) {
        const owner = await mailOwner(opts.pool, mailId);
        if (!owner) {
          ignored('DSN for an unknown mail', { mailId });
          continue;
        }
        const verdict = dsnVerdict(dsn, owner.toEmail);
        if (verdict.kind === 'none') {
          ignored(`DSN without failure or delay (${verdict.why})`, { mailId });
          continue;
        }
        const effect = await withTenant(opts.pool, owner.tenant, (c) => applyDsn(owner.tenant, c, mailId, verdict));
        log.info({ mailId, instance: owner.tenant.slug, action: verdict.kind, status: verdict.status, bounceClass: verdict.bounceClass, effect }, 'DSN applied');
        if (effect === 'bounced' && verdict.bounceClass === 'soft') opts.onSoftBounce?.(owner.tenant.instanceId);
      }
      return { code: 250, text: '2.0.0 Ok: delivery status recorded' };
    }
    if (verpIds.length) return ignored('neither a DSN nor a feedback report (an auto-reply, or a bounce in no standard format)');
    return { code: 550, text: '5.1.1 No such mailbox: this address only takes delivery and feedback reports' };
  }

  async function complaint(arf: FeedbackReport, verpIds: string[], ignored: (why: string, extra?: object) => Handled): Promise<Handled> {
    // The original names the mail even when the loop reports to a fixed address.
    const mailId = mailIdFromOriginal(arf.original) ?? verpIds[0];
    if (!mailId) return ignored('feedback report names no mail of ours');
    if (!COMPLAINT_TYPES.has(arf.feedbackType)) return ignored(`feedback type ${arf.feedbackType} is not a complaint`, { mailId });
    const owner = await mailOwner(opts.pool, mailId);
    if (!owner) return ignored('feedback report for an unknown mail', { mailId });
    const recorded = await withTenant(opts.pool, owner.tenant, (c) =>
      recordComplaint(owner.tenant, c, { mailId, feedbackType: arf.feedbackType, reportedBy: arf.userAgent ?? null, arrivalDate: arf.arrivalDate ?? null }),
    );
    log.info({ mailId, instance: owner.tenant.slug, feedbackType: arf.feedbackType, duplicate: !recorded }, 'complaint received');
    return { code: 250, text: recorded ? '2.0.0 Ok: complaint recorded' : '2.0.0 Ok: complaint already recorded' };
  }

  const server = new SMTPServer({
    banner: 'Cartero inbound',
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    size: INBOUND_MAX_BYTES,
    closeTimeout: CLOSE_GRACE_MS,
    logger: false,
    onRcptTo,
    onData,
  });
  server.on('error', (err) => log.warn({ err }, 'inbound smtp error'));

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((ready, fail) => {
    const onError = (err: Error) => fail(err);
    server.server.once('error', onError);
    server.listen(opts.port, host, () => {
      server.server.off('error', onError);
      ready();
    });
  });
  const address = server.server.address();
  if (!address || typeof address === 'string') throw new Error('inbound smtp: no TCP address');
  log.info({ host, port: address.port }, 'inbound smtp listening');

  let closing: Promise<void> | undefined;
  return {
    port: address.port,
    close: () =>
      (closing ??= (async () => {
        await new Promise<void>((closed) => server.close(() => closed()));
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      })()),
  };
}
