import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMailboxSimulator, type MailboxSimulator, type MailboxSimulatorOptions } from '../../smtp/simulator.js';
import type { Teardown } from './wait.js';

/**
 * The real mailbox simulator, storing what it accepts in a temporary directory of its own
 * (`mailboxDir`, where a test reads the .eml files); stopped and the directory removed at teardown.
 */
export async function startTestMailbox(
  t: Teardown,
  opts: Omit<MailboxSimulatorOptions, 'dir'> = {},
): Promise<{ simulator: MailboxSimulator; mailboxDir: string }> {
  const mailboxDir = mkdtempSync(join(tmpdir(), 'cartero-mailbox-'));
  const simulator = await startMailboxSimulator({ ...opts, dir: mailboxDir });
  t.teardown(async () => {
    await simulator.stop();
    await rm(mailboxDir, { recursive: true, force: true });
  });
  return { simulator, mailboxDir };
}
