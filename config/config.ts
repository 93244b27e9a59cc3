import { resolve } from 'node:path';
import { isProcessType, missingNeeds } from './needs.js';
import { CONFIG_RULES, CONFIG_SCHEMA, readSchema, type ConfigValues } from './schema.js';

export { parseTrustProxy } from './schema.js';

/**
 * Process configuration, read once from the environment when a process starts (runDyno, the
 * release and `npm start` scripts, the CLI) and passed down from there: nothing else reads
 * process.env. Every variable is one entry of config/schema.ts, whose nesting is this
 * type's shape; names are a public contract (docs/configuration.md).
 */
export type Config = Omit<ConfigValues, 'dataDir' | 'publicUrl'> & {
  /** DATA_DIR, resolved against the working directory. */
  dataDir: string;
  /** PUBLIC_URL without trailing slashes; http://localhost:PORT unless set. */
  publicUrl: string;
};

export type WebLimits = Config['webLimits'];
export type InboundLimits = Config['inboundLimits'];
export type SendSettings = Config['send'];
export type SmtpTimeouts = Config['smtpTimeouts'];

/** Defaults of a group of the schema, e.g. the inbound listener's for code started without a Config. */
function defaultsOf<G extends Record<string, { default: unknown }>>(group: G): { [K in keyof G]: NonNullable<G[K]['default']> } {
  return Object.fromEntries(Object.entries(group).map(([k, v]) => [k, v.default])) as { [K in keyof G]: NonNullable<G[K]['default']> };
}

export const WEB_LIMIT_DEFAULTS: WebLimits = defaultsOf(CONFIG_SCHEMA.webLimits);
export const INBOUND_LIMIT_DEFAULTS: InboundLimits = defaultsOf(CONFIG_SCHEMA.inboundLimits);
export const SMTP_TIMEOUT_DEFAULTS: SmtpTimeouts = defaultsOf(CONFIG_SCHEMA.smtpTimeouts);

/** Some variables are not allowed: `problems` has one line per variable (name, value, what is allowed). */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** Every variable of the schema from `env`; throws a ConfigError naming each one not allowed. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const values = readSchema(CONFIG_SCHEMA, env, problems);
  // Rules between variables only make sense once each of them is valid.
  if (!problems.length) {
    for (const rule of CONFIG_RULES) {
      const problem = rule.check(values);
      if (problem) problems.push(problem);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return {
    ...values,
    dataDir: resolve(values.dataDir),
    publicUrl: (values.publicUrl ?? `http://localhost:${values.port}`).replace(/\/+$/, ''),
  };
}

/**
 * loadConfig for a process's entry point: a configuration that is not allowed stops the
 * process at once (exit 1) with one line per variable on stderr, before anything starts. A
 * Procfile process type (web, worker, release) that lacks a variable it needs (config/needs.ts)
 * stops there too (exit 2, as the release dyno always did for a missing URL), with one line
 * naming every missing one and why.
 */
export function loadConfigOrExit(processName: string, env: Record<string, string | undefined> = process.env): Config {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`cartero ${processName}: invalid configuration (docs/configuration.md):\n${err.problems.map((p) => `  ${p}\n`).join('')}`);
    process.exit(1);
  }
  const missing = isProcessType(processName) ? missingNeeds(processName, config) : undefined;
  if (missing) {
    process.stderr.write(missing + '\n');
    process.exit(2);
  }
  return config;
}
