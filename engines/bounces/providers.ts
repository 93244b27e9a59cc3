import type { BounceReason, SmtpCommand } from './reason-names.js';

/**
 * The large receiving providers' own texts. Each provider writes its refusals in sentences and
 * codes of its own, documented on its postmaster pages, that a generic phrase table reads wrongly
 * or not at all: Outlook.com's "550 Requested action not taken: mailbox unavailable" is its
 * answer for an address it does not have, Symantec Email Security.cloud's "542 <address>
 * Rejected" likewise, Cox's "AUP#CXBL" a block list, Orange's "OFR_416" an unknown recipient.
 * The reference analyser (Sisimai) reads them through one module per provider, chosen by the
 * recipient's domain, the remote host that answered, or the host that wrote the report; this is
 * the same idea, written from the providers' published error pages and Sisimai's module
 * documentation (docs/bounces.md lists the sources). A provider's reading is believed only when
 * the report is about that provider: its own domains, its own MTAs.
 */

/** Where a report came from: the recipient's address, the remote MTA that answered, the MTA that wrote the report. */
export interface ReportHosts {
  recipient?: string;
  remoteMta?: string;
  reportingMta?: string;
}

/** What a provider's reading looks at. `text` is lower-cased, its white space runs made one space (reason.ts normalize). */
export interface ProviderFacts {
  text: string;
  status?: string;
  code?: number;
  command?: SmtpCommand;
}

interface Provider {
  name: string;
  /** Recipient domains the provider hosts (the whole domain, lower-cased). */
  domains: RegExp;
  /** Host names of its MTAs, matched at the end of a Remote-MTA or Reporting-MTA value (or of the bounce's author's domain). */
  hosts: RegExp;
  /** Codes of its own in the text (Cox's AUP#, Orange's OFR_/LPN_), read before the sentences. */
  codes?(f: ProviderFacts): BounceReason | undefined;
  /** Its sentences, in order: the first reason one of whose phrases the text holds. */
  says: ReadonlyArray<readonly [BounceReason, readonly string[]]>;
}

/** A host name ending in one of `suffixes` (a label boundary before it), ignoring a trailing IP in brackets. */
function hostEnds(...suffixes: string[]): RegExp {
  const alt = suffixes.map((s) => s.replace(/\./g, '\\.')).join('|');
  return new RegExp(`(?:^|[.\\s;@])(?:${alt})\\.?(?:$|[\\s\\[(])`);
}

const PROVIDERS: readonly Provider[] = [
  {
    // Outlook.com (consumer) and Exchange Online / Microsoft 365. Sources: "Email non-delivery
    // reports and SMTP errors in Exchange Online" (learn.microsoft.com), Outlook.com postmaster
    // troubleshooting (sendersupport.olc.protection.outlook.com), Sisimai::Rhost::Microsoft / Outlook.
    name: 'microsoft',
    domains: /^(?:hotmail|outlook|live|msn|windowslive|passport)\.(?:[a-z]{2,3}|co\.[a-z]{2}|com\.[a-z]{2})$/,
    hosts: hostEnds('hotmail.com', 'outlook.com', 'onmicrosoft.com', 'exchangelabs.com', 'outlook.office365.com'),
    codes(f) {
      // Outlook.com's own answer at RCPT TO for an address it does not host (the reply's 5.5.0
      // is its template); after DATA the same words would be a refusal of the message.
      if (f.text.includes('requested action not taken: mailbox unavailable') && f.command !== 'DATA' && (f.code === undefined || f.code === 550)) return 'userunknown';
      // Outlook.com postmaster codes in the reply: RP- rate limits by reputation, SC-/DY-/OU- blocks.
      const code = /\b(rp|sc|dy|ou)-00([1-4])\b/.exec(f.text);
      if (code) {
        const id = `${code[1]}-${code[2]}`;
        if (id === 'sc-2') return 'policyviolation';
        if (id === 'dy-2') return 'securityerror';
        if (code[1] === 'rp' || id === 'sc-1' || id === 'ou-2') return 'badreputation';
        return 'blocked';
      }
      return undefined;
    },
    says: [
      ['authfailure', ['does not pass dmarc verification', "doesn't meet the required authentication level", 'must pass either spf or dkim validation', 'rejected because of sender policy framework violation']],
      ['badreputation', ['temporarily rate limited due to ip reputation']],
      ['suspend', ['access denied, banned recipient', 'mailbox cannot be accessed']],
      ['userunknown', ['resolver.adr.exrecipnotfound', 'recipient not found by smtp address lookup', 'remote server returned unknown recipient', 'bad destination mailbox address']],
      ['blocked', ['access denied, banned sending ip', 'using customer block list', 'access denied, bad helo', 'access denied, rejected by recipient', 'is on our block list', 'does not accept email over ipv6']],
      ['requireptr', ['must have a reverse dns record']],
      ['speeding', ['has exceeded permitted limits within']],
      ['rejected', ['access denied, spam abuse detected', 'access denied, bad outbound sender', 'sender not in allowed-senders list', 'sender was not authenticated', 'tenant has exceeded threshold', 'traffic not accepted from this ip']],
      ['policyviolation', ['delivery not authorized, message refused', 'policy violation detected (as345)']],
      ['failedstarttls', ['failed mta-sts validation', 'starttls is required to send mail', 'starttls-not-supported', 'certificate-expired:', 'tlsa-invalid:', 'dnssec-invalid:', 'certificate-host-mismatch:']],
      ['networkerror', ['dns query failed', 'routing loop detected', 'hop count exceeded - possible mail loop']],
      ['notaccept', ['hosted tenant which has no mail-enabled subscriptions']],
      ['systemerror', ['server busy. please try again later from', 'message failed to be replicated', 'pfa agent busy']],
      ['mesgtoobig', ['message size exceeds fixed maximum message size']],
      ['exceedlimit', ['message too large for this recipient']],
    ],
  },
  {
    // Yahoo Mail and AOL (Yahoo Inc.). Sources: senders.yahooinc.com/smtp-error-codes,
    // Sisimai::Rhost::YahooInc and ::Aol.
    name: 'yahoo',
    domains: /^(?:yahoo|ymail|rocketmail|aol|aim|love|games|wow|ygm|verizon)\.(?:[a-z]{2,3}|co\.[a-z]{2}|com\.[a-z]{2})$/,
    hosts: hostEnds('yahoodns.net', 'yahoo.com', 'yahoo.net', 'aol.com', 'yahoo.co.jp'),
    says: [
      ['userunknown', ["this user doesn't have a ", 'mailbox not found']],
      ['suspend', [' is no longer valid', 'this mailbox is disabled']],
      ['authfailure', ['requires all senders to authenticate with either spf or dkim']],
      ['blocked', ["because the ip is in spamhaus's list", 'not accepted from ip addresses on spamhaus']],
      ['policyviolation', ['not accepted for policy reasons']],
      ['rejected', ['temporarily deferred due to unexpected volume or user complaints', 'will be permanently deferred', 'unresolvable rfc.5321 from domain', 'unresolvable rfc.5321 domain']],
      ['speeding', ['is receiving mail too quickly']],
      ['toomanyconn', ['max message per connection reached']],
      ['norelaying', ['relaying denied for ']],
      ['notcompliantrfc', ['headers are not rfc compliant']],
    ],
  },
  {
    // Gmail and Google Workspace. Sources: support.google.com/a/answer/3726730 ("SMTP error
    // reference"), support.google.com/mail/answer/81126 (sender guidelines), Sisimai::Rhost::Google.
    name: 'google',
    domains: /^(?:gmail|googlemail)\.com$/,
    hosts: hostEnds('google.com', 'googlemail.com', 'gmail.com'),
    says: [
      ['suspend', ['account that you tried to reach is disabled', 'account that you tried to reach is inactive']],
      ['userunknown', ['account that you tried to reach does not exist']],
      ['mailboxfull', ['inbox is out of storage space', 'account that you tried to reach is over quota', 'email quota exceeded']],
      ['authfailure', [
        'senders to authenticate with either spf or dkim', "is not accepted due to domain's dmarc policy", 'fails to pass authentication checks',
        'has an spf record with a hard fail policy', 'fails to pass spf checks', 'the spf record of the sending domain', 'aligned with either the authenticated spf or dkim',
        'to add a dmarc record to', 'senders to authenticate with spf', 'senders to authenticate with dkim', 'senders to authenticate their email with',
      ]],
      ['badreputation', ['very low reputation of the sending']],
      ['spamdetected', ['likely unsolicited mail', 'due to the nature of the content or the links within']],
      ['blocked', ['an unusual rate of unsolicited mail', 'an unusual rate of mail', 'ip not in whitelist for rcpt domain', 'helo/ehlo argument is invalid', 'empty helo/ehlo argument not allowed']],
      ['requireptr', ['does not have a ptr record', 'have a ptr record, or the ptr record', 'regarding ptr records and authentication', 'does not match the ip address of the hostname']],
      ['failedstarttls', ['must issue a starttls command first', 'tls required for rcpt domain', 'senders to use tls/ssl for smtp']],
      ['notcompliantrfc', ['is not rfc 5322 compliant', 'missing a valid address in the from: header', 'multiple addresses in from: header', 'missing a valid message-id: header', 'encoded-word syntax is not permitted', 'contains a unicode character in a disallowed header']],
      ['policyviolation', ['illegal attachment on your message', 'content presents a potential security issue', 'has a policy that prohibited the mail that you sent', 'sending messages with the same message-id']],
      ['mesgtoobig', ["exceeded google's message size limits", "exceeds google's message size limit"]],
      ['speeding', ['is receiving mail too quickly', 'is receiving mail at a rate that prevents additional messages', 'this mail has been rate limited']],
      ['toomanyconn', ['your message has too many recipients', 'too many recipients for this sender']],
      ['networkerror', ['message exceeded 50 hops']],
      ['norelaying', ['mail relay denied', 'invalid credentials for relay', 'is not authorized to send email directly to our servers']],
      ['systemerror', ['temporary system problem', 'multiple destination domains per transaction is unsupported']],
    ],
  },
  {
    // iCloud Mail. Sources: support.apple.com/102322 (postmaster information), Sisimai::Rhost::Apple.
    name: 'apple',
    domains: /^(?:icloud|me|mac)\.com$/,
    hosts: hostEnds('icloud.com', 'apple.com', 'me.com'),
    says: [
      ['authfailure', ["'s dmarc policy", 'blocked for failing both spf and dkim']],
      ['hasmoved', ['recipient no longer on server']],
      ['mailboxfull', ['user is over quota']],
      ['userunknown', ['inactive email address', 'unknown or illegal alias', 'user does not exist']],
      ['blocked', ['rejected due to having a domain present in the spamhaus', 'rejected due to listing in spamhaus', 'support.proofpoint.com/dnsbl-lookup', 'not accepting connections']],
      ['policyviolation', ['rejected due to local policy']],
      ['speeding', ['deferred due to excessive volume']],
    ],
  },
  {
    // Symantec / Broadcom Email Security.cloud (formerly MessageLabs). Sources: knowledge.broadcom.com
    // "Email error and bounce codes for Email Security.cloud" (169652 and the articles it links),
    // Sisimai::Lhost::MessageLabs and Sisimai::Rhost::MessageLabs.
    name: 'messagelabs',
    domains: /^$/,
    hosts: hostEnds('messagelabs.com', 'symanteccloud.com'),
    codes(f) {
      // Its notice for an address the protected domain does not have: "542 <address> Rejected".
      return /(?:^|\s)542 \S+ rejected\b/.test(f.text) ? 'userunknown' : undefined;
    },
    says: [
      ['userunknown', ['invalid recipient', 'recipient mailbox is not allowed', 'no such user']],
      ['authfailure', ['domain authentication fail']],
      ['badreputation', ['connection rejected by policy']],
      ['blocked', ['your ip is in the pbl', 'your ip address has been', 'your ip address (']],
      ['rejected', ['sender envelope domain not allowed for sender ip address', 'your domain has been blocked', 'your email address has been blocked', 'in my badmailfrom list', 'has been blacklisted']],
      ['contenterror', ['stray linefeeds in message']],
      ['failedstarttls', ['tls/sslv3 connection required']],
      ['norelaying', [' as a relay, ']],
      ['notcompliantrfc', ['is not rfc 5322']],
      ['spamdetected', ['message filtered', 'filtered by outbound scanning']],
      ['toomanyconn', ['too many recipients received this hour', 'too many messages']],
      ['securityerror', ['please turn on smtp authentication']],
    ],
  },
  {
    // Mimecast. Sources: Mimecast's "SMTP error codes" community article, Sisimai::Rhost::Mimecast.
    name: 'mimecast',
    domains: /^$/,
    hosts: hostEnds('mimecast.com', 'mimecast.co.za', 'mimecast-offshore.com'),
    says: [
      ['authfailure', ['spf sender invalid - envelope rejected', 'dkim sender invalid - envelope rejected', 'dmarc sender invalid - envelope rejected']],
      ['badreputation', ['local ct ip reputation']],
      ['userunknown', ['invalid recipient', '503 user unknown']],
      ['rejected', ['administrative prohibition envelope blocked', 'envelope blocked - user entry', 'envelope blocked - user domain entry', 'manually blocked senders', 'blocked senders - block policy', 'block policy for envelope from address']],
      ['blocked', ['sender address blocked', 'ip temporarily blacklisted', 'recipient temporarily unavailable']],
      ['policyviolation', ['anti-spoofing policy', 'content examination policy', 'host network not allowed', 'host network, not allowed']],
      ['virusdetected', ['message contains a virus', 'virus signature detected']],
      ['failedstarttls', ['this route requires encryption', 'this route requires tls version', 'this route requires high-strength ciphers']],
      ['mesgtoobig', ['maximum email size exceeded']],
      ['networkerror', ['the incorrect hostname used for inbounds', 'mail loop detected']],
      ['norelaying', ['open relay not allowed', 'open relay is not allowed']],
      ['notaccept', ['account inbounds disabled']],
      ['toomanyconn', ['account service is temporarily unavailable', 'exceeding outbound thread limit']],
      ['securityerror', ['submitter failed to authenticate']],
      ['systemerror', ['unable to process connection at this time', 'message ended early', 'unable to process an email at this time']],
    ],
  },
  {
    // Cox Communications. Sources: Cox's "Postmaster email administration" page (AUP# codes), Sisimai::Rhost::Cox.
    name: 'cox',
    domains: /^cox\.net$/,
    hosts: hostEnds('cox.net'),
    codes(f) {
      const code = /aup#([a-z0-9]+)/.exec(f.text)?.[1];
      if (!code) return undefined;
      if (code.startsWith('ipbl') || code === 'cxbl' || code === 'cdrbl') return 'blocked';
      if (code.startsWith('urlbl')) return 'spamdetected';
      return ({ cxdns: 'requireptr', cxsndr: 'authfailure', cxsmtp: 'rejected', cxcnct: 'toomanyconn', cxmxrt: 'toomanyconn', cxthrt: 'securityerror', cxmj: 'securityerror' } as Record<string, BounceReason>)[code];
    },
    says: [
      ['userunknown', ['recipient rejected']],
      ['rejected', ['sender rejected']],
      ['blocked', ['too many bad commands from', 'too many invalid recipients']],
      ['requireptr', ['dns check failure - try again later', 'rejected - no rdns']],
      ['policyviolation', ['esmtp no data before greeting', 'attachment extension is forbidden']],
      ['toomanyconn', ['too many sessions from', 'requested action aborted: try again later', 'message threshold exceeded']],
      ['systemerror', ['esmtp server temporarily not available']],
    ],
  },
  {
    // Orange and La Poste (France). Sources: Orange postmaster's error codes (OFR_/LPN_ suffixes,
    // as listed by postmastery.com and smtpfieldmanual.com), Sisimai::Rhost::FrancePTT.
    name: 'orange',
    domains: /^(?:orange|wanadoo|laposte)\.(?:fr|net)$/,
    hosts: hostEnds('orange.fr', 'wanadoo.fr', 'laposte.net'),
    codes(f) {
      // "OFR_416", "OFR006_102", "LPN007_420", "LPNAAA_101": the code is the number after the last underscore.
      const code = /\b(?:ofr|lpn|ouk)[a-z0-9]*[_-](\d{3})\b/.exec(f.text)?.[1];
      return code ? ORANGE_CODES[code] : undefined;
    },
    says: [['authfailure', ['spf/dns de votre nom de domaine']]],
  },
  {
    // I.UA (Ukraine): its replies link to mail.i.ua/err/<n>/. Source: the linked pages, Sisimai::Rhost::IUA.
    name: 'iua',
    domains: /^(?:i|email)\.ua$/,
    hosts: hostEnds('email.ua', 'i.ua'),
    codes(f) {
      const n = /\.i\.ua\/err\/(\d+)\//.exec(f.text)?.[1];
      return n ? IUA_CODES[n] : undefined;
    },
    says: [],
  },
  {
    // KDDI au (ezweb.ne.jp, au.com): its MTA writes "<address>: User unknown" for a dead address and
    // ": User unknown" without the address when a filter of the recipient's refused the mail.
    // Source: au's mail trouble page, Sisimai::Rhost::KDDI.
    name: 'kddi',
    domains: /^(?:ezweb\.ne\.jp|au\.com)$/,
    hosts: hostEnds('ezweb.ne.jp', 'au.com'),
    says: [
      ['filtered', ['550 : user unknown']],
      ['userunknown', ['>: user unknown']],
    ],
  },
];

const ORANGE_CODES: Readonly<Record<string, BounceReason>> = {
  '101': 'blocked', '102': 'blocked', '103': 'blocked', '104': 'toomanyconn', '305': 'securityerror', '401': 'authfailure',
  '402': 'securityerror', '403': 'rejected', '405': 'rejected', '415': 'rejected', '416': 'userunknown', '417': 'mailboxfull',
  '420': 'suspend', '421': 'rejected', '426': 'suspend', '505': 'systemerror', '506': 'spamdetected', '510': 'blocked',
  '514': 'mesgtoobig', '517': 'authfailure', '630': 'policyviolation', '999': 'blocked',
};

const IUA_CODES: Readonly<Record<string, BounceReason>> = {
  '1': 'norelaying', '2': 'userunknown', '3': 'suspend', '4': 'mailboxfull', '5': 'toomanyconn',
  '6': 'norelaying', '7': 'blocked', '8': 'rejected', '9': 'blocked', '10': 'filtered',
};

/**
 * The provider a report is about: the recipient's domain first, then the remote MTA that
 * answered; the reporting MTA only when the report names no remote MTA (the reporter's own
 * answer), since a provider relaying another server's reply does not make the reply its own.
 */
export function providerOf(hosts: ReportHosts): Provider | undefined {
  const domain = hosts.recipient?.split('@').pop()?.trim().toLowerCase();
  if (domain) for (const p of PROVIDERS) if (p.domains.test(domain)) return p;
  const remote = hosts.remoteMta?.trim().toLowerCase();
  if (remote) return PROVIDERS.find((p) => p.hosts.test(remote));
  const reporter = hosts.reportingMta?.trim().toLowerCase();
  if (reporter) return PROVIDERS.find((p) => p.hosts.test(reporter));
  return undefined;
}

/** The reason the provider the report is about gives in its own words or codes, if any. */
export function providerReason(hosts: ReportHosts, f: ProviderFacts): BounceReason | undefined {
  if (!f.text) return undefined;
  const p = providerOf(hosts);
  if (!p) return undefined;
  const coded = p.codes?.(f);
  if (coded) return coded;
  for (const [reason, phrases] of p.says) if (phrases.some((w) => f.text.includes(w))) return reason;
  return undefined;
}

/** The providers' names, for docs and tests. */
export const PROVIDER_NAMES = PROVIDERS.map((p) => p.name);
