import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { createInstance } from '../domain/tenancy/instances.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { assertAxeClean, SCREENSHOTS, signInToPanel, shown, useChromium, openPanelAs } from './helpers/chromium.js';
import { testDatabases } from './helpers/databases.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser } from './helpers/panel.js';
import { startTestWeb } from './helpers/web.js';

/**
 * The Forms pages in Chromium (issue 31, docs/panel.md "Forms"), against the real web app and
 * Postgres: an admin builds a form with a catalog field and a consent item, is refused first by
 * the spec's consent_channel_not_covered rule (explained in the page), saves, activates, opens the
 * hosted page and submits it, then sees the submission on the form's page with its consent event
 * (the public API lists the same event) and downloads the CSV. A viewer sees the form without a
 * control. Each fact checked through the API; axe on every view; screenshots
 * artifacts/screenshots/panel-forms*.png.
 */

const dbs = await testDatabases(t, 'panelwebforms');
const pool = dbs.pool;
const web = await startTestWeb(t, dbs);
const tag = randomBytes(3).toString('hex');
const acme = await createInstance(pool, { slug: `acme-${tag}`, name: 'Acme newsletters' });
const tenant: Tenant = { instanceId: acme.id, slug: acme.slug, tz: null };
const admin = await makePanelUser(pool, [{ instanceId: acme.id, role: 'admin' }]);
const viewer = await makePanelUser(pool, [{ instanceId: acme.id, role: 'viewer' }]);
const key = await createApiKey(pool, { instanceSlug: acme.slug, scopes: ['consent:read', 'form:read'] });
const keyHeaders = { authorization: `Bearer ${key.key}`, 'x-instance-slug': acme.slug };
const publicCall = (method: string, path: string, body?: unknown) => jsonCall(web.url, method, path, body, keyHeaders);

const purpose = await createPurpose(tenant, pool, { name: 'Newsletter' });
const term = await createTerm(tenant, pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [purpose.id], channels: ['mail'] });
await addTermVersion(tenant, pool, term.id, { version: '2026-01', body: 'We send you the weekly newsletter.' });
await setCurrentVersion(tenant, pool, term.id, '2026-01');

let formId = 0;
const chromium = useChromium(t, 'the panel forms pages in a browser');
if (chromium) {
  t.test('in Chromium, an admin builds a form, a rule refusal explained, saves, activates; the hosted page submitted; the submission seen', async (t) => {
    const { context, page, origin, requests, complaints, read } = await openPanelAs(chromium.browser, web.url, admin, acme.slug);

    await page.getByRole('link', { name: 'Forms', exact: true }).click();
    await page.getByRole('heading', { name: 'Forms of Acme newsletters' }).waitFor();
    await assertAxeClean(t, page, 'forms (empty)');
    await page.getByRole('link', { name: 'New form' }).click();
    await page.getByRole('heading', { name: 'New form' }).waitFor();

    // The new form starts with the email field: remove it, add a consent item, so the rule fires.
    await page.getByLabel('Form name', { exact: true }).fill('Weekly signup');
    await page.getByLabel('Page title').fill('Join the weekly');
    await page.getByLabel('Primary colour (#rrggbb)').fill('#204080');
    await page.getByRole('button', { name: 'Remove item 1' }).click();
    await page.getByLabel('Consent term').selectOption(String(term.id));
    await page.getByRole('button', { name: 'Add consent' }).click();
    await page.getByLabel('Label of item 1').fill('Send me the newsletter');
    await page.getByText('Item 1 required').click();
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('alert').getByText(/add the email field for mail/).waitFor();
    t.pass('consent_channel_not_covered is explained in the page');
    t.equal(((await read('/v1/private/forms')) as { data: unknown[] }).data.length, 0, 'nothing created');
    await assertAxeClean(t, page, 'form builder (a rule refused)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-forms-refused.png'), fullPage: true });

    // The email field, moved to the top, required; a text block; then the preview shows them in order.
    await page.getByLabel('Catalog field').selectOption('email');
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByRole('button', { name: 'Move item 2 up' }).click();
    await page.getByText('Item 1 required').click();
    await page.getByRole('button', { name: 'Add text block' }).click();
    await page.getByLabel('Text of item 3').fill('We write once a week.');
    const preview = page.locator('#form-preview');
    t.match(await preview.innerText(), /Join the weekly[\s\S]*Email \*[\s\S]*Send me the newsletter \*[\s\S]*Newsletter terms, version 2026-01[\s\S]*We write once a week\./, 'the preview follows the draft');
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('heading', { name: 'Form Weekly signup' }).waitFor();
    const forms = ((await read('/v1/private/forms')) as { data: Array<{ id: number; is_active: boolean; public_token: string; items: Array<{ type: string; required: boolean; field_key?: string }> }> }).data;
    t.equal(forms.length, 1, 'created');
    formId = forms[0]!.id;
    t.same(forms[0]!.items.map((i) => [i.type, i.required ?? false]), [['field', true], ['consent', true], ['text', false]], 'the items in the order built, required as ticked');

    // Deactivate, then activate again (the state read through the API).
    await page.getByRole('button', { name: 'Deactivate form', exact: true }).click();
    await page.getByRole('button', { name: 'Activate form', exact: true }).waitFor();
    t.equal(((await read(`/v1/private/forms/${formId}`)) as { is_active: boolean }).is_active, false, 'deactivated');
    await page.getByRole('button', { name: 'Activate form', exact: true }).click();
    await page.getByRole('button', { name: 'Deactivate form', exact: true }).waitFor();
    t.equal(((await read(`/v1/private/forms/${formId}`)) as { is_active: boolean }).is_active, true, 'active again');
    await assertAxeClean(t, page, 'form builder (saved)');

    // The list: the public link and the embed snippet.
    await page.getByRole('link', { name: 'All forms' }).click();
    const link = page.getByRole('link', { name: `/f/${forms[0]!.public_token}` });
    await link.waitFor();
    t.match(await page.getByRole('textbox', { name: 'Embed snippet of Weekly signup' }).inputValue(), `<iframe src="${origin}/f/${forms[0]!.public_token}"`);
    await assertAxeClean(t, page, 'forms list');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-forms-list.png'), fullPage: true });

    // The hosted page, submitted in another tab.
    const hosted = await context.newPage();
    await hosted.goto(`${origin}/f/${forms[0]!.public_token}`);
    await hosted.getByLabel('Email').fill('reader@example.org');
    await hosted.getByLabel('Send me the newsletter').check();
    await Promise.all([hosted.waitForNavigation(), hosted.getByRole('button', { name: 'Send' }).click()]);
    t.equal(await hosted.getByRole('heading', { level: 2 }).innerText(), 'Thank you', 'submitted on the hosted page');
    await hosted.close();

    // The submission on the form's page, with its consent event: the public API lists the same event.
    await page.getByRole('link', { name: 'Weekly signup' }).click();
    const submissions = page.getByRole('table', { name: '1 submission' });
    await submissions.waitFor();
    const row = await submissions.getByRole('row').nth(1).innerText();
    t.match(row, /hosted page\s+confirmed\s+email: reader@example.org\s+Newsletter terms, version 2026-01: confirmed \(event (\d+)\)/, row);
    const eventId = Number(/event (\d+)/.exec(row)![1]);
    const events = (await publicCall('GET', `/v1/consent-events?term_id=${term.id}`)).body.data as Array<{ id: number; source: string; form_id: number }>;
    t.match(events.find((e) => e.id === eventId), { source: 'form', form_id: formId }, 'the consent event, as the public API lists it');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    t.equal(download.suggestedFilename(), `form-${formId}-submissions.csv`);
    t.match(await readFile((await download.path())!, 'utf8'), /reader@example\.org/, 'the CSV has the submission');
    await assertAxeClean(t, page, 'form page with a submission');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-forms.png'), fullPage: true });

    const elsewhere = requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin);
    t.same(elsewhere, [], `no request left the origin (${requests.length} requests)`);
    t.same(complaints.filter((c) => !/status of (409|422)/.test(c)), [], 'no other console error, nothing refused by the CSP');
    await context.close();
  });

  t.test('in Chromium, a viewer: the forms and a form, no write control', async (t) => {
    const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signInToPanel(page, web.url, viewer);
    await page.getByRole('link', { name: 'Forms', exact: true }).click();
    await page.getByRole('heading', { name: 'Forms of Acme newsletters' }).waitFor();
    await page.getByText('Your role here is viewer').waitFor();
    t.equal(await page.getByRole('link', { name: 'New form' }).count(), 0, 'no New form');
    await assertAxeClean(t, page, 'forms list (viewer)');
    await page.getByRole('link', { name: 'Weekly signup' }).click();
    await page.getByRole('heading', { name: 'Form Weekly signup' }).waitFor();
    t.ok(await shown(page.getByRole('table', { name: '1 submission' })), 'the submissions are listed');
    for (const name of ['Save form', 'Activate form', 'Deactivate form', 'Delete form', 'Add field', 'Add consent', 'Remove item 1']) t.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name}`);
    t.equal(await page.getByLabel('Form name').count(), 0, 'no settings form');
    await assertAxeClean(t, page, 'a form (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-forms-viewer.png'), fullPage: true });
    await context.close();
  });
}
