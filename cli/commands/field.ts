import { FIELD_TYPES } from '../../domain/fields/types.js';
import { activationCommands, defineCommand, deletionCommand } from '../command.js';
import { oneOf, optional, positiveInteger, required, UsageError, type Parse } from '../flags.js';

const instance = required('slug', 'the instance');
const key = required('key', 'the field_key');

/** The field catalog rules, loaded by the command that runs: a command's start loads only its own (cli/commands/index.ts). */
const catalog = () => import('../../domain/fields/catalog.js');

const finiteNumber: Parse<number> = (text, flag) => {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${flag} must be a number`);
  return n;
};

/** a,b,c: each option as written between the commas (a select's values are exact). */
const commaList: Parse<string[]> = (text) => text.split(',');

const activation = activationCommands('field', {
  flags: { instance, key },
  set: async (tenant, pool, f, active) => (await catalog()).setFieldActive(tenant, pool, f.key, active),
  deactivate: 'Deactivate a field: it keeps validating the columns that declare it, but cannot be declared anew',
  activate: 'Reactivate a deactivated field',
});

export const fieldCommands = [
  defineCommand({
    name: 'field create',
    summary: 'Add a field to the catalog (printed as GET /v1/fields shows it)',
    description:
      'max-length and pattern apply to text (max-length also to email), min and max to number, options to select. ' +
      'A pattern is an ECMAScript regular expression the whole value must match; one that could take more than linear time is refused.',
    flags: {
      instance,
      key: required('key', 'the field_key: lower-case letters, digits and _, starting with a letter; reserved forever'),
      name: required('name', 'the name (unique ignoring case and accents)'),
      type: required(FIELD_TYPES.join('|'), 'the value type', oneOf(FIELD_TYPES)),
      'max-length': optional('n', 'longest value in characters', positiveInteger),
      pattern: optional('regex', 'a pattern the whole value must match'),
      min: optional('n', 'smallest number', finiteNumber),
      max: optional('n', 'largest number', finiteNumber),
      options: optional('a,b', 'the values of a select field', commaList),
    },
    run: async (ctx, f) =>
      (await catalog()).createField(await ctx.tenant(f.instance), ctx.pool, {
        key: f.key,
        name: f.name,
        type: f.type,
        maxLength: f['max-length'],
        pattern: f.pattern,
        min: f.min,
        max: f.max,
        options: f.options,
      }),
  }),
  activation.deactivate,
  activation.activate,
  deletionCommand('field', {
    summary: 'Delete a field: its name is free again, its key reserved forever (not a system field, nor one a dataset or list declares)',
    flags: { instance, key },
    remove: async (tenant, pool, f) => (await catalog()).deleteField(tenant, pool, f.key),
  }),
];
