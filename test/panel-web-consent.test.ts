import { join } from 'node:path';
import t from 'tap';
import { createApiKey } from '../domain/tenancy/api-keys.js';
import { assertAxeClean, assertStayedHome, downloaded, openAsViewer, openFromMenu, openPanelAs, SCREENSHOTS, settled, shown, useChromium } from './helpers/chromium.js';
import { jsonCall } from './helpers/http.js';
import { panelWebBench } from './helpers/panel.js';

/**
 * The Consent pages in Chromium (issue 31, docs/panel.md "Consent"), against the real web app
 * and Postgres: an admin creates a purpose and a term for it (a term without a channel refused
 * first), publishes a version, makes it current, deactivates the term (a consent is then refused
 * by the public API) and activates it again; a consent registered through the public API with an
 * API key is then looked up on the page: its history, its verdicts equal to the public resolver's,
 * its proof downloaded as a file equal to the API's. A viewer sees the same pages without a
 * control. Each fact checked through the API; axe on every view; screenshots
 * artifacts/screenshots/panel-consent*.png.
 */

const { pool, web, acme, users } = await panelWebBench(t, 'panelwebconsent', { name: 'Acme newsletters' }, ['admin', 'viewer']);
const { admin, viewer } = users;
const key = await createApiKey(pool, { instanceSlug: acme.slug, scopes: ['consent:read', 'consent:write'] });
const keyHeaders = { authorization: `Bearer ${key.key}`, 'x-instance-slug': acme.slug };
const publicCall = (method: string, path: string, body?: unknown) => jsonCall(web.url, method, path, body, keyHeaders);

interface Term {
  id: number;
  name: string;
  is_active: boolean;
  purpose_ids: number[];
  channels: string[];
  versions: Array<{ version: string; is_current: boolean; body: string }>;
}

let termId = 0;
const contact = 'Reader@Example.org';
const stored = contact.toLowerCase();

const chromium = useChromium(t, 'the panel consent pages in a browser');
if (chromium) {
  t.test('in Chromium, an admin: purposes, a term, its versions, activation; a contact looked up and its proof downloaded', async (t) => {
    const { context, page, origin, requests, complaints, read } = await openPanelAs(chromium.browser, web.url, admin, acme.slug);

    await openFromMenu(page, 'Consent', 'Consent of Acme newsletters');
    t.ok(await shown(page.getByText('Create a purpose first')), 'no purpose yet: the term form says what comes first');
    await assertAxeClean(t, page, 'consent (empty)');

    // Purposes, by keyboard for the first.
    await page.getByLabel('Purpose name', { exact: true }).fill('Newsletter');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('The purpose Newsletter was created.').waitFor();
    await page.getByLabel('Purpose name', { exact: true }).fill('Offers');
    await page.getByRole('button', { name: 'Create purpose' }).click();
    await page.getByRole('rowheader', { name: 'Offers', exact: true }).waitFor();
    await page.getByLabel('Purpose name', { exact: true }).fill('newsletter');
    await page.getByRole('button', { name: 'Create purpose' }).click();
    await page.getByRole('alert').filter({ hasText: /another purpose is named/ }).waitFor();
    t.pass('consent_purpose_name_taken is shown');
    const purposes = ((await read('/v1/private/consent-purposes')) as { data: Array<{ id: number; name: string }> }).data;
    t.same(purposes.map((p) => p.name), ['Newsletter', 'Offers'], 'two purposes (read through the API)');

    // A term: refused without a channel (the 422 names the field), then created.
    await page.getByLabel('Term name', { exact: true }).fill('Newsletter terms');
    await page.getByLabel('Type', { exact: true }).selectOption('subscription');
    const purposeGroup = page.getByRole('group', { name: /^Purposes/ });
    await purposeGroup.getByLabel('Newsletter', { exact: true }).check();
    await purposeGroup.getByLabel('Offers', { exact: true }).check();
    await page.getByRole('button', { name: 'Create term' }).click();
    await page.getByRole('alert').filter({ hasText: /channels/ }).waitFor();
    t.pass('no channel ticked: the 422 says channels');
    await page.getByRole('group', { name: /^Channels/ }).getByLabel('mail', { exact: true }).check();
    await page.getByRole('button', { name: 'Create term' }).click();
    await page.getByRole('heading', { name: 'Term Newsletter terms' }).waitFor();
    await page.getByRole('status').getByText(/was created. Publish a version/).waitFor();
    const terms = ((await read('/v1/private/consent-terms')) as { data: Term[] }).data;
    t.equal(terms.length, 1);
    termId = terms[0]!.id;
    t.match(terms[0], { name: 'Newsletter terms', type: 'subscription', purpose_ids: purposes.map((p) => p.id), channels: ['mail'], is_active: true, versions: [] }, 'created as chosen');
    t.ok(await shown(page.getByText(/none: no consent can be registered/)), 'no current version, said');

    // Publish a version: not current until made so.
    await page.getByLabel('Version label', { exact: true }).fill('2026-01');
    await page.getByLabel('Full text of the version', { exact: true }).fill('We send you our newsletter.\nUnsubscribe at any time.');
    await page.getByLabel('Document URL (optional)', { exact: true }).fill('https://example.org/terms/2026-01');
    await page.getByRole('button', { name: 'Publish version' }).click();
    await page.getByRole('status').getByText('Version 2026-01 was published. It is not current until you make it so.').waitFor();
    let term = (await read(`/v1/private/consent-terms/${termId}`)) as Term;
    t.match(term.versions, [{ version: '2026-01', body: 'We send you our newsletter.\nUnsubscribe at any time.', is_current: false }], 'published, not current (through the API)');
    await page.getByRole('button', { name: 'Make version 2026-01 current' }).click();
    await page.getByRole('status').getByText(/Version 2026-01 is now the current version/).waitFor();
    term = (await read(`/v1/private/consent-terms/${termId}`)) as Term;
    t.equal(term.versions[0]!.is_current, true, 'current (through the API)');
    t.equal(await page.getByRole('button', { name: 'Make version 2026-01 current' }).count(), 0, 'the current version offers no button');

    // Deactivate (a consent is then refused), activate again.
    const rule = (action: string) => ({ channel: 'mail', contact_type: 'email_address', contact, purpose_id: purposes[0]!.id, action });
    await page.getByRole('button', { name: 'Deactivate term' }).click();
    await page.getByRole('status').getByText('Newsletter terms is inactive: it receives no new consents.').waitFor();
    t.equal(((await read(`/v1/private/consent-terms/${termId}`)) as Term).is_active, false, 'inactive (through the API)');
    t.equal(await settled(page, 'document.activeElement?.textContent', (v) => v === 'Activate term'), 'Activate term', 'the focus stays on the toggle');
    await assertAxeClean(t, page, 'a term (inactive)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-consent-term.png'), fullPage: true });
    const refused = await publicCall('POST', '/v1/consent-events', { term_id: termId, method: 'single_opt_in', rules: [rule('allow')] });
    t.equal(refused.body.code, 'consent_term_inactive', 'the public API refuses a consent to the inactive term');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Newsletter terms is active again: it receives new consents.').waitFor();
    t.equal(((await read(`/v1/private/consent-terms/${termId}`)) as Term).is_active, true, 'active again, by keyboard (through the API)');

    // A consent registered by the integration, then looked up.
    const granted = await publicCall('POST', '/v1/consent-events', { term_id: termId, method: 'single_opt_in', rules: [rule('allow')], ip_address: '192.0.2.9' });
    t.equal(granted.status, 201, JSON.stringify(granted.body));
    await page.getByRole('link', { name: 'All of consent' }).click();
    await page.getByRole('heading', { name: 'Consent of Acme newsletters' }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Newsletter terms' }) });
    t.equal(await row.getByRole('cell').allInnerTexts().then((c) => c.join('|')), 'subscription|Newsletter, Offers|mail|2026-01|active', 'the terms list: type, purposes, channels, current version, state');
    await page.getByLabel('Contact', { exact: true }).fill(contact);
    await page.getByLabel('Identifier type', { exact: true }).selectOption('email_address');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('status').getByText(`${stored}: 1 consent event; 1 allowed, 0 denied, 1 without consent.`).waitFor();
    const history = page.getByRole('table', { name: `1 consent event of ${stored}` });
    t.ok(await shown(history.getByRole('cell', { name: String(granted.body.id), exact: true })), 'the history lists the event');
    t.ok(await shown(history.getByText('allow mail for Newsletter')), 'with its rule for this contact');
    const resolved = await publicCall('GET', `/v1/consent-rules/resolve?contacts=${encodeURIComponent(stored)}&contact_types=email_address&channel=mail&purpose_ids=${purposes.map((p) => p.id).join(',')}`);
    const verdictTable = page.getByRole('table', { name: `Verdicts now for ${stored}, per purpose and channel` });
    for (const v of resolved.body.data as Array<{ purpose_id: number; verdict: string; event_ids: number[] }>) {
      const name = purposes.find((p) => p.id === v.purpose_id)!.name;
      const cell = verdictTable.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) }).getByRole('cell');
      const expected = `${v.verdict.replace('_', ' ')}${v.event_ids.length ? ` (event ${v.event_ids.join(', ')})` : ''}`;
      t.equal(await cell.innerText(), expected, `${name} on mail: the public resolver's verdict (${v.verdict})`);
    }
    await assertAxeClean(t, page, 'consent (a contact looked up)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-consent.png'), fullPage: true });

    // The proof, as a file: the API's document.
    const proof = await downloaded(page, 'Download proof');
    t.match(proof.name, /^consent-proof-reader@example\.org-\d{4}-\d{2}-\d{2}\.json$/, 'named after the contact and the day');
    const saved = JSON.parse(proof.bytes.toString('utf8')) as Record<string, unknown>;
    const fromApi = (await publicCall('GET', `/v1/consent-events/proof?contact=${encodeURIComponent(stored)}`)).body as Record<string, unknown>;
    t.ok(saved['generated_at'], 'a proof document');
    t.same({ ...saved, generated_at: 0 }, { ...fromApi, generated_at: 0 }, "the file equals the public API's proof (generated_at aside)");
    await page.getByRole('status').getByText(/The proof of reader@example.org \(1 event\) was saved as/).waitFor();

    assertStayedHome(t, { requests, complaints, origin }, /status of (409|422)/);
    await context.close();
  });

  t.test('in Chromium, a viewer: the same pages, no control but the look-up and the proof', async (t) => {
    const { context, page } = await openPanelAs(chromium.browser, web.url, viewer);
    await openAsViewer(page, 'Consent', 'Consent of Acme newsletters');
    for (const name of ['Create purpose', 'Create term']) t.equal(await page.getByRole('button', { name }).count(), 0, `no ${name}`);
    t.equal(await page.getByLabel('Purpose name').count(), 0, 'no purpose form');
    await page.getByLabel('Contact', { exact: true }).fill(contact);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('table', { name: `Verdicts now for ${stored}, per purpose and channel` }).waitFor();
    t.ok(await shown(page.getByRole('button', { name: 'Download proof' })), 'a viewer reads the proof');
    await assertAxeClean(t, page, 'consent (viewer)');
    await page.screenshot({ path: join(SCREENSHOTS, 'panel-consent-viewer.png'), fullPage: true });
    await page.getByRole('link', { name: 'Newsletter terms' }).click();
    await page.getByRole('heading', { name: 'Term Newsletter terms' }).waitFor();
    await page.getByText('Your role here is viewer').waitFor();
    for (const name of ['Deactivate term', 'Activate term', 'Publish version', 'Make current']) t.equal(await page.getByRole('button', { name }).count(), 0, `no ${name}`);
    t.equal(await page.getByRole('rowheader', { name: '2026-01' }).count(), 1, 'the versions are listed');
    await assertAxeClean(t, page, 'a term (viewer)');
    await context.close();
  });
}
