/** The webhook settings of the configuration (config/schema.ts, `webhooks`). */
export interface WebhookSettings {
  timeoutSeconds: number;
  /** Seconds before each attempt: [0] the first (normally 0), then one per retry. */
  retrySchedule: number[];
  /** A failing streak longer than this pauses the webhook. */
  pauseAfterSeconds: number;
  /** This many failed attempts in a row pause it; 0 disables the rule. */
  pauseAfterFailures: number;
  /** Webhooks an instance may have, paused ones included (a create beyond: 409 webhook_limit_reached). */
  maxPerInstance: number;
  /** Attempts in flight per webhook, across workers. */
  concurrency: number;
  /** Deliveries a worker's drain keeps in memory per webhook, beyond those in flight. */
  holdMax: number;
  allowPrivate: boolean;
  retentionDays: number;
  clockOffsetSeconds: number;
}
