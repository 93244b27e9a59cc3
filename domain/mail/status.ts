/** Delivery status codes of the spec (Conventions: Delivery status codes). */
export const MailStatus = {
  received: 1,
  queued: 2,
  sent: 3,
  dropped: 4,
  deferred: 5,
  bounced: 6,
  onhold: 7,
} as const;
export type MailStatusCode = (typeof MailStatus)[keyof typeof MailStatus];

/** States a send job never leaves: a retry finding one of these does nothing (no double send). */
export const FINAL_STATUSES: readonly number[] = [MailStatus.sent, MailStatus.dropped, MailStatus.bounced];
