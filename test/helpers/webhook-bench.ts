import { makeSenders, makeTenant } from './fixtures.js';
import { mailApi, startSendStack } from './send-stack.js';
import type { Teardown } from './wait.js';
import { startTestWeb } from './web.js';
import { startReceiver } from './webhook-receiver.js';

/** The public URL of the webhook benches' mails (tracking links), a name no resolver answers. */
export const WEBHOOK_BENCH_URL = 'https://track.cartero.test';

/**
 * The bench of a webhook test whose worker runs as its own process: the send stack (fast
 * retries), the web app allowed to name a loopback receiver, the receiver, an instance with a
 * sender on `domain` and the mail and webhook scopes, and `api` for its calls. The test spawns
 * its workers with its own WEBHOOK_* settings (stack.spawnWorker).
 */
export async function startWebhookBench(t: Teardown, label: string, domain: string) {
  const stack = await startSendStack(t, { label, publicUrl: WEBHOOK_BENCH_URL, fastRetries: true });
  const { dbs } = stack;
  const web = await startTestWeb(t, dbs, { env: { SMTP_URL: stack.simulator.url, PUBLIC_URL: WEBHOOK_BENCH_URL, WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const receiver = await startReceiver(t);
  const a = await makeTenant(dbs.pool, { scopes: ['mail:send', 'mail:read', 'webhooks:read', 'webhooks:write'] });
  await makeSenders(dbs.pool, a.tenant, { domain, senders: [{ email: 'news', name: 'News' }] });
  return { stack, dbs, web, receiver, a, api: mailApi(web.url, a.headers) };
}
