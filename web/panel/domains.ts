import * as api from './api.js';
import { field, h } from './dom.js';
import { pagedTable, type Paged } from './kit.js';
import type { Context } from './context.js';
import { complianceSection } from './domain-compliance.js';
import { dmarcSection } from './domain-dmarc.js';

/**
 * The Domains page (#/domains) and one domain's page (#/domains/<id>): the records to publish,
 * each with a copy button and its live check state; an admin adds a domain, verifies it now and
 * rotates its DKIM key (the API refuses the others anyway).
 */

const canChange = (ctx: Context) => ctx.current.role !== 'viewer';
/** The button that ran the last action: the page drawn again gives it the focus back, so a keyboard user stays where they were. */
let refocus: string | undefined;
const STATE: Record<api.CheckState, string> = { approved: 'approved', pending: 'pending', failed: 'failed' };
const state = (s: api.CheckState) => h('span', { class: `state ${s}` }, STATE[s]);
const CHECKS: Array<[keyof api.Domain, string]> = [['mx_status', 'MX'], ['spf_status', 'SPF'], ['dkim_status', 'DKIM'], ['dmarc_status', 'DMARC']];

export async function domainsPage(ctx: Context): Promise<Node[]> {
  const id = Number(location.hash.split('/')[2]);
  return Number.isInteger(id) && id > 0 ? domainPage(ctx, id) : listPage(ctx);
}

async function listPage(ctx: Context): Promise<Node[]> {
  const instance = ctx.current;
  const heading = h('h1', { tabindex: '-1' }, `Domains of ${instance.name}`);
  let list: Paged<api.Domain>;
  try {
    list = await pagedTable(ctx, {
      id: 'domains',
      noun: ['domain'],
      columns: ['Domain', 'Verified', ...CHECKS.map(([, c]) => c), 'Added'],
      read: (n) => api.domains(instance.slug, n),
      row: (d) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, h('a', { href: `#/domains/${d.id}` }, d.domain)),
          h('td', {}, d.is_verified ? 'verified' : 'not verified'),
          ...CHECKS.map(([key]) => h('td', {}, state(d[key] as api.CheckState))),
          h('td', {}, d.created_at.slice(0, 10)),
        ),
    });
  } catch (err) {
    return [heading, h('p', { class: 'error', role: 'alert' }, (err as Error).message)];
  }
  const table = list.node;
  if (!canChange(ctx)) return [heading, h('p', {}, `Your role here is ${instance.role}: only an admin or an owner adds a domain.`), table];

  const error = h('p', { class: 'error', role: 'alert' });
  const name = h('input', { type: 'text', name: 'domain', required: true, autocomplete: 'off', placeholder: 'example.com' });
  const button = h('button', { type: 'submit' }, 'Add domain');
  const add = h('form', { class: 'inline', 'aria-labelledby': 'add-domain' }, field('Domain', name), button);
  add.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    button.disabled = true;
    try {
      const added = await api.addDomain(instance.slug, name.value.trim());
      ctx.announce(`${added.domain} was added: publish its records, then verify.`);
      location.hash = `#/domains/${added.id}`;
    } catch (err) {
      // 409 domain_already_exists, 400 invalid_domain: the API's own words.
      error.textContent = (err as Error).message;
      button.disabled = false;
      name.focus();
    }
  });
  return [heading, table, h('h2', { id: 'add-domain' }, 'Add a domain'), h('p', {}, 'A DKIM key is made for it; the page then shows the records to publish.'), add, error];
}

async function domainPage(ctx: Context, id: number): Promise<Node[]> {
  const instance = ctx.current;
  let d: api.DomainWithRecords;
  let override = false;
  try {
    // The settings say whether this deployment lets the owner set checks by hand.
    const owner = instance.role === 'owner';
    const [domain, settings] = await Promise.all([api.domain(instance.slug, id), owner ? api.settings(instance.slug) : undefined]);
    d = domain;
    override = owner && !d.is_sandbox && settings?.dns_override === true;
  } catch (err) {
    return [h('h1', { tabindex: '-1' }, 'Domain'), h('p', { class: 'error', role: 'alert' }, (err as Error).message), h('p', {}, h('a', { href: '#/domains' }, 'All domains'))];
  }
  // Read while the rest is built; awaited before any focus is given back (below), which must find the page drawn.
  const dmarc = dmarcSection(ctx, d);
  const compliance = complianceSection(ctx, d);
  const error = h('p', { class: 'error', role: 'alert' });
  const act = async (button: HTMLButtonElement, what: () => Promise<api.DomainWithRecords>, done: (r: api.DomainWithRecords) => string) => {
    error.textContent = '';
    ctx.announce('');
    button.disabled = true;
    try {
      const r = await what();
      refocus = button.textContent ?? undefined;
      await ctx.refresh();
      ctx.announce(done(r));
    } catch (err) {
      const e = err as api.ApiError;
      // A 503: the resolver did not answer; nothing was changed, so it is worth trying again later.
      error.textContent = e.problem?.status === 503 ? `DNS did not answer, so nothing was checked or changed. Try again in a moment. (${e.message})` : e.message;
      button.disabled = false;
    }
  };
  const summary = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'State'),
    h('dd', {}, d.is_verified ? 'verified: mail from it can be sent' : 'not verified: publish the records below, then verify'),
    h('dt', {}, 'Last checked'),
    h('dd', {}, d.dns_checked_at ? d.dns_checked_at.replace('T', ' ').slice(0, 19) + ' UTC' : 'never'),
    h('dt', {}, 'Return path'),
    h('dd', {}, h('code', {}, d.return_path_domain)),
    h('dt', {}, 'Signing DKIM selector'),
    h('dd', {}, d.dkim_selector ?? 'none'),
    d.checks_overridden ? h('dt', {}, 'Checks') : null,
    d.checks_overridden
      ? h('dd', {}, d.is_sandbox ? 'vouched for by the service: this is the sandbox' : 'set by the operator without DNS (cartero domain set-checks)')
      : null,
  );
  const rows = d.dns_records.map((r) => {
    const value = h('code', { class: 'record' }, r.value);
    const label = `${r.check.toUpperCase()}${r.selector ? ` (${r.selector})` : ''}`;
    const copy = h('button', { type: 'button', class: 'secondary', 'aria-label': `Copy the ${label} value` }, 'Copy');
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(r.value);
        copy.textContent = 'Copied';
        ctx.announce(`The ${label} value was copied.`);
      } catch {
        // No clipboard (not allowed here): select the value, so Ctrl+C copies it.
        getSelection()?.selectAllChildren(value);
        copy.textContent = 'Selected: press Ctrl+C';
        ctx.announce(`The ${label} value is selected: press Ctrl+C to copy it.`);
      }
    });
    const purpose = r.check === 'dkim' ? (r.signing ? 'signs mail now' : 'published next to the signing key') : r.check === 'dmarc' ? 'suggested policy; its reports come to Cartero' : 'return path';
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, label, h('br'), h('small', {}, purpose)),
      h('td', {}, r.type),
      h('td', {}, h('code', {}, r.name)),
      h('td', {}, value),
      h('td', {}, state(r.status)),
      h('td', {}, copy),
    );
  });
  const records = h(
    'table',
    { class: 'records' },
    h('caption', {}, 'DNS records to publish'),
    h('colgroup', {}, ...['check', 'type', 'name', 'value', 'state', 'copy'].map((c) => h('col', { class: `col-${c}` }))),
    h('thead', {}, h('tr', {}, ...['Check', 'Type', 'Name', 'Value', 'State', 'Copy'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows),
  );
  const reports = await dmarc;
  const checklist = await compliance;
  const controls: Node[] = [];
  if (d.is_sandbox) {
    controls.push(
      h(
        'p',
        { class: 'help' },
        'This is the instance’s sandbox domain. Its records are the service operator’s, so it is neither verified nor rotated here. ' +
          'Its senders send only to the addresses of this instance’s members: try sending before publishing any record of your own.',
      ),
    );
  } else if (canChange(ctx)) {
    const verify = h('button', { type: 'button' }, 'Verify now');
    verify.addEventListener('click', () => act(verify, () => api.verifyDomain(instance.slug, id), (r) => (r.is_verified ? `${r.domain} is verified.` : `${r.domain} was checked: not verified yet, see each record's state.`)));
    const rotate = h('button', { type: 'button', class: 'secondary' }, 'Rotate DKIM key');
    rotate.addEventListener('click', () => {
      if (confirm(`Make a new DKIM key for ${d.domain}? Publish its record before it signs.`)) void act(rotate, () => api.rotateDkim(instance.slug, id), (r) => `A new DKIM key was made for ${r.domain}: publish its record.`);
    });
    controls.push(h('div', { class: 'actions' }, verify, rotate));
    const again = [verify, rotate].find((b) => b.textContent === refocus);
    refocus = undefined;
    // After the shell has put the page in place.
    if (again) setTimeout(() => again.focus());
  } else controls.push(h('p', {}, `Your role here is ${instance.role}: only an admin or an owner verifies or rotates.`));
  if (override) controls.push(overrideForm(d, (checks, button) => act(button, () => api.setChecks(instance.slug, id, checks), (r) => `The checks of ${r.domain} were set by hand.`)));
  return [h('p', {}, h('a', { href: '#/domains' }, 'All domains')), h('h1', { tabindex: '-1' }, `Domain ${d.domain}`), error, summary, ...controls, records, checklist, reports];
}

/** The operator override, where the deployment allows it: each check's state chosen by hand. */
function overrideForm(d: api.DomainWithRecords, submit: (checks: api.DnsChecks, button: HTMLButtonElement) => void): Node {
  const selects = CHECKS.map(([column]) => {
    const check = column.replace('_status', '');
    const select = h('select', { id: `override-${check}`, name: check });
    for (const state of ['pending', 'approved', 'failed'] as const) {
      const option = h('option', { value: state }, state);
      if (d[column] === state) option.selected = true;
      select.append(option);
    }
    return select;
  });
  const button = h('button', { type: 'submit', class: 'secondary' }, 'Set checks');
  const form = h(
    'form',
    { class: 'inline', 'aria-labelledby': 'override-heading' },
    ...selects.map((select, i) => h('div', { class: 'field' }, h('label', { for: select.id }, CHECKS[i]![1]), select)),
    button,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit(Object.fromEntries(selects.map((s) => [s.name, s.value as api.CheckState])), button);
  });
  return h(
    'section',
    { class: 'override' },
    h('h2', { id: 'override-heading' }, 'Set the checks by hand'),
    h('p', { class: 'help' }, 'This deployment allows the operator override, for networks whose DNS the service cannot see. Checks set here stay until Verify now reads DNS again.'),
    form,
  );
}
