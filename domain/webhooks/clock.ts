/**
 * The clock webhook delivery decides by (which secrets are still in force after a rotation):
 * the real time plus WEBHOOK_CLOCK_OFFSET_SECONDS (default 0). Tests and drills start a worker
 * with an offset to be past a rotation's 24 h overlap without waiting a day (docs/webhooks.md).
 * The webhook-timestamp header stays the real time: receivers check it against their own clock.
 */
export function deliveryClock(offsetSeconds: number): () => Date {
  return () => new Date(Date.now() + offsetSeconds * 1000);
}
