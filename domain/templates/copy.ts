import type { Pool } from '../../sql/pool.js';
import type { Tenant } from '../tenancy/context.js';
import { createTemplate, getTemplate, importExternalTemplate, type EditorSetting, type Template } from './templates.js';

/**
 * A new draft from an existing template of the instance (the panel's "copy"): a native one's
 * design document, subject, preheader and description go through createTemplate, so the copy is
 * checked and rendered as any new template (and TEMPLATE_EDITOR=off refuses it the same way); an
 * external one's HTML goes through importExternalTemplate, so the copy is external (read-only) too.
 * 404 mail_template_not_found for an id the instance does not have; 409 template_name_taken.
 */
export async function copyTemplate(tenant: Tenant, pool: Pool, id: number, name: string, setting: EditorSetting): Promise<Template> {
  const source = await getTemplate(tenant, pool, id);
  if (source.provider === 'external') return importExternalTemplate(tenant, pool, { name, html: source.html ?? '' });
  return createTemplate(
    tenant,
    pool,
    { name, subject: source.subject, preheader: source.preheader, description: source.description, config: source.config },
    setting,
  );
}
