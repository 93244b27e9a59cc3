import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import t from 'tap';
import { buildArfComplaint, startMailboxSimulator, type MailboxSimulator, type SimulatedComplaint } from '../smtp/simulator.js';
import type { Teardown } from './helpers/wait.js';

interface SmtpError extends Error {
  responseCode?: number;
  response?: string;
}

async function tempDir(tt: Teardown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cartero-mailbox-'));
  tt.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function simulator(tt: Teardown, dir: string, onComplaint?: (c: SimulatedComplaint) => void): Promise<MailboxSimulator> {
  const sim = await startMailboxSimulator({ dir, onComplaint });
  tt.teardown(() => sim.stop());
  return sim;
}

/** A one-connection client per send (no pool), as the tests want every reply on its own. */
function send(sim: MailboxSimulator, mail: SendMailOptions) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: sim.port, secure: false, ignoreTLS: true });
  return transport.sendMail({ from: 'news@sender.example', subject: 'Hello', text: 'Body text', ...mail }).finally(() => transport.close());
}

async function sendError(sim: MailboxSimulator, mail: SendMailOptions): Promise<SmtpError> {
  try {
    await send(sim, mail);
  } catch (err) {
    return err as SmtpError;
  }
  throw new Error(`expected ${JSON.stringify(mail.to)} to be refused`);
}

async function emlFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith('.eml')).sort();
}

t.test('an ordinary recipient: 250 and one .eml with the envelope on top', async (t) => {
  const dir = await tempDir(t);
  const sim = await simulator(t, dir);
  t.match(sim.url, /^smtp:\/\/127\.0\.0\.1:\d+$/);
  t.equal(sim.url, `smtp://127.0.0.1:${sim.port}`);

  const info = await send(sim, { to: 'Ann <ann@example.com>', subject: 'Hola ñandú', html: '<p>Hi <b>Ann</b></p>', messageId: '<m1/x@cartero.test>' });
  t.match(info.response, /^250 2\.0\.0 Ok: queued as /);
  t.same(info.accepted, ['ann@example.com']);

  const files = await emlFiles(dir);
  t.equal(files.length, 1);
  // Sortable timestamp, then the Message-ID made safe for a file name.
  t.match(files[0], /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z-m1_x@cartero\.test\.eml$/);
  t.ok(info.response.endsWith(files[0]), 'the 250 names the stored file');
  t.same((await readdir(dir)).filter((f) => f.startsWith('.tmp-')), [], 'no temporary file left');

  const raw = await readFile(join(dir, files[0]), 'utf8');
  t.ok(raw.startsWith('Return-Path: <news@sender.example>\r\nX-Simulator-Rcpt-To: ann@example.com\r\n'), raw.slice(0, 120));
  const parsed = await simpleParser(raw);
  t.equal(parsed.subject, 'Hola ñandú');
  t.equal(parsed.messageId, '<m1/x@cartero.test>');
  t.equal(parsed.html, '<p>Hi <b>Ann</b></p>');
});

t.test('with auth (as npm start runs it): mail only after AUTH with those credentials, 530 without', async (t) => {
  const dir = await tempDir(t);
  const auth = { user: 'cartero', pass: 'p@ss:w/rd' };
  const logged: string[] = [];
  const sim = await startMailboxSimulator({ dir, auth, log: (m) => logged.push(m) });
  t.teardown(() => sim.stop());
  t.equal(sim.url, `smtp://cartero:${encodeURIComponent(auth.pass)}@127.0.0.1:${sim.port}`, 'SMTP_URL carries the credentials');
  t.equal(sim.where, `smtp://127.0.0.1:${sim.port}`, 'where, for messages, does not');

  // What a process on the machine (or a tenant's webhook turned SMTP client) could try.
  const anonymous = await sendError(sim, { to: 'ann@example.com' });
  t.equal(anonymous.responseCode, 530, 'no AUTH: 530');
  const wrong = nodemailer.createTransport({ host: '127.0.0.1', port: sim.port, secure: false, ignoreTLS: true, auth: { user: 'cartero', pass: 'guess' } });
  const refused = await wrong.sendMail({ from: 'x@sender.example', to: 'ann@example.com', text: 'x' }).then(() => undefined, (err: SmtpError) => err).finally(() => wrong.close());
  t.equal(refused?.responseCode, 535, 'a wrong password: 535');
  t.same(await emlFiles(dir), [], 'nothing stored from either');

  // The service's own client: nodemailer reads the credentials from SMTP_URL, as the worker's transport does.
  const own = nodemailer.createTransport(sim.url);
  const info = await own.sendMail({ from: 'news@sender.example', to: 'ann@example.com', subject: 'Hello', text: 'Body' }).finally(() => own.close());
  t.match(info.response, /^250 /);
  t.equal((await emlFiles(dir)).length, 1, 'the authenticated message is stored');
  await sim.stop();
  t.ok(logged.length >= 2, 'the simulator logged its start and stop');
  t.notOk(logged.some((m) => m.includes(auth.pass) || m.includes(encodeURIComponent(auth.pass))), `no log line holds the password (${logged.join(' | ')})`);
});

t.test('bounce*: 550 5.1.1 at RCPT, nothing stored; matched by prefix, any case', async (t) => {
  const dir = await tempDir(t);
  const sim = await simulator(t, dir);
  for (const to of ['bounce@simulator.example', 'Bounce+mail42@example.com']) {
    const err = await sendError(sim, { to });
    t.equal(err.responseCode, 550, to);
    t.match(err.response, /^550 5\.1\.1 /, to);
    t.match(err.response, /User unknown/, to);
  }
  t.same(await emlFiles(dir), []);
});

t.test('softbounce*: 452 4.2.2 on every try', async (t) => {
  const dir = await tempDir(t);
  const sim = await simulator(t, dir);
  for (let attempt = 1; attempt <= 2; attempt++) {
    const err = await sendError(sim, { to: 'softbounce@example.com', messageId: '<same@cartero.test>' });
    t.equal(err.responseCode, 452, `try ${attempt}`);
    t.match(err.response, /^452 4\.2\.2 .*Mailbox full/, `try ${attempt}`);
  }
  t.same(await emlFiles(dir), []);
});

t.test('defer*: 451 4.3.0 on the first try of each message, 250 after, across a restart', async (t) => {
  const dir = await tempDir(t);
  let sim = await startMailboxSimulator({ dir });
  t.teardown(() => sim.stop());

  const first = await sendError(sim, { to: 'defer@example.com', messageId: '<d1@cartero.test>' });
  t.equal(first.responseCode, 451);
  t.match(first.response, /^451 4\.3\.0 /);
  t.same(await emlFiles(dir), [], 'a deferred message is not stored');

  const retry = await send(sim, { to: 'defer@example.com', messageId: '<d1@cartero.test>' });
  t.match(retry.response, /^250 /);
  t.equal((await emlFiles(dir)).length, 1);
  const third = await send(sim, { to: 'defer@example.com', messageId: '<d1@cartero.test>' });
  t.match(third.response, /^250 /, 'later tries keep passing');

  // "First try" is per message: another message to the same recipient is deferred once too...
  t.equal((await sendError(sim, { to: 'defer@example.com', messageId: '<d2@cartero.test>' })).responseCode, 451);
  // ...and so is the same message to another defer recipient.
  t.equal((await sendError(sim, { to: 'defer-other@example.com', messageId: '<d1@cartero.test>' })).responseCode, 451);

  // The first try of d3 happens, then the simulator restarts: the retry must pass.
  t.equal((await sendError(sim, { to: 'defer@example.com', messageId: '<d3@cartero.test>' })).responseCode, 451);
  await sim.stop();
  sim = await startMailboxSimulator({ dir });
  t.match((await send(sim, { to: 'defer@example.com', messageId: '<d3@cartero.test>' })).response, /^250 /, 'd3 passes after the restart');
  t.match((await send(sim, { to: 'defer@example.com', messageId: '<d2@cartero.test>' })).response, /^250 /, 'd2 too');

  // The state lives in the dir: a simulator on a fresh dir defers d3 again.
  const fresh = await simulator(t, await tempDir(t));
  t.equal((await sendError(fresh, { to: 'defer@example.com', messageId: '<d3@cartero.test>' })).responseCode, 451);
});

t.test('complaint*: 250, stored, onComplaint called; its ARF report parses as RFC 5965', async (t) => {
  const dir = await tempDir(t);
  let resolveComplaint!: (c: SimulatedComplaint) => void;
  const complained = new Promise<SimulatedComplaint>((r) => (resolveComplaint = r));
  const sim = await simulator(t, dir, (c) => resolveComplaint(c));

  const info = await send(sim, {
    from: 'news@sender.example',
    to: 'complaint@example.com',
    subject: 'Offers',
    messageId: '<mail-01J9@cartero.test>',
    headers: { 'X-Campaign': 'fall' },
  });
  t.match(info.response, /^250 /);
  const complaint = await Promise.race([complained, new Promise<never>((_, no) => setTimeout(() => no(new Error('onComplaint not called')), 5_000))]);
  t.equal(complaint.recipient, 'complaint@example.com');
  t.equal(complaint.messageId, '<mail-01J9@cartero.test>');
  t.equal(complaint.mailFrom, 'news@sender.example');
  t.ok(complaint.arrivalDate instanceof Date);
  const files = await emlFiles(dir);
  t.equal(files.length, 1);
  t.equal(complaint.file, join(dir, files[0]));
  t.notMatch(complaint.raw.toString(), /X-Simulator-Rcpt-To/, 'raw is the message as received');
  t.match(complaint.raw.toString(), /^X-Campaign: fall\r?$/m);

  const arf = buildArfComplaint(complaint);
  const report = await simpleParser(arf);
  const contentType = report.headers.get('content-type') as { value: string; params: Record<string, string> };
  t.equal(contentType.value, 'multipart/report');
  t.equal(contentType.params['report-type'], 'feedback-report');
  t.same(report.to && !Array.isArray(report.to) ? report.to.value.map((a) => a.address) : [], ['news@sender.example'], 'sent back to the envelope sender');
  t.match(report.text, /abuse report/);

  const feedback = report.attachments.find((a) => a.contentType === 'message/feedback-report');
  t.ok(feedback, 'has a message/feedback-report part');
  const fields = Object.fromEntries(
    feedback!.content
      .toString()
      .split(/\r?\n/)
      .filter((l) => l.includes(':'))
      .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  t.equal(fields['feedback-type'], 'abuse');
  t.equal(fields['version'], '1');
  t.ok(fields['user-agent'], 'User-Agent');
  t.equal(fields['original-mail-from'], '<news@sender.example>');
  t.equal(fields['original-rcpt-to'], '<complaint@example.com>');
  t.ok(Number.isFinite(Date.parse(fields['arrival-date'])), `Arrival-Date ${fields['arrival-date']} is a date`);
  t.ok(Math.abs(Date.parse(fields['arrival-date']) - complaint.arrivalDate.getTime()) < 1_000);

  const headers = report.attachments.find((a) => a.contentType === 'message/rfc822-headers');
  t.ok(headers, 'has a message/rfc822-headers part');
  const original = headers!.content.toString();
  t.match(original, /^Message-ID: <mail-01J9@cartero\.test>\r?$/im);
  t.match(original, /^Subject: Offers\r?$/m);
  t.notMatch(original, /Body text/, 'headers only, no body');
  // Exactly the three parts of a feedback report, in order (RFC 5965 section 2).
  const parts = arf.split(`--${contentType.params.boundary}`).slice(1, -1);
  t.same(
    parts.map((p) => /^\r\nContent-Type: ([^;\r\n]+)/.exec(p)?.[1]),
    ['text/plain', 'message/feedback-report', 'message/rfc822-headers'],
  );
  t.ok(arf.includes(`--${contentType.params.boundary}--\r\n`), 'closing boundary');
});

t.test('mixed recipients: the accepted ones get one stored message listing them', async (t) => {
  const dir = await tempDir(t);
  const complaints: SimulatedComplaint[] = [];
  const sim = await simulator(t, dir, (c) => void complaints.push(c));
  const info = await send(sim, {
    to: ['ann@example.com', 'bounce@example.com', 'softbounce@example.com', 'complaint@example.com', 'bob@example.com'],
    messageId: '<mixed@cartero.test>',
  });
  t.same(info.accepted, ['ann@example.com', 'complaint@example.com', 'bob@example.com']);
  t.same(info.rejected, ['bounce@example.com', 'softbounce@example.com']);
  const codes = (info as unknown as { rejectedErrors: SmtpError[] }).rejectedErrors.map((e) => e.responseCode);
  t.same(codes, [550, 452]);

  const files = await emlFiles(dir);
  t.equal(files.length, 1, 'stored once');
  const raw = await readFile(join(dir, files[0]), 'utf8');
  t.match(raw, /^Return-Path: <news@sender\.example>\r\nX-Simulator-Rcpt-To: ann@example\.com, complaint@example\.com, bob@example\.com\r\n/);
  await sim.stop();
  t.same(complaints.map((c) => c.recipient), ['complaint@example.com'], 'one complaint, for the complaint recipient only');

  // A first-try defer recipient defers the whole message (one reply per DATA); the retry delivers to all.
  const sim2 = await simulator(t, dir);
  const deferred = await sendError(sim2, { to: ['cy@example.com', 'defer@example.com'], messageId: '<mixed2@cartero.test>' });
  t.equal(deferred.responseCode, 451);
  t.equal((await emlFiles(dir)).length, 1);
  const retried = await send(sim2, { to: ['cy@example.com', 'defer@example.com'], messageId: '<mixed2@cartero.test>' });
  t.same(retried.accepted, ['cy@example.com', 'defer@example.com']);
  t.equal((await emlFiles(dir)).length, 2);
});

t.test('the same message delivered twice is two files, never an overwrite', async (t) => {
  const dir = await tempDir(t);
  const sim = await simulator(t, dir);
  await Promise.all(Array.from({ length: 20 }, () => send(sim, { to: 'ann@example.com', messageId: '<dup@cartero.test>' })));
  t.equal((await emlFiles(dir)).length, 20);
});

t.test('stop() closes the port, even with an idle pooled client connected', async (t) => {
  const dir = await tempDir(t);
  const sim = await startMailboxSimulator({ dir });
  const pooled = nodemailer.createTransport({ pool: true, host: '127.0.0.1', port: sim.port, secure: false, ignoreTLS: true });
  pooled.on('error', () => {});
  await pooled.sendMail({ from: 'a@sender.example', to: 'ann@example.com', text: 'x' });
  const started = Date.now();
  await sim.stop();
  t.ok(Date.now() - started < 5_000, `stopped in ${Date.now() - started} ms`);
  await sim.stop(); // idempotent
  pooled.close();
  const refused = await new Promise<boolean>((done) => {
    const socket = createConnection(sim.port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', () => done(true));
  });
  t.ok(refused, 'nothing listens any more');
  t.equal((await emlFiles(dir)).length, 1);
});

t.test('a taken port is an error, not a silent second server', async (t) => {
  const dir = await tempDir(t);
  const sim = await simulator(t, dir);
  await t.rejects(startMailboxSimulator({ dir, port: sim.port }), { code: 'EADDRINUSE' });
});

t.test('with inboundUrl: complaint* sends an ARF report and dsnbounce* a DSN, over SMTP, to the envelope sender', async (t) => {
  // A second simulator stands in for Cartero's inbound listener: it stores what it receives.
  const inboundDir = await tempDir(t);
  const inbound = await simulator(t, inboundDir);
  const dir = await tempDir(t);
  const complaints: SimulatedComplaint[] = [];
  const sim = await startMailboxSimulator({ dir, inboundUrl: inbound.url, onComplaint: (c) => void complaints.push(c) });
  t.teardown(() => sim.stop());

  // Not Cartero's `bounce+` form: the stand-in would refuse that at RCPT (its bounce* behaviour).
  const verp = 'rp+01J9ZZZZZZZZZZZZZZZZZZZZZZ@sender.example';
  const sendFrom = (to: string, messageId: string) =>
    nodemailer
      .createTransport({ host: '127.0.0.1', port: sim.port, secure: false, ignoreTLS: true })
      .sendMail({ envelope: { from: verp, to: [to] }, from: 'news@sender.example', to, subject: 'Offers', text: 'Body text', messageId });
  t.match((await sendFrom('complaint@example.com', '<c1@cartero.test>')).response, /^250 /);
  t.match((await sendFrom('dsnbounce@example.com', '<d1@cartero.test>')).response, /^250 /, 'dsnbounce: 250 first, like a remote MTA that accepts and later gives up');
  await sim.stop(); // waits for the reports on their way
  t.equal((await emlFiles(dir)).length, 2, 'both originals stored');
  t.same(complaints.map((c) => c.recipient), ['complaint@example.com'], 'onComplaint still called');

  const reports = await Promise.all((await emlFiles(inboundDir)).map(async (f) => ({ raw: await readFile(join(inboundDir, f), 'utf8') })));
  t.equal(reports.length, 2, 'two reports reached the inbound server');
  const arf = reports.find((r) => r.raw.includes('report-type=feedback-report'));
  const dsn = reports.find((r) => r.raw.includes('report-type=delivery-status'));
  t.ok(arf && dsn, 'one ARF report, one DSN');
  t.match(arf!.raw, /^Return-Path: <complaints@mailbox-simulator\.invalid>\r\nX-Simulator-Rcpt-To: rp\+01J9Z+@sender\.example\r\n/, 'ARF to the envelope sender');
  t.match(dsn!.raw, /^Return-Path: <>\r\nX-Simulator-Rcpt-To: rp\+01J9Z+@sender\.example\r\n/, 'DSN from the null sender to the envelope sender');

  const parsed = await simpleParser(dsn!.raw, { keepDeliveryStatus: true });
  const status = parsed.attachments.find((a) => a.contentType === 'message/delivery-status');
  t.ok(status, 'a message/delivery-status part');
  const text = status!.content.toString();
  t.match(text, /^Reporting-MTA: dns; mailbox-simulator\.invalid\r$/m);
  t.match(text, /^Final-Recipient: rfc822; dsnbounce@example\.com\r$/m);
  t.match(text, /^Action: failed\r$/m);
  t.match(text, /^Status: 5\.1\.1\r$/m);
  t.match(text, /^Diagnostic-Code: smtp; 550 5\.1\.1 <dsnbounce@example\.com>: Recipient address rejected: User unknown\r$/m);
  const original = parsed.attachments.find((a) => a.contentType === 'text/rfc822-headers');
  t.match(original?.content.toString(), /^Message-ID: <d1@cartero\.test>\r?$/im, 'the original headers, with its Message-ID');
});

t.test('without inboundUrl, dsnbounce* is an ordinary 250 and stored', async (t) => {
  const dir = await tempDir(t);
  const sim = await simulator(t, dir);
  t.match((await send(sim, { to: 'DSNBounce@example.com' })).response, /^250 /);
  await sim.stop();
  t.equal((await emlFiles(dir)).length, 1);
});
