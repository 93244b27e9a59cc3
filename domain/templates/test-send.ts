import type { Pool } from '../../sql/pool.js';
import type { RenderLimits } from '../../config/defaults.js';
import type { JobQueue } from '../job-queue.js';
import { acceptSend, type SendAccepted } from '../mail/accept.js';
import { getSender } from '../senders/senders.js';
import { withTenant, type Tenant } from '../tenancy/context.js';
import { getTemplate } from './templates.js';

export interface TestSendInput {
  templateId: number;
  to: string;
  /** A sender of the instance; absent: the instance's sandbox sender. */
  senderId?: number;
  /** Absent: the template's subject, else its name. */
  subject?: string;
}

export interface TestSendAccepted extends SendAccepted {
  /** The sender's address the test went from. */
  from: string;
}

/** The instance's sandbox sender (every instance has one: docs/panel.md, The sandbox). */
async function sandboxSender(tenant: Tenant, pool: Pool): Promise<{ email: string }> {
  const { rows } = await withTenant(pool, tenant, (c) =>
    c.query<{ email: string }>(
      `SELECT s.email_address AS email FROM senders s JOIN domains d ON d.instance_id = s.instance_id AND d.id = s.domain_id
        WHERE s.instance_id = $1 AND d.is_sandbox ORDER BY s.id LIMIT 1`,
      [tenant.instanceId],
    ),
  );
  if (!rows[0]) throw new Error(`instance ${tenant.slug} has no sandbox sender`);
  return rows[0];
}

/**
 * The panel's "send a test": the template sent to one address through the normal acceptance
 * (acceptSend), as a test_mode send so a draft may be tried before it is published. From the
 * sandbox sender unless a sender is named; the sandbox then sends only to the instance's
 * members (409 sandbox_relay_restricted), and any sender's own rules apply (a verified domain,
 * consent). The template is read first, so another instance's id is its 404 whatever the body.
 */
export async function sendTemplateTest(
  tenant: Tenant,
  pool: Pool,
  queue: JobQueue,
  input: TestSendInput,
  limits?: Pick<RenderLimits, 'maxBodyBytes'>,
): Promise<TestSendAccepted> {
  const template = await getTemplate(tenant, pool, input.templateId);
  const from = input.senderId === undefined ? await sandboxSender(tenant, pool) : { email: (await getSender(tenant, pool, input.senderId)).email_address };
  const accepted = await acceptSend(
    tenant,
    pool,
    queue,
    { from: from.email, to: [{ email: input.to }], template_id: template.id, subject: input.subject ?? template.subject ?? template.name, test_mode: true },
    limits,
  );
  return { ...accepted, from: from.email };
}
