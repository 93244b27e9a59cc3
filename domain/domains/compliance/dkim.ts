import { createPublicKey } from 'node:crypto';
import { dkimVerdict } from '../dns-verify.js';
import { dkimRecordName } from '../dns-records.js';
import { check, SOURCES, type ComplianceCheck } from './check.js';
import type { Answer } from './dns-answers.js';

export const DKIM_RULE = { rule: 'dkim_aligned', applies_to: ['gmail', 'yahoo', 'microsoft'], source: SOURCES.google } as const;

/** Google's floor and recommendation: 1,024 bits at least, 2,048 recommended. */
export const DKIM_MIN_BITS = 1024;
export const DKIM_RECOMMENDED_BITS = 2048;

/** The RSA modulus length of a key's record p= (base64 DER SubjectPublicKeyInfo), or undefined when it is not one. */
export function rsaBits(publicKey: string): number | undefined {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'rsa' ? key.asymmetricKeyDetails?.modulusLength : undefined;
  } catch {
    return undefined;
  }
}

/**
 * DKIM signing aligned with From, with a key of at least 1,024 bits (2,048 recommended). The send
 * worker signs every mail of the domain with `d=<domain>` (aligned with From, strict or relaxed)
 * and the key signingKeyOf picks (dkim-keys.ts); the key's record must be published as
 * `<selector>._domainkey.<domain>` with that public key, or receivers cannot verify the signature.
 *   no key, a key under 1,024 bits, record missing or another key → fail
 *   1,024 to 2,047 bits → warn;  2,048 bits or more, record published → pass
 */
export function dkimCheck(domain: string, signing: { selector: string; public_key: string } | undefined, record: Answer | undefined): ComplianceCheck {
  if (!signing) {
    return check(DKIM_RULE, 'fail', `${domain} has no DKIM key: its mail goes out unsigned. Give it one ("cartero domain rotate-dkim") and publish its record.`);
  }
  const name = dkimRecordName(domain, signing.selector);
  const bits = rsaBits(signing.public_key);
  if (bits === undefined) return check(DKIM_RULE, 'fail', `The signing key (selector ${signing.selector}) is not an RSA public key: rotate it.`);
  if (bits < DKIM_MIN_BITS) {
    return check(DKIM_RULE, 'fail', `The signing key (selector ${signing.selector}) has ${bits} bits, under the ${DKIM_MIN_BITS} the providers require: rotate it (new keys are ${DKIM_RECOMMENDED_BITS} bits).`);
  }
  if (!record || record.kind === 'unavailable') return check(DKIM_RULE, 'unknown', `DNS did not answer for ${name}; try again later.`);
  const verdict = dkimVerdict(record, signing.public_key);
  if (verdict === 'absent') return check(DKIM_RULE, 'fail', `Mail is signed with selector ${signing.selector}, but ${name} has no record: publish the DKIM record the domain shows.`);
  if (verdict === 'wrong') return check(DKIM_RULE, 'fail', `${name} does not carry the signing key's public key: publish the DKIM record the domain shows.`);
  const signed = `Mail is signed d=${domain} (aligned with From) with selector ${signing.selector}, an RSA key of ${bits} bits, and its record is published`;
  if (bits < DKIM_RECOMMENDED_BITS) return check(DKIM_RULE, 'warn', `${signed}; ${DKIM_RECOMMENDED_BITS} bits are recommended: rotate the key.`);
  return check(DKIM_RULE, 'pass', `${signed}.`);
}
