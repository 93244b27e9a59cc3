import { defineCommand } from '../command.js';

/** The report keys, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const reportKeys = () => import('../../domain/bounces/report-keys.js');

export const reportKeyCommands = [
  defineCommand({
    // New mails are tagged with the new key once each worker restarts; every older key keeps
    // verifying the reports of mails already sent (docs/security.md).
    name: 'report-key rotate',
    summary: 'Start a new key for tagging bounce reports (older keys keep verifying)',
    flags: {},
    run: async (ctx) => (await reportKeys()).rotateReportKey(ctx.pool),
  }),
];
