import { listRestrictions, type RestrictionFilter } from '../../../domain/restrictions/list.js';
import { liftRestrictionById } from '../../../domain/restrictions/lift-by-id.js';
import { restrict } from '../../../domain/restrictions/restrictions.js';
import { withTenant } from '../../../domain/tenancy/context.js';
import { defineRoute } from '../../http/route.js';
import { collectionSchema, resourceId } from '../../schemas/common.js';
import { restrictionCreateSchema } from '../../schemas/panel-resources.js';
import { restrictionFilterQuery, restrictionSchema } from '../../schemas/restrictions.js';
import { TAGS } from '../tags.js';

/**
 * The instance's restrictions in the panel (docs/panel.md): any member reads the history, as
 * GET /v1/mail-restrictions lists it; an admin adds one and lifts one, through the functions of
 * `cartero restriction add` and `restriction lift` (a lift keeps the row, with deleted_at).
 */

const tag = TAGS.panel;

export const panelRestrictionRoutes = [
  defineRoute<RestrictionFilter>({
    method: 'get',
    path: '/v1/private/restrictions',
    operationId: 'listPanelRestrictions',
    summary: "List the instance's restrictions, with history",
    description:
      'Newest first, lifted ones included (deleted_at set) unless active=true, with the filters of GET /v1/mail-restrictions. total_items is null.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    query: restrictionFilterQuery,
    success: { status: 200, description: 'A page of restrictions, newest first', schema: collectionSchema(restrictionSchema) },
    handler: ({ tenant, query, deps }) => listRestrictions(tenant, deps.pool, query),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/private/restrictions',
    operationId: 'addPanelRestriction',
    summary: 'Stop sending to an address',
    description:
      'Reason unspecified unless given. An address has at most one restriction in force: when it has one, that one is answered as it ' +
      'is (its reason and date tell the first cause) with 200 instead of 201. Admin.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: restrictionCreateSchema,
    success: { status: 201, description: 'The new restriction', schema: restrictionSchema },
    alsoAnswers: { 200: { description: 'The address has one in force already: that one', body: 'success' } },
    handler: async ({ tenant, body, deps }, res) => {
      const { restriction, created } = await withTenant(deps.pool, tenant, (c) => restrict(tenant, c, body.recipient, body.reason ?? 'unspecified'));
      if (created) return restriction;
      // Not the route's 201: answered here, as the one already in force.
      res.status(200).json(restriction);
      return undefined;
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/private/restrictions/{id}',
    operationId: 'liftPanelRestriction',
    summary: 'Lift a restriction',
    description:
      'The address may be contacted again; the restriction stays in the history with deleted_at. 404 restriction_not_found for an id ' +
      'the instance does not have or one already lifted. Admin.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: { id: resourceId },
    success: { status: 200, description: 'The lifted restriction', schema: restrictionSchema },
    handler: ({ tenant, params, deps }) => liftRestrictionById(tenant, deps.pool, params.id),
  }),
];
