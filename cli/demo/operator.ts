import type { Config } from '../../config/config.js';
import { createPurpose } from '../../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../../domain/consent/terms.js';
import { createDataset } from '../../domain/datasets/datasets.js';
import { setDomainChecks, addDomain } from '../../domain/domains/domains.js';
import { configuredKeyRing } from '../../domain/domains/key-encryption.js';
import { createField } from '../../domain/fields/catalog.js';
import { createForm } from '../../domain/forms/definition.js';
import { createSender } from '../../domain/senders/senders.js';
import { setTemplateStatus } from '../../domain/templates/templates.js';
import { createApiKey, SCOPES, type CreatedKey } from '../../domain/tenancy/api-keys.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { createInstance } from '../../domain/tenancy/instances.js';
import type { Pool } from '../../sql/pool.js';

/**
 * The panel-only steps of the demo, through the same domain functions the CLI's commands call:
 * what the public API does not offer (instances, domain checks, senders, keys, fields, consent
 * purposes and terms, datasets, forms, publishing a template). Everything else goes through HTTP.
 */

export const DEMO_DOMAIN = 'northwind.example.com';
export const DEMO_SENDER = { email: `news@${DEMO_DOMAIN}`, name: 'Northwind Roasters' };
export const DEMO_FORM_NAME = 'Newsletter signup';
export const DEMO_PURPOSE = 'Newsletter';
/** The instance's display name: how a second run knows the instance `demo` is the demo's. */
export const DEMO_INSTANCE_NAME = 'Cartero demo (Northwind Roasters)';

export interface OperatorSetup {
  tenant: Tenant;
  senderId: number;
  purposeId: number;
  datasetId: number;
  formId: number;
}

/** The instance with its verified domain and sender (the operator override of the DNS checks, as the README does). */
export async function createDemoInstance(pool: Pool, config: Config, slug: string): Promise<{ tenant: Tenant; senderId: number }> {
  const instance = await createInstance(pool, { slug, name: DEMO_INSTANCE_NAME });
  const tenant: Tenant = { instanceId: instance.id, slug: instance.slug, tz: instance.tz };
  await addDomain(tenant, pool, DEMO_DOMAIN, { ring: configuredKeyRing(config) });
  await setDomainChecks(tenant, pool, DEMO_DOMAIN, { mx: 'approved', spf: 'approved', dkim: 'approved', dmarc: 'approved' });
  const sender = await createSender(tenant, pool, DEMO_SENDER, { ring: () => configuredKeyRing(config) });
  return { tenant, senderId: sender.id };
}

/** A key with every scope the service knows; the full key is in the answer only. */
export function createDemoKey(pool: Pool, slug: string): Promise<CreatedKey> {
  return createApiKey(pool, { instanceSlug: slug, scopes: [...SCOPES] });
}

/**
 * A field, a consent purpose and term (with its current version), a dataset, and the signup form
 * that feeds it: double opt-in, the confirmation mail sent from the demo sender.
 */
export async function createDemoAudience(pool: Pool, tenant: Tenant, senderId: number): Promise<Omit<OperatorSetup, 'tenant' | 'senderId'>> {
  await createField(tenant, pool, { key: 'first_name', name: 'First name', type: 'text', maxLength: 60 });
  await createField(tenant, pool, { key: 'favourite_roast', name: 'Favourite roast', type: 'select', options: ['light', 'medium', 'dark'] });
  const purpose = await createPurpose(tenant, pool, { name: DEMO_PURPOSE });
  const term = await createTerm(tenant, pool, { name: 'Newsletter by email', type: 'marketing', purposeIds: [purpose.id], channels: ['mail'] });
  await addTermVersion(tenant, pool, term.id, {
    version: '2026-11',
    body:
      'Northwind Roasters will send you its newsletter by email, about twice a month: new roasts, brewing guides and offers. ' +
      'You can unsubscribe at any time with the link at the end of every newsletter.',
    documentUrl: 'https://northwind.example.com/legal/newsletter-2026-11',
  });
  await setCurrentVersion(tenant, pool, term.id, '2026-11');
  const dataset = await createDataset(tenant, pool, {
    name: 'Newsletter subscribers',
    channel: ['mail'],
    identityField: null,
    columns: [{ key: 'email', required: true }, { key: 'first_name', required: false }, { key: 'favourite_roast', required: false }],
    description: 'Contacts who confirmed the newsletter signup form',
  });
  const form = await createForm(tenant, pool, {
    name: DEMO_FORM_NAME,
    kind: 'advanced',
    type: 'registration',
    dataset_id: dataset.id,
    requires_confirmation: true,
    auto_reply_sender_id: senderId,
    settings: { title: 'Join the Northwind newsletter', header_text: 'New roasts and brewing guides, twice a month.', design: { primary_color: '#7B3F1D' } },
    items: [
      { type: 'field', field_key: 'email', label: 'Email', required: true },
      { type: 'field', field_key: 'first_name', label: 'First name', required: false },
      { type: 'field', field_key: 'favourite_roast', label: 'Favourite roast', required: false },
      { type: 'consent', term_id: term.id, channel: 'mail', label: 'Send me the newsletter by email', required: true },
      { type: 'text', text: 'We never share your address.' },
    ],
  } as Parameters<typeof createForm>[2]);
  return { purposeId: purpose.id, datasetId: dataset.id, formId: form.id };
}

/** draft → public: a panel step (the API creates drafts only). */
export async function publishTemplate(pool: Pool, tenant: Tenant, templateId: number): Promise<void> {
  await setTemplateStatus(tenant, pool, templateId, 'public');
}
