import type { BounceReason } from '../reason-names.js';
import type { InboundText, TextFormat } from './text.js';

/**
 * Mailing-list software refusing a post: the fml list server's error notices to the sender (a
 * post from a non-member, a loop, a command mail that looked dangerous), and the like from other
 * list managers. The list did not take the mail, so the mail bounced; the address we wrote to
 * (the list's) is alive, which makes every such notice soft. The notice names the list in angle
 * brackets ("... this mailing list <elist@example.jp>"); that is the recipient, not the list's
 * help or command addresses it also mentions.
 */

/** The list server's own headers: fml writes X-MLServer (X-ML-Server in later releases). */
const SERVER_HEADERS = ['x-mlserver', 'x-ml-server', 'list-software'];
/** Headers any list software may add to its own mails. */
const LIST_HEADERS = ['x-ml-name', 'list-id', 'x-mailing-list'];
/** A list's administrative author: elist-admin@, elist-owner@, owner-elist@, elist-request@. */
const LIST_AUTHOR = /^(?:[^@]+-(?:admin|owner|request)|owner-[^@]+)@/i;

/**
 * The refusals list managers write, in English and Japanese. Needed only when the mail is not
 * fml's by its headers: another list's administrative mail (a digest, a moderation notice) that
 * refuses nothing is no bounce.
 */
const REFUSAL =
  /not (?:a )?member|non-?member|reject|refused|denied|not allowed to post|loop|security alert|system error|duplicated message-id|spammer|メンバーではありません|メンバー以外|登録されていません|拒否|ループ|エラー/i;

function isFml(m: InboundText): boolean {
  const server = SERVER_HEADERS.map((h) => m.header(h) ?? '').join(' ');
  return /\bfml\b/i.test(server) || /\.FML/.test(m.header('message-id') ?? '');
}

function fromListSoftware(m: InboundText): boolean {
  return [...SERVER_HEADERS, ...LIST_HEADERS].some((h) => m.header(h) !== undefined) || isFml(m);
}

/**
 * Why the list refused, in fml's words (its notice's subject names the error when the body
 * does not: "NOT MEMBER article from ...", "Loop Alert: ..."). The classifier takes a firm stated
 * reason (rejected, notcompliantrfc) as it is, a loose one (systemerror, securityerror) at its
 * probe's turn or before reading the remaining words (reason.ts).
 */
function listReason(m: InboundText, section: string): BounceReason | undefined {
  const text = `${m.subject}\n${section}`;
  if (/header may cause (?:a )?mail loop/i.test(text)) return 'rejected';
  if (/security alert/i.test(text)) return 'securityerror';
  if (/duplicated message-id/i.test(text)) return 'notcompliantrfc';
  if (/loop|system error|ループ|エラー/i.test(text)) return 'systemerror';
  if (/not (?:a )?member|non-?member|reject|refused|denied|not allowed to post|spammer|メンバー|登録されていません|拒否/i.test(text)) return 'rejected';
  return undefined;
}

export const fml: TextFormat = {
  name: 'FML',
  detect: (m) => LIST_AUTHOR.test(m.from) && fromListSoftware(m) && (isFml(m) || REFUSAL.test(m.subject) || REFUSAL.test(m.text)),
  end: [/^Original mail as follows:/m, /^-{2,} ?(?:Original message|Returned message|Your message)/im, /^Message-Id: ?</im],
  recipientAt: /<([^<>\s@]+@[^<>\s]+)>/g,
  reasonOf: listReason,
  reason: 'rejected',
};
