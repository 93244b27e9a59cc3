import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The tag that proves an inbound report's sender saw the mail it names. Cartero writes it into
 * every mail's return path (`bounce+<MAILID>.<TAG>@<domain>`), Message-ID (`<MAILID.TAG@domain>`)
 * and X-Cartero-Mail-Id (`MAILID.TAG`); a DSN comes back to the return path, and a feedback
 * report returns the original's header fields, so a genuine report carries it and a forger, who
 * knows at most a mail id, cannot compute it without the service's key.
 *
 * TAG = the key's version in decimal, then the first 80 bits of HMAC-SHA256(key, mail id) as
 * lower-case hex. Hex because MTAs may change the case of a local part; the version so that
 * rotating the key (cartero report-key rotate) leaves the tags of mails already sent verifiable.
 */
export interface ReportKey {
  version: number;
  secret: string;
}

export interface ReportKeys {
  /** The key that tags new mails: the highest version. */
  current: ReportKey;
  /** Every key that still verifies, by version. */
  byVersion: ReadonlyMap<number, string>;
  /** Mails received before this may have been sent untagged (sql/migrations/010_report_tags.sql). */
  taggedSince: Date;
}

const MAC_HEX = 20;
const TAG = /^(\d{1,6})([0-9a-f]{20})$/;

function mac(secret: string, mailId: string): string {
  return createHmac('sha256', secret).update(`report-tag:${mailId.toUpperCase()}`).digest('hex').slice(0, MAC_HEX);
}

export function reportTag(key: ReportKey, mailId: string): string {
  return `${key.version}${mac(key.secret, mailId)}`;
}

/**
 * Whether `tag` was made for `mailId` by one of the keys. `unknown_version` when the tag names a
 * key this process has not loaded (a newer one another process created): reload and ask again.
 */
export function checkReportTag(keys: ReportKeys, mailId: string, tag: string): 'valid' | 'invalid' | 'unknown_version' {
  const m = TAG.exec(tag.toLowerCase());
  if (!m) return 'invalid';
  const secret = keys.byVersion.get(Number(m[1]));
  if (secret === undefined) return 'unknown_version';
  const given = Buffer.from(m[2]!, 'utf8');
  const expected = Buffer.from(mac(secret, mailId), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'valid' : 'invalid';
}
