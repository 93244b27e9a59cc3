import t from 'tap';
import { MACHINE_AGENTS } from '../domain/tracking/machine-agents.js';
import { machineReason, PREFETCH_SECONDS } from '../domain/tracking/machine.js';

/**
 * The machine rules on opens and clicks alike (issue 32, docs/tracking.md): the user agents a
 * new user would see fetch an open pixel more than PREFETCH_SECONDS after delivery, each judged
 * as its vendor documents it. Before issue 32 every scanner and script here counted as a human
 * open, because the scanner rule was applied to clicks only.
 */
const sentAt = new Date('2026-11-28T10:00:00Z');
const later = new Date(sentAt.getTime() + (PREFETCH_SECONDS + 60) * 1000);
const judge = (kind: 'open' | 'click', userAgent: string | null) => machineReason({ kind, userAgent, occurredAt: later, sentAt, machine: null });

// Readers' clients, and the proxies that fetch when the person opens (Gmail's).
const HUMAN: Array<[string, string]> = [
  ['Gmail image proxy', 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)'],
  ['Outlook desktop', 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17328; Pro)'],
  ['iPhone Mail', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148'],
  ['Chrome', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36'],
  ['Firefox', 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0'],
  ['Thunderbird', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Thunderbird/128.4.0'],
  ['Apple Mail on macOS (opened by the person)', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)'],
  ['Samsung Email', 'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/118.0 Mobile Safari/537.36'],
];

// Machines, with the family their signature belongs to.
const MACHINES: Array<[string, string]> = [
  ['Barracuda Link Protection', 'Mozilla/5.0 (compatible; Barracuda Link Protection)'],
  ['Mimecast URL Protect', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Mimecast/1.0'],
  ['Proofpoint URL Defense', 'Proofpoint URL Defense/2.0'],
  ['Proofpoint (urldefense host)', 'Mozilla/5.0 urldefense.proofpoint.com scanner'],
  ['Cisco Secure Email', 'CiscoSecureEmail/14.0'],
  ['Trend Micro', 'Mozilla/5.0 (compatible; Trend Micro Email Security)'],
  ['Sophos', 'Sophos Email Scanner/1.0'],
  ['FortiMail', 'FortiMail URL Click Protection'],
  ['curl', 'curl/8.5.0'],
  ['python-requests', 'python-requests/2.31.0'],
  ['Python urllib', 'Python-urllib/3.11'],
  ['Go', 'Go-http-client/1.1'],
  ['Java', 'Java/17.0.2'],
  ['Apache HttpClient', 'Apache-HttpClient/4.5.14 (Java/17.0.2)'],
  ['Node undici', 'undici'],
  ['Wget', 'Wget/1.21.4'],
  ['headless Chrome', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/130.0.0.0 Safari/537.36'],
  ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
];

t.test('the twelve user agents of the report: six readers or proxies judged right, six machines now flagged on opens', async (t) => {
  t.equal(judge('open', 'Mozilla/5.0'), 'privacy_proxy', "Apple Mail Privacy Protection's bare Mozilla/5.0");
  t.equal(judge('open', 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html'), 'privacy_proxy', "Yahoo's proxy");
  for (const [name, ua] of HUMAN.slice(0, 4)) t.equal(judge('open', ua), null, `${name}: a reader`);
  for (const name of ['Barracuda Link Protection', 'Mimecast URL Protect', 'Proofpoint URL Defense', 'curl', 'python-requests', 'headless Chrome']) {
    t.equal(judge('open', MACHINES.find(([n]) => n === name)![1]), 'image_scanner', `${name} fetching the pixel: no reader`);
  }
});

t.test('every machine agent is flagged on opens (image_scanner) and clicks (link_scanner); every reader on neither', async (t) => {
  for (const [name, ua] of MACHINES) {
    t.equal(judge('open', ua), 'image_scanner', `open: ${name}`);
    t.equal(judge('click', ua), 'link_scanner', `click: ${name}`);
  }
  for (const [name, ua] of HUMAN) {
    t.equal(judge('open', ua), null, `open: ${name}`);
    t.equal(judge('click', ua), null, `click: ${name}`);
  }
});

t.test('the other rules keep their order: a set flag, no user agent, a proxy on opens only, prefetch', async (t) => {
  t.equal(machineReason({ kind: 'click', userAgent: 'curl/8.5.0', occurredAt: later, sentAt, machine: 'head_request' }), 'head_request');
  t.equal(judge('open', null), 'no_user_agent');
  t.equal(judge('open', '   '), 'no_user_agent');
  t.equal(judge('click', 'Mozilla/5.0'), null, 'a bare Mozilla/5.0 click is not the privacy proxy (it loads images, not links)');
  const soon = new Date(sentAt.getTime() + 500);
  t.equal(machineReason({ kind: 'open', userAgent: HUMAN[3]![1], occurredAt: soon, sentAt, machine: null }), 'prefetch', 'a reader’s agent half a second after delivery');
  t.equal(machineReason({ kind: 'open', userAgent: 'curl/8.5.0', occurredAt: soon, sentAt, machine: null }), 'image_scanner', 'the agent says more than the timing');
  t.equal(machineReason({ kind: 'unsubscribe', userAgent: 'curl/8.5.0', occurredAt: later, sentAt, machine: null }), null, 'only opens and clicks are judged');
});

t.test('each family names its source, and each of its signatures is exercised by a case above', async (t) => {
  for (const family of MACHINE_AGENTS) {
    t.ok(family.source.length > 40, `${family.family}: a source`);
    t.ok(MACHINES.some(([, ua]) => family.pattern.test(ua)), `${family.family}: at least one case`);
  }
});
