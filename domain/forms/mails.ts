import type { Pool } from '../../sql/pool.js';
import type { FormSubmissionMailJob, JobQueue } from '../job-queue.js';
import { acceptSend, type SendAccepted, type SendRequest } from '../mail/accept.js';
import { chooseSender } from '../senders/choose.js';
import { windowEnd } from '../consent/confirmation.js';
import type { ConfirmationMailSettings } from '../consent/confirmation-mail.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { formConfirmUrl } from './confirm.js';

/**
 * The mails a form submission generates (workers/jobs/form-submission-mail.ts runs one per job), each
 * one send through the normal pipeline (acceptSend, then the send worker: restrictions, the
 * plan's monthly quota — one unit per mail, as the spec says of the confirmation mail and the
 * auto-reply — tracking off):
 *  - confirmation: to the submission's email, with the confirmation link (confirm.ts), while
 *    the submission is pending;
 *  - auto_reply: to the submission's email, the form's subject and html/text (merge tags of the
 *    answers by field_key, and form_name) or its template, once confirmed;
 *  - team_notice: to the form's team addresses, the answers as text, once confirmed.
 * From the form's auto_reply_sender_id (as named, never swapped: a sender that is unverified or
 * requires consent is reported), else the instance's first verified sender that does not require
 * consent (senders/choose.ts chooseSender, as the consent confirmation mail). Sent once: each mail carries custom_msg_id form-<mail>:<submission id>, and a job that
 * finds that mail already accepted (a retry after a crash) sends nothing more.
 */

export const FORM_MAIL_GROUP: Record<FormSubmissionMailJob['mail'], string> = {
  confirmation: 'form_confirmation',
  auto_reply: 'form_auto_reply',
  team_notice: 'form_team_notice',
};

export const formMailMsgId = (mail: FormSubmissionMailJob['mail'], submissionId: number): string => `form-${mail.replace('_', '-')}:${submissionId}`;

/** What a form's mails need of the configuration: the consent confirmation mail's (links signed alike, the same window, the same body bound). */
export type FormMailSettings = ConfirmationMailSettings;

export type FormMailResult =
  | { outcome: 'sent'; sender: string; accepted: SendAccepted }
  | { outcome: 'skipped'; reason: 'submission_not_found' | 'not_pending' | 'not_confirmed' | 'no_recipient' | 'not_configured' | 'already_sent' }
  | { outcome: 'no_sender'; reason: string };

interface Row {
  status: string;
  form_name: string;
  values: Record<string, string | number | boolean>;
  sender_id: number | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  template_id: number | null;
  team: string[];
  expires_at: string;
  already_sent: boolean;
}

const CONFIRM_SUBJECT = 'Please confirm: {{form_name}}';
const CONFIRM_TEXT = `Hello,

Please confirm what you sent with the form "{{form_name}}".

Open this link and press Confirm:
{{confirm_url}}

The link works until {{valid_until}}.
If you did not fill in this form, ignore this mail: nothing is confirmed without you.
`;
const CONFIRM_HTML = `<!doctype html>
<html><body style="font-family:system-ui,sans-serif;line-height:1.5">
<p>Hello,</p>
<p>Please confirm what you sent with the form <strong>{{form_name}}</strong>.</p>
<p><a href="{{confirm_url}}">Confirm</a></p>
<p>Or open this address: {{confirm_url}}</p>
<p>The link works until {{valid_until}}. If you did not fill in this form, ignore this mail: nothing is confirmed without you.</p>
</body></html>
`;

const NOTICE_SUBJECT = 'New submission: {{form_name}}';
const NOTICE_TEXT = `A submission to the form "{{form_name}}" was confirmed (submission {{submission_id}}).

{{answers}}
`;

export async function sendSubmissionMail(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  job: { submissionId: number; mail: FormSubmissionMailJob['mail'] },
  settings: FormMailSettings,
): Promise<FormMailResult> {
  const msgId = formMailMsgId(job.mail, job.submissionId);
  const row = await withTenant(pool, tenant, async (c) =>
    (
      await c.query<Row>(
        `SELECT s.status, f.name AS form_name, s.field_values AS values, f.auto_reply_sender_id AS sender_id,
                f.auto_reply_subject AS subject, f.auto_reply_html AS html, f.auto_reply_text AS text, f.auto_reply_template_id AS template_id,
                f.team_notice_emails AS team,
                ${windowEnd('s', '$3')} AS expires_at,
                EXISTS (SELECT 1 FROM mails m WHERE m.instance_id = s.instance_id AND m.custom_msg_id = $4) AS already_sent
           FROM form_submissions s JOIN forms f ON f.instance_id = s.instance_id AND f.id = s.form_id
          WHERE s.instance_id = $1 AND s.id = $2`,
        [tenant.instanceId, job.submissionId, settings.confirmDays, msgId],
      )
    ).rows[0],
  );
  if (!row) return { outcome: 'skipped', reason: 'submission_not_found' };
  if (job.mail === 'confirmation' && row.status !== 'pending') return { outcome: 'skipped', reason: 'not_pending' };
  if (job.mail !== 'confirmation' && row.status !== 'confirmed') return { outcome: 'skipped', reason: 'not_confirmed' };
  if (row.already_sent) return { outcome: 'skipped', reason: 'already_sent' };
  const email = typeof row.values.email === 'string' ? row.values.email : undefined;
  const to = job.mail === 'team_notice' ? row.team : email ? [email] : [];
  if (!to.length) return { outcome: 'skipped', reason: 'no_recipient' };

  // Values go in as variables, never into the templates: an answer with {{ }} stays text, and the HTML engine escapes them.
  const common = {
    to: to.map((address) => ({ email: address })),
    track_opens: false,
    track_clicks: false,
    custom_msg_id: msgId,
    custom_group_code: FORM_MAIL_GROUP[job.mail],
  };
  let request: Omit<SendRequest, 'from'>;
  switch (job.mail) {
    case 'confirmation':
      request = {
        ...common,
        subject: CONFIRM_SUBJECT,
        text: CONFIRM_TEXT,
        html: CONFIRM_HTML,
        variables: {
          form_name: row.form_name,
          confirm_url: formConfirmUrl(settings.publicUrl, settings.secret, tenant, job.submissionId),
          valid_until: row.expires_at,
        },
      };
      break;
    case 'auto_reply':
      if (row.template_id === null && row.html === null && row.text === null) return { outcome: 'skipped', reason: 'not_configured' };
      request = {
        ...common,
        ...(row.template_id !== null
          ? { template_id: row.template_id, ...(row.subject ? { subject: row.subject } : {}) }
          : { subject: row.subject ?? row.form_name, ...(row.html !== null ? { html: row.html } : {}), ...(row.text !== null ? { text: row.text } : {}) }),
        variables: { ...row.values, form_name: row.form_name },
      };
      break;
    case 'team_notice':
      request = {
        ...common,
        subject: NOTICE_SUBJECT,
        text: NOTICE_TEXT,
        variables: {
          form_name: row.form_name,
          submission_id: job.submissionId,
          answers: Object.entries(row.values).map(([key, value]) => `${key}: ${String(value)}`).join('\n'),
        },
      };
      break;
  }
  const sender = await chooseSender(tenant, pool, row.sender_id);
  if ('reason' in sender) return { outcome: 'no_sender', reason: sender.reason };
  const accepted = await acceptSend(tenant, pool, queue, { ...request, from: sender.email_address }, { maxBodyBytes: settings.maxBodyBytes });
  return { outcome: 'sent', sender: sender.email_address, accepted };
}
