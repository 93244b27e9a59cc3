import type { Logger } from 'pino';
import { HitRecorder } from '../../domain/tracking/record.js';
import type { TrackingToken } from '../../domain/tracking/tokens.js';
import type { Pool } from '../../sql/pool.js';

/**
 * What an open or a click does, whichever of the two ways of answering it runs: the Express
 * routes (api/routes/tracking.ts) or the fast path ahead of Express (api/tracking/fast-path.ts).
 * Both record the hit and write these headers and this pixel from here, so they cannot drift
 * apart.
 */

// A transparent 1x1 GIF (42 bytes).
export const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
export const NO_CACHE = 'no-store, no-cache, must-revalidate, private, max-age=0';
/** Besides Content-Type and Content-Length: a pixel is fetched again at every open. */
export const PIXEL_HEADERS = { 'Cache-Control': NO_CACHE, Pragma: 'no-cache', Expires: '0' } as const;
/** Besides Location and the redirect's own: the target never learns the tracking link. */
export const CLICK_HEADERS = { 'Cache-Control': NO_CACHE, 'Referrer-Policy': 'no-referrer' } as const;

type HitToken = Extract<TrackingToken, { kind: 'open' | 'click' }>;

// One recorder per pool, so both ways of answering share its group commit (domain/tracking/record.ts).
const recorders = new WeakMap<Pool, HitRecorder>();

function recorderOf(pool: Pool): HitRecorder {
  let recorder = recorders.get(pool);
  if (!recorder) recorders.set(pool, (recorder = new HitRecorder(pool)));
  return recorder;
}

/**
 * Records an open or a click. A recipient's mail client shows the image and follows the link
 * whatever happens: an event Postgres could not take is logged (it cannot be kept anywhere
 * durable) and the answer still goes out. A HEAD on a click link is flagged at once: no person
 * clicks with HEAD, scanners do (the pump flags the rest).
 */
export function recordHit(
  deps: { pool: Pool; logger: Logger },
  token: HitToken,
  request: { userAgent: string | undefined; ip: string | undefined; head: boolean; reqId: string },
): Promise<void> {
  const hit =
    token.kind === 'open'
      ? { kind: 'open' as const, mailId: token.mail_id }
      : { kind: 'click' as const, mailId: token.mail_id, url: token.url, ...(request.head ? { machine: 'head_request' } : {}) };
  return recorderOf(deps.pool)
    .record({ ...hit, userAgent: request.userAgent, ip: request.ip, at: new Date() })
    .catch((err) => deps.logger.error({ err, reqId: request.reqId }, `${token.kind} not recorded`));
}
