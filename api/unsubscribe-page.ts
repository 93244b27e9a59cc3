import { createRequire } from 'node:module';
import type { UnsubscribeTarget } from '../domain/tracking/unsubscribe.js';

export type PageState =
  | { step: 'confirm' | 'unsubscribed' | 'resubscribed'; target: UnsubscribeTarget }
  | { step: 'invalid'; detail: string };

// escape-html (Express's own), CommonJS without type declarations.
const escape = createRequire(import.meta.url)('escape-html') as (text: string) => string;

/**
 * The small page behind a mail's unsubscribe link. It posts back to its own URL (relative
 * action), so it works behind any PUBLIC_URL. Plain HTML and inline style: no script, no
 * external resource (the page's CSP forbids both).
 */
export function unsubscribePage(state: PageState): string {
  const body = (() => {
    if (state.step === 'invalid') return `<h1>Link not valid</h1><p>${escape(state.detail)}</p>`;
    const who = `<strong>${escape(state.target.recipient)}</strong>`;
    const from = state.target.sender ? ` from <strong>${escape(state.target.sender)}</strong>` : '';
    switch (state.step) {
      case 'confirm':
        return `<h1>Unsubscribe</h1>
<p>Stop sending mail to ${who}${from}?</p>
<form method="post">
  <label for="reason">Reason (optional)</label>
  <select id="reason" name="reason">
    <option value="">-</option>
    <option value="too_frequent">Too many mails</option>
    <option value="not_relevant">Not relevant to me</option>
    <option value="never_signed_up">I never signed up</option>
    <option value="other">Other</option>
  </select>
  <label for="comment">Comment (optional)</label>
  <textarea id="comment" name="comment" rows="3" maxlength="2000"></textarea>
  <button type="submit">Unsubscribe</button>
</form>`;
      case 'unsubscribed':
        return `<h1>You are unsubscribed</h1>
<p>${who} will no longer receive these mails${from}.</p>
<form method="post"><input type="hidden" name="action" value="resubscribe"><button type="submit">Resubscribe</button></form>`;
      case 'resubscribed':
        return `<h1>You are subscribed again</h1><p>${who} will receive these mails${from} again.</p>`;
    }
  })();
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>Email preferences</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
label{display:block;margin-top:1rem}select,textarea{width:100%}button{margin-top:1rem;padding:.5rem 1rem}</style>
</head><body>${body}</body></html>
`;
}
