import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

/**
 * Readable lines for a person at a terminal, JSON lines for everything else. A platform's log
 * drain, a pipe (`| jq`) or a file gets one JSON object per line; only a process whose stdout is
 * a terminal gets pino-pretty. `npm start`'s web and worker inherit the supervisor's stdout
 * (runtime/start.ts), so they see the same terminal and decide the same way.
 */
export function wantsPrettyLogs(stdout: { isTTY?: boolean }): boolean {
  return stdout.isTTY === true;
}

export function createLogger(level: string, name: string, stdout: { isTTY?: boolean } = process.stdout): Logger {
  const options = { level, name, base: { dyno: name, pid: process.pid } };
  if (!wantsPrettyLogs(stdout)) return pino(options);
  // sync: a dyno that exits right after logging (a failed start, the end of a shutdown) must not
  // lose its last lines in a buffer; a terminal is slow enough that this costs nothing noticeable.
  // `dyno` repeats `name`, which pino-pretty already shows as "(web/1234)".
  return pino(options, pretty({ destination: 1, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname,dyno' }));
}
