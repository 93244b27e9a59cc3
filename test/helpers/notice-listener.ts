import nodemailer from 'nodemailer';
import { pino } from 'pino';
import type { Test } from 'tap';
import { reportKeys } from '../../domain/bounces/report-keys.js';
import { reportTag } from '../../domain/bounces/report-tag.js';
import { acceptSend } from '../../domain/mail/accept.js';
import { MailStatus } from '../../domain/mail/status.js';
import { moveMail } from '../../domain/mail/transitions.js';
import { withTenant } from '../../domain/tenancy/context.js';
import { startInboundSmtp } from '../../smtp/inbound.js';
import { jobQueue } from '../../workers/machinery/queue.js';
import { testDatabases } from './databases.js';
import { makeSenders, makeTenant } from './fixtures.js';

export interface NoticeListener {
  /** A mail of ours to `to`, accepted and moved to sent (no worker: nothing else touches it), and its tagged VERP return path. */
  sentMail(to: string): Promise<{ mailId: string; verp: string }>;
  /** Delivers `raw` to the listener over SMTP, with the null sender of a bounce; the listener's reply. */
  deliver(to: string, raw: string): Promise<string>;
  /** What the listener made of the mail: its status, bounce class and the bounce's reason. */
  state(mailId: string): Promise<{ status: number; bounce_class: string | null; reason: string | null }>;
}

/**
 * The real inbound listener (smtp-server on loopback) over its own database, for the format tests
 * that send their hand-written notices to a mail's VERP address, as a reporting system does.
 * Started before the caller's first subtest (tap may end the root test once its subtests ran).
 */
export async function noticeListener(t: Test, label: string): Promise<NoticeListener> {
  const dbs = await testDatabases(t, label);
  const inbound = await startInboundSmtp({ pool: dbs.pool, port: 0, logger: pino({ level: 'error' }, pino.destination(2)) });
  t.teardown(() => inbound.close());
  const a = await makeTenant(dbs.pool);
  await makeSenders(dbs.pool, a.tenant, { domain: 'send.example', senders: [{ email: 'news', name: 'News' }] });
  const queue = jobQueue(dbs.databaseUrl);
  const keys = await reportKeys(dbs.pool);
  return {
    async sentMail(to) {
      const accepted = await acceptSend(a.tenant, dbs.pool, queue, { from: 'news@send.example', to: [{ email: to }], subject: 'Hello', text: 'Hello' });
      const mailId = accepted.mails[0]!.mail_id;
      await withTenant(dbs.pool, a.tenant, (c) => moveMail(a.tenant, c, mailId, MailStatus.sent));
      return { mailId, verp: `bounce+${mailId}.${reportTag(keys.current, mailId)}@send.example` };
    },
    deliver: (to, raw) => deliverReport(inbound.port, to, raw),
    async state(mailId) {
      const { rows } = await dbs.pool.query<{ status: number; bounce_class: string | null; reason: string | null }>(
        `SELECT m.status, m.bounce_class,
                (SELECT reason FROM mail_bounces b WHERE b.mail_id = m.mail_id ORDER BY id DESC LIMIT 1) AS reason
           FROM mails m WHERE m.mail_id = $1`,
        [mailId],
      );
      return rows[0]!;
    },
  };
}

/** Delivers `raw` over SMTP to a listener on loopback `port`, with the null sender of a bounce; the listener's reply (or refusal). */
export async function deliverReport(port: number, to: string, raw: string): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    return (await transport.sendMail({ envelope: { from: '', to: [to] }, raw })).response;
  } catch (err) {
    return (err as { response?: string }).response ?? String(err);
  } finally {
    transport.close();
  }
}
