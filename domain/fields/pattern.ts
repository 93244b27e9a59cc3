import { AppError } from '../errors.js';

/**
 * A field's pattern is a user's regular expression run on every value a contact, an import or a
 * form brings: a pattern that backtracks super-linearly (`(a+)+$`, `\d+\.?\d*`) would let one
 * value hold a web process or an import for minutes (ReDoS). Node has no linear-time engine, so
 * a pattern is accepted only when recheck (the checker test/redos.test.ts runs on the code's own
 * patterns: automaton analysis, else fuzzing) proves it safe; a vulnerable one, or one it cannot
 * decide in time, is refused when the field is created. Values are also bounded in length
 * (VALUE_MAX_LENGTH in values.ts) before any pattern sees them.
 *
 * A value must match the pattern whole, as HTML's pattern attribute does (the forms built on the
 * catalog check it in the browser the same way): it is compiled as ^(?:pattern)$ with the u flag.
 */

export const PATTERN_MAX_LENGTH = 500;

function anchored(pattern: string): string {
  return `^(?:${pattern})$`;
}

/** Compiles the anchored form, or says why it is not a valid ECMAScript pattern (400 field_pattern_invalid). */
function compile(pattern: string): RegExp {
  try {
    // A field's pattern, accepted only after checkPattern proved its anchored form linear.
    return new RegExp(anchored(pattern), 'u');
  } catch (err) {
    throw new AppError('field_pattern_invalid', `the pattern is not a valid regular expression: ${(err as Error).message}`);
  }
}

/**
 * Refuses a pattern that is not valid, too long, or not proven linear. Loaded on demand: only
 * the panel's field creation needs the checker, never a web or worker process.
 */
export async function checkPattern(pattern: string): Promise<void> {
  if (pattern.length === 0 || pattern.length > PATTERN_MAX_LENGTH) {
    throw new AppError('field_pattern_invalid', `a pattern has 1 to ${PATTERN_MAX_LENGTH} characters`);
  }
  compile(pattern);
  const { check } = await import('recheck');
  const verdict = await check(anchored(pattern), 'u', { timeout: 10_000 });
  if (verdict.status === 'vulnerable') {
    throw new AppError('field_pattern_unsafe', `the pattern can take ${verdict.complexity.type} time on some values ` +
      `(e.g. ${JSON.stringify(verdict.attack.string.slice(0, 60))}); rewrite it without nested or overlapping repetition`);
  }
  if (verdict.status !== 'safe') {
    throw new AppError('field_pattern_unsafe', 'the pattern could not be proven to run in linear time; simplify it');
  }
}

// Compiled patterns by source: a field's pattern is compiled once per process, not per value.
// Bounded (patterns come from the catalog, a few per instance; the bound only stops growth).
const compiled = new Map<string, RegExp>();
const COMPILED_MAX = 2_000;

/** Whether a value matches a field's (already checked) pattern whole. */
export function matchesPattern(pattern: string, value: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    if (compiled.size >= COMPILED_MAX) compiled.clear();
    re = compile(pattern);
    compiled.set(pattern, re);
  }
  return re.test(value);
}
