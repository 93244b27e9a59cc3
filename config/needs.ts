import { CONFIG_SCHEMA, type ConfigValues } from './schema.js';

/**
 * What each Procfile process type cannot run without, beside the schema whose variables it names:
 * a variable optional for the table (the embedded default of `npm start` sets it, or generates
 * it) can still be one a process given its own DATABASE_URL needs. A process missing any refuses
 * to start at once, before it connects or listens, with one line naming every missing variable
 * and why it needs it (config/config.ts, loadConfigOrExit), instead of starting and failing the
 * first request that needs it (a web dyno without DKIM_KEY_ENCRYPTION_KEY answered 500 to a
 * sender creation). docs/configuration.md shows this table (config/doc.ts).
 *
 * Not listed, because a process works without them: TRACKING_SECRET (generated once into
 * Postgres and shared from there), INTERNAL_TOKEN and INTERNAL_PORT (without them the operator's
 * endpoints are not served), SMTP_URL (a worker without it takes every job but sends none),
 * INBOUND_SMTP_PORT (no inbound listener), SUBMISSION_PORT (no submission listener).
 */
export interface Need {
  name: string;
  /** Why the process needs it, completing "<NAME> is required (...)". */
  why: string;
  missing(values: Pick<ConfigValues, 'databaseUrl' | 'clickhouseUrl' | 'domains' | 'submission'>): boolean;
}

const databaseUrl = (why: string): Need => ({ name: CONFIG_SCHEMA.databaseUrl.name, why, missing: (v) => !v.databaseUrl });
const clickhouseUrl = (why: string): Need => ({ name: CONFIG_SCHEMA.clickhouseUrl.name, why, missing: (v) => !v.clickhouseUrl });
const dkimKey = (why: string): Need => ({
  name: CONFIG_SCHEMA.domains.keyEncryptionKey.name,
  // Only `npm start` and the CLI beside it (no DATABASE_URL) may use the key generated into
  // DATA_DIR (domain/domains/key-encryption.ts); a dyno always has a DATABASE_URL, so it needs
  // the variable, the same value on every process.
  why: `${why}; the same value on every process`,
  missing: (v) => !v.domains.keyEncryptionKey,
});

export const PROCESS_NEEDS = {
  release: [
    databaseUrl('it migrates the Postgres schema and the queue'),
    clickhouseUrl('it migrates the ClickHouse schema'),
  ],
  web: [
    databaseUrl('every request reads or writes Postgres'),
    clickhouseUrl('the activity listings, exports and dashboard read ClickHouse'),
    dkimKey('adding a domain or a sender, or rotating a DKIM key, seals the new DKIM private key with it'),
  ],
  worker: [
    databaseUrl('its jobs and their queue live in Postgres'),
    clickhouseUrl('the event pump ships tracking events there'),
    dkimKey("signing a mail opens its domain's DKIM private key with it"),
    ...(['tlsCertFile', 'tlsKeyFile'] as const).map(
      (file): Need => ({
        name: CONFIG_SCHEMA.submission[file].name,
        why: 'with SUBMISSION_PORT or SUBMISSIONS_PORT set, its submission listener offers STARTTLS and AUTH only over TLS',
        missing: (v) => (v.submission.port !== undefined || v.submission.tlsPort !== undefined) && !v.submission[file],
      }),
    ),
  ],
} as const satisfies Record<string, readonly Need[]>;

export type ProcessType = keyof typeof PROCESS_NEEDS;

export function isProcessType(name: string): name is ProcessType {
  return Object.hasOwn(PROCESS_NEEDS, name);
}

/**
 * The one line a process type prints when it lacks what it needs (every missing variable, with
 * why), or undefined when it has everything.
 */
export function missingNeeds(process: ProcessType, values: Parameters<Need['missing']>[0]): string | undefined {
  const missing = PROCESS_NEEDS[process].filter((n) => n.missing(values));
  if (!missing.length) return undefined;
  return (
    `cartero ${process}: cannot start: ${missing.map((n) => `${n.name} is required (${n.why})`).join('; ')}. ` +
    '`npm start` sets these for the embedded default; see docs/configuration.md, What each process needs'
  );
}
