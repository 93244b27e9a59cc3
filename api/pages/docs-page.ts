import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Express, Request, Response } from 'express';
import { PAGE_HEADERS } from './public-pages.js';

/**
 * GET /docs: the interactive API reference (Swagger UI, from swagger-ui-dist: its prebuilt browser
 * bundle and stylesheet, a package with no dependency tree of its own; docs/dependencies.md says
 * why) of the live OpenAPI document, served whole by this service: the page, the bundle, its
 * stylesheet and our configuration come from this origin, the document from /v1/openapi.json, and
 * "try it out" sends its requests straight to this origin. Nothing is fetched elsewhere (a closed
 * network has nowhere else): Swagger UI's online validator badge is off, the URL cannot name
 * another document, and the CSP below would refuse anything else anyway. docs/api-reference.md
 * tells more.
 */

export const DOCS_PATH = '/docs';
const BUNDLE_PATH = `${DOCS_PATH}/swagger-ui.js`;
const STYLE_PATH = `${DOCS_PATH}/swagger-ui.css`;
const INIT_PATH = `${DOCS_PATH}/init.js`;
/** Every path this module answers, for app.ts's 404/405 list. */
export const DOCS_PATHS = ['/', DOCS_PATH, BUNDLE_PATH, STYLE_PATH, INIT_PATH];

// The package's entry point (a Node helper) sits beside the browser files it ships.
const SWAGGER_UI_DIR = dirname(fileURLToPath(import.meta.resolve('swagger-ui-dist')));
const SWAGGER_UI_BUNDLE = join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js');
const SWAGGER_UI_STYLE = join(SWAGGER_UI_DIR, 'swagger-ui.css');

/**
 * The reference's CSP, the pages' one (api/pages/public-pages.ts) widened only as Swagger UI
 * needs: scripts and the stylesheet from this origin only (no inline script: the configuration is
 * init.js; no inline style: React sets styles through the DOM, which style-src does not govern),
 * data: images (the stylesheet's icons), connections to this origin only (the document and "try
 * it out"). No font, frame, form or object source: nothing of the kind is loaded.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>Cartero API reference</title>
<link rel="stylesheet" href="${STYLE_PATH}"></head>
<body><main id="app" aria-label="Cartero API reference"><noscript>The API reference needs JavaScript; the OpenAPI document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript></main>
<script src="${BUNDLE_PATH}"></script>
<script src="${INIT_PATH}"></script>
</body></html>
`;

/**
 * Swagger UI's configuration, as plugins and options:
 * - servers: this very origin, whatever PUBLIC_URL says, so "try it out" calls the server that
 *   served the page (the CSP's connect-src 'self' allows nothing else);
 * - the instance slug's field (the document's one apiKey scheme, whose input Swagger UI names
 *   api_key_value) shows what a slug looks like, `acme`;
 * - "try it out" is open on every operation, its curl shown, and the typed key and slug stay in
 *   the page's memory (persistAuthorization false: they are secrets);
 * - validatorUrl null: no badge asking an online validator about this server's document;
 *   queryConfigEnabled false: a link's query string cannot make the page load another document.
 */
const INIT = `'use strict';
const h = (system) => system.React.createElement;
const thisServer = () => ({
  statePlugins: {
    spec: {
      wrapActions: {
        updateJsonSpec: (update) => (json) =>
          update({ ...json, servers: [{ url: window.location.origin, description: 'This Cartero server' }] }),
      },
    },
  },
});
// The document's references are all local (#/components/...: api/openapi.ts writes no other), so
// resolving an operation is a lookup; Swagger UI's own resolver for OpenAPI 3.1 (ApiDOM) rebuilds
// the whole 1 MB document per call and kept the page blank for seconds.
const localRefs = () => ({
  fn: {
    resolveSubtree: async (spec, path) => ({ spec: inline(path.reduce((node, key) => node?.[key], spec), spec, []), errors: [] }),
  },
});
const pointer = (ref) => ref.slice(2).split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
function inline(node, root, seen) {
  if (Array.isArray(node)) return node.map((item) => inline(item, root, seen));
  if (node === null || typeof node !== 'object') return node;
  const ref = node.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/') && !seen.includes(ref)) {
    const target = pointer(ref).reduce((at, key) => at?.[key], root);
    if (target !== undefined) return { ...inline(target, root, [...seen, ref]), $$ref: ref };
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value, root, seen)]));
}
const slugPlaceholder = () => ({
  wrapComponents: {
    Input: (Input, system) => (props) => h(system)(Input, props.id === 'api_key_value' ? { ...props, placeholder: 'acme' } : props),
  },
});
// Swagger UI's server select sits in an empty <label>: axe finds it unnamed (critical), and a
// screen reader says only "combo box". Named once it is drawn; React leaves an attribute it did
// not set alone.
new MutationObserver((_, observer) => {
  const select = document.getElementById('servers');
  if (!select) return;
  select.setAttribute('aria-label', 'Server');
  observer.disconnect();
}).observe(document.getElementById('app'), { childList: true, subtree: true });
SwaggerUIBundle({
  url: '/v1/openapi.json',
  dom_id: '#app',
  plugins: [thisServer, localRefs, slugPlaceholder],
  deepLinking: true,
  filter: true,
  tryItOutEnabled: true,
  requestSnippetsEnabled: true,
  displayRequestDuration: true,
  persistAuthorization: false,
  validatorUrl: null,
  queryConfigEnabled: false,
});
`;

/** How long a browser may keep Swagger UI's bundle (1.8 MB) and stylesheet before asking again; their ETag then answers 304. */
const BUNDLE_MAX_AGE_MS = 3_600_000;

/** Mounts GET / (a redirect to the reference), GET /docs, its stylesheet and its two scripts. */
export function mountDocs(app: Express): void {
  app.get('/', (_req: Request, res: Response) => res.redirect(302, DOCS_PATH));
  app.get(DOCS_PATH, (_req: Request, res: Response) => {
    res.status(200).set({ ...PAGE_HEADERS, 'Content-Security-Policy': DOCS_CSP }).type('html').send(PAGE);
  });
  app.get(INIT_PATH, (_req: Request, res: Response) => {
    res.status(200).set('Cache-Control', 'no-cache').type('application/javascript').send(INIT);
  });
  app.get(BUNDLE_PATH, (_req: Request, res: Response) => {
    res.sendFile(SWAGGER_UI_BUNDLE, { maxAge: BUNDLE_MAX_AGE_MS });
  });
  app.get(STYLE_PATH, (_req: Request, res: Response) => {
    res.sendFile(SWAGGER_UI_STYLE, { maxAge: BUNDLE_MAX_AGE_MS });
  });
}
