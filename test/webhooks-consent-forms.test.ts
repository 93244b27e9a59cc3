import t, { type Test } from 'tap';
import { consentConfirmToken } from '../domain/consent/confirm-token.js';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { createForm } from '../domain/forms/definition.js';
import { formConfirmUrl } from '../domain/forms/confirm.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { testDatabases } from './helpers/databases.js';
import { makeTenant } from './helpers/fixtures.js';
import { mailApi, waitFor } from './helpers/send-stack.js';
import { childEnv, spawnNode, TEST_DKIM_KEY } from './helpers/spawn.js';
import { startTestWeb } from './helpers/web.js';
import { startReceiver, verifies, type Received } from './helpers/webhook-receiver.js';

/**
 * The consent and form webhook types (docs/webhooks.md, Event types and their data), end to end:
 * consent events registered over HTTP, confirmed and expired through their public links, a form
 * submitted over HTTP and confirmed through its link; a worker dyno (its own process) fans the
 * outbox rows out, and a real receiver on loopback verifies each delivery with the official
 * standardwebhooks library. Each delivery's `data` is compared whole with what the documentation
 * lists for its type. The links are built with the functions the confirmation mails use
 * (test/consent-double-opt-in.test.ts and test/forms-api.test.ts read them from the real mailbox);
 * the instance has no sender, so no confirmation mail is sent and no SMTP is needed.
 */
const PUBLIC_URL = 'https://hooks.cartero.test';
const dbs = await testDatabases(t, 'webhookconsent');
const pool = dbs.pool;
const web = await startTestWeb(t, dbs, { env: { PUBLIC_URL, WEBHOOK_ALLOW_PRIVATE: 'true' } });
const worker = spawnNode(t, 'dist/runtime/worker.js', {
  env: childEnv(
    { DATABASE_URL: dbs.databaseUrl, CLICKHOUSE_URL: dbs.clickhouseUrl, PUBLIC_URL, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: 'true', DKIM_KEY_ENCRYPTION_KEY: TEST_DKIM_KEY },
    ['SMTP_URL', 'DATA_DIR', 'PORT', 'INBOUND_SMTP_PORT'],
  ),
});
t.teardown(() => {
  if (process.env.WEBHOOKS_TEST_DEBUG) console.error(worker.stdout(), worker.stderr());
});
const receiver = await startReceiver(t);
const secret = await trackingSecret(pool);

const a = await makeTenant(pool, { scopes: ['consent:read', 'consent:write', 'form:read', 'form:write', 'webhooks:read', 'webhooks:write'] });
const api = mailApi(web.url, a.headers);
const N = (await createPurpose(a.tenant, pool, { name: 'Newsletter' })).id;
const term = await createTerm(a.tenant, pool, { name: 'Newsletter terms', type: 'marketing', purposeIds: [N], channels: ['mail'] });
await addTermVersion(a.tenant, pool, term.id, { version: 'v1', body: 'We write twice a month.' });
await setCurrentVersion(a.tenant, pool, term.id, 'v1');
const versionId = Number((await pool.query('SELECT id FROM consent_term_versions WHERE term_id = $1', [term.id])).rows[0].id);
const form = await createForm(a.tenant, pool, {
  name: 'Join', kind: 'consent', type: 'registration', requires_confirmation: true,
  items: [{ type: 'field', field_key: 'email', required: true }, { type: 'consent', term_id: term.id, required: true }],
});
const [emailItem, consentItem] = form.items.map((i) => i.id) as [number, number];

const TYPES = ['consent.event.created', 'consent.event.confirmed', 'consent.event.expired', 'form.submission.created', 'form.submission.confirmed'];
async function createHook(path: string, events: string[]) {
  const r = await api.call('POST', '/v1/webhooks', { name: path, url: receiver.url(path), events });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: number; secret: string };
}
const hook = await createHook('/consent-forms', TYPES);
const other = await createHook('/others', ['mail.sent', 'restriction.created', 'webhook.test']);

/** The one delivery (answered 2xx) of `type` about `id` at the hook, once it came; it must verify. */
async function delivery(type: string, key: 'consent_event_id' | 'submission_id', id: number): Promise<Received> {
  const found = await waitFor(`${type} ${key} ${id}`, async () => {
    const rs = receiver.at('/consent-forms').filter((r) => r.event?.type === type && r.event.data?.[key] === id && r.answered === 200);
    return rs.length ? rs : undefined;
  }, { ms: 30_000 });
  return found[0]!;
}

function checkSigned(tt: Test, r: Received, type: string) {
  tt.ok(verifies(hook.secret, r), `${type}: verifies with standardwebhooks`);
  tt.match(r.headers['webhook-id'], /^msg_\d+$/, `${type}: webhook-id`);
  tt.equal(r.event.type, type);
  tt.ok(Date.parse(r.event.timestamp) > 0, `${type}: timestamp`);
}

const registerEvent = async (method: string, contact: string): Promise<number> => {
  const r = await api.call('POST', '/v1/consent-events', {
    term_id: term.id, method, rules: [{ channel: 'mail', contact_type: 'email_address', contact, purpose_id: N, action: 'allow' }],
  });
  if (r.status !== 201) throw new Error(`consent event: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
};
const confirmLink = (eventId: number) =>
  fetch(`${web.url}/c/${consentConfirmToken(secret, a.tenant, eventId)}`, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: '' });

/** What docs/webhooks.md lists for the consent types, for an event registered over the API. */
const apiConsentData = (id: number, method: string, status: string) => ({
  consent_event_id: id, term_id: term.id, term_version_id: versionId, method, source: 'api', submission_id: null, form_id: null, status,
});

t.test('consent over the API: single opt-in created; double opt-in created pending, then confirmed through its link', async (t) => {
  const single = await registerEvent('single_opt_in', 'ann@example.org');
  const s = await delivery('consent.event.created', 'consent_event_id', single);
  checkSigned(t, s, 'consent.event.created');
  t.same(s.event.data, apiConsentData(single, 'single_opt_in', 'confirmed'), 'single opt-in: the documented data, status confirmed');

  const double = await registerEvent('double_opt_in', 'bob@example.org');
  const created = await delivery('consent.event.created', 'consent_event_id', double);
  checkSigned(t, created, 'consent.event.created');
  t.same(created.event.data, apiConsentData(double, 'double_opt_in', 'pending'), 'double opt-in: status pending');

  const res = await confirmLink(double);
  t.equal(res.status, 200, 'the link confirms');
  const confirmed = await delivery('consent.event.confirmed', 'consent_event_id', double);
  checkSigned(t, confirmed, 'consent.event.confirmed');
  t.same(confirmed.event.data, apiConsentData(double, 'double_opt_in', 'confirmed'), 'confirmed: status confirmed');
  t.not(confirmed.headers['webhook-id'], created.headers['webhook-id'], 'an event of its own');
});

t.test('a double opt-in left past CONSENT_CONFIRM_DAYS expires when its link is posted: consent.event.expired', async (t) => {
  const late = await registerEvent('double_opt_in', 'late@example.org');
  await delivery('consent.event.created', 'consent_event_id', late);
  await pool.query(`UPDATE consent_events SET created_at = now() - interval '8 days' WHERE id = $1`, [late]);
  t.equal((await confirmLink(late)).status, 410, 'the link refuses and expires the event');
  const expired = await delivery('consent.event.expired', 'consent_event_id', late);
  checkSigned(t, expired, 'consent.event.expired');
  t.same(expired.event.data, apiConsentData(late, 'double_opt_in', 'expired'), 'expired: status expired');
});

t.test('a form submission over the API, then confirmed through its link: the form and consent types with submission_id and form_id', async (t) => {
  const r = await api.call('POST', `/v1/forms/${form.id}/submissions`, {
    items: [{ item_id: emailItem, value: 'Cy@Example.org' }, { item_id: consentItem, value: true, term_version_id: versionId }],
  });
  t.equal(r.status, 201);
  t.equal(r.body.status, 'pending');
  const sub = r.body.id as number;
  const created = await delivery('form.submission.created', 'submission_id', sub);
  checkSigned(t, created, 'form.submission.created');
  t.same(created.event.data, { submission_id: sub, form_id: form.id }, 'form.submission.created: submission_id, form_id');

  const listed = await api.call('GET', '/v1/consent-events?contact=cy@example.org');
  t.equal(listed.body.data.length, 1, 'the form recorded one consent event');
  const eventId = listed.body.data[0].id as number;
  const formConsent = (status: string) => ({
    consent_event_id: eventId, term_id: term.id, term_version_id: versionId, method: 'double_opt_in', source: 'form', submission_id: sub, form_id: form.id, status,
  });
  const consentCreated = await delivery('consent.event.created', 'consent_event_id', eventId);
  checkSigned(t, consentCreated, 'consent.event.created');
  t.same(consentCreated.event.data, formConsent('pending'), "the form's consent event: source form, its submission and form");

  const posted = await fetch(formConfirmUrl(PUBLIC_URL, secret, a.tenant, sub).replace(PUBLIC_URL, web.url), {
    method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, body: '',
  });
  t.equal(posted.status, 200, 'the link confirms');
  const confirmed = await delivery('form.submission.confirmed', 'submission_id', sub);
  checkSigned(t, confirmed, 'form.submission.confirmed');
  t.same(confirmed.event.data, { submission_id: sub, form_id: form.id }, 'form.submission.confirmed: submission_id, form_id');
  const consentConfirmed = await delivery('consent.event.confirmed', 'consent_event_id', eventId);
  checkSigned(t, consentConfirmed, 'consent.event.confirmed');
  t.same(consentConfirmed.event.data, formConsent('confirmed'), 'confirmed with the submission');
});

t.test('every delivery once; a webhook subscribed to other types got none of them', async (t) => {
  // The test event is fanned out after every outbox row above (outbox id order): once it has
  // arrived, anything of the consent or form types for this webhook would have been created too.
  t.equal((await api.call('POST', `/v1/webhooks/${other.id}/test`)).status, 202);
  await waitFor('the test event', async () => receiver.at('/others').find((r) => r.answered === 200));
  t.same(receiver.at('/others').map((r) => r.event.type), ['webhook.test'], 'only its test event reached it');
  const log = await api.call('GET', `/v1/webhooks/${other.id}/deliveries`);
  t.same(log.body.data.map((d: any) => d.event_type), ['webhook.test'], 'and its delivery log has nothing else');
  const got = receiver.at('/consent-forms');
  t.same(
    got.map((r) => r.event.type).sort(),
    [...Array(4).fill('consent.event.created'), 'consent.event.confirmed', 'consent.event.confirmed', 'consent.event.expired', 'form.submission.confirmed', 'form.submission.created'].sort(),
    'the subscribed webhook got each of the nine events once',
  );
  t.ok(got.every((r) => verifies(hook.secret, r)), 'all verify');
});
