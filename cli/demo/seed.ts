import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/config.js';
import { projectRoot } from '../../config/paths.js';
import type { Pool } from '../../sql/pool.js';
import { CAMPAIGN, campaignRecipients, type Recipient } from './audience.js';
import { deliveredMails, type Delivered } from './mailbox.js';
import { createDemoAudience, createDemoInstance, createDemoKey, DEMO_SENDER, publishTemplate } from './operator.js';
import { startReceiver } from './receiver.js';
import { DemoApi, DemoError, sleep, waitUntil, type DemoService } from './service.js';
import { SIGNUP_IDEMPOTENCY_KEY, type GuideInput } from './guide.js';
import { simulateTraffic, type TrafficCount } from './traffic.js';

/** The design document of the demo's newsletter: a Beefree document authored for the demo (docs/templates.md). */
export const DESIGN_FILE = join(projectRoot, 'cli', 'demo', 'newsletter.json');

export interface SeedOptions {
  /** A receiver URL chosen by the operator instead of the demo's choice. */
  webhookUrl?: string;
  progress(line: string): void;
}

export interface Seeded {
  guide: GuideInput;
  summary: string[];
}

/**
 * Seeds the demo instance: the operator's part through the domain (instance, domain, sender,
 * key, consent, dataset, form), the rest through the API with the new key (template, webhook,
 * the campaign, the form submissions), then opens and clicks on the delivered mails.
 */
export async function seedDemo(pool: Pool, config: Config, service: DemoService, slug: string, opts: SeedOptions): Promise<Seeded> {
  const say = opts.progress;
  const { tenant, senderId } = await createDemoInstance(pool, config, slug);
  const key = await createDemoKey(pool, slug);
  const { purposeId, datasetId, formId } = await createDemoAudience(pool, tenant, senderId);
  say(`instance ${slug}: domain and sender ${DEMO_SENDER.email} verified, a key with every scope, a consent term, a dataset and a double opt-in form`);
  const api = new DemoApi(service.base, key.key, slug);

  const config_ = JSON.parse(readFileSync(DESIGN_FILE, 'utf8'));
  const template = await api.expect('POST', '/v1/mail-templates', {
    name: 'November roasts',
    subject: "November's roasts are here, {{first_name}}",
    preheader: 'Three new coffees, a brew guide and 15% off this week',
    description: 'Monthly newsletter, from cli/demo/newsletter.json',
    config: config_,
  }, [201]);
  await publishTemplate(pool, tenant, template.id);
  say(`template ${template.id} "November roasts" created from the design document and published`);

  const hook = await createWebhook(api, opts.webhookUrl);
  say(hook.webhook
    ? `webhook ${hook.webhook.id} → ${hook.webhook.url}${hook.receiver ? ' (a receiver of this run, on loopback)' : ''}`
    : `no webhook: ${NO_RECEIVER}`);

  try {
    const recipients = campaignRecipients();
    const sent = await api.expect('POST', '/v1/mails/send', {
      from: DEMO_SENDER.email,
      to: recipients.map((r) => ({ email: r.email, name: r.first_name, variables: { first_name: r.first_name } })),
      template_id: template.id,
      custom_group_code: CAMPAIGN,
    }, [202]);
    const mailOf = new Map<string, string>((sent.mails as Array<{ mail_id: string; to: string }>).map((m) => [m.to, m.mail_id]));
    say(`${recipients.length} mails accepted (msg_id ${sent.msg_id}); waiting for the worker to deliver them to the mailbox simulator`);

    const readers = await waitForDelivery(service, recipients, mailOf);
    // Opens within 2 s of delivery look like a gateway's prefetch (domain/tracking/machine.ts): readers take longer.
    await sleep(2_500);
    const traffic = await simulateTraffic(readers);
    say(trafficLine(traffic));

    const forms = await submitForms(api, service, formId);
    say(`form ${formId}: 3 submissions, ${forms.confirmed} confirmed through the link of its double opt-in mail; dataset ${datasetId} fed with it`);

    await hook.settle(say);
    const webhookId = hook.webhook?.id;
    return {
      guide: { base: service.base, slug, key: key.key, campaign: CAMPAIGN, formId, signupBody: forms.signupBody, confirmedContact: forms.confirmed, purposeId, webhookId },
      summary: [
        `Seeded instance "${slug}" at ${service.base}: template ${template.id}, campaign "${CAMPAIGN}" (${recipients.length} mails), form ${formId}, dataset ${datasetId}, ` +
          (webhookId === undefined ? 'no webhook.' : `webhook ${webhookId}.`),
        !hook.webhook
          ? `No webhook: ${NO_RECEIVER}`
          : hook.receiver
            ? 'Its webhook pointed at a receiver this run started on loopback, now stopped: PATCH /v1/webhooks/{id} with your own URL to keep receiving.'
            : `Its webhook points at ${hook.webhook.url}, given with --webhook-url.`,
      ],
    };
  } finally {
    await hook.close();
  }
}

function trafficLine(t: TrafficCount): string {
  return `readers opened ${t.opens} times and clicked ${t.clicks} links; a privacy proxy opened ${t.machineOpens} and link scanners followed ${t.machineClicks} links`;
}

/** The stored messages of the campaign's delivered recipients (readers in send order), waited for (bounded). */
async function waitForDelivery(service: DemoService, recipients: Recipient[], mailOf: Map<string, string>): Promise<Delivered[]> {
  const expected = recipients.filter((r) => r.kind === 'reader' || r.kind === 'complaint').map((r) => mailOf.get(r.email)!);
  let stored = new Map<string, Delivered>();
  await waitUntil(60_000, async () => {
    stored = await deliveredMails(service.mailboxDir, expected);
    return stored.size === expected.length ? true : undefined;
  }, 500);
  if (stored.size === 0) {
    throw new DemoError(`no message of the campaign reached ${service.mailboxDir} within 60 s: is the worker running, and the mailbox simulator the SMTP server (no SMTP_URL)?`);
  }
  return recipients.filter((r) => r.kind === 'reader').flatMap((r) => stored.get(mailOf.get(r.email)!) ?? []);
}

interface WebhookSetup {
  /** None when the service refuses private receivers and no --webhook-url was given. */
  webhook?: { id: number; url: string };
  receiver: boolean;
  settle(say: (line: string) => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * Said when the demo makes no webhook: the demo never points one at an address it does not run
 * itself (a first user's events must not go to a stranger's server), and a service refusing
 * private receivers refuses the demo's own loopback one.
 */
export const NO_RECEIVER =
  'the service refuses private webhook receivers (WEBHOOK_ALLOW_PRIVATE is off), and the demo points a webhook only at a receiver it runs itself. ' +
  'To see deliveries locally, start the service with WEBHOOK_ALLOW_PRIVATE=true and run `npx cartero demo --reset` (the demo then runs its own loopback receiver), ' +
  'or give your receiver with --webhook-url.';

/**
 * The webhook, every event type: at --webhook-url when given; else on a receiver of this run when
 * the service accepts a loopback one (WEBHOOK_ALLOW_PRIVATE=true); else none (a service refusing
 * private receivers answers 422 url_not_public), and the demo goes on without it.
 */
async function createWebhook(api: DemoApi, chosen: string | undefined): Promise<WebhookSetup> {
  const create = (url: string) => api.call('POST', '/v1/webhooks', { name: 'Demo receiver', url });
  if (chosen) {
    const created = await create(chosen);
    if (created.status !== 201) throw new DemoError(`--webhook-url ${chosen} was refused: ${JSON.stringify(created.body)}`);
    return { webhook: created.body, receiver: false, settle: (say) => settleDeliveries(api, created.body.id, 'any', say), close: async () => {} };
  }
  const receiver = await startReceiver();
  const local = await create(receiver.url);
  if (local.status === 201) {
    return {
      webhook: local.body,
      receiver: true,
      settle: (say) => settleDeliveries(api, local.body.id, 'succeeded', say, receiver.received),
      close: () => receiver.close(),
    };
  }
  await receiver.close();
  if (!isRefusedUrl(local)) throw new DemoError(`POST /v1/webhooks answered ${local.status}: ${JSON.stringify(local.body)}`);
  return { receiver: false, settle: async () => {}, close: async () => {} };
}

const isRefusedUrl = (a: { status: number; body: any }) => a.status === 422 && a.body?.errors?.some((e: { code: string }) => e.code === 'url_not_public');

/**
 * Waits (bounded) until the deliveries listing shows what the demo promises: deliveries that
 * succeeded on the loopback receiver, or any attempt at a receiver the operator named.
 */
async function settleDeliveries(
  api: DemoApi,
  webhookId: number,
  want: 'succeeded' | 'any',
  say: (line: string) => void,
  received?: () => number,
): Promise<void> {
  const attempts = async () => (await api.expect('GET', `/v1/webhooks/${webhookId}/deliveries?page_size=100`, undefined, [200])).data as Array<{ status: string; attempt: number }>;
  let before = -1;
  const seen = await waitUntil(20_000, async () => {
    const list = await attempts();
    const succeeded = list.filter((a) => a.status === 'succeeded').length;
    const failed = list.filter((a) => a.status === 'failed').length;
    const retried = list.filter((a) => a.attempt > 1).length;
    // The loopback receiver: until nothing is in flight and nothing new arrived for a poll (the
    // event pump sends opens, clicks and form events a moment after they happen).
    const now = received?.() ?? 0;
    const quiet = now === before;
    before = now;
    const ready = want === 'succeeded' ? succeeded > 0 && quiet && !list.some((a) => a.status === 'pending') : list.length > 0;
    const more = list.length === 100 ? ' (of the latest 100)' : '';
    return ready ? `${succeeded} attempts succeeded, ${failed} failed, ${retried} were retries${more}` : undefined;
  }, 1_000);
  say(`webhook ${webhookId}: ${seen ?? 'its deliveries are still on their way (the worker sends them; the listing shows them as they go)'}`);
  if (received) say(`the loopback receiver got ${received()} deliveries`);
}

/**
 * Three submissions of the signup form through the API: one confirmed through the link of its
 * confirmation mail (read from the mailbox, then its page's button posted as a browser would),
 * one left pending, and the one the printed curl line repeats under its Idempotency-Key.
 */
async function submitForms(api: DemoApi, service: DemoService, formId: number): Promise<{ confirmed: string; signupBody: unknown }> {
  const form = await api.expect('GET', `/v1/forms/${formId}`, undefined, [200]);
  const body = (email: string, firstName: string, roast: string | null, agree: boolean) => submissionBody(form, email, firstName, roast, agree);
  const confirmedContact = CONFIRMED_CONTACT;
  const lucia = await api.expect('POST', `/v1/forms/${formId}/submissions`, body(confirmedContact, 'Lucía', 'dark', true), [201]);
  await api.expect('POST', `/v1/forms/${formId}/submissions`, body('tom.baker@example.net', 'Tom', 'medium', true), [201]);
  const signupBody = signupSubmission(form);
  await api.expect('POST', `/v1/forms/${formId}/submissions`, signupBody, [201, 200], { 'idempotency-key': SIGNUP_IDEMPOTENCY_KEY });

  // The confirmation mail: its mail id from the listing, its link from the stored message.
  const link = await waitUntil(45_000, async () => {
    const mails = await api.expect('GET', `/v1/mails?custom_msg_id=${encodeURIComponent(`form-confirmation:${lucia.id}`)}`, undefined, [200]);
    const mailId = mails.data?.[0]?.mail_id as string | undefined;
    if (!mailId) return undefined;
    const stored = (await deliveredMails(service.mailboxDir, [mailId])).get(mailId);
    return stored?.textLinks.find((l) => /\/fc\/[^/\s]+$/.test(l));
  }, 500);
  if (!link) throw new DemoError(`the confirmation mail of submission ${lucia.id} did not reach ${service.mailboxDir} within 45 s`);
  const agent = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
  const page = await fetch(link, { headers: { accept: 'text/html', 'user-agent': agent } });
  await page.body?.cancel();
  const posted = await fetch(link, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': agent }, body: '' });
  const html = await posted.text();
  if (posted.status !== 200 || !/confirmed/i.test(html)) throw new DemoError(`confirming through ${link} answered ${posted.status}`);
  return { confirmed: confirmedContact, signupBody };
}

/** The contact whose signup the demo confirms: the consent resolve line asks about it. */
export const CONFIRMED_CONTACT = 'lucia.fernandez@example.net';

type FormRead = { items: Array<{ id: number; type: string; field_key?: string; term_version_id?: number | null }> };

/** A submission of the signup form (GET /v1/forms/{id} gives its item ids and the term's current version). */
function submissionBody(form: FormRead, email: string, firstName: string, roast: string | null, agree: boolean) {
  const item = (key: string) => {
    const found = form.items.find((i) => i.field_key === key || i.type === key);
    if (!found) throw new DemoError(`the demo form has no ${key} item`);
    return found;
  };
  const consent = item('consent');
  return {
    items: [
      { item_id: item('email').id, value: email },
      { item_id: item('first_name').id, value: firstName },
      { item_id: item('favourite_roast').id, value: roast },
      { item_id: consent.id, value: agree, term_version_id: consent.term_version_id },
    ],
    user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
    ip_address: '198.51.100.23',
  };
}

/** The submission the printed curl line sends (the demo sent it once under SIGNUP_IDEMPOTENCY_KEY). */
export function signupSubmission(form: FormRead): unknown {
  return submissionBody(form, 'new.subscriber@example.net', 'Robin', 'light', true);
}
