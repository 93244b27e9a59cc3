import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { createField } from '../domain/fields/catalog.js';
import { createForm, setFormActive, type FormItemInput } from '../domain/forms/definition.js';
import type { FormSettings } from '../domain/forms/read.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';
import { SCREENSHOTS, useChromium } from './helpers/chromium.js';

/**
 * The hosted form page (GET/POST /f/{public_token}, issue 15), against the real web app and
 * Postgres: what the page draws from the form (settings, colours, items in order, labels bound
 * to inputs, input types from the catalog, required marks, the term's current text) and what the
 * owner's texts and CSS cannot do to it; then in headless Chromium (Debian's chromium through
 * playwright-core, as test/template-screenshots.test.ts): fill and submit (the answer page, one
 * submission with source form), the honeypot (a success page, nothing stored), a 422 drawn on the
 * page beside its item, a term version that changed while the page was open; then several errors
 * at once, the page's submission key (posting one page twice is one submission), a deactivated
 * form, and the per-address limit (429). Screenshots are kept under artifacts/screenshots/.
 */


const dbs = await testDatabases(t, 'formpage');
const pool = dbs.pool;
const a = await makeTenant(pool, { scopes: ['form:read'] });
const web = await startTestWeb(t, dbs, { env: { FORM_PAGE_RATE_PER_MINUTE: '1000' } });

await createField(a.tenant, pool, { key: 'first_name', name: 'First name', type: 'text', maxLength: 40 });
await createField(a.tenant, pool, { key: 'city', name: 'City', type: 'select', options: ['Lisbon', 'Porto'] });
await createField(a.tenant, pool, { key: 'age', name: 'Age', type: 'number', min: 16, max: 120 });
const purpose = (await createPurpose(a.tenant, pool, { name: 'Newsletter' })).id;
const term = await createTerm(a.tenant, pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [purpose], channels: ['mail'] });
await addTermVersion(a.tenant, pool, term.id, { version: 'v1', body: 'We write to you twice a month.', documentUrl: 'https://example.test/terms' });
await setCurrentVersion(a.tenant, pool, term.id, 'v1');

/** A form through the domain function the CLI's `form create` calls; its items' ids in order. */
async function makeForm(tenant: Tenant, name: string, items: FormItemInput[], opts: { settings?: object; requiresConfirmation?: boolean } = {}) {
  const created = await createForm(tenant, pool, {
    name,
    kind: 'advanced',
    type: 'registration',
    requires_confirmation: opts.requiresConfirmation ?? false,
    // Stored as given: the CLI's schema checks the colours, the page must not rely on it.
    settings: (opts.settings ?? null) as FormSettings | null,
    items,
  });
  return { id: created.id, token: created.public_token, ids: created.items.map((i) => i.id), url: `${web.url}/f/${created.public_token}` };
}

const ITEMS: FormItemInput[] = [
  { type: 'text', text: 'Join our <b>list</b>.\nIt takes a minute.' },
  { type: 'field', field_key: 'email', label: 'Email', required: true },
  { type: 'field', field_key: 'first_name', label: 'First name' },
  { type: 'field', field_key: 'phone', label: 'Mobile phone' },
  { type: 'field', field_key: 'city', label: 'City' },
  { type: 'field', field_key: 'age', label: 'Age' },
  { type: 'separator' },
  { type: 'consent', term_id: term.id, channel: 'mail', label: 'I want the newsletter', required: true },
];
const SETTINGS = {
  title: 'Join <us> & more',
  header_text: 'Header line',
  footer_text: 'Footer <line>',
  design: {
    primary_color: '#0a7',
    secondary_color: 'red;}</style><script>window.pwned=1</script>',
    logo_url: 'javascript:alert(1)',
    custom_css: 'body{background:#fafafa}</style><script>window.pwned=1</script><style>',
  },
};
const form = await makeForm(a.tenant, 'Newsletter', ITEMS, { settings: SETTINGS });
const [, EMAIL, NAME, PHONE, CITY, AGE, , CONSENT] = form.ids as number[];

const submissions = async (formId: number) =>
  (await pool.query(`SELECT id, source, status, field_values, host(ip_address) AS ip, user_agent FROM form_submissions WHERE form_id = $1 ORDER BY id`, [formId])).rows;

const post = (url: string, fields: Record<string, string>, accept = 'text/html') =>
  fetch(url, { method: 'POST', headers: { accept, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });

/** The page's own hidden fields (term versions, submission key), as a browser would post them. */
async function hiddenFields(url: string): Promise<Record<string, string>> {
  const html = await (await fetch(url)).text();
  return Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
}

t.test('GET draws the form from its settings and items', async (t) => {
  const res = await fetch(form.url, { headers: { accept: 'text/html' } });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/html/);
  t.equal(res.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; img-src https: http:", 'no script, images for the logo only');
  t.match(res.headers.get('cache-control'), /no-store/);
  const html = await res.text();
  t.match(html, '<title>Join &lt;us&gt; &amp; more</title>');
  t.match(html, '<h1>Join &lt;us&gt; &amp; more</h1>');
  t.match(html, 'Header line');
  t.match(html, 'Footer &lt;line&gt;');
  t.match(html, 'Join our &lt;b&gt;list&lt;/b&gt;.\nIt takes a minute.', 'a text block is text');
  t.match(html, '.cf h1{color:#0a7}', 'the primary colour');
  t.notMatch(html, '<script', 'no markup from the settings: the bad colour is dropped, the CSS cannot close its style');
  t.notMatch(html, 'red;}', 'a colour that is not #rgb or #rrggbb is not used');
  t.match(html, 'body{background:#fafafa}\\3c /style>\\3c script>', 'the custom CSS, with its "<" escaped for CSS');
  t.notMatch(html, 'javascript:', 'a logo that is not http(s) is not drawn');
  t.match(html, `<label for="item-${EMAIL}">Email <span class="req" aria-hidden="true">*</span></label>`, 'a label bound to its input, with the required mark');
  t.match(html, new RegExp(`<input type="email" id="item-${EMAIL}" name="item_${EMAIL}" required autocomplete="email">`));
  t.match(html, new RegExp(`<input type="text" id="item-${NAME}" name="item_${NAME}" autocomplete="given-name" maxlength="40">`), 'the catalog max_length');
  t.match(html, new RegExp(`<input type="tel" id="item-${PHONE}" name="item_${PHONE}" autocomplete="tel" inputmode="tel">`));
  t.match(html, new RegExp(`<select id="item-${CITY}" name="item_${CITY}"><option value="">-</option><option value="Lisbon">Lisbon</option><option value="Porto">Porto</option></select>`));
  t.match(html, new RegExp(`<input type="number" id="item-${AGE}" name="item_${AGE}" min="16" max="120" step="any">`));
  t.match(html, '<hr>');
  const version = (await pool.query('SELECT id FROM consent_term_versions WHERE term_id = $1 AND is_current', [term.id])).rows[0].id;
  t.match(html, `<input type="hidden" name="term_version_${CONSENT}" value="${version}">`, 'the version shown, sent back');
  t.match(html, `<label for="item-${CONSENT}">I want the newsletter <span class="req" aria-hidden="true">*</span></label>`);
  t.match(html, '<summary>Read Newsletter terms (version v1)</summary><div>We write to you twice a month.</div>', 'the current version\'s text');
  t.match(html, '<a href="https://example.test/terms"', 'and its document');
  const order = [EMAIL, NAME, PHONE, CITY, AGE, CONSENT].map((id) => html.indexOf(`id="item-${id}"`));
  t.same(order, [...order].sort((x, y) => x - y), 'items in display order');
  t.ok(html.indexOf('<hr>') > html.indexOf(`id="item-${AGE}"`) && html.indexOf('<hr>') < html.indexOf(`id="item-${CONSENT}"`), 'the separator in its place');
  t.match(html, /<input type="hidden" name="submission_key" value="[A-Za-z0-9_-]{22}">/);
  t.match(html, '<input type="text" id="hp-website" name="website" tabindex="-1" autocomplete="off">', 'the honeypot');

  for (const token of ['nope', 'A'.repeat(24)]) {
    const missing = await fetch(`${web.url}/f/${token}`, { headers: { accept: 'text/html' } });
    t.equal(missing.status, 404, `${token}: 404`);
    t.match(await missing.text(), '<h1>Link not valid</h1>');
    t.match(await (await fetch(`${web.url}/f/${token}`, { headers: { accept: 'application/json' } })).json(), { status: 404, code: 'not_found' });
  }
});

const chrome = useChromium(t, 'the browser tests');
if (chrome) {
  /** A page that reaches only the service (nothing else is fetched). */
  const open = async (url: string): Promise<Page> => {
    const page = await chrome.browser.newPage({ viewport: { width: 600, height: 900 } });
    await page.route('**/*', (route) => (route.request().url().startsWith(web.url) ? route.continue() : route.abort()));
    await page.goto(url);
    return page;
  };

  t.test('Chromium: fill by the labels, submit, see the answer page; one submission with source form', async (t) => {
    const page = await open(form.url);
    try {
      await page.screenshot({ path: join(SCREENSHOTS, 'form-hosted-page.png'), fullPage: true });
      t.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined, 'no script of the settings ran');
      await page.getByLabel('Email').fill('Ann@Example.org');
      await page.getByLabel('First name').fill('Ann');
      await page.getByLabel('City').selectOption('Porto');
      await page.getByLabel('I want the newsletter').check();
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send' }).click()]);
      await page.screenshot({ path: join(SCREENSHOTS, 'form-hosted-page-sent.png'), fullPage: true });
      t.equal(await page.getByRole('heading', { level: 2 }).innerText(), 'Thank you');
      t.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Join <us> & more', 'in the form\'s own frame');
    } finally {
      await page.close();
    }
    const rows = await submissions(form.id);
    t.equal(rows.length, 1);
    t.match(rows[0], { source: 'form', status: 'confirmed', ip: '127.0.0.1', user_agent: /HeadlessChrome|Chrome/ });
    t.same(rows[0].field_values, { email: 'ann@example.org', first_name: 'Ann', city: 'Porto' });
    const events = (await pool.query('SELECT source, submission_id, form_id, form_name, status FROM consent_events WHERE submission_id = $1', [rows[0].id])).rows;
    t.same(events, [{ source: 'form', submission_id: rows[0].id, form_id: form.id, form_name: 'Newsletter', status: 'confirmed' }], 'its consent, source form');
  });

  t.test('Chromium: a filled honeypot is answered like a success and stores nothing', async (t) => {
    const before = (await submissions(form.id)).length;
    const page = await open(form.url);
    try {
      const trap = await page.locator('#hp-website').boundingBox();
      t.ok(trap && trap.x + trap.width <= 0, 'the trap is off-screen for a person');
      t.equal(await page.locator('#hp-website').getAttribute('tabindex'), '-1', 'and out of the tab order');
      await page.getByLabel('Email').fill('bot@example.org');
      await page.getByLabel('I want the newsletter').check();
      // What a bot does: fill every input it finds.
      await page.locator('#hp-website').fill('https://spam.example', { force: true });
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send' }).click()]);
      t.equal(await page.getByRole('heading', { level: 2 }).innerText(), 'Thank you', 'the same page as a success');
    } finally {
      await page.close();
    }
    t.equal((await submissions(form.id)).length, before, 'nothing stored');
    t.equal(Number((await pool.query(`SELECT count(*) FROM consent_rules WHERE contact = 'bot@example.org'`)).rows[0].count), 0, 'no consent recorded');
  });

  t.test('Chromium: a value the browser lets through and the service refuses: 422, the error beside its item, the answers kept', async (t) => {
    const before = (await submissions(form.id)).length;
    const page = await open(form.url);
    try {
      await page.getByLabel('Email').fill('bea@example.org');
      await page.getByLabel('Mobile phone').fill('12345');
      await page.getByLabel('I want the newsletter').check();
      const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send' }).click()]);
      t.equal(response?.status(), 422);
      await page.screenshot({ path: join(SCREENSHOTS, 'form-hosted-page-422.png'), fullPage: true });
      const phone = page.getByLabel('Mobile phone');
      t.equal(await phone.getAttribute('aria-invalid'), 'true');
      const described = await phone.getAttribute('aria-describedby');
      t.match(await page.locator(`#${described}`).innerText(), /phone number in international form/, 'the message, tied to its input');
      t.match(await page.getByRole('alert').innerText(), /One answer needs your attention/);
      t.equal(await page.getByLabel('Email').inputValue(), 'bea@example.org', 'the other answers kept');
      t.ok(await page.getByLabel('I want the newsletter').isChecked());
      await phone.fill('+351 912 345 678');
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send' }).click()]);
      t.equal(await page.getByRole('heading', { level: 2 }).innerText(), 'Thank you', 'corrected, it goes through');
    } finally {
      await page.close();
    }
    const rows = await submissions(form.id);
    t.equal(rows.length, before + 1, 'one submission: the refused one stored nothing');
    t.match(rows.at(-1).field_values, { email: 'bea@example.org', phone: '+351912345678' });
  });

  t.test('Chromium: the term changed while the page was open: 422, the new text shown, the box to tick again', async (t) => {
    const page = await open(form.url);
    try {
      await page.getByLabel('Email').fill('cai@example.org');
      await page.getByLabel('I want the newsletter').check();
      await addTermVersion(a.tenant, pool, term.id, { version: 'v2', body: 'Now weekly.' });
      await setCurrentVersion(a.tenant, pool, term.id, 'v2');
      const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send' }).click()]);
      t.equal(response?.status(), 422);
      t.match(await page.locator('details summary').innerText(), 'version v2');
      t.notOk(await page.getByLabel('I want the newsletter').isChecked(), 'not ticked for the person');
      t.match(await page.locator('.error').innerText(), /changed since the page was loaded/);
      await page.getByLabel('I want the newsletter').check();
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send' }).click()]);
      t.equal(await page.getByRole('heading', { level: 2 }).innerText(), 'Thank you');
    } finally {
      await page.close();
    }
    const v2 = (await pool.query('SELECT id FROM consent_term_versions WHERE term_id = $1 AND is_current', [term.id])).rows[0].id;
    const last = (await submissions(form.id)).at(-1);
    t.same((await pool.query('SELECT term_version_id FROM consent_events WHERE submission_id = $1', [last.id])).rows, [{ term_version_id: v2 }], 'accepted under the version shown');
  });
}

t.test('several errors at once, each beside its item; a non-browser client gets the problem object', async (t) => {
  const hidden = await hiddenFields(form.url);
  const before = (await submissions(form.id)).length;
  const fields = { ...hidden, [`item_${EMAIL}`]: '', [`item_${AGE}`]: '7', [`item_${CITY}`]: 'Faro' };
  const res = await post(form.url, fields);
  t.equal(res.status, 422);
  const html = await res.text();
  t.match(html, '4 answers need your attention');
  t.match(html, new RegExp(`id="item-${EMAIL}"[^>]* aria-invalid="true" aria-describedby="item-${EMAIL}-error-0"[^>]*>\\n<p class="error" id="item-${EMAIL}-error-0">Please fill this in.</p>`));
  t.match(html, new RegExp(`<p class="error" id="item-${CITY}-error-0">The value is not one of the field’s options</p>`));
  t.match(html, new RegExp(`<p class="error" id="item-${AGE}-error-0">[^<]+</p>`));
  t.match(html, new RegExp(`<p class="error" id="item-${CONSENT}-error-0">Please accept this to continue.</p>`));
  t.match(html, new RegExp(`<input type="number" id="item-${AGE}" name="item_${AGE}"[^>]* value="7"`), 'values kept');
  t.notMatch(html, new RegExp(`<option value="Faro"`), 'a value outside the options is not added to them');
  t.match(html, `name="submission_key" value="${hidden.submission_key}"`, 'the same page key: nothing was stored under it');
  const json = await post(form.url, fields, 'application/json');
  t.equal(json.status, 422);
  const body = await json.json();
  t.match(body, { status: 422, code: 'validation_error' });
  t.same(body.errors.map((e: { code: string }) => e.code).sort(), ['consent_required', 'field_value_invalid', 'field_value_invalid', 'field_value_missing']);
  t.equal((await submissions(form.id)).length, before, 'nothing stored');
});

t.test('one page posted twice is one submission (its submission key)', async (t) => {
  const hidden = await hiddenFields(form.url);
  const before = (await submissions(form.id)).length;
  const fields = { ...hidden, [`item_${EMAIL}`]: 'dan@example.org', [`item_${CONSENT}`]: 'true' };
  for (let i = 0; i < 2; i++) {
    const res = await post(form.url, fields);
    t.equal(res.status, 200);
    t.match(await res.text(), '<h2>Thank you</h2>');
  }
  t.equal((await submissions(form.id)).length, before + 1);
  // Back to the page and sent again with other answers: said so, and a fresh key for the next send.
  const changed = await post(form.url, { ...fields, [`item_${NAME}`]: 'Dan' });
  t.equal(changed.status, 422);
  const html = await changed.text();
  t.match(html, 'already sent with other answers');
  const key = /name="submission_key" value="([^"]+)"/.exec(html)![1];
  t.not(key, hidden.submission_key);
  t.equal((await post(form.url, { ...fields, [`item_${NAME}`]: 'Dan', submission_key: key! })).status, 200);
  t.equal((await submissions(form.id)).length, before + 2);
});

t.test('a form that requires confirmation answers "check your mail"; a deactivated form is a 404', async (t) => {
  const pending = await makeForm(a.tenant, 'Double', [{ type: 'field', field_key: 'email', label: 'Email', required: true }], { requiresConfirmation: true });
  const hidden = await hiddenFields(pending.url);
  const res = await post(pending.url, { ...hidden, [`item_${pending.ids[0]}`]: 'eve@example.org' });
  t.equal(res.status, 200);
  t.match(await res.text(), '<h2>Check your mail</h2>');
  t.match(await submissions(pending.id), [{ source: 'form', status: 'pending' }]);

  await setFormActive(a.tenant, pool, pending.id, false);
  const gone = await fetch(pending.url, { headers: { accept: 'text/html' } });
  t.equal(gone.status, 404);
  t.match(await gone.text(), '<h1>Link not valid</h1>');
  t.equal((await post(pending.url, { ...hidden, [`item_${pending.ids[0]}`]: 'eve@example.org' })).status, 404);
  t.equal((await submissions(pending.id)).length, 1);
});

t.test('FORM_PAGE_RATE_PER_MINUTE: past it, 429 with Retry-After, nothing stored', async (t) => {
  const limited = await startTestWeb(t, dbs, { env: { FORM_PAGE_RATE_PER_MINUTE: '2' } });
  const url = `${limited.url}/f/${form.token}`;
  const before = (await submissions(form.id)).length;
  const hidden = await hiddenFields(url);
  const fields = (n: number) => ({ ...hidden, submission_key: randomBytes(16).toString('base64url'), [`item_${EMAIL}`]: `r${n}@example.org`, [`item_${CONSENT}`]: 'true' });
  t.equal((await post(url, fields(1))).status, 200);
  t.equal((await post(url, fields(2))).status, 200);
  const refused = await post(url, fields(3));
  t.equal(refused.status, 429);
  t.ok(Number(refused.headers.get('retry-after')) >= 1 && Number(refused.headers.get('retry-after')) <= 60, 'Retry-After within the minute');
  t.match(await refused.text(), 'Too many submissions from your address');
  const json = await post(url, fields(4), 'application/json');
  t.match(await json.json(), { status: 429, code: 'rate_limit_exceeded' });
  t.ok(Number(json.headers.get('retry-after')) >= 1, 'the problem carries Retry-After too');
  t.equal((await submissions(form.id)).length, before + 2);
  t.equal((await fetch(url)).status, 200, 'the page itself is still shown');
});
