import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';

/**
 * Readable lines for a person at a terminal, JSON lines for everything else. A platform's log
 * drain, a pipe (`| jq`) or a file gets one JSON object per line; only a process whose stdout is
 * a terminal gets pino-pretty. `npm start`'s web and worker inherit the supervisor's stdout
 * (runtime/start.ts), so they see the same terminal and decide the same way.
 */
export function wantsPrettyLogs(stdout: { isTTY?: boolean }): boolean {
  return stdout.isTTY === true;
}

/**
 * pino-pretty, when installed. It is a development dependency (docs/dependencies.md): `npm install`
 * and `npm start` have it, while an install without development dependencies (a platform's pruned
 * build, whose log drain is no terminal anyway) leaves out it and its 13 packages, and then prints
 * JSON lines on a terminal too. Loaded only for a terminal, so no other process loads its code.
 */
export function loadPinoPretty(load: (id: string) => unknown = createRequire(import.meta.url)): typeof PinoPretty | undefined {
  try {
    return load('pino-pretty') as typeof PinoPretty;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw err;
  }
}

export function createLogger(level: string, name: string, stdout: { isTTY?: boolean } = process.stdout): Logger {
  const options = { level, name, base: { dyno: name, pid: process.pid } };
  const pretty = wantsPrettyLogs(stdout) ? loadPinoPretty() : undefined;
  if (!pretty) return pino(options);
  // sync: a dyno that exits right after logging (a failed start, the end of a shutdown) must not
  // lose its last lines in a buffer; a terminal is slow enough that this costs nothing noticeable.
  // `dyno` repeats `name`, which pino-pretty already shows as "(web/1234)".
  return pino(options, pretty({ destination: 1, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname,dyno' }));
}
