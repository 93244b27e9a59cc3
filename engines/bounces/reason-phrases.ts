import type { BounceReason } from './reason-names.js';

/**
 * Phrases mail servers write when they refuse a mail, one table per reason, matched on the
 * lower-cased diagnostic with white space runs collapsed (reason.ts normalize). Gathered from
 * what providers and MTAs document or are known to say (the phrase lists of Sisimai's reason
 * modules are the model), not from any sample file.
 *
 * A table only says "these words name this reason". Which table is consulted when, and what the
 * status code and the refused SMTP command add, is the procedure in reason.ts: a "user unknown"
 * is only believed when the address was refused at RCPT TO or the status says the mailbox does
 * not exist, for instance. Keep phrases specific: a word that every refusal uses ("rejected",
 * "denied") names nothing.
 */
export type Phrase = string | RegExp;

export const PHRASES: Readonly<Record<Exclude<BounceReason, 'onhold' | 'undefined'>, readonly Phrase[]>> = {
  mailboxfull: [
    'mailbox full', 'mailbox is full', 'mailbox has exceeded', 'over quota', 'quota exceeded', 'exceeded quota', 'exceeds quota',
    'overquota', 'exceeded storage', 'exceeds the storage', 'insufficient storage', 'not enough storage', 'not enough space',
    'not enough disk', 'disk quota', 'diskspace', 'disk space', 'storage allocation', 'mailbox size limit', 'mailfolder is full',
    'full mailbox', 'no space left', 'mailbox would exceed', 'quota violation', 'boite du destinataire pleine', 'inbox is full',
    'out of storage', 'exceeding its mailbox quota', 'reached disk quota', 'user has too many messages',
    'space has been used up', 'user is over', 'would be over the allowed quota', 'mail quota', 'mailbox quota', 'storage quota',
    'postfach voll', 'exceeded its quota',
  ],
  mesgtoobig: [
    'message too big', 'message too large', 'message is too large', 'message size exceeds', 'message length exceeds',
    'message file too big', 'size limit', 'exceeded maximum inbound message size', 'max message size', 'maximum message size',
    'message exceeds', 'too large', 'taille limite du message',
  ],
  exceedlimit: [
    'header size exceeds', 
  ],
  suspend: [
    'account disabled', 'account is disabled', 'account has been disabled', 'has been disabled', 'has been suspended',
    'account suspended', 'is suspended', 'mailbox disabled', 'mailbox is disabled', 'mailbox currently suspended',
    'mailbox is frozen', 'temporarily inactive', 'user suspended', 'user is disabled', 'account is inactive',
    'mailbox is inactive', 'is inactive', 'not active', 'inactive user', 'account has been locked', 'account is locked',
    'account expired', 'disabled or discontinued', 'suspend the service', 'deactivated',
    'this mailbox has been blocked due to inactivity', 'extended inactivity', 'disabled recipient', 'temporary locked',
    'temporarily locked',
  ],
  hasmoved: [
    ' has been replaced by ', 'has moved', 'address has changed', 'no longer with', 'changed his address', 'changed her address',
  ],
  norelaying: [
    'relay access denied', 'relaying denied', 'relay denied', 'relaying not permitted', 'relay not permitted',
    'relaying not allowed', 'not allowed to relay', 'no relaying', 'we do not relay', 'unable to relay', 'not an open relay',
    'not permitted to relay', 'relaying mail to', "isn't in my list of allowed rcpthosts",
    'is not in my list of allowed rcpthosts', 'not a gateway', 'as a relay',
  ],
  authfailure: [
    'spf check', 'spf fail', 'spf validation', 'spf record', 'spf)', '(spf', ' spf ', 'spf:', 'sender policy framework',
    'not authorized by spf', 'dmarc', 'dkim', 'domainkeys', 'unauthenticated email', 'authentication checks',
    'sender authentication', 'does not pass authentication', 'email authentication', /\bauth(entication)?[- ]fail/,
  ],
  userunknown: [
    'user unknown', 'unknown user', 'userunknown', 'no such user', 'no such mailbox', 'no such recipient', 'no such person',
    'no such address', 'unknown recipient', 'recipient unknown', 'unknown mailbox', 'mailbox unknown', 'mailbox not found',
    'mailbox does not exist', 'mailbox not present', 'mailbox invalid', 'invalid mailbox', 'invalid recipient',
    'recipient not found', 'recipient does not exist', 'recipient not exist', 'recipient is not local', 'user not found',
    'user not exist', 'user does not exist', 'user not known', 'user doesn\'t exist', 'user doesn’t exist',
    'address does not exist', "address doesn't exist", 'address unknown', 'address not present in directory',
    'address not found', "address couldn't be found", 'address could not be found',
    'email account that you tried to reach does not exist', 'does not exist', 'is not a known user', 'is not a valid mailbox',
    'not a valid recipient', 'not a valid user', 'no mailbox', 'no account by that name', 'account does not exist',
    'no one at this address', 'invalid address', 'bad destination mailbox', 'unknown local part', 'unknown address',
    'unknown or illegal alias', 'recipient address rejected: user', 'recipient address rejected: invalid user',
    'recipient address rejected: unknown', 'resolver.adr.recipnotfound', 'recipnotfound', 'badrcptto', 'not in my validrcptto',
    'utilisateur inconnu', 'no existe', 'unbekannt', 'nessun utente', 'destination addresses were unknown',
    'not listed in domino directory', 'no such local user',
    'the recipient is invalid', 'invalid or unknown virtual user', 'this address no longer accepts mail',
    'email address could not be found', 'is no longer valid', 'not our customer', 'addressee unknown', 'user invalid',
    'mailbox unavailable', 'mailbox not available', 'mailbox is unavailable', 'unknown or invalid', 'invalid mailbox path',
    'mailbox name not allowed', 'recipient not ok', 'recipient address rejected: access denied', 'user doesn\'t have a',
    'invalid final delivery userid', 'check if address is correct', 'no valid recipients', 'recipient name is not recognized',
    'not listed in public name', 'bad destination mailbox address',
  ],
  filtered: [
    'refuse to receive', 'refuses to accept', 'rejected by recipient', 'refused due to recipient preferences',
    'is not accepting any mail', 'only accepting mail from', 'user reject', 'blocked by the recipient',
    'you have been blocked by', 'this account is protected by', 'has restricted', 'filtered', 'denied by recipient',
    'refuses to receive', 'due to user rules',
  ],
  requireptr: [
    'ptr record', 'reverse dns', 'reverse lookup', 'reverse hostname', 'rdns', 'no ptr', 'cannot find your hostname',
    'cannot resolve your address', 'ip name lookup failed', 'client host rejected: cannot find your', 'reverse-dns', 'valid ptr',
    'unresolvable address', 'dns ptr',
  ],
  notcompliantrfc: [
    'rfc 5322', 'rfc5322', 'rfc 2822', 'rfc2822', 'rfc 822', 'rfc822', 'not rfc', 'duplicate header',
    'multiple addresses in from',
  ],
  badreputation: [
    'reputation', 'senderscore', 'poor sending', 'low reputation',
  ],
  contenterror: [
    '8-bit data', 'mime', 'invalid header', 'header error', 'improperly-formatted', 'base64 encoding', 'binary content',
  ],
  rejected: [
    'sender address rejected', 'sender rejected', 'sender was rejected', 'sender domain', 'domain of sender address',
    'sender verify failed', 'sender verification failed', 'invalid sender', 'unroutable sender', 'sender is in my badmailfrom',
    'mail from not owned by user', 'sender address has been blacklisted', 'sender email address rejected', 'sender verification',
    'sender not pre-approved', 'null sender', 'empty envelope sender', 'returned mail not accepted', 'no third-party dsns',
    'sender is spammer', 'not a registered gateway user', 'members-only', 'non-member', 'not allowed to post',
    'not subscribed to this group', 'email address has been blacklisted', 'your address has been', 'emetteur invalide',
    'fully qualified email address required',
  ],
  hostunknown: [
    /(?:^|[\s<])[a-z0-9-]+(?:\.[a-z0-9-]+)+>? does not exist/, 'bad destination system address', 'host unknown', 'unknown host',
    'host or domain name not found', 'domain does not exist', 'no such domain', 'domain not found', 'name or service not known',
    'unknown domain', 'domain must exist', 'domain is not reachable', 'host not found',
    'mail domain mentioned in email address is unknown', 'nxdomain', 'unrouteable address', 'unroutable address', 'domain name not found',
    'no mx or a record', 'no mx record', 'could not be resolved',
  ],
  spamdetected: [
    /\bspam\b/, 'unsolicited', 'bulk mail', 'bulk email', 'junk mail', 'message filtered', 'content filter', 'recurrent pattern',
    'unacceptable content', 'looks like spam', 'suspicious content', 'probable spam', 'rejected as bulk',
  ],
  speeding: [
    'rate limit', 'rate-limit', 'ratelimit', 'try again slower', 'too many messages', 'receiving mail at a rate', 'too fast',
  ],
  toomanyconn: [
    'too many connections', 'too many concurrent', 'connection limit', 'connection rate limit', 'too many smtp sessions',
    'too many recipients', 'too many errors', 'maximum connection', 'trop de connexions', 'max emails per hour',
    'sending rate exceeded', 'daily message quota exceeded',
  ],
  blocked: [
    'spamhaus', 'spamcop', 'dnsbl', 'blocked using', 'blacklisted by', 'block list', 'blocklist', 'blacklist',
    'barracudacentral', 'sorbs.net', 'uceprotect', 'blocked', 'rbl', 'listed in', 'client host rejected', 'banned',
    'not currently accepting mail from your ip', 'your ip', 'ip address', 'sending ip', 'dynamic ip', 'looks suspiciously like',
    'please use the smtp server of your isp', 'access denied', 'connection refused by', 'mail refused',
    'no access from mail server', 'not allowed to send mail from', 'open proxy', 'has been temporarily',
  ],
  virusdetected: [
    'virus', 'malware', 'infected', 'malicious content',
  ],
  policyviolation: [
    'policy', 'prohibited', 'not permitted', 'not allowed', 'illegal attachment', 'organization\'s settings',
    'organizational settings',
  ],
  systemerror: [
    'system error', 'internal error', 'local error', 'configuration error', 'server error',
    'service unavailable', 'service currently unavailable', 'system config', 'interrupted system call',
    'error while being processed', 
  ],
  networkerror: [
    'host not found, try again', 'temporary dns', 'dns temporary', 'temporary failure in name resolution', 'no route to host',
    'network is unreachable', 'host is unreachable', 'host unreachable', 'connection refused', 'connection timed out',
    'connection reset', 'mail forwarding loop', 'routing loop', 'message looping', 'too many hops', 'hop count exceeded',
    'host name lookup failure', 'unable to resolve', 'dns lookup', 'dns error', 'could not connect',
    'lost connection', 'timed out', 'no mx for', 'mail loop', 'loops back to myself',
    // The reference analyser's network words: a lookup or route that failed now, not a domain that
    // does not exist (so a 5.4.4 "unable to route" with these words is `networkerror`, soft).
    'unrouteable mail domain', 'dns records for the destination computer could not be found', 'malformed name server reply',
    'malformed or unexpected name server reply', 'forwarding loop count exceeded', 'probably in a routing loop',
    'could not connect and send the mail',
  ],
  systemfull: [
    'mail system full', 'insufficient system storage', 'system storage', 'mail system is full', 'server is full', 'disk full',
  ],
  notaccept: [
    "couldn't find a mail exchanger", 'does not accept mail', 'null mx', 'nullmx', 'not accepting mail', 'accepts no mail',
    'does not receive mail',
  ],
  expired: [
    'delivery time expired', 'message expired', 'expired', 'in the queue too long', 'queue too long', 'retry timeout exceeded',
    'giving up on', 'has not been delivered', 'could not be delivered for more than', 'undeliverable for',
    'retry time not reached', 'failing for a long time', 'message timed out', 'delivery attempts will continue',
    'has been delayed', 'not reachable within the allowed queue period', 'unable to deliver message after multiple retries',
    'timeout exceeded',
  ],
  failedstarttls: [
    'starttls', 'tls required', 'requires tls', 'must issue a starttls', 'encryption required', 'tls is required',
  ],
  securityerror: [
    'authentication required', 'authentication credentials invalid', 'not authorized', 'unauthorized', 'insecure',
    'verification failure', 'executable', 'security policies', 'security reasons', 'unauthenticated',
  ],
  suppressed: [
    'suppression list', 'suppressed',
  ],
  mailererror: [
    'procmail:', 'x-unix;', 'command died with status', 'pipe to |', 'unknown mailer error', 'x-unix', 'command died',
    'command failed', 'mailer error', 'procmail', 'pipe to', 'exit code', 'unknown mailer',
  ],
  syntaxerror: [
    'syntax error', 'command unrecognized', 'command not recognized', 'bad sequence', 'unrecognized command', 'protocol error',
  ],
};

/** Whether the (normalized) text holds one of the reason's phrases. */
export function says(reason: keyof typeof PHRASES, text: string): boolean {
  if (!text) return false;
  for (const p of PHRASES[reason]) if (typeof p === 'string' ? text.includes(p) : p.test(text)) return true;
  return false;
}

/**
 * Sentences that state the account itself does not exist (not a terse "user unknown", which
 * servers also write for a filter's refusal): believed whatever command they answered, since a
 * provider that checks recipients only after DATA (Yahoo, Orange) says so in these words.
 */
export const NO_SUCH_ACCOUNT: readonly Phrase[] = [
  /\b(?:account|mailbox|e-?mail address|address|recipient)(?: [^ ]+)? (?:does not|doesn't|doesn’t|did not) exist/,
  /(?:doesn't|does not|doesn’t) have an? [^ ]+ account/, 'invalid recipient', 'recipient not found', 'recipientnotfound', 'recipnotfound',
  "address couldn't be found", 'address could not be found', 'address not found', /not listed in (?:the )?(?:[a-z]+ )?(?:directory|name and address book)/,
  'recipient name is not recognized', 'account that you tried to reach does not exist',
  'no such user here', 'no mailbox here by that name', 'is not a valid mailbox', 'mailbox not found', 'no such mailbox', 'no such recipient',
  'recipient address rejected: access denied', /recipient address rejected: user unknown in \S+ (?:recipient|mailbox) table/,
  'invalid final delivery userid', 'no valid recipients', 'not our customer', 'adresse destinataire invalide', 'addressee unknown',
  'no such person at this address', 'no one at this address', 'unknown or illegal alias',
];

/** Whether the (normalized) text states the account does not exist. */
export function saysNoSuchAccount(text: string): boolean {
  return NO_SUCH_ACCOUNT.some((p) => (typeof p === 'string' ? text.includes(p) : p.test(text)));
}
