import type { BounceReason } from './reason-names.js';

/**
 * Phrases mail servers write when they refuse a mail, per reason, matched on the lower-cased
 * diagnostic with white space runs collapsed (reason.ts normalize). Gathered from what providers
 * and MTAs document or are known to say (the phrase lists of Sisimai's reason modules are the
 * model), not from any sample file.
 *
 * Order is precedence: the first table with a match wins. Specific technical causes come first
 * (authentication, PTR, TLS, spam, size, quota), so a text such as "mailbox unavailable: spam
 * detected" is spam and not an unknown user; the address-is-dead tables come before the generic
 * blocks and policies; the vaguest (system, protocol, policy) come last.
 */
type Phrase = string | RegExp;

export const PHRASES: ReadonlyArray<readonly [BounceReason, readonly Phrase[]]> = [
  ['authfailure', [
    'spf check', 'spf fail', 'spf validation', 'spf record', 'spf)', '(spf', ' spf ', 'spf:', 'sender policy framework', 'not authorized by spf',
    'dmarc', 'dkim', 'domainkeys', 'unauthenticated email', 'authentication checks', 'sender authentication', 'does not pass authentication',
    'email authentication', /\bauth(entication)?[- ]fail/,
  ]],
  ['requireptr', [
    'ptr record', 'reverse dns', 'reverse lookup', 'reverse hostname', 'rdns', 'no ptr', 'cannot find your hostname',
    'cannot resolve your address', 'ip name lookup failed', 'client host rejected: cannot find your', 'reverse-dns', 'valid ptr',
    'unresolvable address', 'dns ptr',
  ]],
  ['failedstarttls', ['starttls', 'tls required', 'requires tls', 'must issue a starttls', 'encryption required', 'tls is required']],
  // A block list names the sending IP, whatever else the words say ("spam" in spamhaus, spamcop).
  ['blocked', ['spamhaus', 'spamcop', 'dnsbl', 'blocked using', 'blacklisted by', 'block list', 'blocklist', 'blacklist', 'barracudacentral', 'sorbs.net', 'uceprotect']],
  // Refusals of the sender (its address, its domain), before the dead-address tables: "Sender
  // address rejected: Domain not found" is about the sender, never the recipient.
  ['rejected', [
    'sender address rejected', 'sender rejected', 'sender was rejected', 'sender domain', 'domain of sender address', 'sender verify failed',
    'sender verification failed', 'invalid sender', 'unroutable sender', 'sender is in my badmailfrom', 'mail from not owned by user',
    'sender address has been blacklisted', 'sender email address rejected', 'envelope sender', 'return path', 'return-path',
  ]],
  ['virusdetected', ['virus', 'malware', 'infected', 'malicious content']],
  ['spamdetected', [
    'spam', 'unsolicited', 'bulk mail', 'bulk email', 'junk mail', 'message filtered', 'content filter', 'recurrent pattern',
    'unacceptable content', 'looks like spam', 'suspicious content', 'probable spam', 'rejected as bulk',
  ]],
  ['mailboxfull', [
    'mailbox full', 'mailbox is full', 'mailbox has exceeded', 'over quota', 'quota exceeded', 'exceeded quota', 'exceeds quota', 'overquota',
    'exceeded storage', 'exceeds the storage', 'insufficient storage', 'not enough storage', 'not enough space', 'not enough disk',
    'disk quota', 'diskspace', 'disk space', 'storage allocation', 'mailbox size limit', 'mailfolder is full', 'full mailbox',
    'no space left', 'mailbox would exceed', 'quota violation', 'boite du destinataire pleine', 'inbox is full', 'out of storage',
    'exceeding its mailbox quota', 'reached disk quota', 'user has too many messages', 'space has been used up', 'user is over',
    'would be over the allowed quota', 'mail quota', 'mailbox quota', 'storage quota', 'postfach voll', 'exceeded its quota',
  ]],
  // A local delivery program failing (procmail, a pipe) says nothing about the address, whatever it printed.
  ['mailererror', ['procmail:', 'x-unix;', 'command died with status', 'pipe to |', 'unknown mailer error']],
  ['mesgtoobig', [
    'message too big', 'message too large', 'message is too large', 'message size exceeds', 'message length exceeds', 'message file too big',
    'size limit', 'exceeded maximum inbound message size', 'max message size', 'maximum message size', 'message exceeds', 'too large',
    'taille limite du message',
  ]],
  ['exceedlimit', ['header size exceeds', 'exceeds limit', 'limit exceeded']],
  ['hasmoved', [' has been replaced by ', 'has moved', 'address has changed', 'no longer with', 'changed his address', 'changed her address']],
  ['suspend', [
    'account disabled', 'account is disabled', 'account has been disabled', 'has been disabled', 'has been suspended', 'account suspended',
    'is suspended', 'mailbox disabled', 'mailbox is disabled', 'mailbox currently suspended', 'mailbox is frozen', 'temporarily inactive',
    'user suspended', 'user is disabled', 'account is inactive', 'mailbox is inactive', 'is inactive', 'not active', 'inactive user',
    'account has been locked', 'account is locked', 'account expired', 'disabled or discontinued', 'suspend the service', 'deactivated',
    'this mailbox has been blocked due to inactivity', 'extended inactivity', 'disabled recipient', 'temporary locked', 'temporarily locked',
  ]],
  ['norelaying', [
    'relay access denied', 'relaying denied', 'relay denied', 'relaying not permitted', 'relay not permitted', 'relaying not allowed',
    'not allowed to relay', 'no relaying', 'we do not relay', 'unable to relay', 'not an open relay', 'not permitted to relay',
    'relaying mail to', "isn't in my list of allowed rcpthosts", 'is not in my list of allowed rcpthosts', 'not a gateway', 'as a relay',
  ]],
  // "<domain> does not exist" (no local part): the domain, before the user table's "does not exist".
  ['hostunknown', [/(?:^|[\s<])[a-z0-9-]+(?:\.[a-z0-9-]+)+>? does not exist/]],
  ['userunknown', [
    'user unknown', 'unknown user', 'userunknown', 'no such user', 'no such mailbox', 'no such recipient', 'no such person', 'no such address',
    'unknown recipient', 'recipient unknown', 'unknown mailbox', 'mailbox unknown', 'mailbox not found', 'mailbox does not exist',
    'mailbox not present', 'mailbox invalid', 'invalid mailbox', 'invalid recipient', 'recipient not found', 'recipient does not exist',
    'recipient not exist', 'recipient is not local', 'user not found', 'user not exist', 'user does not exist', 'user not known',
    'user doesn\'t exist', 'user doesn’t exist', 'address does not exist', "address doesn't exist", 'address unknown', 'address not present in directory', 'address not found', "address couldn't be found", 'address could not be found',
    'email account that you tried to reach does not exist', 'does not exist', 'is not a known user', 'is not a valid mailbox', 'not a valid recipient', 'not a valid user',
    'no mailbox', 'no account by that name', 'account does not exist', 'no one at this address', 'invalid address', 'bad destination mailbox',
    'unknown local part', 'unknown address', 'unknown or illegal alias', 'recipient address rejected: user', 'recipient address rejected: invalid user',
    'recipient address rejected: unknown', 'resolver.adr.recipnotfound', 'recipnotfound', 'badrcptto', 'not in my validrcptto', 'utilisateur inconnu',
    'no existe', 'unbekannt', 'nessun utente', 'destination addresses were unknown', 'not listed in domino directory', 'no such local user',
    'unrouteable address', 'unroutable address', 'the recipient is invalid', 'invalid or unknown virtual user', 'this address no longer accepts mail',
    'email address could not be found', 'is no longer valid', 'not our customer', 'addressee unknown', 'user invalid', 'mailbox unavailable',
    'mailbox not available', 'mailbox is unavailable',
    'unknown or invalid', 'invalid mailbox path', 'mailbox name not allowed', 'recipient not ok', 'recipient address rejected: access denied',
    'user doesn\'t have a', 'invalid final delivery userid', 'check if address is correct', 'no valid recipients', 'recipient name is not recognized',
    'not listed in domino directory', 'not listed in public name', 'bad destination mailbox address',
  ]],
  ['networkerror', ['host not found, try again', 'temporary dns', 'dns temporary', 'temporary failure in name resolution']],
  ['hostunknown', [
    'bad destination system address', 'host unknown', 'unknown host', 'host or domain name not found', 'domain does not exist', 'no such domain', 'domain not found',
    'name or service not known', 'unknown domain', 'domain must exist', 'domain is not reachable', 'host not found',
    'mail domain mentioned in email address is unknown', 'nxdomain', 'unrouteable mail domain', 'domain name not found',
    'no mx or a record', 'no mx record', 'dns records for the destination computer could not be found', 'could not be resolved',
  ]],
  ['notaccept', ["couldn't find a mail exchanger", 'does not accept mail', 'null mx', 'nullmx', 'not accepting mail', 'accepts no mail', 'does not receive mail']],
  ['filtered', [
    'refuse to receive', 'refuses to accept', 'rejected by recipient', 'refused due to recipient preferences', 'is not accepting any mail',
    'only accepting mail from', 'user reject', 'blocked by the recipient', 'you have been blocked by', 'this account is protected by',
    'has restricted', 'filtered', 'denied by recipient',
  ]],
  ['rejected', [
    'sender address rejected', 'sender rejected', 'sender was rejected', 'sender is in my badmailfrom', 'invalid sender', 'sender verify failed',
    'sender verification', 'sender address has been blacklisted', 'sender email address rejected', 'sender domain', 'domain of sender address',
    'sender not pre-approved', 'null sender', 'empty envelope sender', 'mail from not owned by user', 'returned mail not accepted',
    'no third-party dsns', 'unroutable sender', 'sender is spammer', 'not a registered gateway user', 'members-only', 'non-member',
    'not allowed to post', 'not subscribed to this group', 'all recipient addresses rejected', 'email address has been blacklisted',
    'your address has been', 'emetteur invalide', 'fully qualified email address required', 'rejected',
  ]],
  ['badreputation', ['reputation', 'senderscore', 'poor sending', 'low reputation']],
  ['blocked', [
    'blocked', 'blacklist', 'block list', 'blocklist', 'dnsbl', 'rbl', 'spamhaus', 'spamcop', 'listed in', 'client host rejected',
    'banned', 'not currently accepting mail from your ip', 'your ip', 'ip address', 'sending ip', 'dynamic ip', 'looks suspiciously like',
    'please use the smtp server of your isp', 'access denied', 'connection refused by', 'mail refused', 'no access from mail server',
    'forbidden', 'denied', 'not allowed to send mail from', 'open proxy', 'has been temporarily',
  ]],
  ['toomanyconn', [
    'too many connections', 'too many concurrent', 'connection limit', 'connection rate limit', 'too many smtp sessions',
    'too many recipients', 'too many errors', 'maximum connection', 'trop de connexions', 'max emails per hour', 'sending rate exceeded',
    'daily message quota exceeded',
  ]],
  ['speeding', ['rate limit', 'rate-limit', 'ratelimit', 'try again slower', 'too many messages', 'receiving mail at a rate', 'too fast']],
  ['expired', [
    'delivery time expired', 'message expired', 'expired', 'in the queue too long', 'queue too long', 'retry timeout exceeded', 'giving up on',
    'has not been delivered', 'could not be delivered for more than', 'undeliverable for', 'retry time not reached', 'failing for a long time',
    'message timed out', 'delivery attempts will continue', 'has been delayed', 'not reachable within the allowed queue period',
    'unable to deliver message after multiple retries', 'timeout exceeded',
  ]],
  ['networkerror', [
    'no route to host', 'network is unreachable', 'host is unreachable', 'host unreachable', 'connection refused', 'connection timed out',
    'connection reset', 'mail forwarding loop', 'routing loop', 'message looping', 'too many hops', 'hop count exceeded', 'name server',
    'host name lookup failure', 'unable to resolve', 'dns lookup', 'dns error', 'could not connect', 'lost connection', 'timed out',
    'no mx for', 'mail loop', 'loops back to myself',
  ]],
  ['systemerror', [
    'system error', 'internal error', 'local error', 'configuration error', 'temporary failure', 'server error', 'service unavailable',
    'service currently unavailable', 'system config', 'interrupted system call', 'error while being processed', 'loop', 'timeout',
  ]],
  ['mailererror', ['x-unix', 'command died', 'command failed', 'mailer error', 'procmail', 'pipe to', 'exit code', 'unknown mailer']],
  ['contenterror', ['8-bit data', 'mime', 'invalid header', 'header error', 'improperly-formatted', 'base64 encoding', 'binary content']],
  ['notcompliantrfc', ['rfc 5322', 'rfc5322', 'rfc 2822', 'rfc2822', 'rfc 822', 'rfc822', 'not rfc', 'duplicate header', 'multiple addresses in from']],
  ['securityerror', [
    'authentication required', 'authentication credentials invalid', 'not authorized', 'unauthorized', 'insecure', 'verification failure',
    'executable', 'security policies', 'security reasons', 'unauthenticated',
  ]],
  ['policyviolation', ['policy', 'prohibited', 'not permitted', 'not allowed', 'illegal attachment', 'organization\'s settings', 'organizational settings']],
  ['syntaxerror', ['syntax error', 'command unrecognized', 'command not recognized', 'bad sequence', 'unrecognized command', 'protocol error']],
];
