import { trackingSecret } from '../../domain/tracking/secret.js';
import { readTrackingToken, type TrackingToken } from '../../domain/tracking/tokens.js';
import type { AppDeps } from './route.js';

/**
 * The payload of a public link this service signed, read by `read` (which checks the signature
 * and the payload's kind and shape), else undefined. Every public link is signed with the same
 * key (TRACKING_SECRET, else the one generated into Postgres), read once per pool; reading it can
 * fail (Postgres down), which the caller's error handling answers. A new kind of link brings only
 * its reader (e.g. domain/consent/confirm-token.ts).
 */
export async function readSignedLink<T>(
  deps: Pick<AppDeps, 'pool' | 'config'>,
  raw: string,
  read: (secret: string, raw: string) => T | undefined,
): Promise<T | undefined> {
  return read(await trackingSecret(deps.pool, deps.config.trackingSecret), raw);
}

/** A tracking or unsubscribe link's token of `kind` (domain/tracking/tokens.ts). */
export function readLinkToken<K extends TrackingToken['kind']>(
  deps: Pick<AppDeps, 'pool' | 'config'>,
  raw: string,
  kind: K,
): Promise<Extract<TrackingToken, { kind: K }> | undefined> {
  return readSignedLink(deps, raw, (secret, token) => readTrackingToken(secret, token, kind));
}
