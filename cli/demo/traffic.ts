import type { Delivered } from './mailbox.js';

/**
 * Readers and machines at work on the delivered mails: each hit is a real request to the real
 * tracking link read from the stored message, with the User-Agent a mail client, a browser, a
 * privacy proxy or a link scanner sends, so the listings show what a campaign's really look like
 * (machine-made hits flagged by the event pump: docs/tracking.md).
 */

/** What people's mail clients and browsers send: none of these is flagged. */
export const READER_AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
  'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17928; Pro)',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.4.0',
];

/** Apple Mail Privacy Protection fetches every image on delivery with this bare agent: flagged privacy_proxy. */
export const PRIVACY_PROXY_AGENT = 'Mozilla/5.0';

/** Security gateways following every link of a mail: flagged link_scanner (and click_burst). */
export const SCANNER_AGENTS = ['Mozilla/5.0 (compatible; Barracuda Sentinel URL scanner)', 'python-requests/2.32.3'];

export interface TrafficCount {
  opens: number;
  clicks: number;
  machineOpens: number;
  machineClicks: number;
}

async function hit(url: string, userAgent: string): Promise<void> {
  // A click answers 302 to the original URL: the demo does not follow it (the shop is fictional).
  const res = await fetch(url, { headers: { 'user-agent': userAgent, accept: 'text/html,image/*;q=0.8,*/*;q=0.5' }, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  await res.body?.cancel();
  if (res.status !== 200 && res.status !== 302) throw new Error(`${url} answered ${res.status}`);
}

/**
 * Opens and clicks on the readers' mails (`readers` in send order): about two in three open (a
 * few twice, from another device), about one in three clicks, one open comes from a privacy
 * proxy, and a scanner follows every link of two mails nobody opened.
 */
export async function simulateTraffic(readers: readonly Delivered[]): Promise<TrafficCount> {
  const count: TrafficCount = { opens: 0, clicks: 0, machineOpens: 0, machineClicks: 0 };
  const work: Array<Promise<void>> = [];
  readers.forEach((mail, i) => {
    const agent = READER_AGENTS[i % READER_AGENTS.length]!;
    const opens = i < 24 && mail.openUrl;
    if (opens) {
      work.push(hit(mail.openUrl!, agent));
      count.opens++;
      if (i % 4 === 0) {
        work.push(hit(mail.openUrl!, READER_AGENTS[(i + 1) % READER_AGENTS.length]!));
        count.opens++;
      }
    }
    if (opens && i % 2 === 0 && mail.clickUrls.length) {
      work.push(hit(mail.clickUrls[(i / 2) % mail.clickUrls.length]!, agent));
      count.clicks++;
    }
    if (i === 24 && mail.openUrl) {
      work.push(hit(mail.openUrl, PRIVACY_PROXY_AGENT));
      count.machineOpens++;
    }
    if (i === 26 || i === 27) {
      const agent = SCANNER_AGENTS[i - 26]!;
      for (const url of mail.clickUrls) work.push(hit(url, agent));
      count.machineClicks += mail.clickUrls.length;
    }
  });
  await Promise.all(work);
  return count;
}
