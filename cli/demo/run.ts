import { NotFoundError } from '../../domain/errors.js';
import { getInstanceBySlug, retireInstance, type Instance } from '../../domain/tenancy/instances.js';
import type { CliContext } from '../command.js';
import { CAMPAIGN } from './audience.js';
import { guideText, type GuideInput } from './guide.js';
import { createDemoKey, DEMO_FORM_NAME, DEMO_INSTANCE_NAME, DEMO_PURPOSE } from './operator.js';
import { CONFIRMED_CONTACT, seedDemo, signupSubmission } from './seed.js';
import { DemoApi, DemoError, findService, type DemoService } from './service.js';

export const DEMO_SLUG = 'demo';

/**
 * `cartero demo`: seeds the instance `demo` on the running service and prints what to try. Run
 * again, it seeds nothing: the key of the first run exists only as a hash, so it creates a new
 * key (every scope) and prints the same commands with it; `--reset` sets the old instance aside
 * (renamed demo-retired-<time>, disabled, its data kept) and seeds a new one.
 */
export async function runDemo(ctx: CliContext, flags: { reset: boolean; webhookUrl?: string }): Promise<string> {
  const service = await findService(ctx.config);
  const existing = await findInstance(ctx, DEMO_SLUG);
  if (existing && !flags.reset) {
    const again = await describeExisting(ctx, service, existing);
    if (again) return again;
    // Someone's own instance (the README's manual quickstart once used this slug) or a run that
    // stopped half-way: never set aside without being asked.
    throw new DemoError(
      `instance "${DEMO_SLUG}" exists but is not a complete demo (made by hand, disabled, or an earlier run stopped): ` +
        '`npx cartero demo --reset` sets it aside (renamed demo-retired-<time>, disabled, its data kept) and seeds the demo',
    );
  }
  if (existing) {
    const retired = await retireInstance(ctx.pool, DEMO_SLUG, `${DEMO_SLUG}-retired-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`);
    ctx.progress(`the previous demo is set aside as instance ${retired.slug} (disabled, its data kept)`);
  }
  const seeded = await seedDemo(ctx.pool, ctx.config, service, DEMO_SLUG, { webhookUrl: flags.webhookUrl, progress: ctx.progress });
  return [
    ...seeded.summary,
    '',
    `API key of instance "${DEMO_SLUG}", every scope (shown this once: only its hash is stored):`,
    `  ${seeded.guide.key}`,
    '',
    'Try it: each curl line below is ready to run.',
    '',
    guideText(seeded.guide),
  ].join('\n');
}

async function findInstance(ctx: CliContext, slug: string): Promise<Instance | undefined> {
  try {
    return await getInstanceBySlug(ctx.pool, slug);
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/**
 * The guide for a demo seeded earlier, with a new key; undefined when the instance lacks what a
 * finished seeding leaves (its form and purpose), which only an interrupted run does. A demo
 * seeded on a service refusing private receivers has no webhook, and its guide no deliveries line.
 */
async function describeExisting(ctx: CliContext, service: DemoService, instance: Instance): Promise<string | undefined> {
  if (!instance.enabled || instance.name !== DEMO_INSTANCE_NAME) return undefined;
  const key = await createDemoKey(ctx.pool, instance.slug);
  const api = new DemoApi(service.base, key.key, instance.slug);
  const [forms, webhooks, purposes] = await Promise.all([
    api.expect('GET', `/v1/forms?name=${encodeURIComponent(DEMO_FORM_NAME)}`, undefined, [200]),
    api.expect('GET', '/v1/webhooks', undefined, [200]),
    api.expect('GET', '/v1/consent-purposes?page_size=100', undefined, [200]),
  ]);
  const form = forms.data?.[0];
  const webhook = webhooks.data?.[0];
  const purpose = purposes.data?.find((p: { name: string }) => p.name === DEMO_PURPOSE);
  if (!form || !purpose) {
    const { revokeApiKey } = await import('../../domain/tenancy/api-keys.js');
    await revokeApiKey(ctx.pool, key.key_id);
    return undefined;
  }
  const guide: GuideInput = {
    base: service.base,
    slug: instance.slug,
    key: key.key,
    campaign: CAMPAIGN,
    formId: form.id,
    signupBody: signupSubmission(form),
    confirmedContact: CONFIRMED_CONTACT,
    purposeId: purpose.id,
    webhookId: webhook?.id,
  };
  return [
    `The demo exists: instance "${instance.slug}" at ${service.base}, seeded ${instance.created_at.toISOString()}; nothing was seeded again.`,
    '(`npx cartero demo --reset` sets it aside and seeds a new one.)',
    '',
    'Its first key cannot be shown again (only its hash is stored; it still works). A new key with every scope was created',
    `for the commands below (key_id ${key.key_id}; \`npx cartero key revoke --key-id ${key.key_id}\` revokes it):`,
    `  ${key.key}`,
    '',
    'Try it: each curl line below is ready to run.',
    '',
    guideText(guide),
  ].join('\n');
}
