import { rotateReportKey } from '../../domain/bounces/report-keys.js';
import { defineCommand } from '../command.js';

export const reportKeyCommands = [
  defineCommand({
    // New mails are tagged with the new key once each worker restarts; every older key keeps
    // verifying the reports of mails already sent (docs/security.md).
    name: 'report-key rotate',
    summary: 'Start a new key for tagging bounce reports (older keys keep verifying)',
    flags: {},
    run: (ctx) => rotateReportKey(ctx.pool),
  }),
];
