import type { SubmissionConfirmTarget } from '../../domain/forms/confirm.js';
import type { ConfirmStep } from './confirm-link-routes.js';
import { escapeHtml as escape, pageHtml } from './public-pages.js';

/**
 * The pages behind a form submission's confirmation link (api/routes/form-confirm-links.ts), in
 * the shell and under the headers of every public page (api/pages/public-pages.ts). The confirm step's
 * form posts back to the link itself.
 */

const TITLE = 'Confirmation';

function what(target: SubmissionConfirmTarget): string {
  const form = `<strong>${escape(target.formName)}</strong>`;
  const who = target.email ? ` as <strong>${escape(target.email)}</strong>` : '';
  return `what you sent with the form ${form}${who}`;
}

function consents(target: SubmissionConfirmTarget): string {
  if (!target.consents.length) return '';
  const items = target.consents.map((c) => `<li>${escape(c.term_name)} (version ${escape(c.version)})</li>`).join('');
  return `\n<p>Confirming puts in force what you accepted:</p><ul>${items}</ul>`;
}

export function formConfirmPage(step: ConfirmStep, target: SubmissionConfirmTarget): string {
  switch (step) {
    case 'confirm':
      return pageHtml(
        TITLE,
        `<h1>Confirm your submission</h1>
<p>Confirm ${what(target)}?</p>${consents(target)}
<form method="post"><button type="submit">Confirm</button></form>
<p>Nothing is confirmed until you press Confirm. The link works until ${escape(target.expiresAt)}.</p>`,
      );
    case 'confirmed':
      return pageHtml(TITLE, `<h1>Thank you: confirmed</h1><p>You confirmed ${what(target)}.</p>`);
    case 'already_confirmed':
      return pageHtml(TITLE, `<h1>Already confirmed</h1><p>You already confirmed ${what(target)}; nothing more to do.</p>`);
    case 'expired':
      return pageHtml(TITLE, '<h1>This link has expired</h1><p>It was not confirmed in time, so nothing was confirmed. Fill in the form again.</p>');
  }
}
