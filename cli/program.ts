import { Command, CommanderError, Help } from 'commander';
import { usageOf, type CliCommand } from './command.js';
import { UsageError } from './flags.js';

/** The command the arguments chose, with its flags parsed and checked. */
export interface Chosen {
  command: CliCommand;
  flags: Record<string, unknown>;
}

/** What parsing the arguments came to: a command to run, help already printed, or a usage mistake. */
export type Parsed = { chosen: Chosen } | { helped: true } | { mistake: string };

const NAME = 'cartero';

/**
 * The commander program for these commands: `cartero <area> <action> --flags`, `cartero --help`,
 * `cartero help <command>`, `--help` on every command. Commander writes only help (to stdout);
 * every mistake comes back as one line plus the usage, written by the caller, so each reads the
 * same whichever layer (commander or a flag's own check) found it. `writeOut` receives the help
 * (stdout by default; the tests read every command's help in-process through it).
 */
export async function parseCommandLine(
  commands: readonly CliCommand[],
  argv: string[],
  writeOut: (text: string) => void = (text) => process.stdout.write(text),
): Promise<Parsed> {
  let chosen: Chosen | undefined;
  const leaves = new Map<Command, CliCommand>();
  const program = new Command(NAME);
  program
    .usage('<command> [flags]')
    .description('Panel-only operations. Each prints one JSON object on stdout and exits 0, or a message on stderr and exits 2 (usage) or 1.')
    .exitOverride()
    .configureOutput({ writeOut, writeErr: () => {}, outputError: () => {} })
    .helpCommand(false)
    .configureHelp({
      // The top level lists every command ("instance create"), not only the areas.
      visibleCommands(this: Help, cmd: Command): Command[] {
        return cmd === program ? [...leaves.keys(), help] : Help.prototype.visibleCommands.call(this, cmd);
      },
      subcommandTerm: (cmd: Command): string => (cmd === help ? 'help <command>' : pathOf(cmd)),
    });

  for (const command of commands) {
    const [area, action] = command.name.split(' ') as [string, string | undefined];
    // A command of one word (`cartero demo`) is a leaf of the program itself.
    const parent = action === undefined ? program : (program.commands.find((c) => c.name() === area) ?? program.command(area).usage('<action> [flags]').helpCommand(false));
    const leaf = parent.command(action ?? area).summary(command.summary).usage(usageOf(command));
    leaf.description(command.description ? `${command.summary}.\n${command.description}` : `${command.summary}.`);
    const options = Object.entries(command.flags).map(([name, flag]) => [name, flag, flag.option(name)] as const);
    for (const [, , option] of options) leaf.addOption(option);
    leaf.action(() => {
      const flags: Record<string, unknown> = {};
      for (const [name, flag, option] of options) flags[name] = flag.value(leaf.getOptionValue(option.attributeName()));
      chosen = { command, flags };
    });
    leaves.set(leaf, command);
  }
  const help: Command = program
    .command('help')
    .summary('Describe one command, e.g. cartero help instance create')
    .argument('[command...]')
    .action((words: string[]) => {
      const target = reached(program, words);
      if (pathOf(target) !== words.join(' ')) throw new UsageError(`unknown command: ${words.join(' ')}`);
      target.outputHelp();
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return chosen ? { chosen } : { helped: true };
  } catch (err) {
    if (err instanceof CommanderError && err.code === 'commander.helpDisplayed') return { helped: true };
    if (!(err instanceof UsageError || err instanceof CommanderError)) throw err;
    const at = reached(program, argv);
    const leaf = leaves.get(at);
    if (!leaf) {
      const words = leadingWords(argv);
      const message =
        err instanceof UsageError ? err.message
        : err.code === 'commander.unknownCommand' || (err.code === 'commander.help' && words.length) ? `unknown command: ${words.join(' ')}`
        : err.code === 'commander.help' ? 'give a command'
        : commanderMessage(err);
      return { mistake: `${NAME}: ${message}\n${programUsage(commands)}` };
    }
    let message = err instanceof UsageError ? err.message : commanderMessage(err);
    if (err instanceof CommanderError && err.code === 'commander.missingMandatoryOptionValue') {
      // Commander reads no flag after an unknown one, so a flag given after it looks missing: name the unknown one.
      const known = new Set(at.options.map((o) => o.long));
      const stray = argv.find((a) => a.startsWith('--') && !known.has(a.split('=')[0]));
      const missing = at.options.find((o) => o.mandatory && at.getOptionValue(o.attributeName()) === undefined);
      if (stray && stray !== '--help') message = `unknown option '${stray.split('=')[0]}'`;
      else if (missing) message = `${missing.long} is required`;
    }
    return { mistake: `${NAME} ${leaf.name}: ${message}\n${commandUsage(leaf)}` };
  }
}

/** The usage line printed after a mistake in one command. */
export function commandUsage(command: CliCommand): string {
  return `usage: ${NAME} ${command.name} ${usageOf(command)}`.trimEnd() + `\n(${NAME} help ${command.name} describes its flags)`;
}

function programUsage(commands: readonly CliCommand[]): string {
  return [
    `usage: ${NAME} <command> [flags]`,
    '',
    ...commands.map((c) => `  ${NAME} ${c.name} ${usageOf(c)}`.trimEnd()),
    '',
    `(${NAME} help <command> describes one)`,
  ].join('\n');
}

/** "instance create" for the leaf command of that name. */
function pathOf(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The words before the first flag: the command as the user named it. */
function leadingWords(argv: string[]): string[] {
  const end = argv.findIndex((a) => a.startsWith('-'));
  return end < 0 ? argv : argv.slice(0, end);
}

/** The deepest command these words name (the program itself when the first is unknown). */
function reached(program: Command, argv: string[]): Command {
  let at = program;
  for (const word of leadingWords(argv)) {
    const next = at.commands.find((c) => c.name() === word);
    if (!next) break;
    at = next;
  }
  return at;
}

/** Commander's message without its "error: " prefix. */
function commanderMessage(err: CommanderError): string {
  return err.message.replace(/^error: /, '');
}
