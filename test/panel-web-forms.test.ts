import { join } from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { createDataset } from '../domain/datasets/datasets.js';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import type { Tenant } from '../domain/tenancy/context.js';
import { deleteTemplate, importExternalTemplate, setTemplateStatus } from '../domain/templates/templates.js';
import { assertAxeClean, assertStayedHome, downloaded, openAsViewer, openFromMenu, openPanelAs, SCREENSHOTS, shown, useChromium } from './helpers/chromium.js';
import { jsonCall } from './helpers/http.js';
import { panelWebBench } from './helpers/panel.js';

/**
 * The Forms pages in Chromium (issue 31, docs/panel.md "Forms"), against the real web app and
 * Postgres: an admin builds a form with a catalog field and a consent item, is refused first by
 * the spec's consent_channel_not_covered rule (explained in the page), saves, activates, opens the
 * hosted page and submits it, then sees the submission on the form's page with its consent event
 * (the public API lists the same event) and downloads the CSV. A viewer sees the form without a
 * control. Each fact checked through the API; axe on every view; screenshots
 * artifacts/screenshots/panel-forms*.png.
 */

const { pool, web, acme, users } = await panelWebBench(t, 'panelwebforms', { name: 'Acme newsletters' }, ['admin', 'viewer']);
const tenant: Tenant = { instanceId: acme.id, slug: acme.slug, tz: null };
const { admin, viewer } = users;
const key = await createApiKey(pool, { instanceSlug: acme.slug, scopes: ['consent:read', 'form:read'] });
const keyHeaders = { authorization: `Bearer ${key.key}`, 'x-instance-slug': acme.slug };
const publicCall = (method: string, path: string, body?: unknown) => jsonCall(web.url, method, path, body, keyHeaders);

const purpose = await createPurpose(tenant, pool, { name: 'Newsletter' });
const term = await createTerm(tenant, pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [purpose.id], channels: ['mail'] });
await addTermVersion(tenant, pool, term.id, { version: '2026-01', body: 'We send you the weekly newsletter.' });
await setCurrentVersion(tenant, pool, term.id, '2026-01');

// What the builder offers: a dataset that requires the phone besides the email, a published template and a draft one.
const members = await createDataset(tenant, pool, { name: 'Members', channel: ['mail'], columns: [{ key: 'email', required: true }, { key: 'phone', required: true }] });
const welcome = await importExternalTemplate(tenant, pool, { name: 'Welcome mail', html: '<html><body><p>Welcome aboard</p></body></html>' });
await setTemplateStatus(tenant, pool, welcome.id, 'public');
await importExternalTemplate(tenant, pool, { name: 'Unfinished draft', html: '<html><body><p>Draft</p></body></html>' });

/** The builder's preview: the hosted page in a sandboxed srcdoc frame. */
const previewFrame = (page: Page) => page.frameLocator('#form-preview-frame');

/** The preview's title style once `accept` takes it (the frame is drawn again after edits pause), or its last one. */
async function styleOfTitle(page: Page, accept: (s: { transform: string; color: string }) => boolean): Promise<{ transform: string; color: string }> {
  for (let tries = 0; ; tries++) {
    const style = await previewFrame(page).locator('h1').evaluate((el) => ({ transform: getComputedStyle(el).textTransform, color: getComputedStyle(el).color }));
    if (accept(style) || tries >= 100) return style;
    await page.waitForTimeout(100);
  }
}

let formId = 0;
const chromium = useChromium(t, 'the panel forms pages in a browser');
if (chromium) {
  t.test('in Chromium, an admin builds a form, a rule refusal explained, saves, activates; the hosted page submitted; the submission seen', async (t) => {
    const { context, page, origin, requests, complaints, read } = await openPanelAs(chromium.browser, web.url, admin, acme.slug);

    await openFromMenu(page, 'Forms', 'Forms of Acme newsletters');
    await assertAxeClean(t, page, 'forms (empty)');
    await page.getByRole('link', { name: 'New form' }).click();
    await page.getByRole('heading', { name: 'New form' }).waitFor();

    // The preview is the hosted page itself, drawn by the API, in a frame that grants nothing.
    const frame = previewFrame(page);
    await frame.locator('h1', { hasText: 'New form' }).waitFor();
    const attrs = await page.locator('#form-preview-frame').evaluate((f) => ({ sandbox: f.getAttribute('sandbox'), srcdoc: f.hasAttribute('srcdoc'), src: f.getAttribute('src') }));
    t.same(attrs, { sandbox: '', srcdoc: true, src: null }, 'a srcdoc frame with sandbox="" (no script, an opaque origin)');

    // The new form starts with the email field: remove it, add a consent item, so the rule fires.
    await page.getByLabel('Form name', { exact: true }).fill('Weekly signup');
    await page.getByLabel('Page title').fill('Join the weekly');
    await frame.locator('h1', { hasText: 'Join the weekly' }).waitFor();
    t.pass('the title typed shows in the frame’s document');
    await page.getByLabel('Primary colour (#rrggbb)').fill('#204080');
    await page.getByLabel('Custom CSS (hosted page only)').fill('.cf h1 { text-transform: uppercase }');
    const h1 = await styleOfTitle(page, (s) => s.transform === 'uppercase');
    t.same(h1, { transform: 'uppercase', color: 'rgb(32, 64, 128)' }, 'the custom CSS and the primary colour apply in the frame');
    t.equal(await page.getByRole('heading', { level: 1 }).evaluate((el) => getComputedStyle(el).textTransform), 'none', 'and not to the panel');
    t.ok(await frame.getByRole('button', { name: 'Send' }).isDisabled(), 'Send is disabled in the preview');
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
    await frame.getByText('We write once a week.').waitFor();
    t.match(
      await frame.locator('main').innerText(),
      /JOIN THE WEEKLY[\s\S]*Email \*[\s\S]*Send me the newsletter \*[\s\S]*Read Newsletter terms \(version 2026-01\)[\s\S]*We write once a week\./,
      'the preview follows the draft: the items in order, the term’s current version',
    );
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
    const submissionsCsv = await downloaded(page, 'Download CSV');
    t.equal(submissionsCsv.name, `form-${formId}-submissions.csv`);
    t.match(submissionsCsv.bytes.toString('utf8'), /reader@example\.org/, 'the CSV has the submission');
    await assertAxeClean(t, page, 'form page with a submission');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-forms.png'), fullPage: true });

    assertStayedHome(t, { requests, complaints, origin }, /status of (409|422)/);
    await context.close();
  });

  t.test('in Chromium, an admin picks the dataset and a published template for the auto-reply; a deleted template shown at its field', async (t) => {
    const { context, page, requests, complaints, read, origin } = await openPanelAs(chromium.browser, web.url, admin, acme.slug);
    await page.getByRole('link', { name: 'Forms', exact: true }).click();
    await page.getByRole('link', { name: 'New form' }).click();
    await page.getByRole('heading', { name: 'New form' }).waitFor();
    await page.getByLabel('Form name', { exact: true }).fill('Members signup');

    // The dataset by name and channels, and what it requires said before the rule fires.
    const picker = page.getByLabel('Dataset the submissions feed');
    t.same(await picker.locator('option').allTextContents(), ['none', 'Members (mail)'], 'the instance’s datasets, by name and channels');
    await picker.selectOption({ label: 'Members (mail)' });
    await page.locator('#form-dataset-needs', { hasText: 'required items: email, phone' }).waitFor();
    t.pass('the page says what the dataset requires');

    // The auto-reply by template: only published templates are offered.
    await page.getByLabel('A published template').check();
    const template = page.getByLabel('Template of the auto-reply');
    t.same(await template.locator('option').allTextContents(), ['Welcome mail'], 'the published template, not the draft');
    t.ok(await page.getByLabel('Auto-reply text').isHidden(), 'the written text is not asked for');
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('alert').getByText(/requires columns the form does not collect/).waitFor();
    t.match(await page.getByRole('alert').innerText(), /phone/, 'form_dataset_columns_not_collected explained, the detail naming the column');
    t.equal(((await read('/v1/private/forms')) as { data: Array<{ name: string }> }).data.filter((f) => f.name === 'Members signup').length, 0, 'nothing created');

    // Aligned: the preview draws the phone field the save will add; then saved.
    await page.getByLabel('Add the columns the dataset requires as required items').check();
    await previewFrame(page).locator('label', { hasText: 'Phone' }).waitFor();
    t.pass('the preview draws the column the save adds');
    await page.getByRole('button', { name: 'Create form' }).click();
    await page.getByRole('heading', { name: 'Form Members signup' }).waitFor();
    const saved = ((await read('/v1/private/forms')) as { data: Array<{ id: number; name: string; dataset_id: number; items: Array<{ field_key?: string; required?: boolean }> }> }).data.find((f) => f.name === 'Members signup')!;
    t.equal(saved.dataset_id, members.id, 'the dataset picked');
    t.same(saved.items.map((i) => [i.field_key, i.required]), [['email', true], ['phone', true]], 'the column added as a required item');
    t.same(await read(`/v1/private/forms/${saved.id}/mail-settings`), { auto_reply: { template_id: welcome.id }, team_notice_emails: [] }, 'the auto-reply by template');
    t.match(await page.locator('dl.facts').innerText(), /Feeds the dataset\s+Members \(mail\)/);
    t.ok(await page.getByLabel('A published template').isChecked(), 'read back: by template');
    t.equal(await page.getByLabel('Template of the auto-reply').inputValue(), String(welcome.id));

    // The template deleted meanwhile: the save's 422 value_error.template_not_found at its field.
    await deleteTemplate(tenant, pool, welcome.id);
    await page.getByRole('button', { name: 'Save form' }).click();
    const at = page.locator('#error-auto_reply-template_id');
    await at.waitFor();
    t.equal(await at.innerText(), `No template ${welcome.id}`, 'the domain’s message at the template field');
    const select = page.getByLabel('Template of the auto-reply');
    t.equal(await select.getAttribute('aria-invalid'), 'true');
    t.equal(await select.getAttribute('aria-describedby'), 'error-auto_reply-template_id', 'the select is described by its error');
    t.equal(await page.evaluate('document.activeElement && document.activeElement.id'), 'form-reply-template', 'the focus on the field to fix');
    await assertAxeClean(t, page, 'form builder (a template not found at its field)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-forms-template.png'), fullPage: true });

    // Written instead: the error leaves the field once the preview (the same checks) passes, and the save goes through.
    await page.getByLabel('Written here: subject, text and HTML').check();
    await page.getByLabel('Auto-reply subject').fill('Welcome, {{email}}');
    await page.getByLabel('Auto-reply text').fill('Thanks for joining.');
    await page.getByLabel('Auto-reply HTML').fill('<p>Thanks for joining.</p>');
    await at.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Save form' }).click();
    await page.getByText('The form Members signup was saved.').waitFor();
    t.same(
      await read(`/v1/private/forms/${saved.id}/mail-settings`),
      { auto_reply: { subject: 'Welcome, {{email}}', text: 'Thanks for joining.', html: '<p>Thanks for joining.</p>' }, team_notice_emails: [] },
      'the auto-reply written here (no template id kept)',
    );
    await page.locator('#form-preview-frame').screenshot({ path: join(SCREENSHOTS, 'panel-forms-preview.png') });

    assertStayedHome(t, { requests, complaints, origin }, /status of (409|422)/);
    await context.close();
  });

  t.test('in Chromium, a viewer: the forms and a form, no write control', async (t) => {
    const { context, page } = await openPanelAs(chromium.browser, web.url, viewer);
    await openAsViewer(page, 'Forms', 'Forms of Acme newsletters');
    t.equal(await page.getByRole('link', { name: 'New form' }).count(), 0, 'no New form');
    await assertAxeClean(t, page, 'forms list (viewer)');
    await page.getByRole('link', { name: 'Weekly signup' }).click();
    await page.getByRole('heading', { name: 'Form Weekly signup' }).waitFor();
    t.ok(await shown(page.getByRole('table', { name: '1 submission' })), 'the submissions are listed');
    for (const name of ['Save form', 'Activate form', 'Deactivate form', 'Delete form', 'Add field', 'Add consent', 'Remove item 1']) t.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name}`);
    t.equal(await page.getByLabel('Form name').count(), 0, 'no settings form');
    await previewFrame(page).locator('h1', { hasText: 'Join the weekly' }).waitFor();
    t.pass('the hosted page previewed for a viewer too');
    await assertAxeClean(t, page, 'a form (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-forms-viewer.png'), fullPage: true });
    await context.close();
  });
}
