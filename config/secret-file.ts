import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A secret of the embedded default, generated once into a file under DATA_DIR and read back on
 * every later start (the DKIM key encryption key, the embedded ClickHouse's and the mailbox
 * simulator's passwords, the embedded Postgres's on its first start). The file is created mode
 * 0600 (owner only), holds the secret and a newline, and is never rewritten: deleting it is how
 * an operator asks for a new one (with what that implies for whatever was sealed or set with it).
 *
 * `generate` makes the secret when the file does not exist: 32 random bytes in hex by default,
 * text that needs no escaping in a URL's userinfo, an XML file or a shell.
 */
export function secretFile(file: string, generate: () => string = () => randomBytes(32).toString('hex')): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 }); // DATA_DIR's folders are private (config/data-dir.ts)
  // Written whole under a temporary name, then linked: a second process starting at the same
  // time either links first (and this one reads its secret) or finds the complete file.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, generate() + '\n', { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
  return readFileSync(file, 'utf8').trim();
}
