import { defineRoute } from '../http/route.js';
import { sendLinkNotValid } from '../pages/public-pages.js';
import { readLinkToken } from '../http/signed-links.js';
import { CLICK_HEADERS, PIXEL, PIXEL_HEADERS, recordHit } from '../tracking/hits.js';
import { linkToken } from '../schemas/public-links.js';
import { TAGS } from './tags.js';

/**
 * The open pixel and the click redirect every tracked mail carries (domain/mail/render.ts). They
 * answer recipients' mail clients, not integrators, and answer once the hit's outbox row is
 * committed (domain/tracking/record.ts). The web process answers the common case of both ahead
 * of Express (api/tracking/fast-path.ts); these routes answer everything else on their paths and
 * are the reference behaviour it reproduces, byte for byte.
 */
export const trackingRoutes = [
  defineRoute<Record<string, never>, { token: string }>({
    method: 'get',
    path: '/t/o/{token}',
    operationId: 'openPixel',
    summary: "A mail's open pixel",
    description:
      'A 1x1 transparent GIF, never cached, whatever the token: a mail client shows the image even for a link that is not ' +
      'valid. A valid open token records an open of its mail (docs/tracking.md).',
    tag: TAGS.publicLinks,
    auth: { kind: 'public' },
    params: { token: linkToken('open') },
    success: { status: 200, description: 'The pixel (Cache-Control: no-store)', contentType: 'image/gif', schema: { type: 'string', format: 'binary' } },
    handler: async ({ params, deps, client, requestId }, res) => {
      const token = await readLinkToken(deps, params.token, 'open');
      res.set(PIXEL_HEADERS);
      if (token) await recordHit(deps, token, { ...client, head: false, reqId: requestId });
      res.type('image/gif').send(PIXEL);
      return undefined;
    },
  }),
  defineRoute<Record<string, never>, { token: string }>({
    method: 'get',
    path: '/t/c/{token}',
    operationId: 'followClick',
    summary: 'A tracked link of a mail',
    description:
      'Records a click and redirects to the URL signed into the token, and only there: no other target is possible (no open ' +
      'redirect). A HEAD is answered the same and its click flagged head_request (a scanner, not a person).',
    tag: TAGS.publicLinks,
    auth: { kind: 'public' },
    params: { token: linkToken('click') },
    success: {
      status: 302,
      description: 'To the original URL (Cache-Control: no-store, Referrer-Policy: no-referrer)',
      headers: { Location: { description: 'The URL signed into the token', schema: { type: 'string', format: 'uri' } } },
    },
    errors: [404],
    errorPages: true,
    handler: async ({ params, deps, client, requestId }, res) => {
      const token = await readLinkToken(deps, params.token, 'click');
      if (!token) return sendLinkNotValid(res, 'This link is not valid');
      // Express answers HEAD with the GET route.
      await recordHit(deps, token, { ...client, head: res.req.method === 'HEAD', reqId: requestId });
      res.set(CLICK_HEADERS);
      res.redirect(302, token.url);
      return undefined;
    },
  }),
];
