import type { RenderLimits } from '../../../config/defaults.js';
import { signingKeys, type SigningKey } from '../../../domain/domains/dkim-keys.js';
import { loadMailsToRender, type RenderContext } from '../../../domain/mail/gates.js';
import type { RenderedMail } from '../../../domain/mail/render.js';
import { RenderLimitExceeded } from '../../../engines/html/render-limit-exceeded.js';
import { FINAL_STATUSES, MailStatus } from '../../../domain/mail/status.js';
import { withTenant, type Tenant } from '../../../domain/tenancy/context.js';
import type { SendMailDeps } from './deps.js';
import type { SigningKeys } from './read-batch.js';
import { RenderBoundReached } from './render-threads.js';

/*
 * Step R of a send batch (workers/jobs/send-mail/index.ts): the mails are read without locks and
 * rendered outside any transaction, so no row lock or connection is held while the CPU works,
 * and on the worker's render threads (render-threads.ts), so the process's event loop is free
 * meanwhile (the event pump's transactions, SMTP replies, the inbound listener).
 * Each is rendered within the render bounds (RENDER_MAX_BODY_BYTES, RENDER_MAX_MS): one that
 * cannot be is dropped in the claim (claim.ts) with its reason. What is decided on (status,
 * sender domain) is looked at again there, under lock.
 */

/** A mail rendered in R, with the sender domain it was rendered for; or why it could not be. */
export type Rendering = { ok: true; rendered: RenderedMail; domain: string | null; dkim: SigningKey | undefined } | { ok: false; error: unknown };

/** R for one instance's mails of the batch: read them, find their domains' DKIM keys, render. */
export async function renderMails(deps: SendMailDeps, tenant: Tenant, keys: SigningKeys, mailIds: string[]): Promise<Map<string, Rendering>> {
  const contexts = await withTenant(deps.pool, tenant, (c) => loadMailsToRender(tenant, c, mailIds));
  if (contexts.length < mailIds.length) {
    const found = new Set(contexts.map((x) => x.mail_id));
    const missing = mailIds.filter((id) => !found.has(id));
    deps.logger.warn({ instanceId: tenant.instanceId, mailIds: missing }, 'send jobs for mails that do not exist (purged?) ignored');
  }
  // Every outgoing mail is signed with its sender domain's key (domain/domains/dkim-keys.ts).
  const domains = [...new Set(contexts.flatMap((x) => (x.domain_name ? [x.domain_name] : [])))];
  const signers = await signingKeys(tenant, deps.pool, deps.dkim.ring, domains);
  return renderBatch(deps, keys, deps.render, contexts, signers);
}

/**
 * Renders the mails the claim may send. A final, on-hold or not yet due mail is not rendered
 * (the claim leaves it alone). When one mail of a message runs over the time bound, the message's other
 * mails in the batch are not tried: they would cost as much for the same answer (so a batch's
 * mails are rendered one after another; the batches of the process's fetch loops share the threads).
 */
async function renderBatch(
  deps: SendMailDeps,
  keys: SigningKeys,
  limits: RenderLimits,
  contexts: RenderContext[],
  signers: Map<string, SigningKey>,
): Promise<Map<string, Rendering>> {
  const renderings = new Map<string, Rendering>();
  const tooSlow = new Map<number, string>();
  for (const ctx of contexts) {
    // The claim leaves these alone (a deferred mail not due yet gets a job for its time): no work for them here.
    if (FINAL_STATUSES.includes(ctx.status) || ctx.status === MailStatus.onhold || !ctx.due) continue;
    const slow = tooSlow.get(ctx.message_id);
    if (slow) {
      renderings.set(ctx.mail_id, { ok: false, error: new RenderLimitExceeded(`not tried after another mail of its message: ${slow}`) });
      continue;
    }
    try {
      const rendered = await renderOne(deps, keys, limits, ctx);
      renderings.set(ctx.mail_id, { ok: true, rendered, domain: ctx.domain_name, dkim: ctx.domain_name ? signers.get(ctx.domain_name) : undefined });
    } catch (err) {
      renderings.set(ctx.mail_id, { ok: false, error: err });
      if (err instanceof RenderBoundReached && err.ms > limits.maxMs) tooSlow.set(ctx.message_id, err.message);
    }
  }
  return renderings;
}

/** One mail's MIME message, its links signed with the batch's keys; throws when it cannot be rendered in bounds. */
function renderOne(deps: SendMailDeps, keys: SigningKeys, limits: RenderLimits, ctx: RenderContext): Promise<RenderedMail> {
  return deps.renderer.render(
    {
      mailId: ctx.mail_id,
      senderDomain: ctx.domain_name!,
      returnPathDomain: `${deps.dkim.returnPathSubdomain}.${ctx.domain_name!}`,
      publicUrl: deps.publicUrl,
      secret: keys.secret,
      reportKey: keys.reportKey,
      from: { email: ctx.from_email, name: ctx.from_name },
      to: { email: ctx.to_email, name: ctx.to_name, variables: ctx.recipient_variables },
      subject: ctx.subject,
      html: ctx.html,
      text: ctx.text_body,
      variables: ctx.variables,
      replyTo: ctx.reply_to,
      headers: ctx.headers,
      attachments: ctx.attachments,
      trackOpens: ctx.track_opens,
      trackClicks: ctx.track_clicks,
    },
    limits,
  );
}
