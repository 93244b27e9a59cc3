import { defineCommand } from '../command.js';
import { positiveInteger, required, toggle, trueOrFalse } from '../flags.js';

/** The sender rules, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const senders = () => import('../../domain/senders/senders.js');
const keyEncryption = () => import('../../domain/domains/key-encryption.js');

export const senderCommands = [
  defineCommand({
    name: 'sender create',
    summary: "Create a sender (its domain is added, pending, when the instance lacks it)",
    flags: {
      instance: required('slug', 'the instance'),
      email: required('address', 'the From address'),
      name: required('name', 'the From name'),
      'consent-required': toggle('send only to recipients who gave consent'),
    },
    run: async (ctx, f) => {
      const [{ createSender }, { configuredKeyRing }] = await Promise.all([senders(), keyEncryption()]);
      return createSender(
        await ctx.tenant(f.instance),
        ctx.pool,
        { email: f.email, name: f.name, consentRequired: f['consent-required'] },
        { ring: () => configuredKeyRing(ctx.config) },
      );
    },
  }),
  defineCommand({
    name: 'sender set-consent-required',
    summary: 'Turn the consent requirement of a sender on or off',
    flags: {
      instance: required('slug', 'the instance'),
      id: required('id', 'the sender id', positiveInteger),
      value: required('true|false', 'whether consent is required', trueOrFalse),
    },
    run: async (ctx, f) => (await senders()).setSenderConsentRequired(await ctx.tenant(f.instance), ctx.pool, f.id, f.value),
  }),
];
