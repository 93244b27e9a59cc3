/** One environment variable: the unit config/schema.ts and config/webhooks.ts build the table from. */
export interface Variable<T> {
  name: string;
  /** The kind of value, as docs/configuration.md shows it. */
  type: 'integer' | 'port' | 'url' | 'enum' | 'host' | 'path' | 'name' | 'secret' | 'proxy list' | 'server list' | 'duration' | 'duration list';
  /** undefined (for optional variables, whose T includes it): unset unless the operator sets it. */
  default: T;
  /** How the default reads in the docs when it is not the value itself. */
  defaultText?: string;
  /** What is allowed, completing "NAME must be ...". */
  allowed: string;
  description: string;
  /** Secrets are never echoed in error messages. */
  secret?: boolean;
  /** The value of a non-empty raw string; throws an Error whose message is complete. */
  parse(raw: string): T;
}

export const fail = (name: string, allowed: string, raw: string): never => {
  throw new Error(`${name} must be ${allowed}, got ${JSON.stringify(raw)}`);
};

/** A whole number in a range (inclusive; no max: unbounded above). */
export function integer(name: string, def: number, range: { min: number; max?: number }, description: string): Variable<number> {
  const allowed = range.max === undefined ? `a whole number of at least ${range.min}` : `a whole number from ${range.min} to ${range.max}`;
  return {
    name,
    type: 'integer',
    default: def,
    allowed,
    description,
    parse(raw) {
      const n = Number(raw.trim());
      if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < range.min || (range.max !== undefined && n > range.max)) fail(name, allowed, raw);
      return n;
    },
  };
}

