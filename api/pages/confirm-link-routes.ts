import type { Response } from 'express';
import type { CodeOf } from '../../errors/catalog.js';
import { problem, sendProblem } from '../http/problem.js';
import { sendLinkNotValid, sendPage } from './public-pages.js';
import { defineRoute, type AppDeps } from '../http/route.js';
import { requestIdOf } from '../http/request-context.js';
import { linkToken } from '../schemas/public-links.js';
import { TAGS } from '../routes/tags.js';

/**
 * The one shape of every "confirm by mail" link (a double opt-in consent at /c/{token}, a form
 * submission at /fc/{token}): GET only shows a page and never confirms, because link scanners and
 * mail security gateways fetch links; the page's one button POSTs back to the link, and only that
 * confirms, keeping the request's address and user agent as evidence. A confirmed target is left
 * as it is (the page says so); one past its window confirms nothing: 410, a page to a browser and a
 * problem object to anything else. A new kind of link declares what differs (its token, target,
 * confirmation and page text) and gets these two routes.
 */

export type ConfirmStep = 'confirm' | 'confirmed' | 'already_confirmed' | 'expired';
export type ConfirmOutcome = 'confirmed' | 'already_confirmed' | 'expired';

export interface ConfirmLink<T extends { state: 'pending' | 'confirmed' | 'expired' }> {
  /** e.g. '/c/{token}' */
  path: string;
  /** What the token is, for its schema: 'consent confirmation'. */
  tokenFor: string;
  show: { operationId: string; summary: string; description: string };
  confirm: { operationId: string; summary: string; description: string };
  /** The target the signed token names, or undefined (a bad, foreign or unknown link). */
  find(deps: AppDeps, rawToken: string): Promise<T | undefined>;
  /** Confirms it; undefined when it is gone by then. */
  confirmTarget(deps: AppDeps, target: T, evidence: { ip: string | undefined; userAgent: string | undefined }): Promise<ConfirmOutcome | undefined>;
  page(step: ConfirmStep, target: T): string;
  /** The 410's problem: its code and detail. */
  expired(target: T): { code: CodeOf<410>; detail: string };
}

// The page's form has no field; a little room for what a browser may add.
const MAX_FORM_BYTES = 1024;

export function confirmLinkRoutes<T extends { state: 'pending' | 'confirmed' | 'expired' }>(link: ConfirmLink<T>) {
  const common = {
    path: link.path,
    tag: TAGS.publicLinks,
    auth: { kind: 'public' },
    params: { token: linkToken(link.tokenFor) },
    errors: [404, 410],
    errorPages: true,
  } as const;

  const notValid = (res: Response) => sendLinkNotValid(res, 'This confirmation link is not valid');

  function sendExpired(res: Response, target: T): void {
    if (res.req.accepts(['json', 'html']) === 'html') sendPage(res, 410, link.page('expired', target));
    else {
      const { code, detail } = link.expired(target);
      sendProblem(res, problem(code, detail, requestIdOf(res)));
    }
  }

  return [
    defineRoute<Record<string, never>, { token: string }>({
      ...common,
      method: 'get',
      ...link.show,
      success: { status: 200, description: 'The page: confirm, or already confirmed', contentType: 'text/html', schema: { type: 'string' } },
      handler: async ({ params, deps }, res) => {
        const target = await link.find(deps, params.token);
        if (!target) notValid(res);
        else if (target.state === 'expired') sendExpired(res, target);
        else sendPage(res, 200, link.page(target.state === 'confirmed' ? 'already_confirmed' : 'confirm', target));
        return undefined;
      },
    }),
    defineRoute<Record<string, never>, { token: string }, Record<string, string>>({
      ...common,
      method: 'post',
      ...link.confirm,
      body: { type: 'object', description: 'The page’s form: no field is read.' },
      bodyType: 'form',
      bodyRequired: false,
      maxBodyBytes: MAX_FORM_BYTES,
      success: { status: 200, description: 'The page: confirmed, or already confirmed', contentType: 'text/html', schema: { type: 'string' } },
      handler: async ({ params, deps, client }, res) => {
        const target = await link.find(deps, params.token);
        if (!target) {
          notValid(res);
          return undefined;
        }
        const outcome = await link.confirmTarget(deps, target, client);
        if (outcome === undefined) notValid(res);
        else if (outcome === 'expired') sendExpired(res, target);
        else sendPage(res, 200, link.page(outcome, target));
        return undefined;
      },
    }),
  ];
}
