import { runCli } from './run.js';

/** bin/cartero.js: the CLI (cli/run.ts) on this process's arguments, environment and output; its exit code. */
runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  terminal: process.stderr.isTTY ? process.stderr : undefined,
}).then((code) => process.exit(code));
