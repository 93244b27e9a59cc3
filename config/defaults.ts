/*
 * Defaults of configuration variables whose meaning belongs to a domain rule (config/schema.ts
 * reads them; the rule's code takes the configured value). They live here, below every layer
 * that uses them, so the schema imports nothing above it.
 */

export interface RenderLimits {
  /** Largest html or text part after merge tags, in UTF-8 bytes (RENDER_MAX_BODY_BYTES). */
  maxBodyBytes: number;
  /** Longest one mail's rendering may take, in milliseconds (RENDER_MAX_MS). */
  maxMs: number;
}

/**
 * 2 MiB: far above real messages (Gmail clips html past 102 KB), and the slowest html of that
 * size renders in about 1.5 s on a 2-core host. 5 s: three times that, so a busy host does not
 * drop a mail the bound was not meant for.
 */
export const RENDER_LIMITS: RenderLimits = { maxBodyBytes: 2 * 1024 * 1024, maxMs: 5_000 };

export interface SoftBounceSettings {
  threshold: number;
  windowDays: number;
}

/** The defaults of SOFT_BOUNCE_THRESHOLD and SOFT_BOUNCE_WINDOW_DAYS (config/schema.ts). */
export const SOFT_BOUNCE_DEFAULTS: SoftBounceSettings = { threshold: 3, windowDays: 30 };

/**
 * Rendering a document off the web dyno's event loop (domain/templates/render-pool.ts): how many
 * worker threads (TEMPLATE_RENDER_THREADS) and how long one document may render, check included
 * (TEMPLATE_RENDER_TIMEOUT_MS), counted from when a thread starts on it. Ten seconds is about a
 * hundred times what the largest corpus document takes, and several times the slowest document
 * the estimate lets through.
 */
export const TEMPLATE_RENDER_DEFAULTS = { threads: 2, timeoutMs: 10_000 } as const;

/** The bounds of a CSV file's record and cell (CSV_MAX_RECORD_BYTES, CSV_MAX_CELL_BYTES), in bytes as read. */
export interface CsvLimits {
  cellBytes: number;
  recordBytes: number;
}

/**
 * 64 KiB a cell: the longest value a field takes is 10,000 characters (VALUE_MAX_LENGTH in
 * domain/fields/values.ts), at most 40,000 bytes of UTF-8, so every cell that could be accepted
 * fits with room, and an email address is at most 254. 1 MiB a record: 16 such cells, far over
 * the widest real row (a few hundred bytes to a few KiB), and the size of a stored piece of a
 * rejects file (docs/panel.md), so an import holds about that much of its file at a time.
 */
export const CSV_LIMITS: CsvLimits = { cellBytes: 64 * 1024, recordBytes: 1024 * 1024 };
