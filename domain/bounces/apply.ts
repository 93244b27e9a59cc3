import { MailStatus } from '../mail/status.js';
import { moveMail } from '../mail/transitions.js';
import type { Tenant } from '../tenancy/context.js';
import type { Client } from '../../sql/pool.js';
import type { DsnVerdict } from '../../engines/bounces/dsn.js';

/** A late report concerns a mail that was handed to SMTP: queued, sent or deferred. */
const REPORTABLE = [MailStatus.queued, MailStatus.sent, MailStatus.deferred] as const;

export type DsnEffect = 'bounced' | 'logged' | 'unchanged';

/**
 * Applies a DSN verdict to a mail, in the tenant's transaction. Failed: the mail moves to
 * bounced (a mail already sent too: the remote MTA accepted it and gave up later), which also
 * records the bounce and, when hard, the restriction (domain/mail/transitions.ts). Delayed: a
 * log entry at the mail's current status, nothing else (the remote MTA is still trying).
 * 'unchanged' when the mail is not in a reportable status (already bounced, dropped...).
 */
export async function applyDsn(tenant: Tenant, client: Client, mailId: string, verdict: DsnVerdict): Promise<DsnEffect> {
  if (verdict.kind === 'none') return 'unchanged';
  const log = { smtpCode: verdict.smtpCode ?? null, smtpEnhanced: verdict.status ?? null, smtpReply: verdict.diagnostic ?? null };
  if (verdict.kind === 'failed') {
    const moved = await moveMail(
      tenant,
      client,
      mailId,
      MailStatus.bounced,
      { from: REPORTABLE, bounceClass: verdict.bounceClass ?? 'soft', bounceSource: 'dsn', ...(verdict.reason ? { bounceReason: verdict.reason } : {}) },
      { reason: 'dsn', ...log },
    );
    return moved ? 'bounced' : 'unchanged';
  }
  const { rowCount } = await client.query(
    `INSERT INTO mail_logs (instance_id, mail_id, status, reason, smtp_code, smtp_enhanced, smtp_reply, moved, bounce_reason)
     SELECT instance_id, mail_id, status, 'dsn_delayed', $3, $4, $5, false, $7 FROM mails
      WHERE instance_id = $1 AND mail_id = $2 AND status = ANY ($6::smallint[])`,
    [tenant.instanceId, mailId, log.smtpCode, log.smtpEnhanced, log.smtpReply, REPORTABLE, verdict.reason ?? null],
  );
  return rowCount ? 'logged' : 'unchanged';
}
