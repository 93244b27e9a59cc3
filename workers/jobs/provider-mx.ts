import { PROVIDER_MX_QUEUE, type ProviderMxJob } from '../../domain/job-queue.js';
import { mxLookup, resolveRecipientDomain, type MxLookup } from '../../domain/mail/recipient-mx.js';
import { defineJob, type JobContext } from '../machinery/job.js';

function parse(payload: unknown): ProviderMxJob | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const domain = (payload as Record<string, unknown>).domain;
  return typeof domain === 'string' && domain.length > 0 && domain.length <= 255 ? { domain } : undefined;
}

// One resolver per set of servers for the process's life (the configuration does not change).
const lookups = new Map<string, MxLookup>();
const lookupFor = (servers: readonly string[] | undefined) => {
  const key = (servers ?? []).join(',');
  let lookup = lookups.get(key);
  if (!lookup) lookups.set(key, (lookup = mxLookup(servers)));
  return lookup;
};

/**
 * A recipient domain met for the first time (or whose verdict expired): its MX says which mailbox
 * provider receives its mail (domain/mail/recipient-mx.ts). A resolver that does not answer is a
 * verdict for 15 minutes, not a failed job: the domain's mails count as 'other' meanwhile.
 */
async function handle(data: ProviderMxJob, { pool, config, logger }: JobContext): Promise<void> {
  const provider = await resolveRecipientDomain(pool, lookupFor(config.domains.dnsServers), data.domain);
  if (provider === null) logger.warn({ domain: data.domain }, 'recipient domain MX lookup unanswered; its mails count as other for now');
  else logger.debug({ domain: data.domain, provider }, 'recipient domain provider resolved');
}

export const providerMxJob = defineJob({
  name: PROVIDER_MX_QUEUE,
  policy: { retryLimit: 3, retryDelay: 5, retryBackoff: true, expireInSeconds: 60 },
  parse,
  handle,
  batch: 8,
});
