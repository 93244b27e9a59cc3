import { acceptInvitation, declineInvitation, invitationsFor } from '../../../domain/panel/invitations.js';
import { defineRoute } from '../../http/route.js';
import { resourceId } from '../../schemas/common.js';
import { memberInstanceSchema, receivedInvitationsSchema } from '../../schemas/panel.js';
import { TAGS } from '../tags.js';

/**
 * The signed-in user's own invitations (issue 37, docs/panel.md "Invitations"): those addressed to
 * its address, whichever instance sent them. Takes no X-Instance-Slug: the user is no member yet.
 * An invitation id not addressed to the session's user is 404 invitation_not_found, as one that
 * does not exist.
 */

const tag = TAGS.panel;
const byInvitation = { invitation_id: resourceId };

export const panelInvitationRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/private/invitations',
    operationId: 'listPanelInvitations',
    summary: "List the signed-in user's pending invitations",
    description: 'Every pending invitation to the session’s address: the instance (slug, name) and the role offered. Takes no X-Instance-Slug.',
    tag,
    auth: { kind: 'session' },
    success: { status: 200, description: 'The invitations', schema: receivedInvitationsSchema },
    handler: async ({ session, deps }) => ({ data: await invitationsFor(deps.pool, session.user.email) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/private/invitations/{invitation_id}/accept',
    operationId: 'acceptPanelInvitation',
    summary: 'Accept an invitation',
    description:
      'The session’s user becomes a member of the invitation’s instance with its role, and the invitation is used up. ' +
      'Already a member (the operator added it meanwhile): its role stays.',
    tag,
    auth: { kind: 'session' },
    params: byInvitation,
    success: { status: 200, description: 'The instance, as GET /v1/private/instances lists it', schema: memberInstanceSchema },
    errors: [404],
    handler: ({ session, params, deps }) => acceptInvitation(deps.pool, session.user, params.invitation_id),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/private/invitations/{invitation_id}/decline',
    operationId: 'declinePanelInvitation',
    summary: 'Decline an invitation',
    description: 'The invitation is gone; the user does not become a member.',
    tag,
    auth: { kind: 'session' },
    params: byInvitation,
    success: { status: 204, description: 'Declined' },
    errors: [404],
    handler: async ({ session, params, deps }, res) => {
      await declineInvitation(deps.pool, session.user, params.invitation_id);
      res.status(204).end();
      return undefined;
    },
  }),
];
