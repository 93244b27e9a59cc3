import { Option } from 'commander';
import { isEmailAddress } from '../domain/email-address.js';

/** A mistake in how a command was called (missing, unknown or bad flag): exit 2 with its usage. */
export class UsageError extends Error {}

/**
 * One flag as a command declares it: the commander option it becomes, how it shows in the usage
 * line, and the value `run` receives (V) from what commander parsed.
 */
export interface Flag<V> {
  option(name: string): Option;
  usage(name: string): string;
  value(parsed: unknown): V;
}

/**
 * Turns a flag's text into its value, or throws a UsageError saying what the flag must be. A
 * UsageError (unlike commander's InvalidArgumentError) passes through commander untouched, so
 * the message reads `--mx must be approved, pending or failed`, as it always has.
 */
export type Parse<V> = (text: string, flag: string) => V;

const asText: Parse<string> = (text) => text;

/** Commander turns a parsed null (none: no limit) into '', so values travel to `value` in a box. */
type Boxed<V> = { value: V };
const boxed = <V>(value: V): Boxed<V> => ({ value });

/** A flag that must be given, with a non-empty value. */
export function required(placeholder: string, description: string): Flag<string>;
export function required<V>(placeholder: string, description: string, parse: Parse<V>): Flag<V>;
export function required<V>(placeholder: string, description: string, parse?: Parse<V>): Flag<V> {
  const read = (parse ?? asText) as Parse<V>;
  return {
    option: (name) =>
      new Option(`--${name} <${placeholder}>`, `${description} (required)`)
        .makeOptionMandatory()
        .argParser((text: string) => {
          if (text === '') throw new UsageError(`--${name} is required`);
          return boxed(read(text, `--${name}`));
        }),
    usage: (name) => `--${name} <${placeholder}>`,
    value: (parsed) => (parsed as Boxed<V>).value,
  };
}

/** A flag that may be left out (undefined then). */
export function optional(placeholder: string, description: string): Flag<string | undefined>;
export function optional<V>(placeholder: string, description: string, parse: Parse<V>): Flag<V | undefined>;
export function optional<V>(placeholder: string, description: string, parse?: Parse<V>): Flag<V | undefined> {
  const read = (parse ?? asText) as Parse<V>;
  return {
    option: (name) => new Option(`--${name} <${placeholder}>`, description).argParser((text: string) => boxed(read(text, `--${name}`))),
    usage: (name) => `[--${name} <${placeholder}>]`,
    value: (parsed) => (parsed as Boxed<V> | undefined)?.value,
  };
}

/** A flag given any number of times (`--cidr a --cidr b`); none gives []. */
export function repeatable(placeholder: string, description: string): Flag<string[]>;
export function repeatable<V>(placeholder: string, description: string, parse: Parse<V>): Flag<V[]>;
export function repeatable<V>(placeholder: string, description: string, parse?: Parse<V>): Flag<V[]> {
  const read = (parse ?? asText) as Parse<V>;
  return {
    option: (name) =>
      new Option(`--${name} <${placeholder}>`, `${description} (repeatable)`).argParser((text: string, earlier: V[] | undefined) => [
        ...(earlier ?? []),
        read(text, `--${name}`),
      ]),
    usage: (name) => `[--${name} <${placeholder}> ...]`,
    value: (parsed) => (parsed as V[] | undefined) ?? [],
  };
}

/** A flag without a value: true when given. */
export function toggle(description: string): Flag<boolean> {
  return {
    option: (name) => new Option(`--${name}`, description),
    usage: (name) => `[--${name}]`,
    value: (parsed) => parsed === true,
  };
}

/** One of a fixed list (the domain's own list: the CLI never keeps a copy). */
export function oneOf<T extends string>(values: readonly T[], says = `one of ${values.join(', ')}`): Parse<T> {
  return (text, flag) => {
    if (!(values as readonly string[]).includes(text)) throw new UsageError(`${flag} must be ${says}`);
    return text as T;
  };
}

export const trueOrFalse: Parse<boolean> = (text, flag) => oneOf(['true', 'false'], 'true or false')(text, flag) === 'true';

export const positiveInteger: Parse<number> = (text, flag) => {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer`);
  return n;
};

export const emailAddress: Parse<string> = (text, flag) => {
  if (!isEmailAddress(text)) throw new UsageError(`${flag} must be an email address`);
  return text;
};

export const isoDateTime: Parse<Date> = (text, flag) => {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new UsageError(`${flag} must be an ISO 8601 date-time`);
  return date;
};
