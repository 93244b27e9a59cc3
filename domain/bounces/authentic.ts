import type { Pool } from '../../sql/pool.js';
import { mailOwner, type MailOwner } from '../mail/owner.js';
import type { MailReference } from './identify.js';
import { reportKeys, verifyReportTag } from './report-keys.js';

/**
 * Which mails a report may change: only those whose reference proves the reporter saw the mail
 * (docs/security.md, "Inbound reports"). A reference carrying a tag is trusted when the tag
 * verifies (report-tag.ts); a wrong tag is refused before any lookup. An untagged reference is
 * trusted only for a mail received before tags existed (report_tags_since), and only when the
 * report names that mail's own recipient (`names`): what a forger knowing an old mail's id would
 * also need to know. Anything else is refused with the reason, for the log.
 */
export type Authenticated = { owner: MailOwner; via: 'tag' | 'untagged_legacy' };
export type Refused = { mailId: string; why: string };

export async function authenticMails(
  pool: Pool,
  refs: readonly MailReference[],
  names: (recipient: string) => boolean,
): Promise<{ trusted: Authenticated[]; refused: Refused[] }> {
  const trusted: Authenticated[] = [];
  const refused: Refused[] = [];
  const seen = new Set<string>();
  // Tagged references first: a report whose original carries both forms is trusted by its tag.
  const ordered = [...refs].sort((a, b) => Number(b.tag !== undefined) - Number(a.tag !== undefined));
  for (const ref of ordered) {
    if (seen.has(ref.mailId)) continue;
    const verdict = await authenticate(pool, ref, names);
    if ('why' in verdict) {
      refused.push(verdict);
      continue;
    }
    seen.add(ref.mailId);
    trusted.push(verdict);
  }
  return { trusted, refused: refused.filter((r) => !seen.has(r.mailId)) };
}

async function authenticate(pool: Pool, ref: MailReference, names: (recipient: string) => boolean): Promise<Authenticated | Refused> {
  if (ref.tag !== undefined) {
    if (!(await verifyReportTag(pool, ref.mailId, ref.tag))) return { mailId: ref.mailId, why: 'wrong tag' };
    const owner = await mailOwner(pool, ref.mailId);
    return owner ? { owner, via: 'tag' } : { mailId: ref.mailId, why: 'no such mail (purged?)' };
  }
  const owner = await mailOwner(pool, ref.mailId);
  if (!owner) return { mailId: ref.mailId, why: 'untagged reference to no mail' };
  const { taggedSince } = await reportKeys(pool);
  if (owner.receivedAt >= taggedSince) return { mailId: ref.mailId, why: 'untagged reference to a mail sent with a tag' };
  if (!names(owner.toEmail)) return { mailId: ref.mailId, why: "untagged reference that does not name the mail's recipient" };
  return { owner, via: 'untagged_legacy' };
}
