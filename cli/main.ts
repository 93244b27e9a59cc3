import { parseArgs } from 'node:util';
import { loadConfig } from '../runtime/config.js';
import { commands, describeError, UsageError } from './commands.js';
import { openDatabase } from './database.js';

/**
 * `cartero <area> <action> --flags`: the panel-only operations. Prints one JSON object on
 * stdout and exits 0, or a message on stderr and exits non-zero (2 for usage, 1 otherwise).
 */
function help(): string {
  return ['usage: cartero <command> [flags]', '', ...commands.map((c) => `  cartero ${c.name} ${c.usage}`)].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const name = argv.slice(0, 2).join(' ');
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write((argv.length ? `unknown command: ${name}\n\n` : '') + help() + '\n');
    return 2;
  }
  let flags;
  try {
    flags = parseArgs({ args: argv.slice(2), options: command.flags, strict: true, allowPositionals: false }).values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\nusage: cartero ${command.name} ${command.usage}\n`);
    return 2;
  }
  const db = await openDatabase(loadConfig());
  try {
    const result = await command.run(db.pool, flags, db.queue);
    process.stdout.write(JSON.stringify(result) + '\n');
    return 0;
  } catch (err) {
    process.stderr.write(`cartero ${command.name}: ${describeError(err)}\n`);
    if (err instanceof UsageError) process.stderr.write(`usage: cartero ${command.name} ${command.usage}\n`);
    return err instanceof UsageError ? 2 : 1;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`cartero: ${describeError(err)}\n`);
    process.exit(1);
  },
);
