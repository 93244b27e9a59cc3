import { signToken, verifyToken } from '../tracking/tokens.js';
import type { Tenant } from '../tenancy/context.js';
import { isRowId } from '../row-id.js';

/**
 * The double opt-in confirmation link: `{PUBLIC_URL}/c/{token}` (the route:
 * api/routes/consent-confirm-links.ts). The token is signed like the tracking and unsubscribe
 * links (domain/tracking/tokens.ts: payload "." HMAC-SHA256, with the same key, TRACKING_SECRET
 * or the one generated into Postgres), and its payload names what it confirms and nothing else:
 * kind consent_confirm, the instance and the event. The kind is signed too, so no other link of
 * a mail (an open pixel, an unsubscribe link) can be replayed as a confirmation, nor this one as
 * them (their readers want a mail_id, which this payload has not). Deterministic: the same event
 * always gets the same link, so a second mail or a second click lands on the same page.
 */
export interface ConsentConfirmToken {
  kind: 'consent_confirm';
  instance_id: number;
  event_id: number;
}

/** The path prefix of the link; the route declares '/c/{token}'. */
export const CONFIRM_LINK_PREFIX = '/c/';

export function consentConfirmToken(secret: string, tenant: Tenant, eventId: number): string {
  return signToken(secret, { kind: 'consent_confirm', instance_id: tenant.instanceId, event_id: eventId } satisfies ConsentConfirmToken);
}

export function consentConfirmUrl(publicUrl: string, secret: string, tenant: Tenant, eventId: number): string {
  return `${publicUrl}${CONFIRM_LINK_PREFIX}${consentConfirmToken(secret, tenant, eventId)}`;
}

/** The payload of a confirmation token this key signed, or undefined (a changed byte, another kind). */
export function readConsentConfirmToken(secret: string, raw: string): ConsentConfirmToken | undefined {
  const p = verifyToken(secret, raw);
  if (!p || p.kind !== 'consent_confirm' || !isRowId(p.instance_id) || !isRowId(p.event_id)) return undefined;
  return { kind: 'consent_confirm', instance_id: p.instance_id, event_id: p.event_id };
}
