import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Panel passwords: scrypt from node:crypto, memory-hard with one of the OWASP Password Storage
 * Cheat Sheet's equivalent minimums, N = 2^15, r = 8, p = 3 (32 MiB per hash rather than the
 * 128 MiB of 2^17 with p = 1, so concurrent logins do not exhaust a small dyno), a 16-byte random
 * salt, stored self-describing as
 *   $scrypt$ln=15,r=8,p=3$<salt base64>$<hash base64>
 * so the parameters can be raised later and old hashes still verify with theirs.
 */
const PARAMS = { ln: 15, r: 8, p: 3 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/** The password rules: long enough to resist guessing, bounded so hashing stays cheap to refuse. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

function derive(password: string, salt: Buffer, p: { ln: number; r: number; p: number }): Promise<Buffer> {
  const N = 2 ** p.ln;
  // Node refuses above maxmem (32 MiB by default); 128 * N * r is what scrypt needs, doubled.
  const options: ScryptOptions = { N, r: p.r, p: p.p, maxmem: 256 * N * p.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, PARAMS);
  return `$scrypt$ln=${PARAMS.ln},r=${PARAMS.r},p=${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

const STORED = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/** Whether `password` is the one `stored` was made from (constant-time compare); false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m) return false;
  const expected = Buffer.from(m[5]!, 'base64');
  const key = await derive(password, Buffer.from(m[4]!, 'base64'), { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash of a random password nobody knows, made once per process: a login for an address with
 * no user verifies against it, so it costs the time a real user's does (no timing oracle for
 * which addresses exist) and can never succeed.
 */
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(32).toString('base64url'));
  return dummy;
}
