import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Express, Request, Response } from 'express';
import { projectRoot } from '../../config/paths.js';
import { problem, sendProblem } from '../http/problem.js';
import { requestIdOf } from '../http/request-context.js';
import { PAGE_HEADERS } from './public-pages.js';

/**
 * GET /panel: the operator panel (docs/panel.md, The web panel), a small dependency-free
 * TypeScript app (web/panel/) that the project's own tsc compiles to ES modules in dist/web/panel/
 * with everything else (`prestart`, `pretest`): this page, its modules and its style sheet are
 * all this service serves; nothing comes from elsewhere. The app talks only to /v1/private on this
 * origin, with the session token in its memory (no cookie, so no CSRF to guard against).
 */

export const PANEL_PATH = '/panel';
const ASSETS = `${PANEL_PATH}/app`;

/**
 * The panel's CSP: scripts and fetches from this origin only, no inline script, nothing framed
 * but srcdoc frames (frame-src falls back to 'none', which Chromium does not apply to
 * about:srcdoc) and no framing (frame-ancestors 'none'), no form sent anywhere by the browser
 * itself (the app sends the login with fetch, so a form that JavaScript did not take over never
 * puts the password in a URL).
 *
 * Two sources exist for the template preview only (docs/panel.md, Templates): a srcdoc frame
 * inherits its parent's policy, so a template's own <style> and style attributes need
 * 'unsafe-inline' in style-src and its images (on the sender's https hosts) need https: in
 * img-src, or the preview would not look like the mail. The panel itself builds no markup from
 * data (no innerHTML), so inline style adds no way in; the frames run no script (sandbox="",
 * and script-src 'self' applies to them too), and an image URL is no channel that a script of
 * this page, were one injected, would not already have by navigating.
 */
export const PANEL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const COMPILED = join(projectRoot, 'dist', 'web', 'panel');
const STYLE = join(projectRoot, 'web', 'panel', 'panel.css');

/** The compiled modules the page may load, read once: anything else under the path is a 404. */
function modules(): string[] {
  try {
    return readdirSync(COMPILED).filter((f) => f.endsWith('.js'));
  } catch {
    return [];
  }
}

/** The page: the style sheet, every module preloaded (one round trip, no waterfall of imports), then the app's entry. */
function page(names: string[]): string {
  const preload = names.filter((n) => n !== 'main.js').map((n) => `<link rel="modulepreload" href="${ASSETS}/${n}">`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>Cartero panel</title>
<link rel="stylesheet" href="${ASSETS}/panel.css">
${preload}
<script type="module" src="${ASSETS}/main.js"></script>
</head><body><div id="app"><noscript><main><h1>Cartero panel</h1><p>The panel needs JavaScript. The <code>cartero</code> CLI does everything it does.</p></main></noscript></div></body></html>
`;
}

/** Every path this module answers, for app.ts's 404/405 list. */
export const PANEL_PATHS = [PANEL_PATH, `${ASSETS}/{file}`];

/** Mounts GET /panel, its modules and its style sheet. */
export function mountPanel(app: Express): void {
  const names = modules();
  const html = page(names);
  app.get(PANEL_PATH, (_req: Request, res: Response) => {
    res.status(200).set({ ...PAGE_HEADERS, 'Content-Security-Policy': PANEL_CSP }).type('html').send(html);
  });
  app.get(`${ASSETS}/:file`, (req: Request, res: Response) => {
    const file = String(req.params['file'] ?? '');
    // no-cache: revalidated on each load (ETag: a 304 when unchanged), so an upgrade shows at once.
    if (file === 'panel.css') return res.sendFile(STYLE, { headers: { 'Cache-Control': 'no-cache' } });
    if (file && names.includes(file)) return res.sendFile(join(COMPILED, file), { headers: { 'Cache-Control': 'no-cache' } });
    // Here, not in the app's fallback, which would answer a GET on this known path 405.
    sendProblem(res, problem('not_found', `No route for GET ${req.path}`, requestIdOf(res)));
  });
}
