import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { selectorFor } from '../domain/domains/dkim-keys.js';
import { configuredKeyRing, KEY_FILE, keyRing, KeyRingMismatch } from '../domain/domains/key-encryption.js';

// The sealing of DKIM private keys at rest (domain/domains/key-encryption.ts) and selector names.

t.test('sealed keys open with the same key only; a changed byte is refused', async (t) => {
  const ring = keyRing('a'.repeat(64));
  const pem = '-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----\n';
  const sealed = ring.seal(pem);
  t.notOk(sealed.includes('PRIVATE KEY'), 'not in clear');
  t.not(sealed.toString('hex'), ring.seal(pem).toString('hex'), 'a fresh IV each time');
  t.equal(ring.open(sealed, ring.id), pem);
  const other = keyRing('b'.repeat(64));
  t.throws(() => other.open(sealed, ring.id), KeyRingMismatch, 'another key says which key the row needs');
  t.throws(() => other.open(sealed, other.id), /unable to authenticate|Unsupported state/, 'the wrong key under a forged id fails authentication');
  const flipped = Buffer.from(sealed);
  flipped[flipped.length - 1]! ^= 1;
  t.throws(() => ring.open(flipped, ring.id), /unable to authenticate|Unsupported state/, 'tampering is detected');
});

t.test('the embedded default (no DATABASE_URL, no DKIM_KEY_ENCRYPTION_KEY) generates the key once into DATA_DIR (0600)', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cartero-dkimkey-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = configuredKeyRing({ dataDir, databaseUrl: undefined, domains: { keyEncryptionKey: undefined } });
  const file = join(dataDir, KEY_FILE);
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.match(readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/);
  const again = configuredKeyRing({ dataDir, databaseUrl: undefined, domains: { keyEncryptionKey: undefined } });
  t.equal(again.id, first.id, 'the same key the next time');
  t.equal(again.open(first.seal('x'), first.id), 'x');
  const configured = configuredKeyRing({ dataDir, databaseUrl: 'postgres://x/y', domains: { keyEncryptionKey: 'c'.repeat(40) } });
  t.not(configured.id, first.id, 'the variable wins over the file');
  t.throws(
    () => configuredKeyRing({ dataDir, databaseUrl: 'postgres://x/y', domains: { keyEncryptionKey: undefined } }),
    /DKIM_KEY_ENCRYPTION_KEY is not set: with DATABASE_URL/,
    'with DATABASE_URL and no variable: refused, never a key of this machine only',
  );
});

t.test('selectors: cartero<yyyymm>, then -2, -3 in the same month', async (t) => {
  const nov = new Date('2026-11-30T23:59:59Z');
  t.equal(selectorFor(nov, []), 'cartero202611');
  t.equal(selectorFor(nov, ['cartero202611']), 'cartero202611-2');
  t.equal(selectorFor(nov, ['cartero202611', 'cartero202611-2']), 'cartero202611-3');
  t.equal(selectorFor(new Date('2027-01-01T00:00:00Z'), ['cartero202611']), 'cartero202701');
});
