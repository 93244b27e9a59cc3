// Only the canonical spelling of a tracking token is accepted (domain/tracking/tokens.ts): a
// base64url decoder ignores a trailing '=' and the unused low bits of the MAC's last character,
// so byte comparison let other spellings of one link verify and count again. Both ways a hit is
// answered are checked: the fast path (api/tracking/fast-path.ts: a token of [\w.-]) and
// Express's routes (anything else, such as a token with '=').
import t from 'tap';
import { acceptSend } from '../domain/mail/accept.js';
import { trackingSecret } from '../domain/tracking/secret.js';
import { clickToken, openToken, unsubscribeToken, verifyToken } from '../domain/tracking/tokens.js';
import { jobQueue } from '../workers/machinery/queue.js';
import { testDatabases } from './helpers/databases.js';
import { makeSenders, makeTenant } from './helpers/fixtures.js';
import { startTestWeb } from './helpers/web.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The token with its MAC's last character replaced by one that decodes to the same bytes. */
function sibling(token: string): string {
  const last = token.at(-1)!;
  return token.slice(0, -1) + ALPHABET[ALPHABET.indexOf(last) ^ 1];
}

t.test('verifyToken: the exact string only', async (t) => {
  const secret = 'unit-secret';
  const token = openToken(secret, '01TESTMAIL');
  const mac = token.split('.')[1]!;
  t.equal(mac.length, 43, 'a 32-byte MAC in unpadded base64url: its last character carries 4 bits');
  t.same(Buffer.from(sibling(token).split('.')[1]!, 'base64url'), Buffer.from(mac, 'base64url'), 'precondition: the sibling decodes to the same MAC bytes');
  t.ok(verifyToken(secret, token), 'canonical');
  t.equal(verifyToken(secret, token + '='), undefined, "a trailing '='");
  t.equal(verifyToken(secret, token + '=='), undefined, "'=='");
  t.equal(verifyToken(secret, sibling(token)), undefined, 'the non-canonical last character');
  t.equal(verifyToken(secret, token + ' '), undefined, 'trailing space');
  t.equal(verifyToken(secret, token.replace('.', '.é')), undefined, 'non-ASCII in the MAC');
});

const dbs = await testDatabases(t, 'tracktokens');
const web = await startTestWeb(t, dbs);
const a = await makeTenant(dbs.pool);
await makeSenders(dbs.pool, a.tenant, { domain: 'tok.example', senders: [{ email: 'news', name: 'News' }] });
const sent = await acceptSend(a.tenant, dbs.pool, jobQueue(dbs.databaseUrl), { from: 'news@tok.example', to: [{ email: 'r@example.org' }], subject: 's', text: 't' });
const mailId = sent.mails[0]!.mail_id;
const secret = await trackingSecret(dbs.pool);

async function hits(kind: 'open' | 'click'): Promise<number> {
  const r = await dbs.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM event_outbox WHERE mail_id = $1 AND kind = $2', [mailId, kind]);
  return r.rows[0]!.n;
}

t.test('open pixel: every spelling gets the GIF, only the canonical one counts', async (t) => {
  const token = openToken(secret, mailId);
  const canonical = await fetch(`${web.url}/t/o/${token}`);
  t.equal(canonical.status, 200);
  t.equal(await hits('open'), 1, 'control: the canonical token counts');
  for (const [label, spelled] of [
    ["'=' appended (Express's route)", `${token}=`],
    ["'%3D' appended (Express's route)", `${token}%3D`],
    ['sibling last character (fast path)', sibling(token)],
  ] as const) {
    const r = await fetch(`${web.url}/t/o/${spelled}`);
    t.equal(r.status, 200, `${label}: the pixel is served`);
    t.equal(r.headers.get('content-type'), 'image/gif', label);
  }
  t.equal(await hits('open'), 1, 'none of the other spellings counted');
});

t.test('click: other spellings are 404 and count nothing', async (t) => {
  const token = clickToken(secret, mailId, 'https://shop.example/a');
  const canonical = await fetch(`${web.url}/t/c/${token}`, { redirect: 'manual' });
  t.equal(canonical.status, 302);
  t.equal(canonical.headers.get('location'), 'https://shop.example/a');
  t.equal(await hits('click'), 1, 'control: the canonical token counts');
  for (const [label, spelled] of [
    ["'=' appended (Express's route)", `${token}=`],
    ['sibling last character (fast path, then Express)', sibling(token)],
  ] as const) {
    const r = await fetch(`${web.url}/t/c/${spelled}`, { redirect: 'manual' });
    t.equal(r.status, 404, label);
    t.equal(r.headers.get('location'), null, `${label}: no redirect`);
  }
  t.equal(await hits('click'), 1, 'none of the other spellings counted');
});

t.test('unsubscribe: other spellings are 404', async (t) => {
  const token = unsubscribeToken(secret, mailId);
  t.equal((await fetch(`${web.url}/u/${token}`)).status, 200, 'control');
  t.equal((await fetch(`${web.url}/u/${token}=`)).status, 404);
  t.equal((await fetch(`${web.url}/u/${sibling(token)}`)).status, 404);
});
