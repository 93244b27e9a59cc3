import type { Client } from '../../sql/pool.js';
import { NotFoundError } from '../errors.js';
import type { Tenant } from '../tenancy/context.js';
import type { TemplateStatus } from './templates.js';

/*
 * The one read a send makes of a template, apart from templates.ts: that module brings the
 * checks and the MJML renderer (about a second to load), which acceptance never needs, since the
 * html and text were generated when the template was saved. Only a type comes from templates.ts.
 */

/** What a send takes from a template: copied into the message at acceptance. */
export interface TemplateContent {
  status: TemplateStatus;
  subject: string | null;
  html: string | null;
  text: string | null;
}

/** The content of a template for a send; 404 mail_template_not_found when missing or deleted. */
export async function templateForSend(tenant: Tenant, c: Client, id: number): Promise<TemplateContent> {
  const { rows } = await c.query<TemplateContent>(
    `SELECT status, subject, html, text_body AS text FROM mail_templates WHERE instance_id = $1 AND id = $2 AND deleted_at IS NULL`,
    [tenant.instanceId, id],
  );
  if (!rows[0]) throw new NotFoundError('mail_template', id);
  return rows[0];
}
