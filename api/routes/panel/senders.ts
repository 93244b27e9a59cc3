import { configuredKeyRing } from '../../../domain/domains/key-encryption.js';
import { createSender, listSenders, setSenderConsentRequired, withSandboxFlag } from '../../../domain/senders/senders.js';
import { defineRoute } from '../../http/route.js';
import { collectionSchema, paginationQuery, resourceId } from '../../schemas/common.js';
import { createdSenderSchema, panelSenderSchema, senderCreateSchema, senderPatchSchema } from '../../schemas/panel-resources.js';
import { senderSchema } from '../../schemas/senders.js';
import { TAGS } from '../tags.js';

/**
 * The instance's senders in the panel (docs/panel.md): any member reads them, an admin creates
 * them and turns their consent requirement on or off, through the functions of `cartero sender
 * create` and `sender set-consent-required`. Their input types are read from their schemas
 * (docs/architecture.md, Types from schemas).
 */

const tag = TAGS.panel;

export const panelSenderRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/private/senders',
    operationId: 'listPanelSenders',
    summary: "List the instance's senders",
    description:
      'Oldest first, as GET /v1/senders lists them (domain_is_verified recomputed at this read), each with is_sandbox: the sandbox sender ' +
      'sends only to the instance’s members.',
    tag,
    auth: { kind: 'session', role: 'viewer' },
    query: { ...paginationQuery },
    success: { status: 200, description: 'A page of senders', schema: collectionSchema(panelSenderSchema) },
    handler: async ({ tenant, query, deps }) => withSandboxFlag(tenant, deps.pool, await listSenders(tenant, deps.pool, query)),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/private/senders',
    operationId: 'createPanelSender',
    summary: 'Create a sender',
    description:
      'When the instance lacks the address’s domain it is added, pending, with a new DKIM key (domain_created true): the sender exists ' +
      'but cannot send until the domain verifies. 409 sender_already_exists for an address the instance has; 400 invalid_email for one ' +
      'that is not an address. Admin.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    body: senderCreateSchema,
    success: { status: 201, description: 'The new sender', schema: createdSenderSchema },
    errors: [409],
    handler: async ({ tenant, body, deps }, res) => {
      const sender = await createSender(
        tenant,
        deps.pool,
        { email: body.email, name: body.name, consentRequired: body.is_consent_required },
        { ring: () => configuredKeyRing(deps.config) },
      );
      res.status(201);
      return sender;
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/private/senders/{id}',
    operationId: 'updatePanelSender',
    summary: "Turn a sender's consent requirement on or off",
    description:
      'is_consent_required true: sending from it checks the recipient’s consent against the declared purposes. 404 sender_not_found for ' +
      'an id the instance does not have. Admin.',
    tag,
    auth: { kind: 'session', role: 'admin' },
    params: { id: resourceId },
    body: senderPatchSchema,
    success: { status: 200, description: 'The sender', schema: senderSchema },
    handler: ({ tenant, params, body, deps }) => setSenderConsentRequired(tenant, deps.pool, params.id, body.is_consent_required),
  }),
];
