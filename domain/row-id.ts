/**
 * Whether a value read from a job payload or a signed token is a row id: a positive safe integer.
 * Those payloads are JSON written by us but read back untrusted (a hand-inserted job, a token of
 * another version), so each reader checks its ids with this before using them.
 */
export const isRowId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
