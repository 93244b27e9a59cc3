import type { Client } from '../../../sql/pool.js';
import type { Tenant } from '../../tenancy/context.js';
import { check, SOURCES, type ComplianceCheck } from './check.js';

export const ONE_CLICK_RULE = { rule: 'one_click_unsubscribe', applies_to: ['gmail', 'yahoo', 'microsoft'], source: SOURCES.google } as const;

export const MARKETING_WINDOW_DAYS = 30;

/**
 * The consent terms whose purposes make a send marketing: a send declares its purposes
 * (POST /v1/mails/send purpose_ids, kept in message_purposes), and a purpose is marketing when a
 * term of type marketing or subscription names it (consent_terms.type: what Gmail calls
 * "marketing messages and subscribed messages").
 */
export const MARKETING_TERM_TYPES = ['marketing', 'subscription'] as const;

/**
 * How many of the domain's mails of the last 30 days went out (sent_at set: the receiver took
 * them) carrying a marketing purpose. In the tenant's transaction.
 */
export async function marketingMailsSent(tenant: Tenant, c: Client, domainId: number, now: Date): Promise<number> {
  const { rows } = await c.query<{ n: number }>(
    `SELECT count(*)::int AS n
       FROM mails m
       JOIN senders s ON s.instance_id = m.instance_id AND s.id = m.sender_id
       JOIN message_purposes p ON p.instance_id = m.instance_id AND p.message_id = m.message_id
      WHERE m.instance_id = $1 AND s.domain_id = $2
        AND m.received_at > $3::timestamptz - make_interval(days => $4) AND m.sent_at IS NOT NULL
        AND p.purpose_ids && ARRAY(SELECT DISTINCT unnest(t.purpose_ids) FROM consent_terms t
                                    WHERE t.instance_id = $1 AND t.type = ANY ($5::text[]))`,
    [tenant.instanceId, domainId, now, MARKETING_WINDOW_DAYS, [...MARKETING_TERM_TYPES]],
  );
  return rows[0]?.n ?? 0;
}

/**
 * RFC 8058 one-click unsubscribe on the domain's marketing mail of the last 30 days. The send
 * worker writes `List-Unsubscribe: <PUBLIC_URL/u/<token>>` and `List-Unsubscribe-Post:
 * List-Unsubscribe=One-Click` on every mail (domain/mail/render.ts; a message's own headers
 * cannot replace them) and signs both with the domain's DKIM key (smtp/transport.ts). Mail
 * headers are not stored, so the check holds the mails that went out against what made those
 * headers valid: RFC 8058 wants an https URI and a DKIM signature covering both fields.
 *   no such mail → unknown;  PUBLIC_URL not https, or no DKIM key (unsigned) → fail;  else pass
 */
export function oneClickCheck(sent: number, publicUrl: string, signs: boolean): ComplianceCheck {
  if (sent === 0) {
    return check(ONE_CLICK_RULE, 'unknown', `No mail of the domain with a marketing purpose went out in the last ${MARKETING_WINDOW_DAYS} days.`);
  }
  const mails = `${sent} marketing mail${sent === 1 ? '' : 's'} of the last ${MARKETING_WINDOW_DAYS} days`;
  if (new URL(publicUrl).protocol !== 'https:') {
    return check(
      ONE_CLICK_RULE,
      'fail',
      `${mails} carried List-Unsubscribe-Post, but their List-Unsubscribe link is on ${new URL(publicUrl).origin}: RFC 8058 requires https. Set PUBLIC_URL to an https address.`,
    );
  }
  if (!signs) {
    return check(ONE_CLICK_RULE, 'fail', `${mails} went out unsigned: RFC 8058 requires a DKIM signature covering List-Unsubscribe and List-Unsubscribe-Post. Give the domain a DKIM key.`);
  }
  return check(ONE_CLICK_RULE, 'pass', `${mails} carried an https List-Unsubscribe and List-Unsubscribe-Post: List-Unsubscribe=One-Click, both DKIM-signed.`);
}
