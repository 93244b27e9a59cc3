/**
 * The suite's one way to wait and one teardown shape (issue 38): every helper and test file
 * imports these instead of writing its own.
 */

/** What a helper needs of a tap test to clean up after itself. */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export interface WaitOptions {
  /** The bound on waiting (default 60 s): generous, it only ends a test that would hang. */
  ms?: number;
  /** How often `probe` runs (default every 100 ms). */
  every?: number;
}

/**
 * Polls `probe` until it returns something other than undefined, and returns that (a probe that
 * waits for a condition returns `x || undefined`; one that can tell the wait is hopeless, such
 * as a process that exited, returns false, for the caller to assert on); throws after `ms`,
 * naming `what`. A bound on waiting, never a timed assertion: what the test checks is the value.
 */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, opts: WaitOptions = {}): Promise<T> {
  const { ms = 60_000, every = 100 } = opts;
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(every);
  }
}
