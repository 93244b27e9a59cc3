import { rotateDkimKey } from '../../../domain/domains/dkim-keys.js';
import { dnsSettings } from '../../../domain/domains/dns-records.js';
import { resolverLookups, verifyDomain } from '../../../domain/domains/dns-verify.js';
import { getDomainWithRecords } from '../../../domain/domains/domain-records.js';
import { addDomain, listDomains, setDomainChecks, type DnsChecks } from '../../../domain/domains/domains.js';
import { configuredKeyRing } from '../../../domain/domains/key-encryption.js';
import type { Tenant } from '../../../domain/tenancy/context.js';
import type { Config } from '../../../config/config.js';
import type { Pool } from '../../../sql/pool.js';
import { defineRoute } from '../../http/route.js';
import { collectionSchema, paginationQuery, resourceId } from '../../schemas/common.js';
import { domainSchema, domainWithRecordsSchema } from '../../schemas/domains.js';
import { domainChecksSchema, domainCreateSchema } from '../../schemas/panel-resources.js';
import { AppError } from '../../../domain/errors.js';
import { TAGS } from '../tags.js';
import { domainComplianceRoute } from '../domains.js';
import { panelMirror } from './mirror.js';

/**
 * The instance's sending domains in the panel (docs/panel.md): any member reads them with the
 * records to publish and each record's check state; an admin adds one, verifies it now and
 * rotates its DKIM key, through the functions of `cartero domain add`, `verify` and
 * `rotate-dkim`, each answering the domain as `cartero domain show` prints it. The operator
 * override (`domain set-checks`) is the owner's only where the deployment allows it
 * (PANEL_DNS_OVERRIDE=on, closed networks): by default DNS alone verifies a domain.
 */

const tag = TAGS.panel;
const byId = { id: resourceId };

const show = (tenant: Tenant, pool: Pool, config: Config, by: { id: number } | { name: string }) =>
  getDomainWithRecords(tenant, pool, by, dnsSettings(config));

/** The domain's name, or 404 domain_not_found for an id the instance does not have. */
const nameOf = async (tenant: Tenant, pool: Pool, config: Config, id: number) => (await show(tenant, pool, config, { id })).domain;

export const panelDomainRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/private/domains',
    operationId: 'listPanelDomains',
    summary: "List the instance's domains",
    description: 'Oldest first, each with is_verified and its four check states, as GET /v1/domains lists them.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    query: { ...paginationQuery },
    success: { status: 200, description: 'A page of domains', schema: collectionSchema(domainSchema) },
    handler: ({ tenant, query, deps }) => listDomains(tenant, deps.pool, query),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/private/domains/{id}',
    operationId: 'getPanelDomain',
    summary: 'Read a domain with the DNS records to publish',
    description:
      'The DKIM TXT record of each live key, the return-path MX and SPF, the suggested DMARC, each with its live check state: what ' +
      '`cartero domain show` prints. 404 domain_not_found for an id the instance does not have.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    params: byId,
    success: { status: 200, description: 'The domain and its records', schema: domainWithRecordsSchema },
    handler: ({ tenant, params, deps }) => show(tenant, deps.pool, deps.config, { id: params.id }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/private/domains',
    operationId: 'addPanelDomain',
    summary: 'Add a sending domain',
    description:
      'Generates its DKIM key (RSA 2048, stored encrypted) and answers the records to publish; the four checks start pending. ' +
      '409 domain_already_exists when the instance has it; 400 invalid_domain for a name that is not a domain. Admin.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: domainCreateSchema,
    success: { status: 201, description: 'The new domain and its records', schema: domainWithRecordsSchema },
    errors: [409],
    handler: async ({ tenant, body, deps }, res) => {
      const added = await addDomain(tenant, deps.pool, body.domain, { ring: configuredKeyRing(deps.config) });
      res.status(201);
      return show(tenant, deps.pool, deps.config, { id: added.id });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/private/domains/{id}/verify',
    operationId: 'verifyPanelDomain',
    summary: "Verify a domain's records now",
    description:
      'Resolves the records through DNS_SERVERS and records the MX, SPF, DKIM and DMARC checks, as `cartero domain verify` does: approved ' +
      'when a record is as shown, failed when it differs or has disappeared, pending while never published. When the resolver does not ' +
      'answer nothing changes: 503 service_unavailable. 409 sandbox_domain_managed for the instance’s sandbox domain, whose checks are ' +
      'the service’s. Admin.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: byId,
    errors: [409],
    success: { status: 200, description: 'The domain and its records, with the new check states', schema: domainWithRecordsSchema },
    handler: async ({ tenant, params, deps }) => {
      const name = await nameOf(tenant, deps.pool, deps.config, params.id);
      await verifyDomain(tenant, deps.pool, name, resolverLookups(deps.config.domains.dnsServers), dnsSettings(deps.config));
      return show(tenant, deps.pool, deps.config, { id: params.id });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/private/domains/{id}/rotate-dkim',
    operationId: 'rotatePanelDomainDkim',
    summary: "Rotate a domain's DKIM key",
    description:
      'A new key and selector; mail is signed with it once its record verifies. Both DKIM records are answered: keep the old one ' +
      'published until the new one is approved (the old key is then retired). 409 domain_not_verified while the domain has a key and ' +
      'is not verified (publish and verify the current record first; a domain without a key gets its first one); 409 ' +
      'sandbox_domain_managed for the sandbox domain. Admin.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: byId,
    errors: [409],
    success: { status: 200, description: 'The domain and its records, both DKIM keys included', schema: domainWithRecordsSchema },
    handler: async ({ tenant, params, deps }) => {
      const name = await nameOf(tenant, deps.pool, deps.config, params.id);
      await rotateDkimKey(tenant, deps.pool, configuredKeyRing(deps.config), name);
      return show(tenant, deps.pool, deps.config, { id: params.id });
    },
  }),
  defineRoute<Record<string, never>, { id: number }, DnsChecks>({
    method: 'put',
    path: '/v1/private/domains/{id}/checks',
    operationId: 'setPanelDomainChecks',
    summary: "Set a domain's DNS checks by hand (operator override)",
    description:
      'What `cartero domain set-checks` does, where the deployment allows it (PANEL_DNS_OVERRIDE=on, for closed networks whose DNS the ' +
      'service cannot resolve): the given checks are set, the others left; the domain is then left alone by the scheduled ' +
      'verification until verified through DNS again. 403 dns_override_disabled where it is not allowed; 409 sandbox_domain_managed ' +
      'for the sandbox. Owner.',
    tag,
    auth: { kind: 'session', role: 'owner' },
    params: byId,
    body: domainChecksSchema,
    success: { status: 200, description: 'The domain and its records, with the checks as set', schema: domainWithRecordsSchema },
    errors: [403, 409],
    handler: async ({ tenant, params, body, deps }) => {
      if (deps.config.panel.dnsOverride !== 'on') {
        throw new AppError('dns_override_disabled', 'this deployment verifies domains through DNS only (PANEL_DNS_OVERRIDE is off): publish the records and verify');
      }
      const name = await nameOf(tenant, deps.pool, deps.config, params.id);
      await setDomainChecks(tenant, deps.pool, name, body);
      return show(tenant, deps.pool, deps.config, { id: params.id });
    },
  }),
  // The domain page's checklist (docs/panel.md): exactly what GET /v1/domains/{domain_name}/compliance answers.
  panelMirror(domainComplianceRoute, 'viewer'),
];
