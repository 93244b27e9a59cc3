import nodemailer from 'nodemailer';
import pino from 'pino';
import { createClickHouseClient } from '../../analytics/client.js';
import { RENDER_LIMITS } from '../../config/defaults.js';
import { CONFIG_SCHEMA } from '../../config/schema.js';
import { keyRing } from '../../domain/domains/key-encryption.js';
import { SEND_MAIL_QUEUE } from '../../domain/job-queue.js';
import type { RenderedMail } from '../../domain/mail/render.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { startInboundSmtp } from '../../smtp/inbound.js';
import { behaviourOf, buildArfComplaint } from '../../smtp/simulator.js';
import { classifyReply, parseSmtpReply, type SendOutcome } from '../../engines/bounces/smtp-reply.js';
import type { Pool } from '../../sql/pool.js';
import { startEventPump } from '../../workers/jobs/event-pump.js';
import { claimMails, releaseLease } from '../../workers/jobs/send-mail/claim.js';
import type { SendMailDeps } from '../../workers/jobs/send-mail/deps.js';
import { OutcomeRecorder } from '../../workers/jobs/send-mail/outcome-recorder.js';
import { loadBatchKeys } from '../../workers/jobs/send-mail/read-batch.js';
import { recordOutcome } from '../../workers/jobs/send-mail/record.js';
import { renderMails } from '../../workers/jobs/send-mail/render.js';
import renderTask from '../../workers/jobs/send-mail/render-task.js';
import { testDatabases, type TestDatabases } from './databases.js';
import { FAST_RETRIES } from './send-stack.js';
import { TEST_DKIM_KEY } from './spawn.js';
import type { Teardown } from './wait.js';
import { startTestWeb } from './web.js';

/**
 * Delivered mails for tests whose subject is not sending (listings, exports, dashboards, the
 * panel's pages): mails accepted the usual way (POST /v1/mails/send) are taken through the send
 * worker's own steps (workers/jobs/send-mail/: render, claim with its gates, record the reply),
 * in this process, with the SMTP step replaced by the answer the mailbox simulator would give
 * (smtp/simulator.ts, by the recipient's local part). So their rows, logs, bounces, restrictions
 * and outbox events are the ones a worker writes, without a worker dyno, an SMTP server, or
 * polling for final statuses. Tests about sending keep test/helpers/send-stack.ts.
 */

/**
 * What the simulator answers a recipient on a mail's `tryNumber`th SMTP try (1 the first), as
 * nodemailer hands the send worker the reply: the simulator's own replies (smtp/simulator.ts).
 * Its reports (complaint*, dsnbounce*) are not sent here: a test that needs one gives it to an
 * inbound listener itself (complainAbout below).
 */
export function simulatorOutcome(to: string, tryNumber: number): SendOutcome {
  switch (behaviourOf(to)) {
    case 'bounce':
      return classifyReply({ ...parseSmtpReply(`550 5.1.1 <${to}>: Recipient address rejected: User unknown`), command: 'RCPT' });
    case 'softbounce':
      return classifyReply({ ...parseSmtpReply(`452 4.2.2 <${to}>: Mailbox full`), command: 'RCPT' });
    case 'defer':
      if (tryNumber === 1) return classifyReply({ ...parseSmtpReply(`451 4.3.0 <${to}>: Temporary failure, try again later`), command: 'DATA' });
      return classifyReply(parseSmtpReply('250 OK: message queued'));
    default:
      return classifyReply(parseSmtpReply('250 OK: message queued'));
  }
}

export interface DeliverOptions {
  /** PUBLIC_URL of the web app: the base of the tracking and unsubscribe links rendered. */
  publicUrl: string;
  /** The reply a mail's recipient gets on its nth try instead of SMTP's; the mailbox simulator's by default. */
  outcome?: (to: string, tryNumber: number) => SendOutcome;
  /** DKIM_KEY_ENCRYPTION_KEY of the web app that made the domains' keys, when it had its own. */
  dkimKey?: string;
  /** Stop after this many tries: a mail deferred on its last one stays deferred (5), its retry not yet come. */
  maxTries?: number;
}

/** A mail that went through: its final status, and the message as rendered for SMTP (undefined when it was not sent: dropped, on hold). */
export interface Delivered {
  mailId: string;
  rendered: RenderedMail | undefined;
}

/**
 * Takes these accepted mails of the tenant through the send worker's steps: render, the claim
 * with its gates (a restricted address is dropped, as a worker would), the reply recorded. A
 * deferred mail is tried again at once, as its job's retries would after their backoff, until
 * it is final or its tries are spent (a soft bounce, SEND_RETRY_LIMIT as the queue was made
 * with): the mail's rows and logs are those of a worker, without the waits. Its send jobs are
 * read for their retry limit and left as they are (nobody works them without a worker, and a
 * retry would find the mail final).
 */
export async function deliver(tenant: Tenant, pool: Pool, mailIds: readonly string[], opts: DeliverOptions): Promise<Map<string, Delivered>> {
  // The send jobs acceptance wrote (batches of a message's mails), for the queue's retry limit.
  const { rows } = await pool.query<{ mail_id: string; retry_limit: number }>(
    `SELECT m.mail_id, j.retry_limit FROM pgboss.job j, jsonb_array_elements_text(j.data->'mail_ids') AS m(mail_id)
      WHERE j.name = $1 AND m.mail_id = ANY ($2)`,
    [SEND_MAIL_QUEUE, mailIds],
  );
  const limits = new Map(rows.map((r) => [r.mail_id, r.retry_limit]));
  const missing = mailIds.filter((id) => !limits.has(id));
  if (missing.length) throw new Error(`no send job for ${missing.join(', ')}: not accepted mails of this database`);
  const policy = { limit: Math.max(...limits.values()), delaySeconds: 0 };

  const dkimKey = opts.dkimKey ?? process.env.DKIM_KEY_ENCRYPTION_KEY ?? TEST_DKIM_KEY;
  const deps = {
    pool,
    publicUrl: opts.publicUrl,
    logger: pino({ level: 'silent' }),
    lease: { workerId: 'seeded', inFlight: new Set<string>(), holdSeconds: 3600, stop: async () => {} },
    render: RENDER_LIMITS,
    // The render thread's own function, on this thread.
    renderer: { render: async (input, limits) => settled(renderTask({ input, limits })), close: async () => {} },
    trackingSecret: undefined,
    dkim: { ring: () => keyRing(dkimKey), returnPathSubdomain: CONFIG_SCHEMA.domains.returnPathSubdomain.default! },
  } as Omit<SendMailDeps, 'smtp' | 'settings'> as SendMailDeps;
  const keys = await loadBatchKeys(deps, [tenant.instanceId]);
  const recorder = new OutcomeRecorder(pool);
  const outcome = opts.outcome ?? simulatorOutcome;
  const out = new Map<string, Delivered>(mailIds.map((mailId) => [mailId, { mailId, rendered: undefined }]));

  const runs = policy.limit + 1;
  for (let run = 0, left = [...mailIds]; left.length; run++) {
    if (run === opts.maxTries) break;
    if (run === runs) throw new Error(`still not final after ${runs} tries: ${left.join(', ')}`);
    const renderings = await renderMails(deps, tenant, keys.signing, left);
    const { claimed } = await claimMails(deps, tenant, left, renderings);
    left = [];
    for (const mail of claimed) {
      try {
        // A deferred mail's next try is now (its row says so): tried again at once, without the wait.
        const retry = await recordOutcome(deps, recorder, tenant, mail, outcome(mail.rendered.to.address, mail.attempts + 1), policy, 0);
        if (retry) left.push(mail.mailId);
      } finally {
        releaseLease(deps.lease, mail.mailId);
      }
      out.set(mail.mailId, { mailId: mail.mailId, rendered: mail.rendered });
    }
  }
  return out;
}

function settled(outcome: ReturnType<typeof renderTask>): RenderedMail {
  if (outcome.ok) return outcome.rendered;
  throw new Error(outcome.message);
}

/**
 * The event pump in this process (workers/jobs/event-pump.ts, as a worker dyno runs it): the
 * outbox's status moves, opens and clicks reach ClickHouse's listings. Stopped at teardown.
 */
export function startTestPump(t: Teardown, dbs: Pick<TestDatabases, 'pool' | 'clickhouseUrl'>): { stop(): Promise<void> } {
  const clickhouse = createClickHouseClient(dbs.clickhouseUrl);
  const pump = startEventPump({ pool: dbs.pool, clickhouse, logger: pino({ level: 'silent' }) });
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= pump.stop().then(() => clickhouse.close()));
  t.teardown(stop);
  return { stop };
}

/**
 * Moves the clock of these delivered mails back by `seconds`, instead of waiting that long: their
 * reception, hand-off and delivery (mails.received_at, queued_at, sent_at, so the delay stays
 * the same) and their log rows, as if they had been delivered that long ago. For the windows
 * that count from delivery, such as the prefetch window within which an open or click is
 * judged machine-made (domain/tracking/machine.ts, PREFETCH_SECONDS). Call it before the event
 * pump starts, so ClickHouse's mirror gets the moved times with the mails' first snapshots.
 */
export async function backdate(tenant: Tenant, pool: Pool, mailIds: readonly string[], seconds: number): Promise<void> {
  await pool.query(
    `UPDATE mails SET received_at = received_at - make_interval(secs => $3), queued_at = queued_at - make_interval(secs => $3),
                      sent_at = sent_at - make_interval(secs => $3)
      WHERE instance_id = $1 AND mail_id = ANY ($2)`,
    [tenant.instanceId, mailIds, seconds],
  );
  await pool.query(`UPDATE mail_logs SET created_at = created_at - make_interval(secs => $3) WHERE instance_id = $1 AND mail_id = ANY ($2)`, [
    tenant.instanceId,
    mailIds,
    seconds,
  ]);
}

/** The tracking links of a rendered mail: its open pixel and its rewritten clicks, in order. */
export function trackingLinks(rendered: RenderedMail | undefined): { pixel: string; clicks: string[] } {
  const html = rendered?.html;
  if (!html) throw new Error('no HTML part rendered: the mail was not sent');
  return { pixel: html.match(/src="([^"]+\/t\/o\/[^"]+)"/)![1]!, clicks: [...html.matchAll(/href="([^"]+\/t\/c\/[^"]+)"/g)].map((m) => m[1]!) };
}

/**
 * The bench of a test that delivers mail itself and reads what comes back (bounces, complaints):
 * FAST_RETRIES in this process's environment (a soft bounce's tries as a worker with them makes
 * them), its databases, the web app with PUBLIC_URL `publicUrl`, and the inbound listener's port.
 */
export async function deliveryBench(t: Teardown, label: string, publicUrl: string) {
  Object.assign(process.env, FAST_RETRIES);
  const dbs = await testDatabases(t, label);
  const { url } = await startTestWeb(t, dbs, { env: { PUBLIC_URL: publicUrl } });
  const inboundPort = await startTestInbound(t, dbs.pool);
  return { dbs, url, pool: dbs.pool, inboundPort };
}

/** The inbound listener (smtp/inbound.ts) in this process, as a worker dyno runs it, on a free port; closed at teardown. */
export async function startTestInbound(t: Teardown, pool: Pool): Promise<number> {
  const inbound = await startInboundSmtp({ pool, port: 0, logger: pino({ level: 'silent' }) });
  t.teardown(() => inbound.close());
  return inbound.port;
}

/**
 * What the simulator does after its 250 to a complaint* recipient, for a delivered mail: the ARF
 * report a feedback loop sends (buildArfComplaint, with the message's header section), over
 * SMTP to the inbound listener at `port`, addressed to the mail's VERP return path.
 */
export async function complainAbout(port: number, mail: Delivered): Promise<void> {
  const r = mail.rendered;
  if (!r) throw new Error(`${mail.mailId} was not sent: nothing to complain about`);
  const head = [`From: ${r.from.address}`, `To: ${r.to.address}`, `Subject: ${r.subject}`, `Message-ID: ${r.messageId}`, ...r.headers.map((h) => `${h.key}: ${h.value}`)];
  const report = buildArfComplaint({ raw: Buffer.from(`${head.join('\r\n')}\r\n\r\n`), recipient: r.envelope.to, mailFrom: r.envelope.from, messageId: r.messageId });
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    const answer = (await transport.sendMail({ envelope: { from: 'complaints@mailbox-simulator.invalid', to: [r.envelope.from] }, raw: report })).response;
    if (!answer.startsWith('250') || /ignored/.test(answer)) throw new Error(`complaint about ${mail.mailId}: ${answer}`);
  } finally {
    transport.close();
  }
}

/**
 * A waitFor probe: true once every tracking event of the instance is judged (machine flags) and
 * shipped, nothing of it left in the outbox below stage 2; undefined before.
 */
export async function outboxDrained(pool: Pool, instanceId: number): Promise<true | undefined> {
  const left = await pool.query(`SELECT count(*)::int AS n FROM event_outbox WHERE instance_id = $1 AND stage < 2`, [instanceId]);
  return left.rows[0].n === 0 ? true : undefined;
}
