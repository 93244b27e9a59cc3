import { createPrivateKey } from 'node:crypto';
import { promises as dnsPromises } from 'node:dns';
import { buffer } from 'node:stream/consumers';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import DKIM from 'nodemailer/lib/dkim/index.js';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import t from 'tap';
import { generateDkimKeyPair } from '../domain/domains/dkim-keys.js';
import { dkimSign, relaxedBody } from '../smtp/dkim-sign.js';
import { DKIM_SIGNED_HEADERS } from '../smtp/transport.js';
import { startTestDnsServer } from './helpers/dns-server.js';

/**
 * The send worker's DKIM signer (smtp/dkim-sign.ts) on messages built to stress canonicalization,
 * checked by two independent implementations: mailauth verifies every signature against the key
 * published on a real DNS server on loopback, and nodemailer's own signer must compute the same
 * body hash, the same signed-field list and (RSA PKCS#1 v1.5 being deterministic) the same
 * signature for the same bytes.
 */
const DOMAIN = 'sign.example';
const SELECTOR = 'cartero202611';
const dns = await startTestDnsServer(t);
const pair = await generateDkimKeyPair();
dns.txt(`${SELECTOR}._domainkey.${DOMAIN}`, `v=DKIM1; k=rsa; p=${pair.publicKey}`);
const key = { domain: DOMAIN, selector: SELECTOR, privateKey: createPrivateKey(pair.privateKeyPem) };

const resolver = new dnsPromises.Resolver({ timeout: 1_000, tries: 1 });
resolver.setServers([dns.address]);
async function verdict(raw: Buffer): Promise<string> {
  const r = await dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type as 'TXT') as Promise<any> });
  return r.results.map((x: any) => `${x.status.result}${x.status.result === 'pass' && x.status.aligned === DOMAIN ? ' aligned' : ''}`).join(',') || 'none';
}
const tag = (signed: Buffer, name: string) => new RegExp(`[;\\s]${name}=([^;]+)`).exec(signed.toString('latin1').split('\r\n\r\n')[0]!.replace(/\r\n[ \t]+/g, ' '))![1]!.replace(/\s+/g, '');

const composed = await new MailComposer({
  messageId: '<m1@sign.example>',
  from: { name: 'Ñews désk', address: `news@${DOMAIN}` },
  to: { name: 'Ann', address: 'ann@example.org' },
  subject: 'A subject long enough to be folded by the composer, with ünïcödé words in it, and more words after them',
  text: 'trailing spaces   \r\n\ttabs\tand  runs  of   spaces\r\n\r\n\r\n\r\n',
  html: '<p>Hello   <a href="https://example.org/t/c/abc">offer</a></p>\n\n\n',
  headers: [
    { key: 'List-Unsubscribe', value: '<https://example.org/u/abc>, <mailto:u@example.org>' },
    { key: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
    { key: 'X-Cartero-Mail-Id', value: 'abc' },
  ],
  attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('attached\n') }],
} as ConstructorParameters<typeof MailComposer>[0])
  .compile()
  .build();

t.test('a composed message: mailauth passes it, aligned; nodemailer signs the same bytes identically', async (t) => {
  const signed = await dkimSign(composed, key, DKIM_SIGNED_HEADERS);
  t.equal(await verdict(signed), 'pass aligned');
  // The composer leaves bare LFs in 7bit parts (its output stream and SMTP's data stream make them CRLF).
  t.ok(/\n\n/.test(composed.toString('latin1')), 'the composed message has bare LFs');
  const wire = composed.toString('latin1').replace(/\r?\n/g, '\r\n');
  t.equal(signed.toString('latin1').slice(-wire.length), wire, 'the message, CRLF only, follows the signature field');

  const theirs = await buffer(new DKIM({ domainName: DOMAIN, keySelector: SELECTOR, privateKey: key.privateKey as never, headerFieldNames: DKIM_SIGNED_HEADERS }).sign(composed));
  t.equal(await verdict(theirs), 'pass aligned', 'nodemailer signature verifies too');
  t.equal(tag(signed, 'bh'), tag(theirs, 'bh'), 'same body hash');
  t.equal(tag(signed, 'h'), tag(theirs, 'h'), 'same signed fields');
  t.ok(tag(signed, 'h').split(':').includes('list-unsubscribe-post'), 'List-Unsubscribe-Post is signed');
  t.equal(tag(signed, 'b'), tag(theirs, 'b'), 'same signature');
});

t.test('bare LF and CR line breaks, 8-bit bytes, folded and repeated fields, trailing blank lines', async (t) => {
  const raw = Buffer.concat([
    Buffer.from(
      `From: news@${DOMAIN}\nTo: ann@example.org\nSubject: first\nSubject:   folded\n\t  over   lines  \nDate: Mon, 23 Nov 2026 10:00:00 +0000\n` +
        'Message-ID: <m2@sign.example>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\n',
    ),
    Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x20, 0x09, 0x0a, 0x0d, 0x6c, 0x69, 0x6e, 0x65, 0x20, 0x0a, 0x0a, 0x20, 0x0a, 0x0a]),
  ]);
  const signed = await dkimSign(raw, key, DKIM_SIGNED_HEADERS);
  t.equal(await verdict(signed), 'pass aligned');
  t.notOk(/[^\r]\n|\r[^\n]/.test(signed.toString('latin1')), 'every line break is CRLF, as the SMTP data stream would send it');
  t.ok(signed.includes(Buffer.from([0x63, 0x61, 0x66, 0xe9])), '8-bit bytes kept as they were');
  t.equal(tag(signed, 'h').split(':').filter((h) => h === 'subject').length, 1, 'a repeated field is listed once (its last occurrence signed)');

  const lastSubject = Buffer.from(signed.toString('latin1').replace('folded\r\n\t  over   lines', 'changed'), 'latin1');
  t.equal(await verdict(lastSubject), 'fail', 'the last Subject is the signed one');
  const firstSubject = Buffer.from(signed.toString('latin1').replace('Subject: first', 'Subject: other'), 'latin1');
  t.equal(await verdict(firstSubject), 'pass aligned', 'an earlier instance is not covered');
});

t.test('what relaxed canonicalization tolerates passes; what it covers fails', async (t) => {
  const signed = (await dkimSign(composed, key, DKIM_SIGNED_HEADERS)).toString('latin1');
  const check = async (what: string, changed: string, expected: string) => {
    t.not(changed, signed, `${what}: the message did change`);
    t.equal(await verdict(Buffer.from(changed, 'latin1')), expected, what);
  };
  await check('a Received field added on top', `Received: from relay.example by mx.example; Mon, 23 Nov 2026 10:00:00 +0000\r\n${signed}`, 'pass aligned');
  const at = signed.indexOf('\r\n\r\n') + 4;
  await check('spaces added at line ends, blank lines at the end', signed.slice(0, at) + signed.slice(at).replaceAll('\r\n', '  \r\n') + '\r\n\r\n', 'pass aligned');
  await check('the To field changed', signed.replace('To: Ann <ann@example.org>', 'To: Bob <bob@example.org>'), 'fail');
  // mailauth's verdict for a body hash that does not match (RFC 6376 6.1.3: the signature is not checked).
  await check('one body byte changed', signed.replace('/t/c/abc', '/t/c/abd'), 'neutral');
});

t.test('an empty body, and a message without any header/body separator', async (t) => {
  const head = `From: news@${DOMAIN}\r\nTo: ann@example.org\r\nSubject: empty\r\nMessage-ID: <m3@sign.example>\r\n`;
  t.equal(await verdict(await dkimSign(Buffer.from(`${head}\r\n`), key, DKIM_SIGNED_HEADERS)), 'pass aligned', 'empty body');
  t.equal(await verdict(await dkimSign(Buffer.from(head), key, DKIM_SIGNED_HEADERS)), 'pass aligned', 'headers only');
});

t.test('relaxed body canonicalization (RFC 6376 3.4.4 and its example)', async (t) => {
  t.equal(relaxedBody(' C \r\nD \t E\r\n\r\n\r\n'), ' C\r\nD E\r\n', "the RFC's example");
  t.equal(relaxedBody(''), '', 'empty stays empty');
  t.equal(relaxedBody('\r\n\r\n'), '', 'only empty lines: empty');
  t.equal(relaxedBody('no line break'), 'no line break\r\n', 'a CRLF added at the end');
  t.equal(relaxedBody(`x${' '.repeat(200_000)}`), 'x\r\n', 'a long run of spaces at the end');
  t.equal(relaxedBody(`x${'\r\n'.repeat(100_000)}y`), `x${'\r\n'.repeat(100_000)}y\r\n`, 'empty lines inside stay');
});
