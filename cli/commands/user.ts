import { defineCommand } from '../command.js';
import { emailAddress, required } from '../flags.js';
import { readText } from '../read-text.js';

/** Panel users, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const users = () => import('../../domain/panel/users.js');

const email = required('address', "the user's email address (any case: one user per address)", emailAddress);
const passwordFile = required('file', 'a file holding the password (one final line break is ignored; at least 12 characters)');

/** The password of --password-file: never a flag's value, which shell history and `ps` would show. */
async function passwordOf(path: string): Promise<string> {
  return (await users()).passwordFromFile(await readText(path, '--password-file'));
}

export const userCommands = [
  defineCommand({
    name: 'user create',
    summary: 'Create an operator panel user (then: member add)',
    description: 'The password is stored as a scrypt hash (docs/panel.md); the user can sign in once it is a member of an instance.',
    flags: { email, 'password-file': passwordFile },
    run: async (ctx, f) => (await users()).createUser(ctx.pool, { email: f.email, password: await passwordOf(f['password-file']) }),
  }),
  defineCommand({
    name: 'user reset-password',
    summary: "Set a panel user's password; its sessions end",
    flags: { email, 'password-file': passwordFile },
    run: async (ctx, f) => (await users()).resetPassword(ctx.pool, { email: f.email, password: await passwordOf(f['password-file']) }),
  }),
  defineCommand({
    name: 'user disable',
    summary: 'Stop a panel user from signing in; its sessions end at once',
    description: 'Its memberships stay (user enable restores what it could do).',
    flags: { email },
    run: async (ctx, f) => (await users()).setUserDisabled(ctx.pool, f.email, true),
  }),
  defineCommand({
    name: 'user enable',
    summary: 'Let a disabled panel user sign in again',
    flags: { email },
    run: async (ctx, f) => (await users()).setUserDisabled(ctx.pool, f.email, false),
  }),
];
