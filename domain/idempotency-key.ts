/**
 * What the two Idempotency-Key doors share: form submissions (domain/forms/submit.ts, the key
 * scoped to the form) and sends (scoped to the instance). The columns' CHECKs hold the same bound.
 */

/** Longest Idempotency-Key (the columns' CHECK). */
export const MAX_IDEMPOTENCY_KEY = 255;
