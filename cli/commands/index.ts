import type { CliCommand } from '../command.js';
import { consentCommands } from './consent.js';
import { datasetCommands } from './dataset.js';
import { demoCommands } from './demo.js';
import { domainCommands } from './domain.js';
import { fieldCommands } from './field.js';
import { formCommands } from './form.js';
import { instanceCommands } from './instance.js';
import { keyCommands } from './key.js';
import { listCommands } from './list.js';
import { memberCommands } from './member.js';
import { reportKeyCommands } from './report-key.js';
import { restrictionCommands } from './restriction.js';
import { senderCommands } from './sender.js';
import { templateCommands } from './template.js';
import { userCommands } from './user.js';

/** Every admin command, in the order `cartero --help` lists them. A new area adds one file and one line here. */
export const commands: readonly CliCommand[] = [
  ...instanceCommands,
  ...keyCommands,
  ...userCommands,
  ...memberCommands,
  ...domainCommands,
  ...senderCommands,
  ...restrictionCommands,
  ...templateCommands,
  ...consentCommands,
  ...fieldCommands,
  ...datasetCommands,
  ...formCommands,
  ...listCommands,
  ...reportKeyCommands,
  ...demoCommands,
];
