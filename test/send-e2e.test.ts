import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { trackingSecret } from '../domain/tracking/secret.js';
import { readTrackingToken } from '../domain/tracking/tokens.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { mailApi, messagesOf, readMailbox, startSendStack, storedOne, type StoredMessage } from './helpers/send-stack.js';

/**
 * Sending end to end, as an integrator sees it: POST /v1/mails/send and the reads over HTTP, a
 * worker dyno as its own process, real SMTP to the mailbox simulator, the message as stored on
 * disk. (send-worker.test.ts covers the worker in-process; mails-api.test.ts the API's details.)
 */
const PUBLIC_URL = 'https://track.cartero.test';
const stack = await startSendStack(t, { label: 'sende2e', publicUrl: PUBLIC_URL, fastRetries: true });
const { dbs } = stack;
const scopes = ['mail:send', 'mail:read'];
const a = await makeTenant(dbs.pool, { scopes });
await makeSenders(dbs.pool, a.tenant, { domain: 'e2e.example', senders: [{ email: 'news', name: 'News' }] });
await makeSenders(dbs.pool, a.tenant, { domain: 'draft.example', verified: false, senders: [{ email: 'hi', name: 'Draft' }] });
const api = mailApi(stack.url, a.headers);

const worker = stack.spawnWorker();
const secret = await trackingSecret(dbs.pool);

function stored(mailId: string): StoredMessage[] {
  return messagesOf(stack.mailboxDir, mailId);
}
const parsedOne = (t: Test, mailId: string) => storedOne(t, stack.mailboxDir, mailId);
const header = (msg: StoredMessage, name: string) => msg.headers.filter(([k]) => k === name).map(([, v]) => v);
const statuses = (logs: any[]) => logs.map((l) => l.status);

/** A sent mail as GET /v1/mails/{id} shows it: timestamps in order and the delay they imply. */
function checkSentTimes(t: Test, m: any): void {
  t.equal(m.status, 3);
  t.type(m.received_at, 'string');
  t.type(m.queued_at, 'string', 'queued_at set');
  t.type(m.sent_at, 'string', 'sent_at set');
  const received = Date.parse(m.received_at);
  const queued = Date.parse(m.queued_at);
  const sent = Date.parse(m.sent_at);
  t.ok(received <= queued && queued <= sent, 'received <= queued <= sent');
  t.type(m.delay, 'number');
  t.ok(m.delay >= 0, `delay >= 0 (${m.delay})`);
  t.ok(Math.abs(m.delay - (sent - received) / 1000) < 0.01, 'delay = sent_at - received_at in seconds');
}

t.test('each simulator behaviour reaches its status with the right logs', async (t) => {
  const r = await api.send({
    from: 'news@e2e.example',
    to: [
      { email: 'ok@example.org' },
      { email: 'bounce@example.org' },
      { email: 'softbounce@example.org' },
      { email: 'defer@example.org' },
      { email: 'complaint@example.org' },
    ],
    subject: 'Behaviours',
    text: 'Hello {{email}}',
  });
  t.equal(r.status, 202);
  const [ok, bounce, softbounce, defer, complaint] = r.body.mails.map((m: any) => m.mail_id) as string[];
  const started = Date.now();
  const final = await Promise.all([ok, bounce, softbounce, defer, complaint].map((id) => api.waitFinal(id!)));
  t.comment(`five behaviours final in ${Date.now() - started} ms`);
  t.same(final.map((m) => m.status), [3, 6, 6, 3, 3], 'normal 3, bounce 6, softbounce 6, defer 3, complaint 3');

  await t.test('normal: 1 accepted, 2 handed to SMTP, 3 on 250', async (t) => {
    checkSentTimes(t, final[0]);
    const logs = await api.logs(ok!);
    t.same(statuses(logs), [1, 2, 3]);
    t.match(logs, [
      { status: 1, reason: 'accepted', smtp_code: null },
      { status: 2, reason: 'handed_to_smtp', attempt: 1 },
      { status: 3, smtp_code: 250, smtp_enhanced: '2.0.0', smtp_reply: /^250 /, attempt: 1 },
    ]);
    t.equal(stored(ok!).length, 1, 'delivered once');
  });

  await t.test('bounce: 550 5.1.1 at RCPT, nothing stored', async (t) => {
    const m = final[1];
    t.equal(m.sent_at, null);
    t.equal(m.delay, null);
    t.type(m.queued_at, 'string', 'queued_at set: it was handed to SMTP');
    const logs = await api.logs(bounce!);
    t.same(statuses(logs), [1, 2, 6]);
    t.match(logs, [
      { status: 1, reason: 'accepted' },
      { status: 2, reason: 'handed_to_smtp' },
      { status: 6, smtp_code: 550, smtp_enhanced: '5.1.1', smtp_reply: /User unknown/, attempt: 1 },
    ]);
    t.same(stored(bounce!), []);
  });

  await t.test('softbounce: 452 on every try, then bounced after SEND_RETRY_LIMIT=2 retries', async (t) => {
    const m = final[2];
    t.equal(m.sent_at, null);
    const logs = await api.logs(softbounce!);
    t.same(statuses(logs), [1, 2, 5, 2, 5, 2, 6]);
    t.same(
      logs.filter((l) => l.status === 5).map((l) => [l.smtp_code, l.smtp_enhanced, l.attempt]),
      [[452, '4.2.2', 1], [452, '4.2.2', 2]],
    );
    t.same(logs.filter((l) => l.status === 2).map((l) => l.attempt), [1, 2, 3]);
    t.match(logs[6], { status: 6, reason: 'deferred_retries_exhausted', smtp_code: 452, smtp_enhanced: '4.2.2', attempt: 3 });
    const times = logs.map((l) => Date.parse(l.created_at));
    t.same([...times].sort((x, y) => x - y), times, 'logs oldest first');
    t.ok(times[3]! - times[2]! >= 900, `the retry waited for the backoff (${times[3]! - times[2]!} ms)`);
    t.same(stored(softbounce!), []);
  });

  await t.test('defer: 451 4.3.0 on the first try, sent on the retry', async (t) => {
    checkSentTimes(t, final[3]);
    const logs = await api.logs(defer!);
    t.same(statuses(logs), [1, 2, 5, 2, 3]);
    t.match(logs[2], { status: 5, smtp_code: 451, smtp_enhanced: '4.3.0', attempt: 1 });
    t.match(logs[4], { status: 3, smtp_code: 250, attempt: 2 });
    t.equal(stored(defer!).length, 1, 'delivered once');
  });

  await t.test('complaint: 250 and stored (the complaint itself arrives with the bounces issue)', async (t) => {
    checkSentTimes(t, final[4]);
    const logs = await api.logs(complaint!);
    t.same(statuses(logs), [1, 2, 3]);
    t.match(logs[2], { smtp_code: 250 });
    t.equal(stored(complaint!).length, 1);
  });
});

t.test('the message on disk: tracking, List-Unsubscribe, merge tags per recipient, headers, attachment', async (t) => {
  const attachment = randomBytes(3000).toString('base64');
  const html = `<!doctype html><html><body>
<p>Hello {{first_name}}, code {{code}}, plan {{plan}}.</p>
<p><a href="https://shop.example/offer?code={{code}}&amp;src=mail">Offer</a> <a href='http://docs.example/start'>Docs</a>
<a href="mailto:help@e2e.example">Write</a></p>
</body></html>`;
  const r = await api.send({
    from: 'news@e2e.example',
    to: [
      { email: 'ann@example.org', name: 'Ann', variables: { first_name: '<b>Ann</b>', code: 'A1' } },
      { email: 'bob@example.org', name: 'Bob', variables: { first_name: 'Bob', code: 'B2' } },
    ],
    subject: '¡Hola {{first_name}}! ({{code}}) — año',
    html,
    text: 'Hello {{first_name}}, code {{code}}, plan {{plan}}.',
    variables: { plan: 'pro' },
    reply_to: 'help@e2e.example',
    headers: { 'X-Campaign': 'fall-2026' },
    attachments: [{ filename: 'report.bin', content_type: 'application/octet-stream', content: attachment }],
  });
  t.equal(r.status, 202);
  const people = [
    { id: r.body.mails[0].mail_id as string, name: 'Ann', email: 'ann@example.org', first: '<b>Ann</b>', escaped: '&lt;b&gt;Ann&lt;/b&gt;', code: 'A1' },
    { id: r.body.mails[1].mail_id as string, name: 'Bob', email: 'bob@example.org', first: 'Bob', escaped: 'Bob', code: 'B2' },
  ];
  for (const p of people) {
    const m = await api.waitFinal(p.id);
    checkSentTimes(t, m);
    t.equal(m.subject, `¡Hola ${p.first}! (${p.code}) — año`, 'the Mail resource has the rendered subject');
    const one = await parsedOne(t, p.id);
    if (!one) continue;
    const { parsed, msg } = one;
    t.equal(msg.mailId, p.id, 'X-Cartero-Mail-Id is the mail id');
    t.same(header(msg, 'message-id').length, 1);
    t.ok(msg.messageId?.includes(p.id), `Message-ID embeds the mail id: ${msg.messageId}`);
    t.same(header(msg, 'x-simulator-rcpt-to'), [p.email], 'one recipient per message');
    t.same(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value.map((x) => [x.name, x.address]) : [], [[p.name, p.email]]);

    // RFC 8058 one-click unsubscribe under PUBLIC_URL
    t.same(header(msg, 'list-unsubscribe-post'), ['List-Unsubscribe=One-Click']);
    const unsub = header(msg, 'list-unsubscribe');
    t.equal(unsub.length, 1);
    const u = /^<https:\/\/track\.cartero\.test\/u\/([^>]+)>$/.exec(unsub[0] ?? '');
    t.ok(u, `List-Unsubscribe under PUBLIC_URL: ${unsub[0]}`);
    t.same(u && readTrackingToken(secret, u[1]!, 'unsubscribe'), { kind: 'unsubscribe', mail_id: p.id });

    // merge tags: raw in subject and text, escaped in html
    t.equal(parsed.subject, `¡Hola ${p.first}! (${p.code}) — año`, 'subject filled raw, non-ASCII intact');
    t.same(parsed.from?.value.map((x) => [x.name, x.address]), [['News', 'news@e2e.example']]);
    t.match(parsed.text, `Hello ${p.first}, code ${p.code}, plan pro.`);
    const body = String(parsed.html);
    t.ok(body.includes(`Hello ${p.escaped}, code ${p.code}, plan pro.`), 'merge tags filled and HTML-escaped in html');
    if (p.first.includes('<')) t.notOk(body.includes(p.first), 'the raw <b> never reaches the HTML');

    // open pixel and click tracking
    const pixel = /<img src="https:\/\/track\.cartero\.test\/t\/o\/([^"]+)"[^>]*>/.exec(body);
    t.ok(pixel, 'open pixel under PUBLIC_URL/t/o/');
    t.same(pixel && readTrackingToken(secret, pixel[1]!, 'open'), { kind: 'open', mail_id: p.id });
    const hrefs = [...body.matchAll(/href="([^"]*)"/g)].map((x) => x[1]!);
    const targets = hrefs.map((h) => {
      const c = /^https:\/\/track\.cartero\.test\/t\/c\/(.+)$/.exec(h);
      if (!c) return h;
      const tok = readTrackingToken(secret, c[1]!, 'click');
      return tok && tok.mail_id === p.id ? `tracked:${tok.url}` : `bad-token:${h}`;
    });
    t.same(
      targets,
      [`tracked:https://shop.example/offer?code=${p.code}&src=mail`, 'tracked:http://docs.example/start', 'mailto:help@e2e.example'],
      'http(s) links rewritten to PUBLIC_URL/t/c/ (per recipient), mailto left alone',
    );

    // custom header, reply-to, attachment
    t.equal(parsed.headers.get('x-campaign'), 'fall-2026', 'custom header present');
    t.same(parsed.replyTo?.value.map((x) => x.address), ['help@e2e.example']);
    t.equal(parsed.attachments.length, 1);
    const att = parsed.attachments[0]!;
    t.equal(att.filename, 'report.bin');
    t.equal(att.contentType, 'application/octet-stream');
    t.ok(att.content.toString('base64') === attachment, 'attachment content round-trips (base64 equal)');
  }
});

t.test('tracking off: no pixel, links untouched; each flag on its own', async (t) => {
  const html = '<html><body><p><a href="https://shop.example/x?a=1&amp;b=2">X</a></p></body></html>';
  const send = (track_opens: boolean, track_clicks: boolean) =>
    api.send({ from: 'news@e2e.example', to: [{ email: `track-${track_opens}-${track_clicks}@example.org` }], subject: 's', html, track_opens, track_clicks });
  const cases = [
    { opens: false, clicks: false },
    { opens: true, clicks: false },
    { opens: false, clicks: true },
  ];
  const ids: string[] = [];
  for (const c of cases) {
    const r = await send(c.opens, c.clicks);
    t.equal(r.status, 202);
    ids.push(r.body.mails[0].mail_id);
  }
  for (const [i, c] of cases.entries()) {
    t.equal((await api.waitFinal(ids[i]!)).status, 3);
    const one = await parsedOne(t, ids[i]!);
    if (!one) continue;
    const body = String(one.parsed.html);
    t.equal(body.includes('/t/o/'), c.opens, `opens ${c.opens}: pixel ${c.opens ? 'present' : 'absent'}`);
    const hrefs = [...body.matchAll(/href="([^"]*)"/g)].map((x) => x[1]!);
    t.equal(hrefs.length, 1);
    if (c.clicks) t.match(hrefs[0], /^https:\/\/track\.cartero\.test\/t\/c\//, 'clicks on: link tracked');
    else t.equal(hrefs[0], 'https://shop.example/x?a=1&amp;b=2', 'clicks off: the author\'s href byte for byte');
    t.same(header(one.msg, 'list-unsubscribe-post'), ['List-Unsubscribe=One-Click'], 'List-Unsubscribe whatever the tracking');
  }
});

t.test('a restricted recipient is dropped with its reason and never contacted', async (t) => {
  await dbs.pool.query(`INSERT INTO mail_restrictions (instance_id, recipient, reason) VALUES ($1, 'blocked@example.org', 'hard_bounce')`, [
    a.tenant.instanceId,
  ]);
  const r = await api.send({
    from: 'news@e2e.example',
    to: [{ email: 'Blocked@Example.org' }, { email: 'fine@example.org' }],
    subject: 'Restricted?',
    text: 'Hi',
  });
  t.equal(r.status, 202);
  t.same(r.body.mails.map((m: any) => m.status), [1, 1], 'accepted as received: the gate runs at send time');
  const [blocked, fine] = r.body.mails.map((m: any) => m.mail_id) as string[];
  const m = await api.waitFinal(blocked!);
  t.equal(m.status, 4);
  t.equal(m.queued_at, null, 'never handed to SMTP');
  t.equal(m.sent_at, null);
  const logs = await api.logs(blocked!);
  t.same(logs.map((l) => [l.status, l.reason]), [[1, 'accepted'], [4, 'restricted:hard_bounce']]);
  t.equal(logs[1].smtp_code, null);
  t.equal((await api.waitFinal(fine!)).status, 3, 'the other recipient of the send is delivered');
  t.equal(stored(fine!).length, 1);
  t.same(stored(blocked!), [], 'no .eml for the restricted recipient');
  const any = readMailbox(stack.mailboxDir);
  t.notOk(
    any.some((x) => x.headers.some(([k, v]) => k === 'x-simulator-rcpt-to' && v.includes('blocked@'))),
    'no message in the mailbox was addressed to it',
  );
});

t.test('refusals over HTTP: 409 unverified domain, 429 with Retry-After', async (t) => {
  const unverified = await api.send({ from: 'hi@draft.example', to: [{ email: 'x@example.org' }], subject: 's', text: 't' });
  t.equal(unverified.status, 409);
  t.equal(unverified.body.code, 'domain_sender_not_verified');

  const c = await makeTenant(dbs.pool, { scopes });
  await makeSenders(dbs.pool, c.tenant, { domain: 'limited.example', senders: [{ email: 'news', name: 'L' }] });
  await dbs.pool.query('UPDATE instances SET send_rate_per_second = 0.2, send_burst = 2 WHERE id = $1', [c.tenant.instanceId]);
  const capi = mailApi(stack.url, c.headers);
  const body = (n: number) => ({ from: 'news@limited.example', to: Array.from({ length: n }, (_, i) => ({ email: `lim${i}@example.org` })), subject: 's', text: 't' });
  const first = await capi.send(body(2));
  t.equal(first.status, 202, 'the burst passes');
  const limited = await capi.send(body(1));
  t.equal(limited.status, 429);
  t.equal(limited.body.code, 'rate_limit_exceeded');
  t.equal(limited.headers.get('retry-after'), '5', 'one token short at 0.2/s: 5 s');
  const rows = await dbs.pool.query('SELECT count(*)::int AS n FROM mails WHERE instance_id = $1', [c.tenant.instanceId]);
  t.equal(rows.rows[0].n, 2, 'the refused send wrote nothing');
  // What was accepted is delivered like any other mail.
  for (const m of first.body.mails) t.equal((await capi.waitFinal(m.mail_id)).status, 3);
});

t.test('the worker process ran throughout, logging no warning or error', async (t) => {
  t.equal(worker.exit(), undefined, 'still running');
  const logged = (worker.stdout() + worker.stderr()).trim();
  t.equal(logged, '', 'nothing at LOG_LEVEL=warn');
  if (logged) t.comment(logged.slice(-3000));
});
