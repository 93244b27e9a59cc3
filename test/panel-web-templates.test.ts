import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { createInstance } from '../domain/tenancy/instances.js';
import { importExternalTemplate } from '../domain/templates/templates.js';
import { assertAxeClean, openFromMenu, SCREENSHOTS, settled, shown, signInToPanel, useChromium } from './helpers/chromium.js';
import { corpusPath } from './helpers/corpus.js';
import { jsonCall } from './helpers/http.js';
import { makePanelUser, panelHeaders, panelLogin } from './helpers/panel.js';
import { messagesOf, startSendStack, storedOne, waitFor } from './helpers/send-stack.js';

/**
 * The panel's Templates pages in Chromium (issue 31, docs/panel.md "Templates"), against the real
 * web app, Postgres, a worker dyno and the mailbox simulator: an admin creates a template from a
 * Beefree document of the corpus (a file input), edits a module's text in the structured editor
 * and in the JSON and sees both preview frames change, the frames sandboxed (sandbox="", a
 * script in an external template's HTML blocked), publishes and unpublishes, sends a test to a
 * member and the mail is in the mailbox; a viewer sees no write control. Every fact through the
 * API or the mailbox; axe on every view; screenshots artifacts/screenshots/panel-templates*.png.
 */

const stack = await startSendStack(t, { label: 'panelwebtemplates', publicUrl: 'https://links.panelwebtemplates.test' });
const { dbs, url, mailboxDir } = stack;
stack.spawnWorker();
const tag = randomBytes(3).toString('hex');
const acme = await createInstance(dbs.pool, { slug: `acme-${tag}`, name: 'Acme newsletters', tz: 'Europe/Madrid' });
const tenant = { instanceId: acme.id, slug: acme.slug, tz: acme.tz };
const admin = await makePanelUser(dbs.pool, [{ instanceId: acme.id, role: 'admin' }]);
const viewer = await makePanelUser(dbs.pool, [{ instanceId: acme.id, role: 'viewer' }]);
const token = await panelLogin(url, admin);
const api = (method: string, path: string, body?: unknown) => jsonCall(url, method, path, body, panelHeaders(token, acme.slug));
const FILE = join(corpusPath('templates', 'beefree', 'samples'), 'hackathon-playground-minimal.json');

/** The text of a preview frame's body. */
const frameText = (page: Page, width: number) => page.frameLocator(`iframe.preview[data-width="${width}"]`).locator('body').innerText();
const bothShow = async (page: Page, text: string) => {
  for (const width of [600, 375]) {
    await waitFor(`"${text}" in the ${width} px preview`, async () => ((await frameText(page, width)).includes(text) ? true : undefined), { ms: 15_000, every: 200 });
  }
};

const chromium = useChromium(t, 'the panel templates pages in a browser');
if (chromium) {
  let templateId = 0;

  t.test('in Chromium, an admin: create from a Beefree file, edit, preview in two sandboxed frames, publish, send a test', async (t) => {
    const context = await chromium.browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const origin = new URL(url).origin;
    // Requests leaving the origin (the template's images, from the preview frames) are answered by nobody.
    const outside: Array<{ url: string; type: string; fromPreview: boolean }> = [];
    await context.route((u) => u.origin !== origin && u.protocol !== 'data:', (route) => {
      const r = route.request();
      outside.push({ url: r.url(), type: r.resourceType(), fromPreview: r.frame() !== page.mainFrame() });
      void route.abort();
    });
    const complaints: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/.test(m.text())) complaints.push(m.text());
    });
    page.on('pageerror', (e) => complaints.push(`uncaught: ${e.message}`));
    page.on('dialog', (d) => void d.accept());
    await signInToPanel(page, url, admin);

    await openFromMenu(page, 'Templates', 'Templates of Acme newsletters');
    t.ok(await shown(page.getByText('0 templates')), 'none yet');
    await assertAxeClean(t, page, 'templates (empty)');

    // Create from a Beefree document of the corpus, chosen with the file input.
    await page.getByLabel('Name', { exact: true }).fill('Welcome');
    await page.getByLabel('Start from').selectOption('file');
    await page.getByLabel('Design document file').setInputFiles(FILE);
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Template Welcome' }).waitFor();
    t.ok(await shown(page.getByRole('status').getByText('The template Welcome was created')), 'announced');
    const listed = (await api('GET', '/v1/private/mail-templates')).body.data;
    templateId = listed[0].id;
    const stored = (await api('GET', `/v1/private/mail-templates/${templateId}`)).body;
    t.same(stored.config, JSON.parse(readFileSync(FILE, 'utf8')), 'the file’s document, stored as it is');

    // The preview: 600 and 375 px, each frame sandboxed with no permission at all.
    const frames = await page.locator('iframe.preview').evaluateAll((els) => els.map((e) => ({ sandbox: e.getAttribute('sandbox'), width: e.getAttribute('width'), srcdoc: e.hasAttribute('srcdoc'), title: e.getAttribute('title') })));
    t.same(frames.map((f) => [f.sandbox, f.width, f.srcdoc]), [['', '600', true], ['', '375', true]], 'two srcdoc frames, sandbox="" (no allow-scripts, no allow-same-origin)');
    await bothShow(page, 'Welcome to Beefree SDK');
    t.pass('both frames show the stored html');
    const wideWidth = await page.frameLocator('iframe.preview[data-width="375"]').locator('body').evaluate((b) => b.ownerDocument.documentElement.clientWidth);
    t.ok(wideWidth <= 375, `the narrow frame lays the mail out at ${wideWidth} px`);
    await assertAxeClean(t, page, 'template (admin, native draft)');

    // The structured editor: the paragraph's text, edited in its form: a PATCH of the whole document.
    await page.getByRole('button', { name: /^paragraph: Select a template/ }).click();
    const marker = `Edited in the panel ${tag}`;
    await page.getByLabel('Text', { exact: true }).fill(marker);
    await page.getByRole('button', { name: 'Save module' }).click();
    await page.getByRole('status').getByText('The paragraph module was saved').waitFor();
    await bothShow(page, marker);
    t.pass('the edited text shows in both frames');
    const patched = (await api('GET', `/v1/private/mail-templates/${templateId}`)).body;
    t.equal(patched.config.page.rows[1].columns[0].modules[0].descriptor.text.text, marker, 'saved (through the API)');
    t.match(patched.html, marker);
    t.equal(await settled(page, 'document.activeElement?.id', (v) => v === 'mod-save'), 'mod-save', 'the focus stays on Save module');

    // The JSON: typed changes preview at once (validate, nothing stored), Save design stores them.
    const json = page.getByLabel('The design document', { exact: true });
    const doc = JSON.parse(await json.inputValue());
    doc.page.rows[0].columns[0].modules[0].descriptor.heading.text = `Heading ${tag}`;
    await json.fill(JSON.stringify(doc, null, 2));
    await bothShow(page, `Heading ${tag}`);
    t.ok(await shown(page.getByText('Unsaved changes: Save design to keep them.')), 'the preview says it is unsaved');
    t.notMatch((await api('GET', `/v1/private/mail-templates/${templateId}`)).body.html, `Heading ${tag}`, 'nothing stored yet');
    await page.getByRole('button', { name: 'Save design' }).click();
    await page.getByRole('status').getByText('The design was saved').waitFor();
    t.match((await api('GET', `/v1/private/mail-templates/${templateId}`)).body.html, `Heading ${tag}`, 'stored by Save design');

    // The structure: add a module, move a row, remove the module; each a PATCH of the whole document.
    const modulesOfRow = async (r: number) => (await api('GET', `/v1/private/mail-templates/${templateId}`)).body.config.page.rows[r].columns[0].modules;
    await page.getByRole('button', { name: 'Add module to column 1 of row 2' }).click();
    await page.getByRole('status').getByText('A paragraph module was added to row 2.').waitFor();
    const added = await modulesOfRow(1);
    t.equal(added.length, 2, 'a module added (through the API)');
    t.match(added[1].uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'with a new v4 uuid');
    t.ok(await shown(page.getByRole('heading', { name: 'Module: paragraph' })), 'its form opened');
    await page.getByRole('button', { name: 'Down: move row 1 down' }).click();
    await page.getByRole('status').getByText('Row 1 moved down.').waitFor();
    t.equal((await modulesOfRow(1))[0].descriptor.heading.text, `Heading ${tag}`, 'the heading’s row is second now');
    await page.getByRole('button', { name: 'Remove paragraph 2 of row 1' }).click();
    await page.getByRole('status').getByText('paragraph 2 of row 1 was removed.').waitFor();
    t.equal((await modulesOfRow(0)).length, 1, 'removed again');
    await page.getByRole('button', { name: 'Up: move row 2 up' }).click();
    await page.getByRole('status').getByText('Row 2 moved up.').waitFor();
    t.equal((await modulesOfRow(0))[0].descriptor.heading.text, `Heading ${tag}`, 'and the rows back in their order');
    await bothShow(page, marker);

    // A refused document: the 422's pointers listed; choosing one goes to the JSON.
    const broken = JSON.parse(await json.inputValue());
    broken.page.rows[0].columns = 'no';
    await json.fill(JSON.stringify(broken, null, 2));
    await page.getByRole('button', { name: 'Save design' }).click();
    const item = page.getByRole('list', { name: 'What the server refused' }).getByRole('button').first();
    await item.waitFor();
    t.match(await item.textContent(), /^\/config\/page\/rows\/0\/columns/, 'the error names its place');
    await item.click();
    t.equal(await settled(page, 'document.activeElement?.id', (v) => v === 'template-json'), 'template-json', 'choosing it focuses the JSON');
    await page.getByRole('link', { name: 'Templates', exact: true }).click();
    await page.getByRole('link', { name: 'Welcome' }).click();
    await page.getByRole('heading', { name: 'Template Welcome' }).waitFor();

    // A finding jumps to its module (the editor's entry, or the JSON when it has no place).
    const findings = page.locator('#findings button');
    if ((await findings.count()) > 0) {
      await findings.first().click();
      t.match(await settled(page, 'document.activeElement?.id', (v) => /^(node-|template-json$)/.test(String(v))), /^(node-|template-json$)/, 'a finding takes the focus to its module');
    }
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-templates-editor.png'), fullPage: true });
    await page.locator('.previews').screenshot({ path: join(SCREENSHOTS, 'panel-templates-preview.png') });

    // Publish: no longer editable; unpublish: editable again.
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByRole('status').getByText('Welcome is published').waitFor();
    t.equal((await api('GET', `/v1/private/mail-templates/${templateId}`)).body.status, 'public', 'published (through the API)');
    t.equal(await page.getByRole('button', { name: 'Save design' }).count(), 0, 'a published template is not edited');
    t.equal(await settled(page, 'document.activeElement?.id', (v) => v === 'tpl-publish'), 'tpl-publish', 'the focus stays on the toggle');
    await assertAxeClean(t, page, 'template (published)');
    await page.getByRole('button', { name: 'Unpublish', exact: true }).click();
    await page.getByRole('status').getByText('Welcome is a draft again').waitFor();
    t.equal((await api('GET', `/v1/private/mail-templates/${templateId}`)).body.status, 'draft', 'a draft again');

    // Send a test to a member (the viewer): it arrives in the mailbox, from the sandbox.
    await page.getByLabel('To (a member of the instance)').selectOption(viewer.email);
    await page.getByRole('button', { name: 'Send a test' }).click();
    const outcome = page.locator('#tpl-test-outcome');
    await outcome.getByText(`Sent to ${viewer.email} from sandbox@`).waitFor();
    const mailId = /\(mail ([^)]+)\)/.exec((await outcome.textContent()) ?? '')?.[1];
    t.ok(mailId, `the mail id (${mailId})`);
    await waitFor('the test mail in the mailbox', async () => (messagesOf(mailboxDir, mailId!).length > 0 ? true : undefined), { ms: 60_000, every: 250 });
    const mail = await storedOne(t, mailboxDir, mailId!);
    t.match(mail?.parsed.html, marker, 'the template’s html, as edited');
    t.equal(mail?.parsed.to && 'text' in mail.parsed.to ? mail.parsed.to.text : '', viewer.email);
    t.match(mail?.parsed.from?.text, new RegExp(`sandbox@${acme.slug}\\.`), 'from the sandbox sender');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-templates-sent.png'), fullPage: true });

    // The list: a copy, then the list with its controls.
    await openFromMenu(page, 'Templates', 'Create a template');
    await page.getByLabel('Name', { exact: true }).fill('Welcome copy');
    await page.getByLabel('Start from').selectOption('copy');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('heading', { name: 'Template Welcome copy' }).waitFor();
    await bothShow(page, marker);
    t.pass('a copy, with the same design');
    await openFromMenu(page, 'Templates', 'Templates of Acme newsletters');
    t.ok(await shown(page.getByText('2 templates')), 'two listed');
    await assertAxeClean(t, page, 'templates (admin)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-templates.png'), fullPage: true });
    await page.getByRole('button', { name: 'Delete Welcome copy' }).click();
    await page.getByRole('status').getByText('The template Welcome copy was deleted').waitFor();
    t.equal((await api('GET', '/v1/private/mail-templates')).body.data.length, 1, 'deleted (through the API)');

    t.ok(outside.every((r) => r.fromPreview && r.type === 'image'), `only the preview's images asked for another origin (${outside.length}), answered by nobody here`);
    t.same(
      complaints.filter((c) => !/status of 422|net::ERR_FAILED/.test(c)),
      [],
      'no other console error, nothing refused by the CSP (the template’s inline styles included)',
    );
    await context.close();
  });

  t.test('in Chromium, a script in a template’s HTML never runs: the frame is sandboxed', async (t) => {
    // An external template keeps its HTML as given (a native one's is rendered, scripts left out).
    const external = await importExternalTemplate(tenant, dbs.pool, {
      name: 'Legacy',
      html: '<html><body><p id="legacy">Legacy mail</p><script>document.getElementById("legacy").textContent = "SCRIPT RAN"; parent.postMessage("ran", "*");</script></body></html>',
    });
    const context = await chromium.browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    const consoleLines: string[] = [];
    page.on('console', (m) => consoleLines.push(m.text()));
    await signInToPanel(page, url, admin);
    await page.evaluate('window.__messages = []; addEventListener("message", (e) => window.__messages.push(String(e.data)))');
    await page.getByRole('link', { name: 'Templates', exact: true }).click();
    await page.getByRole('link', { name: 'Legacy' }).click();
    await page.getByRole('heading', { name: 'Template Legacy' }).waitFor();
    await bothShow(page, 'Legacy mail');
    await page.waitForTimeout(300);
    t.notMatch(await frameText(page, 600), /SCRIPT RAN/, 'the script did not run in the 600 px frame');
    t.notMatch(await frameText(page, 375), /SCRIPT RAN/, 'nor in the 375 px one');
    t.same(await page.evaluate('window.__messages'), [], 'nothing reached the panel');
    t.ok(consoleLines.some((l) => /Blocked script execution in 'about:srcdoc'.*sandboxed/.test(l)), 'Chromium says it blocked the script');
    t.equal(await page.getByRole('button', { name: 'Save design' }).count(), 0, 'an external template is not edited');
    t.ok(await shown(page.getByText(/external: from an editor no longer offered/)), 'and says why');
    await assertAxeClean(t, page, 'template (external)');
    await context.close();
  });

  t.test('in Chromium, a viewer: the templates and a template, no write control', async (t) => {
    const context = await chromium.browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    await signInToPanel(page, url, viewer);
    await openFromMenu(page, 'Templates', 'Templates of Acme newsletters');
    t.ok(await shown(page.getByText('Your role here is viewer')), 'told who may act');
    t.equal(await page.getByRole('main').getByRole('button').count(), 0, 'no button on the list');
    t.equal(await page.getByRole('main').getByRole('textbox').count(), 0, 'no create form');
    await assertAxeClean(t, page, 'templates (viewer)');
    await openFromMenu(page, 'Welcome', 'Template Welcome');
    await bothShow(page, 'Edited in the panel');
    const buttons = await page.getByRole('main').getByRole('button').allTextContents();
    t.same(buttons.filter((b) => !/^(warning|suggestion|error): /.test(b)), [], `no control but the findings (${buttons.length})`);
    t.equal(await page.getByLabel('The design document, read-only').getAttribute('readonly'), '', 'the JSON is read-only');
    await assertAxeClean(t, page, 'template (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-templates-viewer.png'), fullPage: true });
    await context.close();
  });
}
