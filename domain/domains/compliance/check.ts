/**
 * One line of a domain's compliance report (GET /v1/domains/{domain_name}/compliance,
 * docs/domains.md "Compliance"): a rule the large mailbox providers publish for senders, held
 * against what Cartero can see of the domain (its DNS, its keys, its mail, its reports).
 *
 *   pass     the rule is met
 *   warn     met, short of what the providers recommend, or about to stop being met
 *   fail     not met: mail of the domain is at risk at the providers in applies_to
 *   unknown  nothing to judge it by yet (no such mail, DNS did not answer, no figures)
 */
export const CHECK_STATUSES = ['pass', 'fail', 'warn', 'unknown'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

export const RULE_PROVIDERS = ['gmail', 'yahoo', 'microsoft'] as const;
export type RuleProvider = (typeof RULE_PROVIDERS)[number];

/** The rule ids: stable, documented in docs/domains.md; a new rule adds one. */
export const COMPLIANCE_RULES = [
  'spf_aligned',
  'dkim_aligned',
  'dmarc_policy',
  'dmarc_reports_received',
  'one_click_unsubscribe',
  'unsubscribe_within_2_days',
  'complaint_rate',
] as const;
export type ComplianceRule = (typeof COMPLIANCE_RULES)[number];

/** The providers' own pages, each rule citing the one that states it most plainly. */
export const SOURCES = {
  google: 'https://support.google.com/a/answer/81126',
  yahoo: 'https://senders.yahooinc.com/best-practices/',
  microsoft:
    'https://techcommunity.microsoft.com/blog/microsoftdefenderforoffice365blog/strengthening-email-ecosystem-outlook%E2%80%99s-new-requirements-for-high%E2%80%90volume-senders/4399730',
} as const;

export interface ComplianceCheck {
  rule: ComplianceRule;
  status: CheckStatus;
  /** One or two sentences: what was found, and what to do when it is not a pass. */
  detail: string;
  applies_to: RuleProvider[];
  source: string;
}

/** A check built from its rule's fixed parts (applies_to, source) and what was found. */
export function check(
  rule: { rule: ComplianceRule; applies_to: readonly RuleProvider[]; source: string },
  status: CheckStatus,
  detail: string,
): ComplianceCheck {
  return { rule: rule.rule, status, detail, applies_to: [...rule.applies_to], source: rule.source };
}
