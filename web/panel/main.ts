import * as api from './api.js';
import { field, h } from './dom.js';
import { membersPage } from './members.js';
import { activityPage } from './activity.js';
import { dashboardPage } from './dashboard.js';
import { domainsPage } from './domains.js';
import { keysPage } from './keys.js';
import { sendersPage } from './senders.js';
import { restrictionsPage } from './restrictions.js';
import { settingsPage } from './settings.js';
import { webhooksPage } from './webhooks.js';
import { consentPage } from './consent.js';
import { templatesPage } from './templates.js';
import { formsPage } from './forms.js';
import { fieldsPage } from './fields.js';
import { datasetsPage } from './datasets.js';
import { listsPage } from './lists.js';
import { instancesPage } from './pages.js';
import { invitationsSection } from './invitations.js';
import type { Context } from './context.js';

/**
 * The operator panel in the browser (docs/panel.md, The web panel): the login form, then the
 * shell (instance switcher, navigation, sign out) around one page at a time, chosen by the URL's
 * hash (#/members), so the back button and a bookmark within the session work and nothing reloads.
 */

const app = document.getElementById('app')!;
let context: Context | undefined;

/** The built pages past Instances and Members, in the navigation's order (one line each). */
const PAGES: Record<string, [string, (ctx: Context) => Promise<Node[]>]> = {
  dashboard: ['Dashboard', dashboardPage],
  activity: ['Activity', activityPage],
  domains: ['Domains', domainsPage],
  senders: ['Senders', sendersPage],
  keys: ['API keys', keysPage],
  restrictions: ['Restrictions', restrictionsPage],
  webhooks: ['Webhooks', webhooksPage],
  consent: ['Consent', consentPage],
  templates: ['Templates', templatesPage],
  forms: ['Forms', formsPage],
  fields: ['Fields', fieldsPage],
  datasets: ['Datasets', datasetsPage],
  lists: ['CSV lists', listsPage],
  settings: ['Settings', settingsPage],
};

const NAV: Array<[string, string]> = [
  ['instances', 'Instances'],
  ['members', 'Members'],
  ...Object.entries(PAGES).map(([id, [title]]): [string, string] => [id, title]),
];

function loginView(message = ''): void {
  context = undefined;
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const error = h('p', { class: 'error', role: 'alert' });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { method: 'post', class: 'login', 'aria-labelledby': 'login-title' }, field('Email', email), field('Password', password), button, error);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = '';
    try {
      const user = await api.signIn(email.value, password.value);
      password.value = '';
      await shell(user);
    } catch (err) {
      error.textContent = err instanceof api.ApiError ? err.problem.detail : 'The server could not be reached.';
      button.disabled = false;
      password.focus();
    }
  });
  app.replaceChildren(
    h('main', { class: 'login-page' }, h('h1', { id: 'login-title' }, 'Sign in to Cartero'), message ? h('p', { role: 'status' }, message) : null, form),
  );
  if (location.hash) history.replaceState(null, '', location.pathname);
  email.focus();
  // When the first page became usable, for the measure in docs/panel.md (test/panel-web.test.ts reads it).
  if (!performance.getEntriesByName('panel-usable').length) performance.mark('panel-usable');
}

async function shell(user: api.User, message = '', slug?: string): Promise<void> {
  const instances = await api.instances();
  const main = h('main', { id: 'main', tabindex: '-1' });
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const reload = (text: string, to?: string) => shell(user, text, to);
  if (!instances.length) {
    context = undefined;
    window.onhashchange = null;
    app.replaceChildren(header(user, null), h('div', { class: 'content' }, status, main));
    main.append(
      h('h1', { tabindex: '-1' }, 'No instance yet'),
      h('p', {}, 'You are not a member of any instance. An owner invites you (you accept below), or the operator adds you.'),
      ...(await invitationsSection(reload)),
    );
    status.textContent = message;
    main.querySelector<HTMLElement>('h1')?.focus();
    return;
  }
  const ctx: Context = {
    user,
    instances,
    current: instances.find((i) => i.slug === slug) ?? instances[0]!,
    announce: (message) => (status.textContent = message),
    switchTo: (slug) => {
      ctx.current = instances.find((i) => i.slug === slug) ?? ctx.current;
      switcher.value = ctx.current.slug;
      ctx.announce(`Now working in ${ctx.current.name}.`);
      void draw(false);
    },
    refresh: () => draw(false),
    reload,
  };
  context = ctx;
  const switcher = h('select', { name: 'instance' });
  for (const i of instances) switcher.append(h('option', { value: i.slug }, `${i.name} (${i.slug})`));
  switcher.value = ctx.current.slug;
  switcher.addEventListener('change', () => ctx.switchTo(switcher.value));
  const nav = h('nav', { 'aria-label': 'Panel' }, h('ul', {}, ...NAV.map(([id, text]) => h('li', {}, h('a', { href: `#/${id}`, 'data-page': id }, text)))));
  app.replaceChildren(header(user, switcher), h('div', { class: 'layout' }, nav, h('div', { class: 'content' }, status, main)));

  // Draws overlap (a change's redraw, a click on the navigation): only the newest one's page is
  // shown, so a slower, older read never replaces the page drawn after it.
  let drawing = 0;
  async function draw(moveFocus = true): Promise<void> {
    if (context !== ctx) return;
    const mine = ++drawing;
    // One resource's own page is <area>/<id> (domains/3, webhooks/7): its area's module draws both.
    const page = (location.hash.replace(/^#\//, '') || 'instances').split('/')[0]!;
    for (const a of nav.querySelectorAll('a')) {
      if (a.dataset['page'] === page) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const content = page === 'members' ? await membersPage(ctx) : PAGES[page] ? await PAGES[page][1](ctx) : await instancesPage(ctx);
    if (context !== ctx || mine !== drawing) return;
    // Another page: the last page's message is no longer about what is shown.
    if (moveFocus) ctx.announce('');
    main.replaceChildren(...content);
    document.title = `${main.querySelector('h1')?.textContent ?? 'Panel'} · Cartero`;
    // A new page: focus its heading, so a keyboard or screen-reader user starts there.
    if (moveFocus) main.querySelector<HTMLElement>('h1')?.focus();
  }
  window.onhashchange = () => void draw();
  await draw();
  if (message) ctx.announce(message);
}

function header(user: api.User, switcher: HTMLSelectElement | null): HTMLElement {
  const signOut = h('button', { type: 'button', class: 'secondary' }, 'Sign out');
  signOut.addEventListener('click', async () => {
    window.onhashchange = null;
    await api.signOut().catch(() => undefined);
    loginView('You are signed out.');
  });
  return h(
    'header',
    { class: 'top' },
    h('span', { class: 'brand' }, 'Cartero'),
    switcher ? field('Instance', switcher) : null,
    h('span', { class: 'who' }, user.email),
    signOut,
  );
}

api.setSignedOutHandler((message) => loginView(message));
loginView();
