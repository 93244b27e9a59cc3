import { machineAgentFamily } from './machine-agents.js';

/**
 * Which opens and clicks a machine probably made. Nothing is dropped: the flag travels with the
 * event (Postgres outbox, then ClickHouse) so listings can exclude flagged events on request,
 * and mails.opens/clicks count every event. The first matching reason is recorded:
 *
 *  - head_request  a click fetched with HEAD (set by the web dyno: people click with GET);
 *  - no_user_agent no User-Agent at all: browsers and mail clients always send one;
 *  - privacy_proxy an open fetched by a mail-privacy proxy that loads every image on delivery
 *                  (Apple Mail Privacy Protection's bare "Mozilla/5.0", Yahoo's proxy);
 *  - link_scanner  a click from a machine's user agent (machine-agents.ts: security gateways,
 *                  HTTP libraries, headless browsers, crawlers);
 *  - image_scanner an open from one of those same user agents: a gateway or a script fetching
 *                  the pixel is no reader (before issue 32 such opens counted as human);
 *  - prefetch      an open or click within PREFETCH_SECONDS of the mail's delivery: no person
 *                  reads and clicks that fast, gateways scanning inbound mail do;
 *  - click_burst   clicks on two or more different links of one mail within BURST_SECONDS of each
 *                  other: a scanner following every link, not a reader.
 * Gmail's image proxy is not flagged: it fetches when the person opens the mail.
 */
export const PREFETCH_SECONDS = 2;
export const BURST_SECONDS = 1;

// Apple Mail Privacy Protection fetches remote content on delivery with a bare "Mozilla/5.0";
// Yahoo's mail proxy names itself. Checked before the machine agents: a proxy is not a scanner.
const PRIVACY_PROXY = [/^Mozilla\/5\.0$/, /YahooMailProxy/i];

export interface TrackedEvent {
  kind: string;
  userAgent: string | null;
  occurredAt: Date;
  /** When the mail was delivered (its 250), if it has been. */
  sentAt: Date | null;
  /** A flag already set (the web dyno's head_request). */
  machine: string | null;
}

/** The reason a single event looks machine-made, judged on itself alone; null when it does not. */
export function machineReason(e: TrackedEvent): string | null {
  if (e.machine) return e.machine;
  if (e.kind !== 'open' && e.kind !== 'click') return null;
  const ua = e.userAgent?.trim() ?? '';
  if (ua === '') return 'no_user_agent';
  if (e.kind === 'open' && PRIVACY_PROXY.some((re) => re.test(ua))) return 'privacy_proxy';
  if (machineAgentFamily(ua)) return e.kind === 'click' ? 'link_scanner' : 'image_scanner';
  if (e.sentAt && e.occurredAt.getTime() - e.sentAt.getTime() < PREFETCH_SECONDS * 1000) return 'prefetch';
  return null;
}

export interface Click {
  id: number;
  url: string | null;
  occurredAt: Date;
}

/**
 * The clicks of one mail that belong to a burst: each has a click on a different URL within
 * BURST_SECONDS. `clicks` are all the mail's clicks around the ones being judged.
 */
export function burstClicks(clicks: readonly Click[]): Set<number> {
  const sorted = [...clicks].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
  const burst = new Set<number>();
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) {
      if (sorted[j]!.occurredAt.getTime() - sorted[i]!.occurredAt.getTime() > BURST_SECONDS * 1000) break;
      if (sorted[j]!.url !== sorted[i]!.url) {
        burst.add(sorted[i]!.id);
        burst.add(sorted[j]!.id);
      }
    }
  }
  return burst;
}
