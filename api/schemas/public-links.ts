import type { JsonSchema } from '../../domain/validation.js';

/**
 * The path parameter of a public link: the signed token Cartero wrote into the mail (payload
 * "." HMAC, base64url; domain/tracking/tokens.ts). No shape beyond text is declared (only the
 * rules every value obeys, such as no NUL, make it a 422): whether it is valid is the route's to
 * say, in that page's own terms (the pixel still shows, a link that is not valid is a 404 page).
 */
export function linkToken(kind: string): JsonSchema {
  return { type: 'string', description: `The signed ${kind} token of the link, as Cartero wrote it into the mail.` };
}

/** The fields of POST /u/{token}: an RFC 8058 one-click body or the unsubscribe page's form. */
export const unsubscribeFormSchema: JsonSchema = {
  type: 'object',
  properties: {
    'List-Unsubscribe': { type: 'string', description: 'One-Click: the RFC 8058 POST of a mail client (method one_click); absent: the page (method page).' },
    action: { type: 'string', description: 'resubscribe: lift the unsubscribe restriction instead; any other value or none unsubscribes.' },
    reason: { type: 'string', description: 'Optional, kept on the unsubscribe (clipped to 200 characters); the page offers too_frequent, not_relevant, never_signed_up, other.' },
    comment: { type: 'string', description: 'Optional free text, kept on the unsubscribe (clipped to 2,000 characters).' },
  },
};
