import type { ProviderId, RateStatus } from './api.js';

/**
 * What the dashboard's Providers section says about the API's values (docs/panel.md, "Dashboard"):
 * each provider's name and the bulk-sender thresholds its rates are held to. The browser's code
 * imports nothing of the server's, so they are written here once more;
 * test/panel-providers-constants.test.ts holds them equal to engines/providers/table.ts and
 * engines/providers/thresholds.ts, and the wire type makes a new provider id a build error here.
 */

export const PROVIDER_LABELS: Record<ProviderId, string> = {
  gmail: 'Gmail',
  google_workspace: 'Google Workspace',
  yahoo: 'Yahoo and AOL',
  microsoft: 'Outlook.com',
  microsoft_365: 'Microsoft 365',
  apple: 'iCloud Mail',
  gmx: 'GMX and WEB.DE',
  mailru: 'Mail.ru',
  yandex: 'Yandex Mail',
  zoho: 'Zoho Mail',
  proton: 'Proton Mail',
  comcast: 'Comcast (Xfinity)',
  orange: 'Orange',
  t_online: 'Telekom (t-online.de)',
  qq: 'QQ Mail',
  netease: 'NetEase',
  naver: 'Naver',
  other: 'Other',
};

export type Metric = 'complaint_rate' | 'bounce_rate';

/** Warning from, critical from (fractions, as the API's rates). */
export const THRESHOLDS: Record<Metric, { warning: number; critical: number }> = {
  complaint_rate: { warning: 0.001, critical: 0.003 },
  bounce_rate: { warning: 0.02, critical: 0.05 },
};

/** A status as words: the table's colour only repeats them. */
export const STATUS_TEXT: Record<RateStatus, string> = {
  no_data: 'no data',
  ok: 'ok',
  warning: 'warning',
  critical: 'critical',
};

/** "0.25 %": two decimals, enough for the 0.1 % threshold; an em dash for no rate. */
export const percent = (rate: number | null): string => (rate === null ? '—' : `${(rate * 100).toFixed(2)} %`);
