import type { WriteStream } from 'node:tty';
import type { Pool } from '../sql/pool.js';
import type { JobQueue } from '../domain/job-queue.js';
import type { Tenant } from '../domain/tenancy/context.js';
import type { Flag } from './flags.js';
import type { Config } from '../config/config.js';

/** What a command runs against: the database, the job queue, and instances by slug. */
export interface CliContext {
  /** The process configuration (config/config.ts), e.g. for keys and resolvers a command needs. */
  config: Config;
  pool: Pool;
  queue: JobQueue;
  /** The terminal a CSV command's progress bar goes to: stderr when it is one, else none. */
  terminal?: WriteStream;
  /** The instance with this slug, as the tenant that domain functions take first. */
  tenant(slug: string): Promise<Tenant>;
  /** A progress line for the person at the terminal (stderr): stdout keeps only the result. */
  progress(line: string): void;
}

type FlagValues<F> = { [K in keyof F]: F[K] extends Flag<infer V> ? V : never };

/**
 * One admin command: `cartero <area> <action> --flags`. `run` gets the flags already parsed and
 * checked (by their names as typed: flags['monthly-quota']) and returns what is printed as JSON.
 */
export interface CliCommand<F extends Record<string, Flag<unknown>> = Record<string, Flag<unknown>>> {
  /** "<area> <action>", e.g. "instance create". */
  name: string;
  /** One line for `cartero --help`. */
  summary: string;
  /** More for `cartero help <command>`, when one line is not enough. */
  description?: string;
  flags: F;
  /** The flags part of the usage line, when the flags' own cannot say it (e.g. "one of two"). */
  usage?: string;
  /**
   * Checked before the database is opened (which, with no service running, starts the data dir's
   * embedded Postgres): a command that needs the running service says so at once.
   */
  precheck?(config: Config): Promise<void>;
  /** `text`: `run` returns the text to print as it is (a guide for a person), not a JSON value. */
  output?: 'json' | 'text';
  run(ctx: CliContext, flags: FlagValues<F>): Promise<unknown>;
}

/** Declares a command with its flags' value types inferred for `run`. */
export function defineCommand<F extends Record<string, Flag<any>>>(command: CliCommand<F>): CliCommand {
  return command as unknown as CliCommand;
}

/** The flags part of a command's usage line. */
export function usageOf(command: CliCommand): string {
  return command.usage ?? Object.entries(command.flags).map(([name, flag]) => flag.usage(name)).join(' ');
}

/**
 * `<area> deactivate` and `<area> activate`: the same flags (the instance and what names the
 * thing), one setter told which way; each prints what the setter returns. The area lists the two
 * where it wants them among its commands.
 */
export function activationCommands<F extends { instance: Flag<string> } & Record<string, Flag<any>>>(
  area: string,
  spec: {
    flags: F;
    set: (tenant: Tenant, pool: Pool, flags: FlagValues<F>, active: boolean) => Promise<unknown>;
    /** The one-line summaries of the two commands. */
    deactivate: string;
    activate: string;
  },
): { deactivate: CliCommand; activate: CliCommand } {
  const command = (active: boolean) =>
    defineCommand({
      name: `${area} ${active ? 'activate' : 'deactivate'}`,
      summary: active ? spec.activate : spec.deactivate,
      flags: spec.flags,
      run: async (ctx, f) => spec.set(await ctx.tenant(f.instance as string), ctx.pool, f, active),
    });
  return { deactivate: command(false), activate: command(true) };
}

/**
 * `<area> delete`: the flags that name the thing, and a removal that answers the thing as it was,
 * which the command prints (the CLI's convention for every delete, said once in its description).
 */
export function deletionCommand<F extends { instance: Flag<string> } & Record<string, Flag<any>>>(
  area: string,
  spec: { flags: F; summary: string; remove: (tenant: Tenant, pool: Pool, flags: FlagValues<F>) => Promise<unknown> },
): CliCommand {
  return defineCommand({
    name: `${area} delete`,
    summary: spec.summary,
    description: `Prints the ${area} as it was.`,
    flags: spec.flags,
    run: async (ctx, f) => spec.remove(await ctx.tenant(f.instance as string), ctx.pool, f),
  });
}
