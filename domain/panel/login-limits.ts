import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Config } from '../../config/config.js';
import type { Pool } from '../../sql/pool.js';
import { sharedRateLimiter } from '../../sql/rate-limits.js';
import { RateLimited } from '../errors.js';

/**
 * The failed-login budgets of the panel (docs/panel.md, Login refusals and limits; issue 37).
 * Counted in Postgres (sql/rate-limits.ts: one budget for every web dyno), three of them:
 *
 * - per client address, whatever the account (PANEL_LOGIN_FAILURES_PER_ADDRESS): one address
 *   guessing across many accounts;
 * - per account *and* client address (PANEL_LOGIN_FAILURES_PER_ACCOUNT): the lock falls on the
 *   address that failed, never on the account. A lock on the account alone let anyone keep its
 *   owner out for good (five wrong passwords every 15 minutes, from anywhere);
 * - per account, all addresses together (PANEL_LOGIN_FAILURES_PER_ACCOUNT_TOTAL, much higher):
 *   past it the account is being sprayed from many addresses, and each address then has one
 *   attempt at it per window instead of PANEL_LOGIN_FAILURES_PER_ACCOUNT. It slows a spray (one
 *   guess per address instead of five) and refuses nobody who has not failed: a fresh address is
 *   all the owner and an attacker have alike, so no account-wide rule can refuse one without
 *   locking the owner out again.
 *
 * An address is the client's IPv4 address, or its IPv6 /64: one subscriber's network, which
 * holds more addresses than any budget could count one by one.
 *
 * Every attempt takes its points before the password is checked (one atomic upsert each), and a
 * success gives them back: checking first and counting after would let a burst of parallel
 * guesses all pass the check. A success clears its (account, address) count and returns its
 * address's and its account's one point (only those: an attacker holding one account cannot
 * reset the address budget with it, and the owner signing in does not wipe out the failures other
 * addresses made).
 */

interface LoginLimits {
  address: RateLimiterPostgres;
  pair: RateLimiterPostgres;
  account: RateLimiterPostgres;
}

/**
 * The three budgets of one door that takes passwords: the panel's logins here, the submission
 * listener's AUTH (smtp/submission/, an instance slug for the account). Each door counts apart
 * (its `door` prefixes its keys in rate_limits).
 */
export interface FailureBudgets {
  door: string;
  perAddress: number;
  perAccount: number;
  perAccountTotal: number;
  windowSeconds: number;
}

const panelBudgets = (panel: Config['panel']): FailureBudgets => ({
  door: 'panel_login',
  perAddress: panel.loginFailuresPerAddress,
  perAccount: panel.loginFailuresPerAccount,
  perAccountTotal: panel.loginFailuresPerAccountTotal,
  windowSeconds: panel.loginFailureWindowSeconds,
});

// One set of limiters per pool, door and sizes (each web app; test apps of other sizes count apart).
const limiters = new WeakMap<Pool, Map<string, LoginLimits>>();
function limitsOf(pool: Pool, b: FailureBudgets): LoginLimits {
  let bySize = limiters.get(pool);
  if (!bySize) limiters.set(pool, (bySize = new Map()));
  const window = b.windowSeconds;
  const size = `${b.door}:${b.perAccount}:${b.perAccountTotal}:${b.perAddress}:${window}`;
  let limits = bySize.get(size);
  if (!limits) {
    limits = {
      address: sharedRateLimiter(pool, `${b.door}_address`, b.perAddress, window),
      pair: sharedRateLimiter(pool, `${b.door}_account_address`, b.perAccount, window),
      account: sharedRateLimiter(pool, `${b.door}_account_total`, b.perAccountTotal, window),
    };
    bySize.set(size, limits);
  }
  return limits;
}

/** The account's key in rate_limits: a hash of the address, so the table holds no email addresses. */
const accountKey = (email: string) => createHash('sha256').update(email.trim().toLowerCase(), 'utf8').digest('base64url');

/** The client's key: its IPv4 address (IPv4-mapped IPv6 included), or its IPv6 /64. */
export function loginAddressKey(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return 'unknown';
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/64`).toString()}/64`;
}

/** Takes one point; refused (the budget is spent) with a 429 saying when to retry. */
async function take(limiter: RateLimiterPostgres, key: string): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    throw new RateLimited(err.msBeforeNext / 1000);
  }
}

/** Takes one point; false when the budget is spent, which refuses nothing by itself. */
async function within(limiter: RateLimiterPostgres, key: string): Promise<boolean> {
  try {
    await limiter.consume(key);
    return true;
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    return false;
  }
}

export interface LoginAttempt {
  limits: LoginLimits;
  account: string;
  address: string;
  pair: string;
}

/**
 * Admits one login attempt before its password is looked at, or throws RateLimited (429 with
 * Retry-After): its address spent its budget, or this address spent its budget on this account,
 * or the account is past its total and this address already tried it in the window.
 */
export async function admitLogin(pool: Pool, panel: Config['panel'], email: string, ip: string | undefined): Promise<LoginAttempt> {
  return admitAttempt(pool, panelBudgets(panel), email, ip);
}

/** admitLogin for any door's budgets; `email` is the door's account name (an email address, a slug). */
export async function admitAttempt(pool: Pool, budgets: FailureBudgets, email: string, ip: string | undefined): Promise<LoginAttempt> {
  const limits = limitsOf(pool, budgets);
  const account = accountKey(email);
  const address = loginAddressKey(ip);
  const pair = `${account}@${address}`;
  await take(limits.address, address);
  const tried = await take(limits.pair, pair);
  const sprayed = !(await within(limits.account, account));
  if (sprayed && tried.consumedPoints > 1) throw new RateLimited(tried.msBeforeNext / 1000);
  return { limits, account, address, pair };
}

/** A login that succeeded was no failure: its points go back, its address's count on the account is cleared. */
export async function loginSucceeded(attempt: LoginAttempt): Promise<void> {
  await attempt.limits.pair.delete(attempt.pair);
  await attempt.limits.address.reward(attempt.address, 1);
  await attempt.limits.account.reward(attempt.account, 1);
}
