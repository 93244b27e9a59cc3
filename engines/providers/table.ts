/**
 * The mailbox providers Cartero attributes a mail to, from its recipient's domain (docs/deliverability.md,
 * "Providers", lists them with their sources). Pure: the consumer domains are known here; a domain
 * of nobody here is judged by its MX hosts (mx.ts) by the caller, who resolves them.
 *
 * The ids are stored (Postgres mails.provider, ClickHouse mails/mail_events.provider) and are API
 * values: never rename one.
 */
export const PROVIDER_IDS = [
  'gmail', 'google_workspace', 'yahoo', 'microsoft', 'microsoft_365', 'apple', 'gmx', 'mailru', 'yandex', 'zoho', 'proton',
  'comcast', 'orange', 't_online', 'qq', 'netease', 'naver', 'other',
] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export interface Provider {
  id: ProviderId;
  label: string;
  /**
   * Whether the provider sends a feedback-loop report per complaint. Gmail's feedback loop is
   * aggregate-only (Postmaster Tools), so zero complaints there means "unknown", not "0 %".
   */
  perMessageComplaints: boolean;
  /** Exact consumer domains (lower case). */
  domains: readonly string[];
  /** Domain labels whose every public suffix belongs to the provider: `hotmail` matches hotmail.fr, hotmail.co.uk. */
  brandLabels?: readonly string[];
  /** Domains of a brand label that belong to someone else. */
  notTheBrand?: readonly string[];
}

export const PROVIDERS: readonly Provider[] = [
  { id: 'gmail', label: 'Gmail', perMessageComplaints: false, domains: ['gmail.com', 'googlemail.com'] },
  { id: 'google_workspace', label: 'Google Workspace', perMessageComplaints: false, domains: [] },
  {
    id: 'yahoo',
    label: 'Yahoo and AOL',
    perMessageComplaints: true,
    domains: ['ymail.com', 'rocketmail.com', 'aim.com', 'verizon.net', 'love.com', 'ygm.com', 'wow.com', 'games.com'],
    brandLabels: ['yahoo', 'aol'],
    // Yahoo Japan is another company (LY Corporation), with its own mail service.
    notTheBrand: ['yahoo.co.jp', 'yahoo.ne.jp'],
  },
  {
    id: 'microsoft',
    label: 'Outlook.com',
    perMessageComplaints: true,
    domains: ['msn.com', 'passport.com', 'windowslive.com'],
    brandLabels: ['outlook', 'hotmail', 'live'],
  },
  { id: 'microsoft_365', label: 'Microsoft 365', perMessageComplaints: true, domains: [] },
  { id: 'apple', label: 'iCloud Mail', perMessageComplaints: false, domains: ['icloud.com', 'me.com', 'mac.com'] },
  {
    id: 'gmx',
    label: 'GMX and WEB.DE',
    perMessageComplaints: true,
    domains: ['web.de', 'mail.com', 'email.com', 'gmx.net', 'gmx.de', 'gmx.at', 'gmx.ch', 'gmx.com', 'gmx.us', 'gmx.fr', 'gmx.co.uk', 'gmx.es', 'gmx.it'],
  },
  { id: 'mailru', label: 'Mail.ru', perMessageComplaints: true, domains: ['mail.ru', 'inbox.ru', 'list.ru', 'bk.ru', 'internet.ru', 'my.com'] },
  {
    id: 'yandex',
    label: 'Yandex Mail',
    perMessageComplaints: true,
    domains: ['yandex.ru', 'yandex.com', 'yandex.by', 'yandex.kz', 'yandex.ua', 'yandex.com.tr', 'ya.ru', 'narod.ru'],
  },
  { id: 'zoho', label: 'Zoho Mail', perMessageComplaints: false, domains: ['zoho.com', 'zohomail.com', 'zoho.eu', 'zohomail.eu', 'zoho.in', 'zohomail.in'] },
  { id: 'proton', label: 'Proton Mail', perMessageComplaints: false, domains: ['proton.me', 'protonmail.com', 'protonmail.ch', 'pm.me'] },
  { id: 'comcast', label: 'Comcast (Xfinity)', perMessageComplaints: true, domains: ['comcast.net'] },
  { id: 'orange', label: 'Orange', perMessageComplaints: false, domains: ['orange.fr', 'wanadoo.fr', 'voila.fr'] },
  { id: 't_online', label: 'Telekom (t-online.de)', perMessageComplaints: false, domains: ['t-online.de', 'magenta.de'] },
  { id: 'qq', label: 'QQ Mail', perMessageComplaints: false, domains: ['qq.com', 'foxmail.com', 'vip.qq.com'] },
  { id: 'netease', label: 'NetEase', perMessageComplaints: false, domains: ['163.com', '126.com', 'yeah.net', 'vip.163.com'] },
  { id: 'naver', label: 'Naver', perMessageComplaints: false, domains: ['naver.com'] },
  { id: 'other', label: 'Other', perMessageComplaints: true, domains: [] },
];

const BY_ID = new Map(PROVIDERS.map((p) => [p.id, p]));
const BY_DOMAIN = new Map(PROVIDERS.flatMap((p) => p.domains.map((d) => [d, p.id] as const)));
const BY_BRAND = new Map(PROVIDERS.flatMap((p) => (p.brandLabels ?? []).map((l) => [l, p.id] as const)));
const NOT_THE_BRAND = new Set(PROVIDERS.flatMap((p) => p.notTheBrand ?? []));

/**
 * Public suffixes a consumer brand's domains end with (yahoo.co.uk, hotmail.com.br): a brand
 * label followed by one of these, and nothing else, is the provider's. Country domains of the
 * form cc and com.cc / co.cc are recognised by shape, so the table needs no list of countries.
 */
function isBrandSuffix(labels: readonly string[]): boolean {
  if (labels.length === 1) return /^[a-z]{2,3}$/.test(labels[0]!);
  if (labels.length === 2) return /^(com?|net|org)$/.test(labels[0]!) && /^[a-z]{2}$/.test(labels[1]!);
  return false;
}

export function providerById(id: ProviderId): Provider {
  return BY_ID.get(id)!;
}

export function isProviderId(value: string): value is ProviderId {
  return BY_ID.has(value as ProviderId);
}

/** The provider a domain belongs to by name alone, or undefined when only its MX can tell. */
export function providerOfDomain(domain: string): ProviderId | undefined {
  const name = domain.toLowerCase().replace(/\.$/, '');
  const exact = BY_DOMAIN.get(name);
  if (exact) return exact;
  if (NOT_THE_BRAND.has(name)) return undefined;
  const [first, ...rest] = name.split('.');
  const brand = first === undefined ? undefined : BY_BRAND.get(first);
  return brand && isBrandSuffix(rest) ? brand : undefined;
}
