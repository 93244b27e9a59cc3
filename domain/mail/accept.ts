import { assertSandboxRecipients } from '../domains/sandbox.js';
import type { Client, Pool } from '../../sql/pool.js';
import { RuleViolation, ValidationFailed, type FieldError } from '../errors.js';
import { sendMailJobs, type JobQueue } from '../job-queue.js';
import type { Tenant } from '../tenancy/context.js';
import { withTenant } from '../tenancy/context.js';
import { takeSendTokens, type SendLimits } from './bandwidth.js';
import { newId, newIds } from './ids.js';
import { checkTemplate, recipientVariables, renderHtml, renderText, type Variables } from './merge-tags.js';
import { MailStatus } from './status.js';
import { recipientProviders } from './recipient-providers.js';
import { RENDER_LIMITS, type RenderLimits } from '../../config/defaults.js';
import { isHeaderName, isProtectedHeader } from './render.js';
import { templateForSend } from '../templates/for-send.js';
import { checkSendPurposes, recordSendPurposes } from '../consent/send-hook.js';

// The request's type is derived from its schema (domain/mail/send-request.ts); re-exported for the callers that named it here.
import type { SendRequest } from './send-request.js';
export type { SendRequest } from './send-request.js';

export interface SendAccepted {
  msg_id: string;
  mails: Array<{ mail_id: string; to: string; status: number }>;
}

/**
 * What a send delivers: the request's own subject, html and text, or with template_id the
 * template's (its subject unless the request gives one), each with the pointer a 422 about it
 * names. Copied into the message at acceptance, so a template edited, unpublished or deleted
 * afterwards does not change mails already accepted.
 */
interface SendContent {
  subject: string;
  html: string | undefined;
  text: string | undefined;
  pointers: { subject: string; html: string; text: string };
}

const OWN_POINTERS = { subject: '/subject', html: '/html', text: '/text' };

/**
 * Checks across fields that a JSON Schema cannot say well; all failures reported together.
 * A template brings html and text of its own, so a send naming one carries neither.
 */
function requestErrors(req: SendRequest): FieldError[] {
  const errors: FieldError[] = [];
  if (req.template_id !== undefined) {
    for (const field of ['html', 'text'] as const) {
      if (req[field] !== undefined) {
        errors.push({ pointer: `/${field}`, code: 'value_error.template_conflict', message: `${field} comes from the template: leave out ${field} or template_id` });
      }
    }
  } else {
    if (req.html === undefined && req.text === undefined) {
      errors.push({ pointer: '/html', code: 'missing', message: 'One of html, text or template_id is required' });
    }
    if (req.subject === undefined) errors.push({ pointer: '/subject', code: 'missing', message: 'Field required' });
  }
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    const pointer = `/headers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (!isHeaderName(name)) {
      errors.push({ pointer, code: 'value_error.header_name', message: 'Not a valid header field name' });
    } else if (isProtectedHeader(name)) {
      errors.push({ pointer, code: 'value_error.header_protected', message: `${name} is set by the service and cannot be overridden` });
    } else if (/[\r\n]/.test(value)) {
      errors.push({ pointer, code: 'value_error.header_value', message: 'Header values cannot contain line breaks' });
    }
  }
  const seen = new Map<string, number>();
  req.to.forEach((r, i) => {
    const email = r.email.toLowerCase();
    if (seen.has(email)) {
      errors.push({ pointer: `/to/${i}/email`, code: 'value_error.duplicate_recipient', message: `Recipient repeats /to/${seen.get(email)}` });
    } else seen.set(email, i);
  });
  return errors;
}

/**
 * The content's own checks, wherever it came from. `maxBodyBytes` is the worker's render bound
 * (RENDER_MAX_BODY_BYTES): a body already over it could only be dropped by the worker, so it is
 * refused here, where the client hears why.
 */
function contentErrors(content: SendContent, maxBodyBytes: number): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of ['html', 'text'] as const) {
    const value = content[field];
    if (value !== undefined && Buffer.byteLength(value, 'utf8') > maxBodyBytes) {
      errors.push({ pointer: content.pointers[field], code: 'value_error.too_large', message: `At most ${maxBodyBytes} bytes (UTF-8)`, params: { max_bytes: maxBodyBytes } });
    }
  }
  for (const field of ['subject', 'html', 'text'] as const) {
    const value = content[field];
    const problem = value === undefined ? undefined : checkTemplate(value);
    if (problem) errors.push({ pointer: content.pointers[field], code: 'value_error.merge_tags', message: `Merge tags do not parse: ${problem}` });
  }
  return errors;
}

/**
 * The template's content for this send: 404 mail_template_not_found for an id the instance does
 * not have (or deleted), 409 template_not_public for a draft outside test_mode.
 */
async function templateContent(tenant: Tenant, pool: Pool, req: SendRequest & { template_id: number }): Promise<SendContent> {
  const template = await withTenant(pool, tenant, (c) => templateForSend(tenant, c, req.template_id));
  if (template.status !== 'public' && !req.test_mode) {
    throw new RuleViolation('template_not_public', `template ${req.template_id} is a draft: send it with test_mode: true, or publish it`);
  }
  const errors: FieldError[] = [];
  if (template.html === null && template.text === null) {
    errors.push({ pointer: '/template_id', code: 'value_error.template_empty', message: `template ${req.template_id} has no content (its design is empty)` });
  }
  const subject = req.subject ?? template.subject ?? '';
  if (subject === '') errors.push({ pointer: '/subject', code: 'missing', message: `Required: template ${req.template_id} has no subject` });
  if (errors.length) throw new ValidationFailed(errors);
  return {
    subject,
    html: template.html ?? undefined,
    text: template.text ?? undefined,
    pointers: { subject: req.subject !== undefined ? '/subject' : '/template_id', html: '/template_id', text: '/template_id' },
  };
}

/** Work the web process may spend on merge tags for one send (it renders every subject). */
const ACCEPT_RENDER_BUDGET_MS = 500;

function mergeTagError(pointer: string, message: string): ValidationFailed {
  return new ValidationFailed([{ pointer, code: 'value_error.merge_tags', message }]);
}

/**
 * Every recipient's subject (stored with the mail), plus one trial render of html and text with
 * the first recipient's variables, so a template that fails at render time (over the engine's
 * limits, say) is a 422 now rather than a dropped mail later. The whole send shares one time
 * budget: 500 cheap subjects take milliseconds, a deliberately slow template does not get 500
 * renders of the web process's time.
 */
function renderForAcceptance(req: SendRequest, content: SendContent): string[] {
  const started = performance.now();
  const vars = (r: SendRequest['to'][number]) => recipientVariables(req.variables ?? {}, r);
  const attempt = <T>(pointer: string, fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw mergeTagError(pointer, `Merge tags could not be rendered: ${(err as Error).message.split('\n')[0]}`);
    }
  };
  const first = req.to[0]!;
  if (content.html !== undefined) attempt(content.pointers.html, () => renderHtml(content.html!, vars(first)));
  if (content.text !== undefined) attempt(content.pointers.text, () => renderText(content.text!, vars(first)));
  return req.to.map((r) => {
    if (performance.now() - started > ACCEPT_RENDER_BUDGET_MS) throw mergeTagError(content.pointers.subject, 'Merge tags take too long to render');
    return attempt(content.pointers.subject, () => renderText(content.subject, vars(r)));
  });
}

/**
 * A claim held by the acceptance's own transaction (domain/mail/idempotency.ts's key): taken
 * first, before any gate, so a concurrent duplicate waits for this transaction and then answers
 * as a retry; settled with the answer once everything is written. Throwing from either rolls the
 * whole send back.
 */
export interface AcceptanceClaim {
  take(c: Client): Promise<void>;
  settle(c: Client, accepted: SendAccepted): Promise<void>;
}

/**
 * Accept a send: one messages row, one mails row per recipient (status 1 received, a shared
 * msg_id) with its first log row, and one send job per mail, all in one transaction, so the
 * send is accepted whole or not at all. Gates that depend on the recipient (restrictions,
 * consent, quota) run in the worker at send time, when they are current.
 */
export async function acceptSend(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  req: SendRequest,
  limits: Pick<RenderLimits, 'maxBodyBytes'> = RENDER_LIMITS,
  claim?: AcceptanceClaim,
): Promise<SendAccepted> {
  let content: SendContent;
  if (req.template_id === undefined) {
    content = { subject: req.subject ?? '', html: req.html, text: req.text, pointers: OWN_POINTERS };
    const errors = [...requestErrors(req), ...contentErrors(content, limits.maxBodyBytes)];
    if (errors.length) throw new ValidationFailed(errors);
  } else {
    // The template is read only for a request that is otherwise fine.
    const errors = requestErrors(req);
    if (errors.length) throw new ValidationFailed(errors);
    content = await templateContent(tenant, pool, req as SendRequest & { template_id: number });
    const problems = contentErrors(content, limits.maxBodyBytes);
    if (problems.length) throw new ValidationFailed(problems);
  }
  // Before the transaction: no connection is held while merge tags render.
  const subjects = renderForAcceptance(req, content);

  return withTenant(pool, tenant, async (c) => {
    await claim?.take(c);
    const sender = (
      await c.query<{ id: number; name: string; email_address: string; is_verified: boolean; is_sandbox: boolean; is_consent_required: boolean }>(
        `SELECT s.id, s.name, s.email_address, d.is_verified, d.is_sandbox, s.is_consent_required
           FROM senders s JOIN domains d ON d.instance_id = s.instance_id AND d.id = s.domain_id
          WHERE s.instance_id = $1 AND s.email_address = lower($2)`,
        [tenant.instanceId, req.from],
      )
    ).rows[0];
    if (!sender) {
      throw new ValidationFailed([
        { pointer: '/from', code: 'value_error.unknown_sender', message: 'from must be the email_address of a sender of this instance' },
      ]);
    }
    if (!sender.is_verified) {
      throw new RuleViolation('domain_sender_not_verified', `the domain of sender ${sender.email_address} is not verified`);
    }
    if (sender.is_sandbox) await assertSandboxRecipients(tenant, c, req.to.map((r) => r.email));
    await checkSendPurposes(tenant, c, sender, req.purpose_ids);
    const limits = (
      await c.query<SendLimits>('SELECT send_rate_per_second, send_burst FROM instances WHERE id = $1', [tenant.instanceId])
    ).rows[0]!;
    await takeSendTokens(tenant, c, limits, req.to.length);

    const msgId = newId();
    const message = (
      await c.query<{ id: number }>(
        `INSERT INTO messages (instance_id, msg_id, sender_id, from_email, from_name, subject, html, text_body, reply_to,
                               headers, attachments, variables, test_mode, track_opens, track_clicks, custom_msg_id, custom_group_code)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING id`,
        [
          tenant.instanceId, msgId, sender.id, sender.email_address, sender.name, content.subject, content.html ?? null, content.text ?? null,
          req.reply_to ?? null, JSON.stringify(req.headers ?? {}), JSON.stringify(req.attachments ?? []), JSON.stringify(req.variables ?? {}),
          req.test_mode ?? false, req.track_opens ?? true, req.track_clicks ?? true, req.custom_msg_id ?? null, req.custom_group_code ?? null,
        ],
      )
    ).rows[0]!;
    await recordSendPurposes(tenant, c, message.id, req.purpose_ids);

    const mailIds = newIds(req.to.length);
    const recipients = await recipientProviders(c, req.to.map((r) => r.email));
    // One statement for all recipients (up to 500): arrays zipped by unnest.
    await c.query(
      `WITH inserted AS (
         INSERT INTO mails (instance_id, mail_id, message_id, msg_id, sender_id, sender, to_email, to_name, variables, subject,
                            status, custom_msg_id, custom_group_code, provider)
         SELECT $1, r.mail_id, $2, $3, $4, $5, r.to_email, r.to_name, r.variables, r.subject, ${MailStatus.received}, $6, $7, r.provider
           FROM unnest($8::text[], $9::text[], $10::text[], $11::jsonb[], $12::text[], $13::text[]) WITH ORDINALITY
                AS r(mail_id, to_email, to_name, variables, subject, provider, n)
          ORDER BY r.n
         RETURNING mail_id, received_at
       )
       INSERT INTO mail_logs (instance_id, mail_id, status, reason, created_at)
       SELECT $1, mail_id, ${MailStatus.received}, 'accepted', received_at FROM inserted`,
      [
        tenant.instanceId, message.id, msgId, sender.id, sender.email_address, req.custom_msg_id ?? null, req.custom_group_code ?? null,
        mailIds, req.to.map((r) => r.email.toLowerCase()), req.to.map((r) => r.name ?? null),
        req.to.map((r) => JSON.stringify(r.variables ?? {})), subjects, recipients.providers,
      ],
    );
    const accepted: SendAccepted = {
      msg_id: msgId,
      mails: mailIds.map((mail_id, i) => ({ mail_id, to: req.to[i]!.email.toLowerCase(), status: MailStatus.received })),
    };
    await claim?.settle(c, accepted);
    // Last in the transaction: the insert leaves the tenant role (see workers/machinery/queue.ts).
    await queue.insert(
      c,
      [
        ...sendMailJobs(tenant.instanceId, mailIds),
        ...recipients.jobs,
      ],
    );
    return accepted;
  });
}

