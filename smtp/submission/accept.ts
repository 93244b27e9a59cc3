import { acceptSend } from '../../domain/mail/accept.js';
import { acceptSendOnce } from '../../domain/mail/idempotency.js';
import { sendBodySchema, type SendRequest } from '../../domain/mail/send-request.js';
import { AppError, DependencyUnavailable, ValidationFailed, type FieldError } from '../../domain/errors.js';
import type { JobQueue } from '../../domain/job-queue.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { compile } from '../../domain/validation.js';
import type { RenderLimits } from '../../config/defaults.js';
import type { Pool } from '../../sql/pool.js';

/** An SMTP reply: its code and its text (the enhanced status code first). */
export interface Reply {
  code: number;
  text: string;
}

export interface SubmissionDeps {
  pool: Pool;
  queue: JobQueue;
  render: Pick<RenderLimits, 'maxBodyBytes'>;
}

// The API's own schema, with its own validator: a submitted message meets the checks a JSON body does.
const validSendRequest = compile<SendRequest>(sendBodySchema, 'json');

// RFC 5322 bounds a header line at 998 characters: a longer Message-ID is no message's.
const MAX_MESSAGE_ID = 998;

/**
 * The one place a submitted message is handed to acceptance: the very acceptance of POST
 * /v1/mails/send (domain/mail/accept.ts: the same gates, limits, audit rows and jobs, in one
 * transaction), and its outcome as the SMTP reply. A 250 is answered only after that transaction
 * committed; anything else accepted nothing.
 *
 * A message with a Message-ID is accepted once (docs/sending.md, Idempotency): the same
 * Message-ID again from the instance within 24 h, a client's retry after a lost reply, is
 * answered 250 with the first msg_id and sends nothing (domain/mail/idempotency.ts, the `smtp`
 * door). Without one (a client that sets none; Postfix and the usual libraries always do), every
 * message is a new send.
 */
export async function acceptSubmission(tenant: Tenant, deps: SubmissionDeps, request: SendRequest, messageId: string | undefined): Promise<Reply> {
  const key = messageId?.trim();
  if (key !== undefined && key.length > MAX_MESSAGE_ID) return { code: 550, text: `5.6.0 Message-ID: longer than ${MAX_MESSAGE_ID} characters` };
  try {
    const valid = validSendRequest(request);
    const accepted = key
      ? (await acceptSendOnce(tenant, deps.pool, deps.queue, valid, { door: 'smtp', key }, deps.render)).accepted
      : await acceptSend(tenant, deps.pool, deps.queue, valid, deps.render);
    return { code: 250, text: `2.0.0 Ok: queued as ${accepted.msg_id}` };
  } catch (err) {
    return refusal(err);
  }
}

/** Where a send request field came from in the message, for a reply that names it. */
function fieldOf(pointer: string): string {
  const [, top, index, sub] = pointer.split('/');
  switch (top) {
    case 'from':
      return 'From';
    case 'to':
      return index === undefined ? 'RCPT TO' : `RCPT TO #${Number(index) + 1}${sub === 'name' ? ' (its display name)' : ''}`;
    case 'subject':
      return 'Subject';
    case 'html':
    case 'text':
      return `the ${top} part`;
    case 'reply_to':
      return 'Reply-To';
    case 'headers':
      return `header ${(index ?? '').replace(/~1/g, '/').replace(/~0/g, '~')}`;
    case 'attachments':
      return index === undefined ? 'attachments' : `attachment #${Number(index) + 1}`;
    case 'custom_msg_id':
      return 'X-Cartero-Custom-Msg-Id';
    case 'custom_group_code':
      return 'X-Cartero-Group';
    case 'template_id':
      return 'X-Cartero-Template-Id';
    case 'variables':
      return 'X-Cartero-Variables';
    case 'purpose_ids':
      return 'X-Cartero-Purposes';
    default:
      return top ? `X-Cartero-${top}` : 'the message';
  }
}

/** A refused send as the reply a client understands (docs/sending.md, Send over SMTP, the table of replies). */
export function refusal(err: unknown): Reply {
  if (err instanceof ValidationFailed) {
    const sender = err.errors.find((e) => e.code === 'value_error.unknown_sender');
    if (sender) return { code: 550, text: '5.7.1 From: not a sender of this instance' };
    const first = err.errors[0] as FieldError | undefined;
    const more = err.errors.length > 1 ? ` (and ${err.errors.length - 1} more)` : '';
    return { code: 550, text: `5.6.0 ${first ? `${fieldOf(first.pointer)}: ${first.message}` : err.message}${more}` };
  }
  if (err instanceof DependencyUnavailable || !(err instanceof AppError)) return { code: 451, text: '4.3.0 Temporary local problem, try again later' };
  switch (err.code) {
    case 'rate_limit_exceeded':
      return { code: 451, text: `4.7.1 Sending rate limit of the instance reached; retry after ${err.headers['Retry-After'] ?? 1} s` };
    case 'request_too_large':
      return { code: 552, text: `5.3.4 ${err.message}` };
    case 'domain_sender_not_verified':
    case 'sandbox_relay_restricted':
      return { code: 550, text: `5.7.1 ${err.code}: ${err.message}` };
    case 'template_not_public':
    case 'mail_template_not_found':
      return { code: 550, text: `5.6.0 X-Cartero-Template-Id: ${err.message}` };
  }
  if (err.status >= 500) return { code: 451, text: '4.3.0 Temporary local problem, try again later' };
  return { code: 550, text: `5.7.1 ${err.code}: ${err.message}` };
}
