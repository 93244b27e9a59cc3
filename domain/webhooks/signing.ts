import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com), done by the official library so
 * that any receiver built on it verifies what we send: headers webhook-id, webhook-timestamp,
 * webhook-signature; secrets `whsec_<base64>`; signatures `v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`, space-separated when several secrets are in force.
 */

/** A new signing secret: 32 random bytes (the spec allows 24-64), whsec_-prefixed base64. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SigningKeys {
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/**
 * The secrets that sign at `now`: the current one first, then the previous one while its 24 h
 * overlap lasts (spec: Events, rule 2). `now` comes from the delivery clock (clock.ts), so a test
 * can move past the overlap.
 */
export function signingSecrets(keys: SigningKeys, now: Date): string[] {
  const previousLive = keys.previous_secret && keys.previous_secret_expires_at && keys.previous_secret_expires_at.getTime() > now.getTime();
  return previousLive ? [keys.secret, keys.previous_secret!] : [keys.secret];
}

/** The webhook-id of an event: stable across retries, redeliveries and replays of it. */
export const messageId = (eventId: number | string): string => `msg_${eventId}`;

/** The three headers of one delivery attempt. */
export function signedHeaders(secrets: readonly string[], msgId: string, timestamp: Date, body: string): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(msgId, timestamp, body)).join(' '),
  };
}
