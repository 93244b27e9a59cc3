import { check, SOURCES, type ComplianceCheck } from './check.js';
import { dmarcRecordName, type DmarcRecord } from './dmarc-record.js';

export const DMARC_RULE = { rule: 'dmarc_policy', applies_to: ['gmail', 'yahoo', 'microsoft'], source: SOURCES.microsoft } as const;

/**
 * A DMARC record of at least `p=none`: one valid `v=DMARC1` record at `_dmarc.<domain>`
 * (dmarc-record.ts). Missing, several, or without a valid p= → fail; any of none, quarantine,
 * reject → pass (the policy itself is the owner's choice; the providers ask for at least none).
 */
export function dmarcCheck(domain: string, record: DmarcRecord, suggested: string): ComplianceCheck {
  const name = dmarcRecordName(domain);
  switch (record.kind) {
    case 'unavailable':
      return check(DMARC_RULE, 'unknown', `DNS did not answer for ${name}; try again later.`);
    case 'absent':
      return check(DMARC_RULE, 'fail', `No DMARC record at ${name}: publish TXT "${suggested}".`);
    case 'several':
      return check(DMARC_RULE, 'fail', `${record.count} DMARC records at ${name}: receivers then apply none (RFC 7489 6.6.3); keep one.`);
    case 'invalid':
      return check(DMARC_RULE, 'fail', `The DMARC record at ${name} is not valid: ${record.why}. Publish "${suggested}".`);
    case 'valid':
      return check(DMARC_RULE, 'pass', `DMARC record at ${name} with p=${record.p}.`);
  }
}
