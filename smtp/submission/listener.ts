import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerAddress, type SMTPServerAuthentication, type SMTPServerAuthenticationResponse, type SMTPServerDataStream, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { RateLimited } from '../../domain/errors.js';
import type { JobQueue } from '../../domain/job-queue.js';
import { SEND_MAX_BYTES, sendBodySchema } from '../../domain/mail/send-request.js';
import { admitAttempt, loginSucceeded, type FailureBudgets } from '../../domain/panel/login-limits.js';
import { authenticateKey } from '../../domain/tenancy/authenticate.js';
import type { Tenant } from '../../domain/tenancy/context.js';
import { clientAddress } from '../../domain/tenancy/ip.js';
import type { Config } from '../../config/config.js';
import type { RenderLimits } from '../../config/defaults.js';
import type { Pool } from '../../sql/pool.js';
import { acceptSubmission, type Reply } from './accept.js';
import { readSubmission } from './message.js';
import { listenSmtp, readData, smtpReply } from '../listening.js';

/**
 * The submission listener (RFC 6409): where programs that speak SMTP rather than the REST API
 * (WordPress, GitLab, a Postfix relay, a printer) send mail through an instance. Runs in the
 * worker dyno beside the inbound listener (SUBMISSION_PORT; SUBMISSIONS_PORT for implicit TLS,
 * RFC 8314); docs/sending.md, Send over SMTP, is the client's side of it.
 *
 *  - STARTTLS is offered, and AUTH is answered only over TLS (`530 5.7.0` before it); MAIL,
 *    RCPT and DATA only after AUTH (`530 5.7.0`).
 *  - AUTH PLAIN or LOGIN: the user name is the instance slug, the password an API key of that
 *    instance with the mail:send scope, checked by the API's own rules
 *    (domain/tenancy/authenticate.ts, the key's and the instance's IP allow lists included). Every
 *    refusal is the same `535 5.7.8`, whatever the reason (no slug, another instance's key, a
 *    revoked or expired key, a disabled instance, a missing scope, an address not allowed, the
 *    failure budgets spent). Failures are counted per client address and per slug in Postgres,
 *    as the panel's logins are (domain/panel/login-limits.ts: one budget for every worker dyno).
 *  - Each DATA is one send: ./message.ts reads the message into the request POST /v1/mails/send
 *    takes, ./accept.ts hands it to the same acceptance and turns its outcome into the reply.
 *    `250 2.0.0 Ok: queued as <msg_id>` only once the send is committed; anything else accepted
 *    nothing. Postgres unreachable: `451 4.3.0` (and `454 4.7.0` at AUTH).
 *  - At most 500 recipients (the API's limit, `452 4.5.3` for one more) and SUBMISSION_MAX_BYTES
 *    per message (`552 5.3.4`, at MAIL FROM when the client says SIZE= and at DATA).
 */
export interface SubmissionSmtpOptions {
  pool: Pool;
  queue: JobQueue;
  logger: Logger;
  /** Listen address; 127.0.0.1 by default. */
  host?: string;
  /** STARTTLS port; 0 picks a free port. */
  port?: number;
  /** Implicit TLS port (RFC 8314); 0 picks a free port. */
  tlsPort?: number;
  /** PEM: the certificate chain and its private key. */
  tls: { cert: Buffer; key: Buffer };
  limits: Pick<Config['submission'], 'maxConnections' | 'authFailuresPerAddress' | 'authFailuresPerSlug' | 'authFailuresPerSlugTotal' | 'authFailureWindowSeconds'>;
  render: Pick<RenderLimits, 'maxBodyBytes'>;
}

export interface SubmissionSmtp {
  /** The STARTTLS listener's port, when it listens. */
  port: number | undefined;
  /** The implicit TLS listener's port, when it listens. */
  tlsPort: number | undefined;
  /** Stops listening; resolves once open sessions and sends in progress have ended. */
  close(): Promise<void>;
}

/** The largest message: the largest body POST /v1/mails/send takes. */
export const SUBMISSION_MAX_BYTES = SEND_MAX_BYTES;
/** Recipients of one message: the API's own limit. */
export const SUBMISSION_MAX_RECIPIENTS = sendBodySchema.properties.to.maxItems;
const CLOSE_GRACE_MS = 2_000;

const REFUSED: Reply = { code: 535, text: '5.7.8 Authentication credentials invalid' };
const TLS_FIRST: Reply = { code: 530, text: '5.7.0 Must issue a STARTTLS command first' };
const TEMPORARY: Reply = { code: 451, text: '4.3.0 Temporary local problem, try again later' };

const smtpError = (r: Reply): Error => smtpReply(r.code, r.text);
const TOO_LARGE: Reply = { code: 552, text: `5.3.4 Message exceeds the ${SUBMISSION_MAX_BYTES} bytes limit` };

/** The connection object smtp-server makes for each client: only what is touched below. */
interface Connection {
  secure: boolean;
  send(code: number, data?: string | string[], context?: string | false): void;
  handler_AUTH(command: Buffer, callback: () => void): void;
}

/**
 * smtp-server words two replies its own way, which this listener's clients are promised otherwise:
 * AUTH before STARTTLS is `538` there (`530 5.7.0` here, as RFC 3207 and issue 41 say), and a
 * message over the size limit (SIZE= at MAIL FROM, or at DATA) a 552 without the enhanced code
 * (`552 5.3.4` here). It has no option for either, so each connection's AUTH handler and reply
 * writer are wrapped as the server makes the connection, and nothing else changes.
 */
class SubmissionServer extends SMTPServer {
  override connect(socket: Socket, socketOptions: unknown): void {
    const before = new Set((this as unknown as { connections: Set<Connection> }).connections);
    (SMTPServer.prototype as unknown as { connect(s: Socket, o: unknown): void }).connect.call(this, socket, socketOptions);
    for (const c of (this as unknown as { connections: Set<Connection> }).connections) if (!before.has(c)) ownReplies(c);
  }
}

function ownReplies(c: Connection): void {
  const auth = c.handler_AUTH.bind(c);
  c.handler_AUTH = (command, callback) => {
    if (!c.secure) {
      c.send(TLS_FIRST.code, TLS_FIRST.text, false);
      return callback();
    }
    auth(command, callback);
  };
  const send = c.send.bind(c);
  c.send = (code, data, context) =>
    code === 552 && typeof data === 'string' && data.startsWith('Error: message exceeds fixed maximum message size')
      ? send(TOO_LARGE.code, TOO_LARGE.text, false)
      : send(code, data, context);
}

interface Authenticated {
  tenant: Tenant;
  keyId: string;
}

export async function startSubmissionSmtp(opts: SubmissionSmtpOptions): Promise<SubmissionSmtp> {
  const log = opts.logger.child({ component: 'submission-smtp' });
  const inFlight = new Set<Promise<unknown>>();
  const budgets: FailureBudgets = {
    door: 'submission_auth',
    perAddress: opts.limits.authFailuresPerAddress,
    perAccount: opts.limits.authFailuresPerSlug,
    perAccountTotal: opts.limits.authFailuresPerSlugTotal,
    windowSeconds: opts.limits.authFailureWindowSeconds,
  };
  // Who each session authenticated as (smtp-server's session.user is a string: the slug).
  const sessions = new Map<string, Authenticated>();

  const onAuth = (auth: SMTPServerAuthentication, session: SMTPServerSession, done: (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void) => {
    const slug = (auth.username ?? '').trim();
    const work = (async (): Promise<Authenticated | Reply> => {
      try {
        const attempt = await admitAttempt(opts.pool, budgets, slug, session.remoteAddress);
        const outcome = await authenticateKey(opts.pool, { key: auth.password ?? undefined, slug, ip: clientAddress(session.remoteAddress), scope: 'mail:send' });
        if (outcome.kind !== 'ok') {
          log.info({ slug, client: session.remoteAddress, why: outcome.kind }, 'submission AUTH refused');
          return REFUSED;
        }
        await loginSucceeded(attempt);
        return { tenant: outcome.tenant, keyId: outcome.keyId };
      } catch (err) {
        if (err instanceof RateLimited) {
          log.warn({ slug, client: session.remoteAddress }, 'submission AUTH refused: failure budget spent');
          return REFUSED;
        }
        log.error({ err, slug }, 'submission AUTH could not be checked; answered 454');
        return { code: 454, text: '4.7.0 Temporary authentication failure, try again later' };
      }
    })();
    void work.then((r) => {
      if ('code' in r) return done(smtpError(r));
      sessions.set(session.id, r);
      log.info({ instance: r.tenant.slug, keyId: r.keyId, client: session.remoteAddress }, 'submission client authenticated');
      done(null, { user: r.tenant.slug });
    });
  };

  const onMailFrom = (address: SMTPServerAddress, _session: SMTPServerSession, done: (err?: Error | null) => void) => {
    const declared = Number((address.args || {}).SIZE ?? 0);
    if (declared > SUBMISSION_MAX_BYTES) return done(smtpError(TOO_LARGE));
    done();
  };

  const onRcptTo = (_address: SMTPServerAddress, session: SMTPServerSession, done: (err?: Error | null) => void) => {
    if (session.envelope.rcptTo.length >= SUBMISSION_MAX_RECIPIENTS) {
      return done(smtpError({ code: 452, text: `4.5.3 At most ${SUBMISSION_MAX_RECIPIENTS} recipients per message` }));
    }
    done();
  };

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, done: (err?: Error | null, message?: string) => void) => {
    // A connection cut during DATA ends in neither callback: nothing read, nothing accepted.
    readData(stream, SUBMISSION_MAX_BYTES, (raw) => {
      const who = sessions.get(session.id);
      if (!who) return done(smtpError({ code: 530, text: '5.7.0 Authentication required' }));
      const recipients = session.envelope.rcptTo.map((r) => r.address);
      const work = submit(who, raw, recipients).then(
        (r) => {
          log.info({ instance: who.tenant.slug, keyId: who.keyId, recipients: recipients.length, code: r.code, reply: r.text }, 'submitted message answered');
          if (r.code === 250) done(null, r.text);
          else done(smtpError(r));
        },
        (err) => {
          log.error({ err, instance: who.tenant.slug }, 'submitted message could not be handled; answered 451 so the client retries');
          done(smtpError(TEMPORARY));
        },
      );
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    }, () => done(smtpError(TOO_LARGE)));
  };

  async function submit(who: Authenticated, raw: Buffer, recipients: string[]): Promise<Reply> {
    const read = await readSubmission(raw, recipients);
    if ('refusal' in read) return read.refusal;
    return acceptSubmission(who.tenant, { pool: opts.pool, queue: opts.queue, render: opts.render }, read.request, read.messageId);
  }

  const common: SMTPServerOptions = {
    banner: 'Cartero submission',
    // No PTR lookup per connection (as the inbound listener, issue 37).
    disableReverseLookup: true,
    authMethods: ['PLAIN', 'LOGIN'],
    authRequiredMessage: '5.7.0 Authentication required',
    size: SUBMISSION_MAX_BYTES,
    maxClients: opts.limits.maxConnections,
    closeTimeout: CLOSE_GRACE_MS,
    key: opts.tls.key,
    cert: opts.tls.cert,
    logger: false,
    onAuth,
    onMailFrom,
    onRcptTo,
    onData,
    onClose: (session) => sessions.delete(session.id),
  };
  const host = opts.host ?? '127.0.0.1';
  const servers: SMTPServer[] = [];
  const listen = async (server: SMTPServer, port: number, kind: string): Promise<number> => {
    server.on('error', (err) => log.warn({ err }, 'submission smtp error'));
    const listening = await listenSmtp(server, port, host, 'submission smtp');
    servers.push(server);
    log.info({ host, port: listening, kind }, 'submission smtp listening');
    return listening;
  };
  const port = opts.port === undefined ? undefined : await listen(new SubmissionServer({ ...common, secure: false }), opts.port, 'starttls');
  const tlsPort = opts.tlsPort === undefined ? undefined : await listen(new SubmissionServer({ ...common, secure: true }), opts.tlsPort, 'implicit tls');

  let closing: Promise<void> | undefined;
  return {
    port,
    tlsPort,
    close: () =>
      (closing ??= (async () => {
        await Promise.all(servers.map((s) => new Promise<void>((closed) => s.close(() => closed()))));
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      })()),
  };
}
