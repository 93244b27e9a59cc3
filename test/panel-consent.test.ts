import t from 'tap';
import { panelApiBench } from './helpers/panel.js';

/**
 * Consent in the panel's /v1/private API (issue 31, docs/panel.md "Consent"), against the real
 * web app and Postgres: the public reads mirrored for any member (and equal to the public API's
 * answers), the panel-only operations an admin does (purposes, terms, versions, the current
 * version, activation) with their conflicts and 422s, a viewer refused them, the proof export,
 * registering a consent left to the integration, another instance's term 404.
 */

const { a, b, owner, admin, viewer, ownerOfB, call, publicCall } = await panelApiBench(t, 'panelconsent', ['consent:read', 'consent:write']);

t.test('purposes and terms: an admin creates, a viewer reads and is refused every change; the conflicts', async (t) => {
  const refused = await call(viewer, 'POST', '/v1/private/consent-purposes', { name: 'Newsletter' });
  t.equal(refused.status, 403, 'a viewer cannot create a purpose');
  t.equal(refused.body.code, 'forbidden');

  const purpose = await call(admin, 'POST', '/v1/private/consent-purposes', { name: 'Newsletter' });
  t.equal(purpose.status, 201, JSON.stringify(purpose.body));
  t.same(Object.keys(purpose.body).sort(), ['created_at', 'id', 'name']);
  const taken = await call(owner, 'POST', '/v1/private/consent-purposes', { name: 'NEWSLETTÉR' });
  t.equal(taken.status, 409);
  t.equal(taken.body.code, 'consent_purpose_name_taken', 'names are unique ignoring case and accents');
  const blank = await call(admin, 'POST', '/v1/private/consent-purposes', { name: '   ' });
  t.equal(blank.status, 422, 'a blank name: validation');
  t.equal(blank.body.errors[0].pointer, '/name');
  const offers = await call(admin, 'POST', '/v1/private/consent-purposes', { name: 'Offers' });

  const termBody = { name: 'Marketing 2026', type: 'marketing', purpose_ids: [purpose.body.id, offers.body.id], channels: ['mail', 'sms'] };
  t.equal((await call(viewer, 'POST', '/v1/private/consent-terms', termBody)).status, 403, 'a viewer cannot create a term');
  const term = await call(admin, 'POST', '/v1/private/consent-terms', termBody);
  t.equal(term.status, 201, JSON.stringify(term.body));
  t.match(term.body, { name: 'Marketing 2026', type: 'marketing', purpose_ids: [purpose.body.id, offers.body.id], channels: ['mail', 'sms'], is_active: true, versions: [] });
  const again = await call(admin, 'POST', '/v1/private/consent-terms', { ...termBody, name: 'marketing 2026' });
  t.equal(again.body.code, 'consent_term_name_taken', 'a term name taken: 409');
  const unknown = await call(admin, 'POST', '/v1/private/consent-terms', { ...termBody, name: 'Other', purpose_ids: [9_999_999] });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'consent_purpose_not_found', 'a purpose the instance does not have');
  const invalid = await call(admin, 'POST', '/v1/private/consent-terms', { name: 'Other', type: 'spam', purpose_ids: [], channels: ['fax'] });
  t.equal(invalid.status, 422);
  t.same(invalid.body.errors.map((e: { pointer: string }) => e.pointer).sort(), ['/channels/0', '/purpose_ids', '/type'], 'every field at once');

  // The mirrored reads answer exactly what the public API answers.
  for (const path of ['/consent-purposes', '/consent-terms', '/consent-terms?page_size=1&page=2']) {
    const panel = await call(viewer, 'GET', `/v1/private${path}`);
    t.equal(panel.status, 200, path);
    t.equal(panel.headers.get('cache-control'), 'no-store');
    t.same(panel.body, (await publicCall('GET', `/v1${path}`)).body, `GET /v1/private${path} equals GET /v1${path}`);
  }
  const one = await call(viewer, 'GET', `/v1/private/consent-terms/${term.body.id}`);
  t.same(one.body, term.body, 'a term read by id, as created');
});

t.test('versions: publish (not current), the label taken, set current, activate and deactivate', async (t) => {
  const purpose = await call(admin, 'POST', '/v1/private/consent-purposes', { name: 'Service mails' });
  const term = await call(admin, 'POST', '/v1/private/consent-terms', { name: 'Service terms', type: 'service_terms', purpose_ids: [purpose.body.id], channels: ['mail'] });
  const id = term.body.id as number;
  const path = `/v1/private/consent-terms/${id}`;

  t.equal((await call(viewer, 'POST', `${path}/versions`, { version: 'v1', body: 'x' })).status, 403, 'a viewer cannot publish');
  const v1 = await call(admin, 'POST', `${path}/versions`, { version: '2026-01', body: 'We send you service mails.', document_url: 'https://example.org/terms/2026-01' });
  t.equal(v1.status, 201, JSON.stringify(v1.body));
  t.match(v1.body.versions, [{ version: '2026-01', body: 'We send you service mails.', document_url: 'https://example.org/terms/2026-01', is_current: false }], 'published, not current');
  const taken = await call(admin, 'POST', `${path}/versions`, { version: '2026-01', body: 'Other text.' });
  t.equal(taken.status, 409);
  t.equal(taken.body.code, 'consent_term_version_taken');
  const badUrl = await call(admin, 'POST', `${path}/versions`, { version: '2026-02', body: 'Text.', document_url: 'ftp://example.org/x' });
  t.equal(badUrl.status, 422, "a URL the domain refuses: the 422 of its field (not the CLI's 400)");
  t.equal(badUrl.body.errors[0].pointer, '/document_url');
  const blankBody = await call(admin, 'POST', `${path}/versions`, { version: '2026-02', body: ' \n ' });
  t.equal(blankBody.status, 422);
  t.equal(blankBody.body.errors[0].pointer, '/body');

  // No current version: registering a consent is refused (the integration's route, untouched).
  const rule = { channel: 'mail', contact_type: 'email_address', contact: 'someone@example.org', purpose_id: purpose.body.id, action: 'allow' };
  const early = await publicCall('POST', '/v1/consent-events', { term_id: id, method: 'single_opt_in', rules: [rule] });
  t.equal(early.body.code, 'consent_term_no_current_version');

  t.equal((await call(viewer, 'PUT', `${path}/current-version`, { version: '2026-01' })).status, 403, 'a viewer cannot set the current version');
  const missing = await call(admin, 'PUT', `${path}/current-version`, { version: 'nope' });
  t.equal(missing.status, 404);
  t.equal(missing.body.code, 'consent_term_version_not_found');
  const current = await call(admin, 'PUT', `${path}/current-version`, { version: '2026-01' });
  t.equal(current.status, 200);
  t.equal(current.body.versions[0].is_current, true, 'current');
  const v2 = await call(owner, 'POST', `${path}/versions`, { version: '2026-06', body: 'We send you service mails, and say how.' });
  t.same(v2.body.versions.map((v: { version: string; is_current: boolean }) => [v.version, v.is_current]), [['2026-01', true], ['2026-06', false]]);
  const switched = await call(admin, 'PUT', `${path}/current-version`, { version: '2026-06' });
  t.same(switched.body.versions.map((v: { is_current: boolean }) => v.is_current), [false, true], 'one current version at a time');

  t.equal((await call(viewer, 'PATCH', path, { is_active: false })).status, 403, 'a viewer cannot deactivate');
  const off = await call(admin, 'PATCH', path, { is_active: false });
  t.equal(off.status, 200);
  t.equal(off.body.is_active, false);
  const inactive = await publicCall('POST', '/v1/consent-events', { term_id: id, method: 'single_opt_in', rules: [rule] });
  t.equal(inactive.body.code, 'consent_term_inactive', 'an inactive term receives no consent');
  const on = await call(admin, 'PATCH', path, { is_active: true });
  t.equal(on.body.is_active, true);
  const registered = await publicCall('POST', '/v1/consent-events', { term_id: id, method: 'single_opt_in', rules: [rule] });
  t.equal(registered.status, 201, 'active again: a consent is registered');
  t.equal((await call(admin, 'PATCH', path, { name: 'renamed' })).status, 422, 'nothing else of a term changes');
});

t.test("a contact's history, verdicts and proof: the public answers; registering a consent stays the integration's", async (t) => {
  const purpose = await call(admin, 'POST', '/v1/private/consent-purposes', { name: 'Weekly digest' });
  const term = await call(admin, 'POST', '/v1/private/consent-terms', { name: 'Digest', type: 'subscription', purpose_ids: [purpose.body.id], channels: ['mail'] });
  await call(admin, 'POST', `/v1/private/consent-terms/${term.body.id}/versions`, { version: 'v1', body: 'You get the weekly digest.' });
  await call(admin, 'PUT', `/v1/private/consent-terms/${term.body.id}/current-version`, { version: 'v1' });
  const contact = 'Reader@Example.org';
  const rule = (action: string) => ({ channel: 'mail', contact_type: 'email_address', contact, purpose_id: purpose.body.id, action });
  const granted = await publicCall('POST', '/v1/consent-events', { term_id: term.body.id, method: 'single_opt_in', rules: [rule('allow')], ip_address: '192.0.2.7' });
  t.equal(granted.status, 201, JSON.stringify(granted.body));

  const stored = contact.toLowerCase();
  const resolve = `/consent-rules/resolve?contacts=${encodeURIComponent(stored)}&contact_types=email_address&channel=mail&purpose_ids=${purpose.body.id}`;
  for (const path of [`/consent-events?contact=${encodeURIComponent(stored)}`, resolve, `/consent-events?term_id=${term.body.id}&status=confirmed`]) {
    const panel = await call(viewer, 'GET', `/v1/private${path}`);
    t.equal(panel.status, 200, path);
    t.same(panel.body, (await publicCall('GET', `/v1${path}`)).body, `GET /v1/private${path} equals the public answer`);
  }
  t.equal((await call(viewer, 'GET', `/v1/private${resolve}`)).body.data[0].verdict, 'allowed');
  await publicCall('POST', '/v1/consent-events', { term_id: term.body.id, method: 'single_opt_in', rules: [rule('deny')] });
  t.equal((await call(viewer, 'GET', `/v1/private${resolve}`)).body.data[0].verdict, 'denied', 'a revocation wins');

  const proof = await call(viewer, 'GET', `/v1/private/consent-events/proof?contact=${encodeURIComponent(stored)}`);
  t.equal(proof.status, 200);
  t.equal(proof.headers.get('cache-control'), 'no-store', 'personal data: kept by no cache');
  const publicProof = await publicCall('GET', `/v1/consent-events/proof?contact=${encodeURIComponent(stored)}`);
  const { generated_at: _p, ...panelDoc } = proof.body;
  const { generated_at: _q, ...publicDoc } = publicProof.body;
  t.same(panelDoc, publicDoc, 'the proof document equals the public one (generated_at aside)');
  t.equal(proof.body.events.length, 2);
  t.equal(proof.body.term_versions[0].body, 'You get the weekly digest.', 'with the exact text');
  t.equal((await call(viewer, 'GET', '/v1/private/consent-events/proof')).status, 422, 'the contact is required, as on the public route');
  t.equal((await call(viewer, 'GET', `/v1/private/consent-rules/resolve?contacts=a,b&contact_types=email_address&channel=mail&purpose_ids=1`)).body.code, 'consent_contact_pairs_mismatch');

  const notMirrored = await call(owner, 'POST', '/v1/private/consent-events', { term_id: term.body.id, method: 'single_opt_in', rules: [rule('allow')] });
  t.equal(notMirrored.status, 405, 'registering a consent is not a panel operation (the listing is GET only)');
});

t.test("another instance's term: 404 consent_term_not_found, on every term route; B's own work", async (t) => {
  const purpose = await call(ownerOfB, 'POST', '/v1/private/consent-purposes', { name: 'B purpose' }, b.slug);
  const term = await call(ownerOfB, 'POST', '/v1/private/consent-terms', { name: 'B term', type: 'other', purpose_ids: [purpose.body.id], channels: ['push'] }, b.slug);
  t.equal(term.status, 201);
  const path = `/v1/private/consent-terms/${term.body.id}`;
  for (const [method, p, body] of [
    ['GET', path, undefined],
    ['PATCH', path, { is_active: false }],
    ['POST', `${path}/versions`, { version: 'x', body: 'x' }],
    ['PUT', `${path}/current-version`, { version: 'x' }],
  ] as const) {
    const res = await call(owner, method, p, body);
    t.equal(res.status, 404, `${method} ${p} as A`);
    t.equal(res.body.code, 'consent_term_not_found');
  }
  const usePurposeOfB = await call(admin, 'POST', '/v1/private/consent-terms', { name: 'Borrowed', type: 'other', purpose_ids: [purpose.body.id], channels: ['push'] });
  t.equal(usePurposeOfB.body.code, 'consent_purpose_not_found', "B's purpose is not A's");
  t.notOk((await call(viewer, 'GET', '/v1/private/consent-terms?page_size=100')).body.data.some((x: { id: number }) => x.id === term.body.id), "A's listing has none of B's terms");
  t.equal((await call(ownerOfB, 'GET', path, undefined, b.slug)).status, 200, "B's owner reads it");
  const published = await call(ownerOfB, 'POST', `${path}/versions`, { version: 'x', body: 'x' }, b.slug);
  t.equal(published.status, 201, 'and publishes');
  t.same(published.body.versions.map((v: { version: string }) => v.version), ['x'], "A's attempts changed nothing");
});
