import { trackingSecret } from '../domain/tracking/secret.js';
import { readTrackingToken, type TrackingToken } from '../domain/tracking/tokens.js';
import type { AppDeps } from './route.js';

/**
 * The token of a public link if this service signed it and it is of `kind`, else undefined. The
 * signing key (TRACKING_SECRET, else the one generated into Postgres) is read once per pool;
 * reading it can fail (Postgres down), which the caller's error handling answers.
 */
export async function readLinkToken<K extends TrackingToken['kind']>(
  deps: Pick<AppDeps, 'pool' | 'config'>,
  raw: string,
  kind: K,
): Promise<Extract<TrackingToken, { kind: K }> | undefined> {
  return readTrackingToken(await trackingSecret(deps.pool, deps.config.trackingSecret), raw, kind);
}
