import type { Pool } from '../../sql/pool.js';
import type { JobQueue } from '../job-queue.js';
import { acceptSend, type SendAccepted } from '../mail/accept.js';
import { chooseSender } from '../senders/choose.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { consentConfirmUrl } from './confirm-token.js';
import { windowEnd } from './confirmation.js';

/**
 * The double opt-in confirmation mail (workers/jobs/consent-confirmation-mail.ts runs it): one send
 * through the normal pipeline (acceptSend, then the send worker: restrictions, the plan's monthly
 * quota, tracking off) to every email contact of a pending double_opt_in event, carrying the
 * event's confirmation link (confirm-token.ts). docs/consent.md, Double opt-in.
 *
 * Which sender (domain/senders/choose.ts): the one the caller names (a form's
 * auto_reply_sender_id, later), else the instance's first sender (lowest id) whose domain is
 * verified and that does not require consent. A consent-requiring sender can never send it: the
 * person has not consented yet (that is what the mail asks), so the send gate would drop it.
 *
 * Sent once: the mail carries custom_msg_id `consent-confirmation:<event id>` (and
 * custom_group_code consent_confirmation, so GET /v1/mails finds these mails), and a job that
 * finds such a mail already accepted for the event's addresses (a retry after a crash between
 * acceptance and the job's completion) sends nothing more.
 */

export const CONFIRMATION_GROUP_CODE = 'consent_confirmation';
export const confirmationMsgId = (eventId: number): string => `consent-confirmation:${eventId}`;

export interface ConfirmationMailSettings {
  publicUrl: string;
  /** The key that signs links (domain/tracking/secret.ts). */
  secret: string;
  confirmDays: number;
  /** RENDER_MAX_BODY_BYTES, as acceptance checks it. */
  maxBodyBytes: number;
}

export type ConfirmationMailResult =
  | { outcome: 'sent'; sender: string; accepted: SendAccepted }
  /** Nothing to do: the event is gone, no longer pending, has no email contact, or its mail was already accepted. */
  | { outcome: 'skipped'; reason: 'event_not_found' | 'not_pending' | 'no_email_contact' | 'already_sent' }
  /** No sender can send it: the event stays pending and expires unless confirmed otherwise. */
  | { outcome: 'no_sender'; reason: string };

interface EventForMail {
  status: string;
  term_name: string;
  version: string;
  emails: string[];
  expires_at: string;
  already_sent: boolean;
}

const SUBJECT = 'Please confirm: {{term_name}}';

const TEXT = `Hello,

Please confirm that {{email}} accepts "{{term_name}}" (version {{term_version}}).

Open this link and press Confirm:
{{confirm_url}}

The link works until {{valid_until}}.
If you did not ask for this, ignore this mail: nothing is confirmed without you.
`;

const HTML = `<!doctype html>
<html><body style="font-family:system-ui,sans-serif;line-height:1.5">
<p>Hello,</p>
<p>Please confirm that <strong>{{email}}</strong> accepts <strong>{{term_name}}</strong> (version {{term_version}}).</p>
<p><a href="{{confirm_url}}">Confirm</a></p>
<p>Or open this address: {{confirm_url}}</p>
<p>The link works until {{valid_until}}. If you did not ask for this, ignore this mail: nothing is confirmed without you.</p>
</body></html>
`;

/**
 * Send the confirmation mail of a pending double_opt_in event. Errors of acceptance propagate
 * (the job decides which to retry: a rate limit or Postgres down is worth it, a refusal is not).
 */
export async function sendConfirmationMail(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  job: { eventId: number; senderId: number | null },
  settings: ConfirmationMailSettings,
): Promise<ConfirmationMailResult> {
  const event = await withTenant(pool, tenant, async (c) =>
    (
      await c.query<EventForMail>(
        `SELECT e.status, t.name AS term_name, v.version, em.emails,
                ${windowEnd('e', '$3')} AS expires_at,
                EXISTS (SELECT 1 FROM mails m WHERE m.instance_id = e.instance_id AND m.to_email = ANY (em.emails) AND m.custom_msg_id = $4) AS already_sent
           FROM consent_events e
           JOIN consent_terms t ON t.instance_id = e.instance_id AND t.id = e.term_id
           JOIN consent_term_versions v ON v.instance_id = e.instance_id AND v.id = e.term_version_id
          CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(DISTINCT r.contact ORDER BY r.contact), '{}') AS emails FROM consent_rules r
             WHERE r.instance_id = e.instance_id AND r.event_id = e.id AND r.contact_type = 'email_address'
          ) em
          WHERE e.instance_id = $1 AND e.id = $2`,
        [tenant.instanceId, job.eventId, settings.confirmDays, confirmationMsgId(job.eventId)],
      )
    ).rows[0],
  );
  if (!event) return { outcome: 'skipped', reason: 'event_not_found' };
  if (event.status !== 'pending') return { outcome: 'skipped', reason: 'not_pending' };
  if (!event.emails.length) return { outcome: 'skipped', reason: 'no_email_contact' };
  if (event.already_sent) return { outcome: 'skipped', reason: 'already_sent' };

  const sender = await chooseSender(tenant, pool, job.senderId);
  if ('reason' in sender) return { outcome: 'no_sender', reason: sender.reason };

  const accepted = await acceptSend(
    tenant,
    pool,
    queue,
    {
      from: sender.email_address,
      to: event.emails.map((email) => ({ email })),
      subject: SUBJECT,
      text: TEXT,
      html: HTML,
      // Values go in as variables, never into the templates: a term named with {{ }} stays text,
      // and the HTML engine escapes them.
      variables: {
        term_name: event.term_name,
        term_version: event.version,
        confirm_url: consentConfirmUrl(settings.publicUrl, settings.secret, tenant, job.eventId),
        valid_until: event.expires_at,
      },
      // The link is a capability for this person: no click redirect in front of it, no pixel.
      track_opens: false,
      track_clicks: false,
      custom_msg_id: confirmationMsgId(job.eventId),
      custom_group_code: CONFIRMATION_GROUP_CODE,
    },
    { maxBodyBytes: settings.maxBodyBytes },
  );
  return { outcome: 'sent', sender: sender.email_address, accepted };
}
