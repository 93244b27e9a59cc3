/**
 * The user agents of machines that fetch a mail's pixel and links on their own: security
 * gateways scanning inbound mail, HTTP libraries and scripts, headless browsers, crawlers. A
 * reader's mail client or browser matches none of them (test/machine-rules.test.ts holds the
 * clients that must stay human: Apple Mail, iPhone Mail, Gmail's image proxy, Outlook, Chrome,
 * Firefox, Thunderbird). Each family names where its signature comes from; docs/tracking.md
 * lists them. Matched case-insensitively anywhere in the User-Agent.
 */
export interface MachineAgentFamily {
  family: 'security_gateway' | 'http_library' | 'headless_browser' | 'crawler';
  /** What the family is, and the public source of its signatures. */
  source: string;
  pattern: RegExp;
}

export const MACHINE_AGENTS: readonly MachineAgentFamily[] = [
  {
    family: 'security_gateway',
    source:
      'vendors of secure email gateways, whose URL protection fetches every link (and renders the HTML) on delivery and names itself: ' +
      'Barracuda Link Protection, Mimecast URL Protect, Proofpoint URL Defense (urldefense), Microsoft Safe Links, Cisco Secure Email ' +
      '(IronPort), Trend Micro, Forcepoint, Sophos, Fortinet (FortiMail, FortiGuard), Symantec (MessageLabs), Zscaler',
    pattern:
      /barracuda|mimecast|proofpoint|urldefense|safelinks|ciscosecureemail|ironport|trend ?micro|forcepoint|sophos|fortimail|fortiguard|messagelabs|symantec|zscaler/i,
  },
  {
    family: 'http_library',
    source: "HTTP libraries' and tools' own default User-Agent (their documentation): curl, Wget, Python requests/urllib/aiohttp/httpx, Go net/http, OkHttp, Java, Apache HttpClient, libwww-perl, Node fetch/axios/undici, Ruby, Guzzle, PowerShell",
    pattern:
      /curl\/|wget\/|python-requests|python-urllib|aiohttp|python-httpx|go-http-client|okhttp|^java\/|\bjava\/\d|apache-httpclient|httpclient|libwww|node-fetch|axios\/|undici|^ruby|guzzlehttp|windowspowershell/i,
  },
  {
    family: 'headless_browser',
    source: 'headless browsers announce themselves (Chrome headless mode "HeadlessChrome", PhantomJS); Puppeteer and Playwright keep that default',
    pattern: /headlesschrome|phantomjs/i,
  },
  {
    family: 'crawler',
    source: 'crawlers and bots name themselves by convention (Googlebot, bingbot, "spider", "crawler", a generic "scanner")',
    pattern: /bot\b|bot\/|crawler|spider|scanner/i,
  },
];

/** The family a user agent belongs to, or undefined for a reader's client. */
export function machineAgentFamily(userAgent: string): MachineAgentFamily['family'] | undefined {
  return MACHINE_AGENTS.find((a) => a.pattern.test(userAgent))?.family;
}
