import * as api from './api.js';
import { h } from './dom.js';
import type { Context } from './context.js';

/**
 * A domain's checklist against the mailbox providers' sender rules on its page (issue 40,
 * docs/panel.md "A domain"): each check of GET …/compliance as it is, its state in words (not
 * colour alone), what was found, whom it applies to and the provider's page. "Check again" reads
 * it anew (the DNS records are resolved at each read) and says the result in the live region.
 */

const RULE: Record<api.ComplianceCheck['rule'], string> = {
  spf_aligned: 'SPF published and aligned',
  dkim_aligned: 'DKIM signing, aligned, with a key of 1,024 bits or more (2,048 recommended)',
  dmarc_policy: 'DMARC record, p=none at least',
  dmarc_reports_received: 'DMARC aggregate reports reach Cartero',
  one_click_unsubscribe: 'One-click unsubscribe on marketing mail (last 30 days)',
  unsubscribe_within_2_days: 'Unsubscribes in force within 2 days (last 30 days)',
  complaint_rate: 'Complaint rate below 0.3 % at each provider (last 7 days)',
};
const STATUS: Record<api.ComplianceCheck['status'], string> = { pass: 'Pass', warn: 'Warning', fail: 'Fail', unknown: 'Unknown' };
const PROVIDER: Record<api.ComplianceCheck['applies_to'][number], string> = { gmail: 'Gmail', yahoo: 'Yahoo', microsoft: 'Outlook.com' };
const SOURCE = (url: string) => (url.includes('google.com') ? 'Google' : url.includes('yahooinc.com') ? 'Yahoo' : url.includes('microsoft.com') ? 'Microsoft' : 'source');

function item(c: api.ComplianceCheck): HTMLLIElement {
  return h(
    'li',
    { class: `check ${c.status}`, 'data-rule': c.rule },
    h('span', { class: `state ${c.status}` }, STATUS[c.status]),
    h(
      'div',
      {},
      h('strong', {}, RULE[c.rule] ?? c.rule),
      h('p', {}, c.detail),
      h(
        'small',
        {},
        `Applies to ${c.applies_to.map((p) => PROVIDER[p]).join(', ')}. `,
        h('a', { href: c.source, rel: 'noopener noreferrer', target: '_blank' }, `${SOURCE(c.source)}'s sender rules`),
      ),
    ),
  );
}

const tally = (checks: api.ComplianceCheck[]): string =>
  (['fail', 'warn', 'unknown', 'pass'] as const)
    .map((s) => [s, checks.filter((c) => c.status === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${STATUS[s].toLowerCase()}`)
    .join(', ');

export async function complianceSection(ctx: Context, d: api.DomainWithRecords): Promise<HTMLElement> {
  const slug = ctx.current.slug;
  const list = h('ul', { class: 'checklist', 'aria-labelledby': 'compliance-heading' });
  const summary = h('p', { id: 'compliance-summary' });
  const error = h('p', { class: 'error', role: 'alert', id: 'compliance-error' });
  const again = h('button', { type: 'button', class: 'secondary' }, 'Check again');
  const load = async (): Promise<string | undefined> => {
    error.textContent = '';
    list.setAttribute('aria-busy', 'true');
    try {
      const r = await api.domainCompliance(slug, d.domain);
      list.replaceChildren(...r.checks.map(item));
      summary.textContent = `${r.checks.length} checks: ${tally(r.checks)}.`;
      return `Sender rules of ${d.domain}: ${tally(r.checks)}.`;
    } catch (err) {
      list.replaceChildren();
      summary.textContent = '';
      const e = err as api.ApiError;
      error.textContent = e.problem?.status === 503 ? `The checks could not be read just now; try again in a moment. (${e.message})` : e.message;
      return undefined;
    } finally {
      list.removeAttribute('aria-busy');
    }
  };
  again.addEventListener('click', async () => {
    ctx.announce('');
    again.disabled = true;
    const said = await load();
    again.disabled = false;
    again.focus();
    if (said) ctx.announce(said);
  });
  await load();
  return h(
    'section',
    { class: 'compliance', 'aria-labelledby': 'compliance-heading' },
    h('h2', { id: 'compliance-heading' }, 'Sender rules checklist'),
    h(
      'p',
      { class: 'help' },
      'Gmail, Yahoo and Outlook.com hold bulk senders to published rules; mail that breaks them goes to spam or is refused. ' +
        'Each line is checked now against this domain’s DNS records and the mail it sent.',
    ),
    summary,
    again,
    error,
    list,
  );
}
