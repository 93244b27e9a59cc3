import t, { type Test } from 'tap';
import { deleteTemplate, importExternalTemplate, setTemplateStatus } from '../domain/templates/templates.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { readTrackingToken } from '../domain/tracking/tokens.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, startSendStack, storedOne } from './helpers/send-stack.js';

/**
 * Sending from a template, end to end: a template made over HTTP from a design document,
 * published, sent with template_id through a worker dyno and real SMTP to the mailbox simulator;
 * the message on disk has the preheader block, tracked links and merge tags filled per recipient.
 * Then the refusals (draft outside test_mode, unknown and deleted ids, html with template_id)
 * and the rule that a mail sends what was accepted, whatever happens to the template after.
 */
const PUBLIC_URL = 'https://track.cartero.test';
const stack = await startSendStack(t, { label: 'templatessend', publicUrl: PUBLIC_URL, fastRetries: true });
const { dbs } = stack;
const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read', 'templates:read', 'templates:write'] });
const b = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read', 'templates:read', 'templates:write'] });
await makeSenders(dbs.pool, a.tenant, { domain: 'tpl.example', senders: [{ email: 'news', name: 'News' }] });
const api = mailApi(stack.url, a.headers);
const secret = await trackingSecret(dbs.pool);

const format = (await api.call('GET', '/v1/mail-templates/format')).body;
const typeOf = (kind: string) => format.modules.find((m: any) => m.kind === kind).type as string;

/** The skeleton with one more row: a paragraph with merge tags and a link, and a button. */
function design(greeting: string): any {
  const doc = structuredClone(format.skeleton);
  doc.page.rows.push({
    uuid: 'row-offer',
    columns: [
      {
        uuid: 'col-offer',
        'grid-columns': 12,
        modules: [
          {
            uuid: 'mod-greeting',
            type: typeOf('paragraph'),
            descriptor: {
              paragraph: { html: `<p>${greeting} {{first_name}}, tu código es {{code}}.</p><p><a href="https://shop.example/offer?code={{code}}">Oferta</a></p>` },
            },
          },
          { uuid: 'mod-buy', type: typeOf('button'), descriptor: { button: { label: 'Comprar', href: 'https://shop.example/buy' } } },
        ],
      },
    ],
  });
  return doc;
}

async function createTemplate(name: string, over: Record<string, unknown> = {}): Promise<any> {
  const r = await api.call('POST', '/v1/mail-templates', { name, subject: 'Oferta para {{first_name}}', preheader: 'Solo esta semana', config: design('Hola'), ...over });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const parsedOne = async (t: Test, mailId: string) => (await storedOne(t, stack.mailboxDir, mailId))?.parsed;

/** Every href of the html, tracked ones decoded to their target (and checked to be this mail's). */
function linkTargets(html: string, mailId: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].map(([, h]) => {
    const c = /^https:\/\/track\.cartero\.test\/t\/c\/(.+)$/.exec(h!);
    if (!c) return h!;
    const tok = readTrackingToken(secret, c[1]!, 'click');
    return tok && tok.mail_id === mailId ? `tracked:${tok.url}` : `bad-token:${h}`;
  });
}

const published = await createTemplate('Oferta semanal');
await setTemplateStatus(a.tenant, dbs.pool, published.id, 'public');
const draft = await createTemplate('Borrador');
const changing = await createTemplate('Cambiante');
await setTemplateStatus(a.tenant, dbs.pool, changing.id, 'public');
const doomed = await createTemplate('Efímera');
await setTemplateStatus(a.tenant, dbs.pool, doomed.id, 'public');

const send = (over: Record<string, unknown>) =>
  api.send({ from: 'news@tpl.example', to: [{ email: 'ann@example.org', variables: { first_name: 'Ann', code: 'A1' } }], ...over });

// Accepted before the worker runs, then the templates change: what was accepted is what is sent.
const beforeChange = await send({ template_id: changing.id, to: [{ email: 'early@example.org', variables: { first_name: 'Early', code: 'E1' } }] });
const beforeDelete = await send({ template_id: doomed.id, to: [{ email: 'gone@example.org', variables: { first_name: 'Gone', code: 'G1' } }] });
await setTemplateStatus(a.tenant, dbs.pool, changing.id, 'draft');
const edited = await api.call('PATCH', `/v1/mail-templates/${changing.id}`, { subject: 'Otro asunto', preheader: 'Otro preheader', config: design('Adiós') });
await setTemplateStatus(a.tenant, dbs.pool, changing.id, 'public');
await deleteTemplate(a.tenant, dbs.pool, doomed.id);

stack.spawnWorker();

t.test('a published template sent to two recipients: preheader block, tracked links, merge tags filled and escaped', async (t) => {
  const r = await send({
    template_id: published.id,
    to: [
      { email: 'ann@example.org', name: 'Ann', variables: { first_name: '<b>Ann</b>', code: 'A1' } },
      { email: 'bob@example.org', name: 'Bob', variables: { first_name: 'Bob', code: 'B2' } },
    ],
  });
  t.equal(r.status, 202, JSON.stringify(r.body));
  const people = [
    { id: r.body.mails[0].mail_id as string, first: '<b>Ann</b>', escaped: '&lt;b&gt;Ann&lt;/b&gt;', code: 'A1' },
    { id: r.body.mails[1].mail_id as string, first: 'Bob', escaped: 'Bob', code: 'B2' },
  ];
  for (const p of people) {
    const m = await api.waitFinal(p.id);
    t.equal(m.status, 3, 'sent');
    t.equal(m.subject, `Oferta para ${p.first}`, "the template's subject, filled for the recipient");
    const parsed = await parsedOne(t, p.id);
    if (!parsed) continue;
    t.equal(parsed.subject, `Oferta para ${p.first}`);
    const html = String(parsed.html);

    const preheader = /<body[^>]*>\s*(?:<[^>]+>\s*)*?<div[^>]*display:\s*none[^>]*>\s*Solo esta semana/i.exec(html);
    t.ok(preheader, 'the preheader is a hidden block at the start of the body');
    t.ok(html.indexOf('Solo esta semana') < html.indexOf('tu código es'), 'before the content');

    t.ok(html.includes(`${p.escaped}, tu código es ${p.code}.`), 'merge tags filled, values HTML-escaped');
    if (p.first.includes('<')) t.notOk(html.includes(p.first), 'the raw <b> never reaches the HTML');
    t.notMatch(html, /\{\{|\}\}/, 'no merge tag left');

    const targets = linkTargets(html, p.id);
    t.ok(targets.includes(`tracked:https://shop.example/offer?code=${p.code}`), 'the paragraph link is tracked, its merge tag filled');
    t.ok(targets.includes('tracked:https://shop.example/buy'), 'the button link is tracked');
    t.notOk(targets.some((x) => x.startsWith('https://shop.example') || x.startsWith('bad-token')), 'no untracked shop link');
    t.match(html, /<img src="https:\/\/track\.cartero\.test\/t\/o\/[^"]+"/, 'open pixel');

    // The template's text alternative, filled raw (not escaped) with the real link targets.
    t.ok(parsed.text?.includes(`${p.first}, tu código es ${p.code}.`), 'text alternative with merge tags filled');
    t.notMatch(parsed.text ?? '', /Solo esta semana.*Solo esta semana/s, 'the preheader at most once in the text');
  }
});

t.test('subject in the request wins over the template subject; neither is a 422', async (t) => {
  const r = await send({ template_id: published.id, subject: 'Asunto propio {{code}}', to: [{ email: 'own@example.org', variables: { code: 'Z9' } }] });
  t.equal(r.status, 202);
  const m = await api.waitFinal(r.body.mails[0].mail_id);
  t.equal(m.subject, 'Asunto propio Z9');

  const noSubject = await createTemplate('Sin asunto', { subject: null });
  await setTemplateStatus(a.tenant, dbs.pool, noSubject.id, 'public');
  const missing = await send({ template_id: noSubject.id });
  t.equal(missing.status, 422);
  t.match(missing.body.errors, [{ pointer: '/subject', code: 'missing' }]);
  t.equal((await send({ template_id: noSubject.id, subject: 'Dado' })).status, 202, 'given in the request: fine');
  t.equal((await send({ text: 'no template, no subject' })).body.errors?.[0]?.pointer, '/subject', 'without a template the subject is required');
});

t.test('a draft is sent only with test_mode: true', async (t) => {
  const refused = await send({ template_id: draft.id });
  t.equal(refused.status, 409);
  t.equal(refused.body.code, 'template_not_public');
  const test = await send({ template_id: draft.id, test_mode: true, to: [{ email: 'tester@example.org', variables: { first_name: 'Tess', code: 'T1' } }] });
  t.equal(test.status, 202);
  const m = await api.waitFinal(test.body.mails[0].mail_id);
  t.equal(m.status, 3);
  const parsed = await parsedOne(t, test.body.mails[0].mail_id);
  t.ok(String(parsed?.html).includes('Tess, tu código es T1.'));
});

t.test('refusals: unknown, deleted and other-instance ids are 404; html or text with template_id is 422; nothing accepted', async (t) => {
  const before = Number((await dbs.pool.query('SELECT count(*) AS n FROM mails')).rows[0].n);
  for (const id of [987654, doomed.id]) {
    const r = await send({ template_id: id });
    t.equal(r.status, 404);
    t.equal(r.body.code, 'mail_template_not_found');
  }
  const theirs = (await mailApi(stack.url, b.headers).call('POST', '/v1/mail-templates', { name: 'B', config: format.skeleton })).body;
  await setTemplateStatus(b.tenant, dbs.pool, theirs.id, 'public');
  t.equal((await send({ template_id: theirs.id })).body.code, 'mail_template_not_found', "another instance's template is not found");
  const both = await send({ template_id: published.id, html: '<p>mine</p>', text: 'mine' });
  t.equal(both.status, 422);
  t.match(both.body.errors, [{ pointer: '/html', code: 'value_error.template_conflict' }, { pointer: '/text', code: 'value_error.template_conflict' }]);
  t.equal(Number((await dbs.pool.query('SELECT count(*) AS n FROM mails')).rows[0].n), before);
});

t.test('an external template is sent as imported; its text part is derived from its html', async (t) => {
  const external = await importExternalTemplate(a.tenant, dbs.pool, {
    name: 'Legacy',
    html: '<html><body><p>Legacy hello {{first_name}}</p><a href="https://old.example/x">Old</a></body></html>',
  });
  await setTemplateStatus(a.tenant, dbs.pool, external.id, 'public');
  const r = await send({ template_id: external.id, subject: 'Legacy' });
  t.equal(r.status, 202);
  const m = await api.waitFinal(r.body.mails[0].mail_id);
  t.equal(m.status, 3);
  const parsed = await parsedOne(t, r.body.mails[0].mail_id);
  t.ok(String(parsed?.html).includes('Legacy hello Ann'));
  t.same(linkTargets(String(parsed?.html), r.body.mails[0].mail_id), ['tracked:https://old.example/x']);
  t.match(parsed?.text, /Legacy hello Ann/);
});

t.test('a mail sends what was accepted: the template edited or deleted afterwards changes nothing', async (t) => {
  t.equal(beforeChange.status, 202);
  t.equal(beforeDelete.status, 202);
  t.equal(edited.status, 200, 'the template was edited after the acceptance');
  const early = await api.waitFinal(beforeChange.body.mails[0].mail_id);
  t.equal(early.subject, 'Oferta para Early');
  const earlyHtml = String((await parsedOne(t, beforeChange.body.mails[0].mail_id))?.html);
  t.ok(earlyHtml.includes('Hola Early') && earlyHtml.includes('Solo esta semana'), 'the content at acceptance');
  t.notOk(earlyHtml.includes('Adiós') || earlyHtml.includes('Otro preheader'), 'not the edited one');
  const gone = await api.waitFinal(beforeDelete.body.mails[0].mail_id);
  t.equal(gone.status, 3, 'a deleted template does not stop a mail already accepted');

  const after = await send({ template_id: changing.id, to: [{ email: 'late@example.org', variables: { first_name: 'Late', code: 'L1' } }] });
  const late = await api.waitFinal(after.body.mails[0].mail_id);
  t.equal(late.subject, 'Otro asunto');
  t.ok(String((await parsedOne(t, after.body.mails[0].mail_id))?.html).includes('Adiós Late'), 'a later send takes the edited template');
});
