import t from 'tap';
import { createPurpose } from '../domain/consent/purposes.js';
import { addTermVersion, createTerm, setCurrentVersion } from '../domain/consent/terms.js';
import { setSenderConsentRequired } from '../domain/senders/senders.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, messagesOf, startSendStack } from './helpers/send-stack.js';

/**
 * Sending from a sender that requires consent (issue 14), end to end: POST /v1/mails/send needs
 * the send's purposes, and the worker (its own process, real SMTP to the mailbox simulator) sends
 * a recipient only when the resolver allows its address on mail for every purpose, dropping the
 * others (status 4) with the reason in their logs. The consents are registered over HTTP.
 */
const stack = await startSendStack(t, { label: 'consentsend', publicUrl: 'https://track.cartero.test' });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read', 'consent:read', 'consent:write'] });
const b = await makeTenant(dbs.pool, { scopes: ['mail:send'] });
const [optinId] = await makeSenders(dbs.pool, a.tenant, { domain: 'consent.example', senders: [{ email: 'optin', name: 'Opt-in' }, { email: 'news', name: 'News' }] });
await setSenderConsentRequired(a.tenant, dbs.pool, optinId!, true);
const api = mailApi(stack.url, a.headers);

const N = (await createPurpose(a.tenant, dbs.pool, { name: 'Newsletter' })).id;
const P = (await createPurpose(a.tenant, dbs.pool, { name: 'Profiling' })).id;
const bPurpose = (await createPurpose(b.tenant, dbs.pool, { name: 'Newsletter' })).id;
const term = await createTerm(a.tenant, dbs.pool, { name: 'Mail consent', type: 'marketing', purposeIds: [N, P], channels: ['mail'] });
await addTermVersion(a.tenant, dbs.pool, term.id, { version: '1', body: 'We will write to you.' });
await setCurrentVersion(a.tenant, dbs.pool, term.id, '1');

async function consent(contact: string, rules: Array<[number, 'allow' | 'deny']>, method = 'single_opt_in'): Promise<void> {
  const r = await api.call('POST', '/v1/consent-events', {
    term_id: term.id,
    method,
    rules: rules.map(([purpose_id, action]) => ({ channel: 'mail', contact_type: 'email_address', contact, purpose_id, action })),
  });
  if (r.status !== 201) throw new Error(`consent for ${contact}: ${r.status} ${JSON.stringify(r.body)}`);
}

await consent('allowed@example.org', [[N, 'allow'], [P, 'allow']]);
await consent('Mixed.Case@Example.org', [[N, 'allow'], [P, 'allow']]);
await consent('partial@example.org', [[N, 'allow']]);
await consent('denied@example.org', [[N, 'allow'], [P, 'allow']]);
await consent('denied@example.org', [[N, 'deny']]);
await consent('pending@example.org', [[N, 'allow'], [P, 'allow']], 'double_opt_in');
await consent('revoked@example.org', [[N, 'allow'], [P, 'allow']]);

const messages = async () => Number((await dbs.pool.query('SELECT count(*) AS n FROM messages')).rows[0].n);

t.test('a consent-required sender: purpose_ids required and checked at acceptance', async (t) => {
  const before = await messages();
  const missing = await api.send({ from: 'optin@consent.example', to: [{ email: 'allowed@example.org' }], subject: 's', text: 't' });
  t.equal(missing.status, 422);
  t.same(missing.body.errors, [{ pointer: '/purpose_ids', code: 'missing', message: 'This sender requires consent: declare the purposes of the send (purpose_ids)' }]);
  const unknown = await api.send({ from: 'optin@consent.example', to: [{ email: 'allowed@example.org' }], subject: 's', text: 't', purpose_ids: [N, 999999, bPurpose] });
  t.equal(unknown.status, 422);
  t.same(unknown.body.errors.map((e: any) => [e.pointer, e.code]), [['/purpose_ids/1', 'value_error.unknown_purpose'], ['/purpose_ids/2', 'value_error.unknown_purpose']], "an unknown id and another instance's purpose");
  const repeated = await api.send({ from: 'optin@consent.example', to: [{ email: 'allowed@example.org' }], subject: 's', text: 't', purpose_ids: [N, N] });
  t.equal(repeated.status, 422, 'a repeated purpose');
  t.equal(await messages(), before, 'nothing accepted');
});

t.test('recipients without an allowed verdict for every purpose are dropped with the reason; the others are sent', async (t) => {
  const consentSend = await api.send({
    from: 'optin@consent.example',
    to: ['allowed', 'MIXED.CASE', 'partial', 'denied', 'pending', 'nobody', 'revoked'].map((n) => ({ email: `${n}@example.org` })),
    subject: 'Consent',
    text: 'Hello',
    purpose_ids: [N, P],
  });
  t.equal(consentSend.status, 202, JSON.stringify(consentSend.body));
  // A sender that does not require consent: no purposes needed, nothing checked.
  const plain = await api.send({ from: 'news@consent.example', to: [{ email: 'nobody@example.org' }], subject: 'Plain', text: 'Hello' });
  t.equal(plain.status, 202);
  // A revocation registered after acceptance, before the worker runs: the gate reads it at send time.
  await consent('revoked@example.org', [[P, 'deny']]);

  stack.spawnWorker();
  const ids = consentSend.body.mails.map((m: any) => m.mail_id) as string[];
  const final = await Promise.all([...ids, plain.body.mails[0].mail_id].map((id) => api.waitFinal(id)));
  t.same(final.map((m) => [m.to, m.status]), [
    ['allowed@example.org', 3],
    ['mixed.case@example.org', 3],
    ['partial@example.org', 4],
    ['denied@example.org', 4],
    ['pending@example.org', 4],
    ['nobody@example.org', 4],
    ['revoked@example.org', 4],
    ['nobody@example.org', 3],
  ]);
  const reasons = await Promise.all(ids.map(async (id) => (await api.logs(id)).map((l: any) => [l.status, l.reason])));
  t.same(reasons.slice(2), [
    [[1, 'accepted'], [4, `no_consent:${P}=no_consent`]],
    [[1, 'accepted'], [4, `no_consent:${N}=denied`]],
    [[1, 'accepted'], [4, `no_consent:${N}=no_consent,${P}=no_consent`]],
    [[1, 'accepted'], [4, `no_consent:${N}=no_consent,${P}=no_consent`]],
    [[1, 'accepted'], [4, `no_consent:${P}=denied`]],
  ], 'each dropped recipient says which purpose failed and how');
  t.equal(messagesOf(stack.mailboxDir, ids[0]!).length, 1, 'the allowed recipient got the mail');
  t.equal(messagesOf(stack.mailboxDir, ids[1]!).length, 1, 'so did the mixed-case one (compared lowercased)');
  for (const id of ids.slice(2)) t.same(messagesOf(stack.mailboxDir, id), [], 'a dropped recipient was never contacted');
});
