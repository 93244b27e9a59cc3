import { defineCommand } from '../command.js';
import { optional, toggle } from '../flags.js';

/**
 * `cartero demo`: a complete, realistic instance on the running service, and the curl lines to
 * look at it. Its parts are in cli/demo/ (loaded when the command runs: they bring the mail
 * parser and most of the domain).
 */
export const demoCommands = [
  defineCommand({
    name: 'demo',
    summary: 'Seed the instance "demo" on the running service (npm start) and print curl commands to explore it',
    description:
      'A verified domain and sender, a key with every scope, a published template from a Beefree design document, a double opt-in ' +
      'form feeding a dataset, a webhook, about 50 mails to the mailbox simulator (bounces, deferrals, complaints) opened and clicked ' +
      'through their real tracking links. Run again, it seeds nothing and prints the commands with a new key. Prints text, not JSON; ' +
      'progress goes to stderr. docs/operations.md, The demo.',
    flags: {
      reset: toggle('set an existing instance "demo" aside (renamed demo-retired-<time>, disabled, data kept) and seed a new one'),
      'webhook-url': optional('url', 'where the demo webhook points (default: a loopback receiver of the run if the service allows private receivers, else no webhook: the demo never points one at an address it does not run)'),
    },
    output: 'text',
    precheck: async (config) => {
      await (await import('../demo/service.js')).findService(config);
    },
    run: async (ctx, f) => (await import('../demo/run.js')).runDemo(ctx, { reset: f.reset, webhookUrl: f['webhook-url'] }),
  }),
];
