import type { ConfirmationTarget } from '../../domain/consent/confirmation.js';
import type { ConfirmStep } from './confirm-link-routes.js';
import { escapeHtml as escape, pageHtml } from './public-pages.js';

/**
 * The small pages behind a double opt-in confirmation link (api/routes/consent-confirm-links.ts),
 * in the shell and under the headers of every public page (api/pages/public-pages.ts: no script, no
 * external resource, never cached). The confirm step's form posts back to the link itself.
 */

const TITLE = 'Consent confirmation';

function who(target: ConfirmationTarget): string {
  return target.emails.length ? target.emails.map((e) => `<strong>${escape(e)}</strong>`).join(', ') : 'you';
}

function term(target: ConfirmationTarget): string {
  return `<strong>${escape(target.termName)}</strong> (version ${escape(target.version)})`;
}

export function consentConfirmPage(step: ConfirmStep, target: ConfirmationTarget): string {
  switch (step) {
    case 'confirm': {
      const document = target.documentUrl ? `\n<p><a href="${escape(target.documentUrl)}" rel="noopener noreferrer">The document</a></p>` : '';
      return pageHtml(
        TITLE,
        `<h1>Confirm your consent</h1>
<p>Confirm that ${who(target)} accepts ${term(target)}?</p>
<details><summary>Read the text</summary><div style="white-space:pre-wrap">${escape(target.body)}</div></details>${document}
<form method="post"><button type="submit">Confirm</button></form>
<p>Nothing is confirmed until you press Confirm. The link works until ${escape(target.expiresAt)}.</p>`,
      );
    }
    case 'confirmed':
      return pageHtml(TITLE, `<h1>Thank you: confirmed</h1><p>${who(target)} accepted ${term(target)}.</p>`);
    case 'already_confirmed':
      return pageHtml(TITLE, `<h1>Already confirmed</h1><p>${who(target)} already accepted ${term(target)}; nothing more to do.</p>`);
    case 'expired':
      return pageHtml(TITLE, `<h1>This link has expired</h1><p>It was not confirmed in time, so nothing was confirmed. Ask again where you signed up.</p>`);
  }
}
