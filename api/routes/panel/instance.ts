import { releaseOnHold } from '../../../domain/mail/onhold.js';
import { getInstanceBySlug, setInstanceAllowList, setInstanceLimits, type Instance, type SendLimitsChange } from '../../../domain/tenancy/instances.js';
import { defineRoute } from '../../http/route.js';
import { instanceAllowListSchema, instanceLimitsPatchSchema, instanceSettingsSchema } from '../../schemas/panel-resources.js';
import type { Config } from '../../../config/config.js';
import { TAGS } from '../tags.js';

/**
 * The X-Instance-Slug instance's settings in the panel (docs/panel.md): any member reads them;
 * an admin sets the sending limits (`cartero instance set-limits`), the owner the IP allow list
 * (`instance allow-ip`): the allow list guards the API keys, which are the owner's too.
 */

const tag = TAGS.panel;

/** The settings as the panel shows them (the instance's id stays internal). */
const settings = (i: Instance, config: Config) => ({
  slug: i.slug,
  name: i.name,
  enabled: i.enabled,
  tz: i.tz,
  send_rate_per_second: i.send_rate_per_second,
  send_burst: i.send_burst,
  monthly_quota: i.monthly_quota,
  allowed_cidrs: i.allowed_cidrs,
  dns_override: config.panel.dnsOverride === 'on',
  created_at: i.created_at,
  updated_at: i.updated_at,
});

export const panelInstanceRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/private/instance',
    operationId: 'getPanelInstance',
    summary: "Read the instance's settings",
    description: 'The X-Instance-Slug instance: its time zone, sending limits (rate, burst, monthly quota; null: none) and IP allow list.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    success: { status: 200, description: 'The settings', schema: instanceSettingsSchema },
    handler: async ({ tenant, deps }) => settings(await getInstanceBySlug(deps.pool, tenant.slug), deps.config),
  }),
  defineRoute<Record<string, never>, Record<string, never>, SendLimitsChange>({
    method: 'patch',
    path: '/v1/private/instance',
    operationId: 'updatePanelInstanceLimits',
    summary: "Set the instance's sending limits",
    description:
      'Absent fields are left as they are; null removes a limit. Mails on hold that a raised quota frees are released at once, as ' +
      '`cartero instance set-limits` does. The time zone is set at creation (cartero instance create --tz). Admin.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: instanceLimitsPatchSchema,
    success: { status: 200, description: 'The settings', schema: instanceSettingsSchema },
    handler: async ({ tenant, body, deps }) => {
      const instance = await setInstanceLimits(deps.pool, tenant.slug, body);
      await releaseOnHold(tenant, deps.pool, deps.queue);
      return settings(instance, deps.config);
    },
  }),
  defineRoute<Record<string, never>, Record<string, never>, { allowed_cidrs: string[] }>({
    method: 'put',
    path: '/v1/private/instance/ip-allow-list',
    operationId: 'setPanelInstanceAllowList',
    summary: "Replace the instance's IP allow list",
    description:
      'The networks the instance’s API keys may be used from (an empty list: any); panel sessions are not bound by it. A malformed ' +
      'network is 400 invalid_cidr and changes nothing. Owner only.',
    tag,
    auth: { kind: 'session', role: 'owner' },
    body: instanceAllowListSchema,
    success: { status: 200, description: 'The settings', schema: instanceSettingsSchema },
    handler: async ({ tenant, body, deps }) => settings(await setInstanceAllowList(deps.pool, tenant.slug, { clear: true, add: body.allowed_cidrs }), deps.config),
  }),
];
