import type { SendOutcome } from '../../../engines/bounces/smtp-reply.js';
import type { Claimed } from './claim.js';
import type { SendMailDeps } from './deps.js';

/**
 * The SMTP step of a send batch (workers/jobs/send-mail/index.ts): the claimed mail goes through
 * the process's pooled transport (smtp/transport.ts), signed with its sender domain's DKIM key
 * when it has one. The server's reply, or a failure to reach it, comes back as an outcome for
 * step B to record; every claimed mail of the batch is at SMTP at the same time.
 */
export function sendOverSmtp(deps: SendMailDeps, mail: Claimed): Promise<SendOutcome> {
  return deps.smtp.send(mail.rendered, mail.dkim);
}
