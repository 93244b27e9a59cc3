import type { Pool } from '../../sql/pool.js';
import { appendForMails, type MailOutboxEvent } from '../outbox/append.js';
import type { OutboxEventKind } from '../outbox/kinds.js';
import { clientAddress } from '../tenancy/ip.js';
import { asDependencyError } from '../../sql/pool.js';

/** One hit on a public tracking link, as the web dyno saw it. */
export interface TrackingHit {
  kind: Extract<OutboxEventKind, 'open' | 'click'>;
  mailId: string;
  /** The clicked URL (clicks only): the one signed into the token, never client text. */
  url?: string;
  userAgent?: string;
  ip?: string;
  at: Date;
  /** Known at the request already (a HEAD on a click link is a scanner); the pump adds others. */
  machine?: string;
}

/** Long user agents are kept, but bounded: a client can send any header (hits and unsubscribes). */
export const MAX_USER_AGENT = 512;
const MAX_BATCH = 1_000;

interface Pending {
  hit: TrackingHit;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for tracking hits: while one INSERT is in flight the hits that arrive wait and go
 * together in the next one, so under load Postgres sees one transaction (one WAL flush) per batch
 * instead of one per hit, and each hit still answers only after its own row is committed. At low
 * rates a batch is a single hit and costs one round trip, as a plain INSERT would.
 */
export class HitRecorder {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(private readonly pool: Pool) {}

  record(hit: TrackingHit): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ hit, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          // A hit becomes durable as a row of the event outbox before its endpoint answers; the
          // instance comes from the mail row (the token names only the mail), and a mail that no
          // longer exists (purged, or never ours) simply inserts nothing. One INSERT per batch.
          await appendForMails(this.pool, batch.map((p) => outboxEvent(p.hit)));
          for (const p of batch) p.resolve();
        } catch (err) {
          const failure = asDependencyError(err);
          for (const p of batch) p.reject(failure);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}

function outboxEvent(h: TrackingHit): MailOutboxEvent {
  return {
    kind: h.kind,
    mailId: h.mailId,
    url: h.url ?? null,
    userAgent: h.userAgent ? h.userAgent.replace(/\u0000/g, '').slice(0, MAX_USER_AGENT) : null,
    // One unparseable address would fail the whole batch's INSERT (the inet cast).
    ip: clientAddress(h.ip ?? undefined),
    occurredAt: h.at,
    machine: h.machine ?? null,
  };
}
