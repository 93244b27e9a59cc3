import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed tokens for the public tracking links (open pixel, click redirect, unsubscribe). The
 * token carries its payload, so the web dyno answers a hit without a lookup, and the HMAC means a
 * click can only ever redirect to a URL that Cartero itself put in a mail (no open redirect).
 *
 * Format: base64url(JSON payload) "." base64url(HMAC-SHA256(secret, first part)). Not encrypted:
 * the payload (a mail id, a URL of the mail) is no secret from the recipient who holds the link.
 */
export function signToken(secret: string, payload: object): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${mac(secret, body)}`;
}

/** The payload of a token this secret signed, or undefined for anything else (never throws). */
export function verifyToken(secret: string, token: string): Record<string, unknown> | undefined {
  if (typeof token !== 'string') return undefined;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return undefined;
  const body = token.slice(0, dot);
  // The MAC is compared as the exact string we would have written, not as decoded bytes: a
  // base64url decoder ignores a trailing '=' and the unused low bits of the last character, so
  // comparing bytes let several spellings of one link verify (and each count a hit).
  const given = Buffer.from(token.slice(dot + 1), 'utf8');
  const expected = Buffer.from(mac(secret, body), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function mac(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64url');
}

/**
 * What each public link means. `kind` is signed too, so a token made for one link (an open
 * pixel, which any mail client fetches) can never be replayed against another (unsubscribe).
 */
export type TrackingToken =
  | { kind: 'open'; mail_id: string }
  | { kind: 'click'; mail_id: string; url: string }
  | { kind: 'unsubscribe'; mail_id: string };

export const openToken = (secret: string, mailId: string): string => signToken(secret, { kind: 'open', mail_id: mailId });
export const clickToken = (secret: string, mailId: string, url: string): string => signToken(secret, { kind: 'click', mail_id: mailId, url });
export const unsubscribeToken = (secret: string, mailId: string): string => signToken(secret, { kind: 'unsubscribe', mail_id: mailId });

/** A verified token of the expected kind, shape-checked; undefined otherwise. */
export function readTrackingToken<K extends TrackingToken['kind']>(
  secret: string,
  token: string,
  kind: K,
): Extract<TrackingToken, { kind: K }> | undefined {
  const p = verifyToken(secret, token);
  if (!p || p.kind !== kind || typeof p.mail_id !== 'string') return undefined;
  if (kind === 'click' && (typeof p.url !== 'string' || !/^https?:\/\//i.test(p.url))) return undefined;
  return p as Extract<TrackingToken, { kind: K }>;
}
