import type { Finding } from '../findings.js';
import { RULES, type RuleName } from '../format/rules.js';

/** A finding of a declared rule: its level and 422 code come from the rule table, never from the caller. */
export function finding(rule: RuleName, pointer: string, uuid: string | null, message: string, params?: Record<string, unknown>): Finding {
  const r = RULES[rule];
  return {
    level: r.level,
    rule,
    uuid,
    pointer,
    message,
    ...('code' in r ? { code: r.code } : {}),
    ...(params ? { params } : {}),
  };
}
