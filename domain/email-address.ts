/**
 * A plausible e-mail address: one @ with something before it, no spaces, a dot inside the domain.
 * Two linear tests: the single pattern /^[^\s@]+@[^\s@]+\.[^\s@]+$/ backtracked quadratically on
 * a domain of many dots.
 */
export function isEmailAddress(text: string): boolean {
  const address = text.trim();
  const at = address.lastIndexOf('@');
  return at >= 1 && /^[^\s@]+@[^\s@]+$/.test(address) && /.\../.test(address.slice(at + 1));
}
