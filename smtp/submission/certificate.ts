import { X509Certificate, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { secretFile } from '../../config/secret-file.js';

/**
 * The submission listener's certificate under `npm start` when SUBMISSION_TLS_CERT_FILE and
 * SUBMISSION_TLS_KEY_FILE are not set: a self-signed one (ECDSA P-256, for localhost and
 * 127.0.0.1, ten years), made once into DATA_DIR/submission-tls.pem (mode 0600: it holds the
 * private key and the certificate, PEM, one file for both variables) and reused on every later
 * start, so a client that pinned its fingerprint keeps trusting it. Deleting the file asks for
 * a new one.
 *
 * Built with node:crypto alone (it signs, but writes no certificates): the few DER structures of
 * an X.509 v3 certificate (RFC 5280) are written below, rather than adding a dependency or
 * running openssl at start.
 */
export const SELF_SIGNED_FILE = 'submission-tls.pem';

export interface SelfSignedCertificate {
  /** The PEM file holding the key and the certificate (both variables name it). */
  file: string;
  /** SHA-256 fingerprint of the certificate, colon-separated hex (what clients pin). */
  fingerprint: string;
}

export function selfSignedCertificate(dataDir: string): SelfSignedCertificate {
  const file = join(dataDir, SELF_SIGNED_FILE);
  secretFile(file, makeSelfSigned);
  return { file, fingerprint: new X509Certificate(readFileSync(file)).fingerprint256 };
}

// DER: tag, length, content.
function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, content]);
}
const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => der(0x31, Buffer.concat(parts));
const explicit = (n: number, content: Buffer) => der(0xa0 + n, content);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [a * 40 + b];
  for (const v of rest) {
    const base128 = [v & 0x7f];
    for (let x = v >> 7; x > 0; x >>= 7) base128.unshift((x & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return der(0x06, Buffer.from(bytes));
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'; // YYYYMMDDHHMMSSZ
  // UTCTime through 2049, GeneralizedTime after (RFC 5280, 4.1.2.5).
  return d.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(iso.slice(2), 'ascii')) : der(0x18, Buffer.from(iso, 'ascii'));
}

/**
 * A certificate serial from random bytes, as DER wants an INTEGER's content: positive (top bit
 * clear) and minimal (a first byte of 0 before one below 0x80 is illegal padding, which OpenSSL
 * refuses: 1 random serial in 512 was). So the first byte is 0x40-0x7f.
 */
export function serialNumber(random: Buffer): Buffer {
  const serial = Buffer.from(random);
  serial[0] = (serial[0]! & 0x3f) | 0x40;
  return serial;
}

function makeSelfSigned(): string {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecdsaSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(set(seq(oid('2.5.4.3'), der(0x0c, Buffer.from('Cartero submission (self-signed)', 'utf8')))));
  const serial = serialNumber(randomBytes(16));
  const now = new Date();
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(now.getUTCFullYear() + 10);
  // subjectAltName: DNS localhost, IP 127.0.0.1 (context tags 2 and 7, implicit).
  const altNames = seq(der(0x82, Buffer.from('localhost', 'ascii')), der(0x87, Buffer.from([127, 0, 0, 1])));
  const extensions = explicit(3, seq(seq(oid('2.5.29.17'), der(0x04, altNames))));
  const tbs = seq(
    explicit(0, der(0x02, Buffer.from([2]))), // v3
    der(0x02, serial),
    ecdsaSha256,
    name,
    seq(time(new Date(now.getTime() - 60_000)), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, privateKey); // DER ECDSA-Sig-Value
  const certificate = seq(tbs, ecdsaSha256, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const pem = (label: string, body: Buffer) => `-----BEGIN ${label}-----\n${body.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END ${label}-----\n`;
  return (privateKey.export({ type: 'pkcs8', format: 'pem' }) as string) + pem('CERTIFICATE', certificate).trimEnd();
}
