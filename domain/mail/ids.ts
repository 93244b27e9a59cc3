import { decodeTime, ulid } from 'ulid';

/**
 * mail_id and msg_id are ULIDs: 48 bits of creation time then 80 random bits. The time part is
 * what lets GET /v1/mails/{id} answer mail_outside_retention for an id whose row was purged, and
 * sorts ids by creation to the millisecond. Every id gets fresh randomness (not ulid's monotonic
 * factory, whose ids of one millisecond differ by one): a recipient of one mail of a send must
 * not be able to compute the ids of the others, nor a tenant those of another (docs/security.md).
 */
export function newId(): string {
  return ulid();
}

/**
 * `count` fresh ids in ascending order, for the recipients of one send: listings that order by
 * (time, mail_id) keep recipient order, as they did with the monotonic factory, while each id
 * still carries its own 80 random bits (sorting reorders ids, it does not relate them).
 */
export function newIds(count: number): string[] {
  return Array.from({ length: count }, () => ulid()).sort();
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Whether `id` has the shape of the ids we issue (an upper-case ULID). */
export function isId(id: string): boolean {
  return ULID.test(id);
}

/** Creation time of an id we issued; undefined for anything that is not one. */
export function idTime(id: string): Date | undefined {
  if (!isId(id)) return undefined;
  try {
    return new Date(decodeTime(id));
  } catch {
    return undefined;
  }
}

/** The online retention window of the spec (Limits): 3 months. */
export const RETENTION_MONTHS = 3;

export function retentionStart(now = new Date()): Date {
  const d = new Date(now);
  d.setUTCMonth(d.getUTCMonth() - RETENTION_MONTHS);
  return d;
}
