import type { Response } from 'express';
import { findUnsubscribeTarget, resubscribe, unsubscribe, type UnsubscribeTarget } from '../../domain/tracking/unsubscribe.js';
import { sendLinkNotValid, sendPage } from '../pages/public-pages.js';
import { readLinkToken } from '../http/signed-links.js';
import { defineRoute, type AppDeps } from '../http/route.js';
import { linkToken, unsubscribeFormSchema } from '../schemas/public-links.js';
import { unsubscribePage } from '../pages/unsubscribe-page.js';
import { TAGS } from './tags.js';

/**
 * The unsubscribe link of every mail (its List-Unsubscribe header, with List-Unsubscribe-Post:
 * List-Unsubscribe=One-Click). GET only shows a page and never unsubscribes (link scanners fetch
 * it); POST unsubscribes, from the mail client (RFC 8058 one-click) or the page's form, or
 * resubscribes (docs/tracking.md, Unsubscribes and restrictions).
 */

type UnsubscribeForm = { 'List-Unsubscribe'?: string; action?: string; reason?: string; comment?: string };

// One-click bodies are one short field; the page's form adds a reason and a comment.
const MAX_FORM_BYTES = 16 * 1024;

const common = {
  path: '/u/{token}',
  tag: TAGS.publicLinks,
  auth: { kind: 'public' },
  params: { token: linkToken('unsubscribe') },
  errors: [404],
  errorPages: true,
} as const;

/** The mail the link names, or undefined once the 404 (page or problem) is answered. */
async function targetOf(deps: AppDeps, raw: string, res: Response): Promise<UnsubscribeTarget | undefined> {
  const token = await readLinkToken(deps, raw, 'unsubscribe');
  if (!token) {
    sendLinkNotValid(res, 'This unsubscribe link is not valid');
    return undefined;
  }
  const target = await findUnsubscribeTarget(deps.pool, token.mail_id);
  if (!target) sendLinkNotValid(res, 'This unsubscribe link has expired: the mail it came with is no longer kept');
  return target;
}

export const unsubscribeLinkRoutes = [
  defineRoute<Record<string, never>, { token: string }>({
    ...common,
    method: 'get',
    operationId: 'showUnsubscribePage',
    summary: 'The unsubscribe page of a mail',
    description: 'A confirmation page with a form that posts back here; it unsubscribes nobody (link scanners fetch it).',
    success: { status: 200, description: 'The page: confirm, or already unsubscribed (with a resubscribe button)', contentType: 'text/html', schema: { type: 'string' } },
    handler: async ({ params, deps }, res) => {
      const target = await targetOf(deps, params.token, res);
      if (target) sendPage(res, 200, unsubscribePage({ step: target.unsubscribed ? 'unsubscribed' : 'confirm', target }));
      return undefined;
    },
  }),
  defineRoute<Record<string, never>, { token: string }, UnsubscribeForm>({
    ...common,
    method: 'post',
    operationId: 'unsubscribe',
    summary: "Unsubscribe (RFC 8058 one-click or the page's form), or resubscribe",
    description:
      'Writes the unsubscribe (the first one per mail is kept; a later one only completes a missing reason or comment) and ' +
      'restricts the address, so its next mails are dropped; action=resubscribe lifts that restriction instead.',
    body: unsubscribeFormSchema,
    bodyType: 'form',
    maxBodyBytes: MAX_FORM_BYTES,
    success: { status: 200, description: 'The page: unsubscribed, or subscribed again', contentType: 'text/html', schema: { type: 'string' } },
    handler: async ({ params, body, deps, client }, res) => {
      const target = await targetOf(deps, params.token, res);
      if (!target) return undefined;
      if (body.action === 'resubscribe') {
        await resubscribe(target.tenant, deps.pool, target);
        sendPage(res, 200, unsubscribePage({ step: 'resubscribed', target }));
        return undefined;
      }
      // RFC 8058: the mail client POSTs List-Unsubscribe=One-Click, with no person on a page.
      await unsubscribe(target.tenant, deps.pool, target, {
        method: body['List-Unsubscribe'] === 'One-Click' ? 'one_click' : 'page',
        reason: body.reason,
        comment: body.comment,
        userAgent: client.userAgent ?? null,
        ip: client.ip ?? null,
      });
      sendPage(res, 200, unsubscribePage({ step: 'unsubscribed', target }));
      return undefined;
    },
  }),
];
