import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { secretFile } from '../../config/secret-file.js';

/**
 * Seals DKIM private keys at rest: AES-256-GCM (node's crypto; authenticated, so a changed
 * ciphertext or the wrong key fails instead of yielding garbage) under a key derived by HKDF from
 * DKIM_KEY_ENCRYPTION_KEY. A sealed key is `version(1) | iv(12) | tag(16) | ciphertext`.
 *
 * `id` names the encryption key (a hash of it, never the key): stored beside each sealed key, so
 * a process configured with another key says which key a domain needs instead of a bare
 * authentication failure.
 */
export interface KeyRing {
  id: string;
  seal(plain: string): Buffer;
  open(sealed: Buffer, sealedWith: string): string;
}

const VERSION = 1;
export const KEY_FILE = 'dkim-key-encryption.key';

export class KeyRingMismatch extends Error {
  override name = 'KeyRingMismatch';
}

export function keyRing(secret: string): KeyRing {
  const key = Buffer.from(hkdfSync('sha256', secret, 'cartero', 'dkim private keys', 32));
  const id = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return {
    id,
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
    },
    open(sealed, sealedWith) {
      if (sealedWith !== id) {
        throw new KeyRingMismatch(`a DKIM key was encrypted with key ${sealedWith}, this process has ${id}: set DKIM_KEY_ENCRYPTION_KEY to the same value on every process`);
      }
      if (sealed[0] !== VERSION) throw new Error(`unknown sealed DKIM key version ${sealed[0]}`);
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 13));
      decipher.setAuthTag(sealed.subarray(13, 29));
      return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * The configured key ring: DKIM_KEY_ENCRYPTION_KEY, or for the embedded default the key in
 * DATA_DIR/dkim-key-encryption.key, generated there (mode 0600) the first time. `npm start`
 * passes it to its web and worker (runtime/start.ts), and the CLI beside it (no DATABASE_URL)
 * reads the same file. A process given DATABASE_URL without the variable refuses: a key
 * generated on one machine would seal keys the other processes cannot open.
 */
export function configuredKeyRing(config: { dataDir: string; databaseUrl: string | undefined; domains: { keyEncryptionKey: string | undefined } }): KeyRing {
  if (config.domains.keyEncryptionKey) return keyRing(config.domains.keyEncryptionKey);
  if (config.databaseUrl) {
    throw new Error(
      'DKIM_KEY_ENCRYPTION_KEY is not set: with DATABASE_URL every process that adds or signs with DKIM keys needs the same value (e.g. openssl rand -hex 32; docs/domains.md)',
    );
  }
  return dataDirKeyRing(config.dataDir);
}

/** The embedded default's encryption key (its secret string), generated into DATA_DIR once. */
export function dataDirKeySecret(dataDir: string): string {
  return secretFile(join(dataDir, KEY_FILE));
}

function dataDirKeyRing(dataDir: string): KeyRing {
  return keyRing(dataDirKeySecret(dataDir));
}
