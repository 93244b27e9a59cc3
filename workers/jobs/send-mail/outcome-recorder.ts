import { DependencyUnavailable } from '../../../domain/errors.js';
import { MailStatus } from '../../../domain/mail/status.js';
import { moveMails, type Move, type MovedMail } from '../../../domain/mail/transitions.js';
import { withTenant, type Tenant } from '../../../domain/tenancy/context.js';
import type { Pool } from '../../../sql/pool.js';

/**
 * Transaction B, as group commit: a reply is written at once when no write for its instance is
 * in flight; replies arriving meanwhile wait for that write and then go together in one
 * statement. No timer: under light load every reply is its own write, under heavy load writes
 * grow instead of queueing up. Connection failures are retried in-process for up to two minutes
 * (RECORD_RETRY_MS), because giving up means the mail is looked at again
 * (workers/jobs/send-mail/record.ts) and sent again.
 */
export class OutcomeRecorder {
  private readonly pending = new Map<number, { tenant: Tenant; items: Array<{ move: Move; done: (err: unknown, moved?: MovedMail) => void }> }>();
  private readonly flushing = new Set<number>();

  constructor(
    private readonly pool: Pool,
    /** Called after a commit that moved mails to soft bounced; must not throw. */
    private readonly onSoftBounce: (instanceId: number) => void = () => {},
  ) {}

  /** Resolves with the mail as moved, or undefined when its `from` guard did not match (another run recorded it first). */
  record(tenant: Tenant, move: Move): Promise<MovedMail | undefined> {
    return new Promise((resolve, reject) => {
      const id = tenant.instanceId;
      const queue = this.pending.get(id) ?? { tenant, items: [] };
      this.pending.set(id, queue);
      queue.items.push({ move, done: (err, moved) => (err === undefined ? resolve(moved) : reject(err)) });
      if (!this.flushing.has(id)) void this.flush(id);
    });
  }

  private async flush(id: number): Promise<void> {
    this.flushing.add(id);
    try {
      for (let queue = this.pending.get(id); queue?.items.length; queue = this.pending.get(id)) {
        this.pending.delete(id);
        try {
          const moved = new Map((await this.write(queue.tenant, queue.items.map((i) => i.move))).map((m) => [m.mail_id, m]));
          for (const i of queue.items) i.done(undefined, moved.get(i.move.mailId));
        } catch (err) {
          for (const i of queue.items) i.done(err ?? new Error('write failed'));
        }
      }
    } finally {
      this.flushing.delete(id);
    }
  }

  private async write(tenant: Tenant, moves: Move[]): Promise<MovedMail[]> {
    const deadline = Date.now() + RECORD_RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        const moved = await withTenant(this.pool, tenant, (c) => moveMails(tenant, c, moves));
        if (moved.some((m) => m.status === MailStatus.bounced && m.bounce_class === 'soft')) this.onSoftBounce(tenant.instanceId);
        return moved;
      } catch (err) {
        if (!(err instanceof DependencyUnavailable || isTransientConflict(err)) || Date.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, RECORD_RETRY_PAUSES_MS[attempt] ?? RECORD_RETRY_PAUSES_MS.at(-1)!));
      }
    }
  }
}

/**
 * How long a reply's write is retried through a Postgres outage. A few seconds (the budget until
 * the faults suite) sent the mails whose 250 arrived during a 20 s outage a second time
 * (test/faults-postgres.test.ts). Waiting is safe because the mail's job stays active until
 * SEND_JOB_EXPIRE_SECONDS (10 minutes), so no other run retries it meanwhile; the send lease
 * alone would not do (its TTL is at most 60 s, send-lease.ts; it is renewed once Postgres answers).
 */
const RECORD_RETRY_MS = 120_000;
const RECORD_RETRY_PAUSES_MS = [250, 1_000, 2_000, 5_000];

/** Deadlock or serialization failure: the transaction was rolled back whole and can simply rerun. */
function isTransientConflict(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === '40P01' || code === '40001';
}
