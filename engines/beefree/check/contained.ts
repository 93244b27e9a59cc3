import type { Finding } from '../findings.js';
import { finding } from './finding.js';

/** An optional check that threw: which one, and what it threw (for the log, never the client). */
export interface CheckFailure {
  check: string;
  error: string;
}

/**
 * Runs an optional check (one that only gives warnings or suggestions). A library under it may
 * throw on input nobody foresaw (the Can I email checker's CSS parser did, on a font URL): what
 * is lost then is advice, not safety, so the document is not refused for it and the answer is
 * never a 500. The check is skipped, a `check_failed` warning says which one could not run, and
 * the error is handed to the caller to log with the template id. Checks that can find errors
 * (schema, module types, links, HTML size) are never run through this: skipping one would let a
 * document through that should be refused.
 */
export function contained(check: string, failures: CheckFailure[], run: () => Finding[]): Finding[] {
  try {
    return run();
  } catch (err) {
    failures.push({ check, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    return [finding('check_failed', '', null, `the ${check} check could not run on this document and was skipped`, { check })];
  }
}
