import express from 'express';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { readTrackingToken } from '../domain/tracking/tokens.js';
import type { HitRecorder } from '../domain/tracking/record.js';
import { findUnsubscribeTarget, resubscribe, unsubscribe, type UnsubscribeTarget } from '../domain/tracking/unsubscribe.js';
import type { Pool } from '../sql/pool.js';
import { problem, sendProblem } from './problem.js';
import { requestIdOf } from './request-context.js';
import { unsubscribePage, type PageState } from './unsubscribe-page.js';

/**
 * The public links Cartero puts in every mail (domain/mail/render.ts): no API key, the signed
 * token is the credential. They answer recipients and their mail software, not integrators:
 *  - GET /t/o/{token}: the open pixel, a 1x1 GIF that is never cached;
 *  - GET /t/c/{token}: 302 to the URL signed into the token (no other target is ever possible);
 *  - GET /u/{token}: a confirmation page (never unsubscribes: link scanners fetch it);
 *    POST /u/{token}: unsubscribes (RFC 8058 one-click, or the page's form), or resubscribes.
 * Opens and clicks answer once their outbox row is committed (domain/tracking/record.ts).
 */
export interface TrackingDeps {
  pool: Pool;
  recorder: HitRecorder;
  secret: () => Promise<string>;
  logger: Logger;
}

export const TRACKING_PATHS = ['/t/o/{token}', '/t/c/{token}', '/u/{token}'] as const;

// A transparent 1x1 GIF (42 bytes).
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const NO_CACHE = 'no-store, no-cache, must-revalidate, private, max-age=0';
// One-click bodies are one short field; the page's form adds a reason and a comment.
const MAX_FORM_BYTES = 16 * 1024;

export function mountTracking(app: express.Express, deps: TrackingDeps): void {
  app.get('/t/o/:token', async (req, res) => {
    const token = readTrackingToken(await deps.secret(), req.params.token!, 'open');
    res.set({ 'Cache-Control': NO_CACHE, Pragma: 'no-cache', Expires: '0' });
    if (token) {
      // A recipient's mail client shows the image whatever happens; an event Postgres could not
      // take is logged (it cannot be kept anywhere durable) and the GIF still served.
      await deps.recorder
        .record({ kind: 'open', mailId: token.mail_id, userAgent: req.get('user-agent'), ip: req.ip, at: new Date() })
        .catch((err) => deps.logger.error({ err, reqId: requestIdOf(res) }, 'open not recorded'));
    }
    res.type('image/gif').send(PIXEL);
  });

  app.get('/t/c/:token', async (req, res) => {
    const token = readTrackingToken(await deps.secret(), req.params.token!, 'click');
    if (!token) return notFound(res, 'This link is not valid');
    await deps.recorder
      .record({
        kind: 'click',
        mailId: token.mail_id,
        url: token.url,
        userAgent: req.get('user-agent'),
        ip: req.ip,
        at: new Date(),
        // Express answers HEAD with the GET route: no person clicks with HEAD, scanners do.
        ...(req.method === 'HEAD' ? { machine: 'head_request' } : {}),
      })
      .catch((err) => deps.logger.error({ err, reqId: requestIdOf(res) }, 'click not recorded'));
    res.set({ 'Cache-Control': NO_CACHE, 'Referrer-Policy': 'no-referrer' });
    res.redirect(302, token.url);
  });

  app.get('/u/:token', async (req, res) => {
    const target = await unsubscribeTarget(deps, req, res);
    if (!target) return;
    page(res, 200, { step: target.unsubscribed ? 'unsubscribed' : 'confirm', target });
  });

  app.post('/u/:token', express.raw({ type: () => true, limit: MAX_FORM_BYTES }), async (req, res) => {
    const target = await unsubscribeTarget(deps, req, res);
    if (!target) return;
    const form = readForm(req);
    if (form.get('action') === 'resubscribe') {
      await resubscribe(target.tenant, deps.pool, target);
      return page(res, 200, { step: 'resubscribed', target });
    }
    // RFC 8058: the mail client POSTs List-Unsubscribe=One-Click, with no person on a page.
    const oneClick = form.get('List-Unsubscribe') === 'One-Click';
    await unsubscribe(target.tenant, deps.pool, target, {
      method: oneClick ? 'one_click' : 'page',
      reason: form.get('reason'),
      comment: form.get('comment'),
      userAgent: req.get('user-agent') ?? null,
      ip: req.ip ?? null,
    });
    page(res, 200, { step: 'unsubscribed', target });
  });
}

async function unsubscribeTarget(deps: TrackingDeps, req: Request, res: Response): Promise<UnsubscribeTarget | undefined> {
  const token = readTrackingToken(await deps.secret(), String(req.params.token), 'unsubscribe');
  if (!token) {
    notFound(res, 'This unsubscribe link is not valid');
    return undefined;
  }
  const target = await findUnsubscribeTarget(deps.pool, token.mail_id);
  if (!target) notFound(res, 'This unsubscribe link has expired: the mail it came with is no longer kept');
  return target;
}

/**
 * The form fields of a POST, whatever its encoding: urlencoded (RFC 8058 and our page) is read
 * properly; a multipart one-click body (RFC 8058 allows it) is recognised by its field.
 */
function readForm(req: Request): URLSearchParams {
  const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  if (/^multipart\/form-data/i.test(req.get('content-type') ?? '')) {
    const form = new URLSearchParams();
    if (/name="List-Unsubscribe"\s*\r?\n\r?\nOne-Click/i.test(raw)) form.set('List-Unsubscribe', 'One-Click');
    return form;
  }
  return new URLSearchParams(raw);
}

function page(res: Response, status: number, state: PageState): void {
  res.status(status).set({ 'Cache-Control': NO_CACHE, 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'" });
  res.type('html').send(unsubscribePage(state));
}

/** A browser gets a readable page; anything else the API's problem object. */
function notFound(res: Response, detail: string): void {
  if (res.req.accepts(['json', 'html']) === 'html') {
    res.status(404).set('Cache-Control', NO_CACHE).type('html').send(unsubscribePage({ step: 'invalid', detail }));
    return;
  }
  sendProblem(res, problem(404, 'not_found', detail, requestIdOf(res)));
}
