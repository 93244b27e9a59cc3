import type { WriteStream } from 'node:tty';
import { loadConfig } from '../config/config.js';
import { AppError, ValidationFailed } from '../domain/errors.js';
import { getInstanceBySlug } from '../domain/tenancy/instances.js';
import type { CliContext } from './command.js';
import { commands } from './commands/index.js';
import { UsageError } from './flags.js';
import { commandUsage, parseCommandLine } from './program.js';

/**
 * What one CLI run reads and writes: the environment its configuration comes from, where its
 * output goes, and the terminal (if any) a CSV command draws its progress bar on. bin/cartero.js
 * gives the process's own; a test may run the CLI in its own process with captured output.
 */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  terminal?: WriteStream;
}

/**
 * `cartero <area> <action> --flags`: the panel-only operations. Prints one JSON object on
 * stdout and exits 0, or a message on stderr and exits non-zero (2 for usage, 1 otherwise):
 * the exit code is what this resolves to (it never rejects).
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (err) {
    io.stderr(`cartero: ${describeError(err)}\n`);
    return 1;
  }
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const parsed = await parseCommandLine(commands, argv, io.stdout);
  if ('helped' in parsed) return 0;
  if ('mistake' in parsed) {
    io.stderr(parsed.mistake + '\n');
    return 2;
  }
  const { command, flags } = parsed.chosen;
  const config = loadConfig(io.env);
  try {
    await command.precheck?.(config);
  } catch (err) {
    io.stderr(`cartero ${command.name}: ${describeError(err)}\n`);
    return 1;
  }
  // Loaded once a command is chosen: help and usage mistakes open no database.
  const { openDatabase } = await import('./database.js');
  const db = await openDatabase(config);
  const ctx: CliContext = {
    config,
    pool: db.pool,
    queue: db.queue,
    terminal: io.terminal,
    progress: (line) => io.stderr(line + '\n'),
    async tenant(slug) {
      const instance = await getInstanceBySlug(db.pool, slug);
      return { instanceId: instance.id, slug: instance.slug, tz: instance.tz };
    },
  };
  try {
    const result = await command.run(ctx, flags);
    io.stdout(command.output === 'text' ? String(result) : JSON.stringify(result) + '\n');
    return 0;
  } catch (err) {
    io.stderr(`cartero ${command.name}: ${describeError(err)}\n`);
    if (err instanceof UsageError) io.stderr(commandUsage(command) + '\n');
    return err instanceof UsageError ? 2 : 1;
  } finally {
    await db.close();
  }
}

/**
 * A refusal as the API would answer it: its status, code and message (`409 code: message`; the
 * status tells a business rule from malformed input, as the API's does), and for a 422 each error on a line
 * of its own (pointer, code, message and params: a form file's unresolved reference, a template's
 * rule and node uuid), where the API's body has its `errors`.
 */
function describeError(err: unknown): string {
  if (err instanceof ValidationFailed) {
    const lines = err.errors.map((e) => {
      const params = Object.entries(e.params ?? {}).map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
      return `${e.pointer || '(input)'}: ${e.code}: ${e.message}${params.length ? ` [${params.join(', ')}]` : ''}`;
    });
    return `${err.status} ${err.code}: the input was refused:\n  ${lines.join('\n  ')}`;
  }
  if (err instanceof AppError) return `${err.status} ${err.code}: ${err.message}`;
  return (err as Error)?.message ?? String(err);
}
