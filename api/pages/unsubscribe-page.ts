import type { UnsubscribeTarget } from '../../domain/tracking/unsubscribe.js';
import { escapeHtml as escape, pageHtml } from './public-pages.js';

export interface PageState {
  step: 'confirm' | 'unsubscribed' | 'resubscribed';
  target: UnsubscribeTarget;
}

/**
 * The small page behind a mail's unsubscribe link (api/routes/unsubscribe-links.ts); its form
 * posts back to the link itself.
 */
export function unsubscribePage(state: PageState): string {
  const body = (() => {
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
  return pageHtml('Email preferences', body);
}
