import { createRequire } from 'node:module';
import type { Response } from 'express';
import { problem, sendProblem } from '../http/problem.js';
import { requestIdOf } from '../http/request-context.js';

/**
 * The pages public routes show to the people who follow a mail's links (unsubscribe; later
 * double-opt-in confirmation and hosted forms): one shell and one set of headers. Plain HTML with
 * inline style, no script and no external resource (the CSP forbids both); forms post back to
 * their own URL (a relative action), so they work behind any PUBLIC_URL.
 */

// escape-html (Express's own), CommonJS without type declarations.
export const escapeHtml = createRequire(import.meta.url)('escape-html') as (text: string) => string;

const NO_CACHE = 'no-store, no-cache, must-revalidate, private, max-age=0';
// frame-ancestors: no other site may frame a page (a hidden unsubscribe or consent button under a
// decoy is clickjacking); X-Frame-Options says the same to browsers that predate CSP 2.
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";
/**
 * Every page's headers besides its CSP. Referrer-Policy: a page's URL is its link's token, which
 * no site the page leads to may learn. X-Content-Type-Options (nosniff) is on every response of
 * every listener already (api/http/response-headers.ts).
 */
export const PAGE_HEADERS = { 'Cache-Control': NO_CACHE, 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'no-referrer' } as const;

/** A whole page around `body` (HTML the caller escaped); `head`, more of the head (a hosted form's own style). */
export function pageHtml(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
label{display:block;margin-top:1rem}select,textarea{width:100%}button{margin-top:1rem;padding:.5rem 1rem}</style>${head}
</head><body>${body}</body></html>
`;
}

/**
 * Answers a page, the one way every page (and every error page) leaves: never cached (it shows
 * one person's state), never framed, under the CSP above; `imgSrc` admits images from those
 * sources (a hosted form's logo), nothing else.
 */
export function sendPage(res: Response, status: number, html: string, imgSrc?: string): void {
  res.status(status).set({ ...PAGE_HEADERS, 'Content-Security-Policy': imgSrc ? `${PAGE_CSP}; img-src ${imgSrc}` : PAGE_CSP });
  res.type('html').send(html);
}

/**
 * A link that is not (or no longer) valid: a browser gets a readable page, anything else the
 * API's problem object, 404 either way.
 */
export function sendLinkNotValid(res: Response, detail: string): void {
  if (res.req.accepts(['json', 'html']) === 'html') {
    sendPage(res, 404, pageHtml('Email preferences', `<h1>Link not valid</h1><p>${escapeHtml(detail)}</p>`));
    return;
  }
  sendProblem(res, problem('not_found', detail, requestIdOf(res)));
}
