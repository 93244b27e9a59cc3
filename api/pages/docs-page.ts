import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Express, Request, Response } from 'express';
import { PAGE_HEADERS } from './public-pages.js';

/**
 * GET /docs: the interactive API reference (Scalar's API reference, its standalone browser
 * bundle) of the live OpenAPI document, served whole by this service: the page, Scalar's script
 * and ours come from this origin, the document from /v1/openapi.json, and "try it" sends its
 * requests straight to this origin. Nothing is fetched elsewhere (a closed network has nowhere
 * else): Scalar's default fonts (its CDN) are off, so are its telemetry and its agent, no proxy is
 * set, and the CSP below would refuse anything else anyway. docs/api-reference.md tells more.
 */

export const DOCS_PATH = '/docs';
const SCALAR_PATH = `${DOCS_PATH}/scalar.js`;
const INIT_PATH = `${DOCS_PATH}/init.js`;
/** Every path this module answers, for app.ts's 404/405 list. */
export const DOCS_PATHS = ['/', DOCS_PATH, SCALAR_PATH, INIT_PATH];

// The package exports no subpath for its browser bundle: found beside its entry point.
const SCALAR_BUNDLE = join(dirname(fileURLToPath(import.meta.resolve('@scalar/api-reference'))), 'browser', 'standalone.js');

/**
 * The reference's CSP, the pages' one (api/pages/public-pages.ts) widened only as Scalar needs:
 * scripts from this origin only (no inline script: the configuration is init.js), inline styles
 * (Vue binds style attributes and Scalar injects its theme as <style>), data: images (its icons),
 * connections to this origin only (the document and "try it"). No font, frame, form or object
 * source: nothing of the kind is loaded.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>Cartero API reference</title></head>
<body><main id="app" aria-label="Cartero API reference"><noscript>The API reference needs JavaScript; the OpenAPI document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript></main>
<script src="${SCALAR_PATH}"></script>
<script src="${INIT_PATH}"></script>
</body></html>
`;

/**
 * Scalar's configuration. servers: this very origin, whatever PUBLIC_URL says, so "try it" calls
 * the server that served the page (the CSP's connect-src 'self' allows nothing else). The key and
 * the slug typed into the page stay in memory (persistAuth false): they are secrets.
 */
const INIT = `'use strict';
Scalar.createApiReference('#app', {
  url: '/v1/openapi.json',
  servers: [{ url: window.location.origin, description: 'This Cartero server' }],
  authentication: { preferredSecurityScheme: [['apiKey', 'instanceSlug']] },
  persistAuth: false,
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  hideClientButton: true,
});
`;

/** How long a browser may keep Scalar's bundle (3.5 MB) before asking again; its ETag then answers 304. */
const BUNDLE_MAX_AGE_MS = 3_600_000;

/** Mounts GET / (a redirect to the reference), GET /docs and its two scripts. */
export function mountDocs(app: Express): void {
  app.get('/', (_req: Request, res: Response) => res.redirect(302, DOCS_PATH));
  app.get(DOCS_PATH, (_req: Request, res: Response) => {
    res.status(200).set({ ...PAGE_HEADERS, 'Content-Security-Policy': DOCS_CSP }).type('html').send(PAGE);
  });
  app.get(INIT_PATH, (_req: Request, res: Response) => {
    res.status(200).set('Cache-Control', 'no-cache').type('application/javascript').send(INIT);
  });
  app.get(SCALAR_PATH, (_req: Request, res: Response) => {
    res.sendFile(SCALAR_BUNDLE, { maxAge: BUNDLE_MAX_AGE_MS });
  });
}
